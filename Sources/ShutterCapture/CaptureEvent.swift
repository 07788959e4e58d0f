import ShutterCore

/// A photo safely on disk.
public struct Photo: Hashable, Sendable {
    /// When it was on disk (CLOCK_MONOTONIC).
    public var at: Instant
    public var path: String
    /// The shot the photo answers.
    public var shot: Shot
    /// The frame's time: the start of its exposure, or see ``frameAtIs``.
    public var frameAt: Instant
    /// Which instant of the frame ``frameAt`` is.
    public var frameAtIs = FrameInstant.exposureStart
    public var width: Int
    public var height: Int
    /// The file's size.
    public var bytes: Int
    /// The frame's sequence number from the driver.
    public var frameSequence: UInt32
    /// The time between the two frames on either side of the press (the actual frame interval
    /// there); `nil` when the ring held no frame on one side of the press. |offset| never exceeds it.
    public var bracket: Nanoseconds?
    /// The frame interval the service assumed when it chose the frame (the camera's, or the median
    /// it measured); `nil` when unknown. A photo without a ``bracket`` was taken while no frame
    /// after its press had arrived: its frame was the one still exposing, whose start came less
    /// than this before the press, so |offset| never exceeds it.
    public var frameInterval: Nanoseconds? = nil
    /// Frame-to-JPEG-bytes time (encode, EXIF) and the file write (fsync, rename), for the benchmark.
    public var encodeTime: Nanoseconds
    public var writeTime: Nanoseconds
    /// How autofocus ended before the frame (`none` without autofocus).
    public var focus: FocusOutcome = .none
    /// How many frames answered the autofocus cycle's trigger before the photo's frame was
    /// chosen (`nil` when no cycle ran for it).
    public var focusFrames: Int? = nil
    /// Whether the system clock was synchronised (NTP, GPS) when the photo was taken: when not,
    /// its EXIF date (and a strftime file name) may be off.
    public var clockSynchronized = true
    /// The file's SHA-256 in hex, when it was asked for (``Shot/digest``).
    public var sha256: String? = nil
    /// How the frame was exposed, as the camera reported it (libcamera); empty otherwise.
    public var exposure = FrameExposure()
    /// Whether the frame showed the exposure bias asked for settled.
    public var exposureSettling = ExposureSettling.Outcome.none
    /// The bias the frame's exposure shows, in EV (see ``ExposureSettling/biasReached(by:)``).
    public var exposureBias: Double? = nil

    /// The instant of the shot: the press, the release, the burst's slot, the rig's instant.
    public var pressedAt: Instant { shot.pressedAt }

    /// Frame time minus press time: negative when the frame was taken before the press.
    public var offset: Nanoseconds { frameAt - pressedAt }
}

/// Why a press made no photo, or why the camera stopped.
public struct CaptureFailure: Hashable, Sendable {
    public var at: Instant
    /// The shot, when the failure belongs to one.
    public var shot: Shot?
    public var error: CaptureError

    public init(at: Instant, shot: Shot?, error: CaptureError) {
        self.at = at
        self.shot = shot
        self.error = error
    }

    /// The instant of the shot the failure belongs to.
    public var pressedAt: Instant? { shot?.pressedAt }
}

/// What the capture service reports to the event loop.
public enum CaptureEvent: Hashable, Sendable {
    /// A photo is on disk.
    case photo(Photo)
    /// A press made no photo, or the camera failed (then `pressedAt` is nil).
    case captureFailed(CaptureFailure)
    /// The camera is (again) streaming or ready to start: its device, card, format and frame
    /// interval (as the driver set it), when known, and the libcamera viewfinder stream's size, when configured.
    case cameraReady(at: Instant, info: CameraInfo, format: FrameFormat, frameInterval: Nanoseconds? = nil, viewfinder: FrameDimensions? = nil)
    /// A `lensPosition` slider took the lens from the board's autofocus, or gave it back.
    case focusMode(FocusModeChange)

    /// The shot this event answers: a photo's, or a failed shot's (nil for a camera's failure or readiness).
    public var shot: Shot? {
        switch self {
        case .photo(let photo): photo.shot
        case .captureFailed(let failure): failure.shot
        case .cameraReady, .focusMode: nil
        }
    }

    /// The instant of the shot this event answers.
    public var pressedAt: Instant? { shot?.pressedAt }

    /// The event as one JSON line:
    /// `{"event":"focusMode","t":…,"mode":…,"boardMode":…,"control":…,"until":…,"reason":…}`, or
    /// `{"event":"photo","t":…,"path":…,"pressedAt":…,"frameAt":…,"offsetMs":…,"width":…,"height":…,"bytes":…,"clockSynchronized":…,"focus":…,"focusFrames":…,"bracketMs":…,"frameIntervalMs":…}`.
    public var json: JSONLine {
        switch self {
        case .photo(let photo):
            var line = JSONLine(event: "photo", at: photo.at)
            line.add("path", photo.path)
            line.add("pressedAt", photo.pressedAt)
            line.add("frameAt", photo.frameAt)
            line.add("frameAtIs", photo.frameAtIs.rawValue)
            line.add("offsetMs", photo.offset.milliseconds, decimals: 3)
            line.add("width", photo.width)
            line.add("height", photo.height)
            line.add("bytes", photo.bytes)
            line.add("clockSynchronized", photo.clockSynchronized)
            line.add("focus", photo.focus.rawValue)
            if let frames = photo.focusFrames { line.add("focusFrames", frames) }
            // The frame interval at the press, so "within one frame interval" can be checked per photo.
            if let bracket = photo.bracket { line.add("bracketMs", bracket.milliseconds, decimals: 3) }
            if let interval = photo.frameInterval { line.add("frameIntervalMs", interval.milliseconds, decimals: 3) }
            if let sha256 = photo.sha256 { line.add("sha256", sha256) }
            // The exposure applied, from the frame's own metadata, and whether it had settled on the
            // bias asked for (only for a camera that reports it: libcamera's).
            if photo.exposureSettling != .none { line.add("exposure", photo.exposureSettling.rawValue) }
            if let time = photo.exposure.exposureTime { line.add("exposureTimeUs", Int(time.rawValue / 1000)) }
            if let gain = photo.exposure.analogueGain { line.add("analogueGain", gain, decimals: 3) }
            if let gain = photo.exposure.digitalGain { line.add("digitalGain", gain, decimals: 3) }
            if let bias = photo.exposureBias { line.add("exposureBias", bias, decimals: 2) }
            return line
        case .captureFailed(let failure):
            var line = JSONLine(event: "captureFailed", at: failure.at)
            if let pressedAt = failure.pressedAt { line.add("pressedAt", pressedAt) }
            line.add("kind", failure.error.kind)
            if let errno = failure.error.errno { line.add("errno", Int(errno)) }
            line.add("reason", failure.error.description)
            return line
        case .cameraReady(let at, let info, let format, let frameInterval, let viewfinder):
            var line = JSONLine(event: "cameraReady", at: at)
            line.add("device", info.path)
            line.add("card", info.card)
            line.add("width", format.width)
            line.add("height", format.height)
            line.add("pixelFormat", format.pixelFormat.fourcc)
            if let frameInterval, frameInterval.rawValue > 0 { line.add("fps", 1e9 / Double(frameInterval.rawValue), decimals: 3) }
            if let viewfinder {
                line.add("viewfinderWidth", viewfinder.width)
                line.add("viewfinderHeight", viewfinder.height)
            }
            return line
        case .focusMode(let change):
            var line = JSONLine(event: "focusMode", at: change.at)
            line.add("mode", change.mode.rawValue)
            line.add("boardMode", change.boardMode.rawValue)
            switch change.cause {
            case .sliderMoved(let control), .doubleLightPress(let control): line.add("control", control)
            case .halfPress: break
            }
            if let until = change.until { line.add("until", until.rawValue) }
            line.add("reason", change.reason)
            return line
        }
    }
}
