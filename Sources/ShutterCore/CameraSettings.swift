/// The camera, from the board's `camera` object.
public struct CameraSettings: Hashable, Sendable {
    /// `synthetic` (the built-in test pattern), `libcamera` (its first camera), a libcamera camera's
    /// id or model, a device path (`/dev/video0`) or the card name it reports; `nil` (the board
    /// names none): the first libcamera camera, else the first V4L2 capture device. Never the
    /// synthetic camera unless named: a rig whose camera is missing must say so, not save test patterns.
    public var device: String?
    /// Frame width and height; `nil` picks the largest the camera offers.
    public var width: Int?
    public var height: Int?
    /// A V4L2 fourcc (`YUYV`, `MJPG`); `nil` lets shutter choose.
    public var pixelFormat: String?
    /// Frames per second asked of the camera (V4L2 `VIDIOC_S_PARM`, libcamera `FrameDurationLimits`); `nil` keeps the driver's rate.
    public var fps: Double?
    /// JPEG quality for encoded frames, 1...100 (rpicam-still's default).
    public var quality: Int = 93
    /// `true` keeps the camera streaming into the zero-shutter-lag ring; `false` stops it
    /// between shots to save power (then a press or `prepare` starts it).
    public var keepStreaming: Bool = true
    /// Frames skipped after the camera starts, while auto-exposure settles (only when not kept streaming).
    public var warmupFrames: Int = 4
    /// How many recent frames the zero-shutter-lag ring keeps, 2...16.
    public var ringFrames: Int = 4
    /// The most memory the ring's frames may take, in MiB, when the board caps it: fewer than
    /// `ringFrames` are held when that many frames of the configured size would not fit, and a
    /// cap that holds fewer than two is refused. `nil` (the default): the ring is `ringFrames`
    /// frames, whatever they cost (`shutter check` says how much).
    public var ringMiB: Int?
    /// With libcamera: the most contiguous memory (CMA), in MiB, the requests' buffers (still and
    /// viewfinder) may take: fewer requests are configured when `ringFrames` and the spares would
    /// not fit, and a budget that holds fewer than four is refused. The pipeline's own buffers come
    /// on top (a Raspberry Pi 4's vc4: four raw frames and one still, 88 MiB for the HQ camera), as
    /// does the display's share of CMA. `nil` (the default): no budget.
    public var cmaMiB: Int?
    /// The EXIF orientation written into each photo, 1...8 (1 = upright).
    public var orientation: Int = 1
    /// How digital zoom saves its crop: scaled back to the frame's size (the phone's way, the
    /// default), or at the crop's own size.
    public var digitalZoom: DigitalZoomOutput = .scale
    /// Custom controls bound to a camera control by name: board control id → control name (`"Brightness"`).
    public var bindings: [String: String] = [:]
    /// Which camera stack opens `device`: libcamera, V4L2, or `auto` (libcamera when it lists the camera).
    public var backend: CameraBackend = .auto
    /// With libcamera: a second, smaller stream next to the still one (for the live view); `nil` for none.
    public var viewfinder: FrameDimensions?
    /// How a camera that focuses itself (libcamera's AfMode) is driven; cameras without autofocus ignore it.
    public var autofocus: AutofocusMode = .continuous
    /// With libcamera autofocus (`onPrepare`): how many frames a photo waits for the lens to lock,
    /// counted from the first frame that answers the trigger. A triggered PDAF cycle on the
    /// Camera Module 3 reports Scanning for up to `pdaf_frames` 20 frames (imx708.json; af.cpp's
    /// `startAF` and `doAF` count them down one per frame), after the `skip_frames` 5 frames af.cpp
    /// skips after every start; 30 leaves the statistics' latency a few frames more.
    public var focusTimeoutFrames: Int = 30
    /// With libcamera autofocus: the most a photo waits for the lens to lock, in milliseconds,
    /// whatever the frame rate (``focusTimeoutFrames`` decides first at any rate above 10 fps).
    public var focusTimeoutMs: Int = 3_000
    /// What gives the lens back to the board's `autofocus` after a `lensPosition` slider took it.
    public var manualFocusEnds: ManualFocusEnd = .prepare
    /// How long a press made soon after an exposure-bias change waits for the camera's auto
    /// exposure to show the new bias, in milliseconds after the newest change (0: never waits).
    /// The Raspberry Pi AGC eases into a change over about ten frames after the sensor's delay of
    /// two: some 0.9 s at the full-resolution modes' 10-14 fps. Cameras that report no exposure
    /// with their frames (V4L2) are never waited for.
    public var exposureSettleMs: Int = 1500
    /// How long presses wait for the camera to start streaming before they fail, in
    /// milliseconds (a USB webcam's `VIDIOC_STREAMON` or libcamera's start can hang).
    public var startTimeoutMs: Int = 10_000

    public init() {}

    /// The camera as the board names it, for messages: `device`, or what an absent one means.
    public var deviceDescription: String { device ?? "the first camera found" }
}

/// Which camera stack serves the board's camera.
/// How a camera that focuses itself is driven (board `camera.autofocus`).
public enum AutofocusMode: String, CaseIterable, Hashable, Sendable {
    /// The lens keeps itself in focus (libcamera's AfModeContinuous), as a phone's does: a press
    /// takes the ring's frame at once, never waiting for a new cycle; the photo says whether
    /// the lens had locked.
    case continuous
    /// A light press (prepare) starts one cycle (AfModeAuto and AfTrigger); a photo waits for
    /// the lens to lock, for at most `focusTimeoutMs` after the trigger reached the camera.
    case onPrepare
    /// No autofocus: the lens stays where a `lensPosition` control puts it (AfModeManual).
    case manual
}

/// What gives a lens back to the board's autofocus once a `lensPosition` slider took it by hand
/// (board `camera.manualFocusEnds`).
public enum ManualFocusEnd: String, CaseIterable, Hashable, Sendable {
    /// The next half press held long enough to prepare (`prepare`): focus and metering, as on a
    /// camera's shutter button. A full click or a light press keeps the slider's focus.
    case prepare
    /// A double light press while the focus slider is the current control (it also opens the
    /// chooser, as every double light press does).
    case doubleLightPress
}

public enum CameraBackend: String, CaseIterable, Hashable, Sendable {
    /// libcamera (Raspberry Pi camera modules; USB webcams through its uvcvideo handler).
    case libcamera
    /// V4L2 through libv4l2 (USB webcams, vivid, `libcamerify`).
    case v4l2
    /// libcamera when it lists the camera the board names, else V4L2.
    case auto
}

/// A width and a height in pixels.
public struct FrameDimensions: Hashable, Sendable {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
}

extension FrameDimensions: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable { case width, height }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard let width = try container.decodeIfPresent(Int.self, forKey: .width) else { throw container.fail(.width, "missing") }
        guard let height = try container.decodeIfPresent(Int.self, forKey: .height) else { throw container.fail(.height, "missing") }
        if !(16...16384).contains(width) { throw container.fail(.width, "\(width) is outside 16...16384") }
        if !(16...16384).contains(height) { throw container.fail(.height, "\(height) is outside 16...16384") }
        self.init(width: width, height: height)
    }
}

/// libcamera's names of the formats shutter can encode, accepted in `camera.pixelFormat` next to V4L2 fourccs.
public let libcameraFormatNames: Set<String> = ["NV12", "NV21", "YUV420", "YVU420", "YUYV", "UYVY", "RGB888", "BGR888", "MJPEG"]

/// What digital zoom writes: the centred crop at its own size, or scaled to the configured size.
public enum DigitalZoomOutput: String, CaseIterable, Hashable, Sendable {
    case crop
    case scale
}

extension CameraSettings: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case device, width, height, pixelFormat, fps, quality, keepStreaming, warmupFrames, ringFrames, ringMiB, cmaMiB, orientation,
             digitalZoom, bindings, backend, viewfinder, autofocus, focusTimeoutMs, focusTimeoutFrames, manualFocusEnds,
             exposureSettleMs, startTimeoutMs
    }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        device = try container.decodeIfPresent(String.self, forKey: .device)
        width = try container.decodeIfPresent(Int.self, forKey: .width)
        height = try container.decodeIfPresent(Int.self, forKey: .height)
        pixelFormat = try container.decodeIfPresent(String.self, forKey: .pixelFormat)
        fps = try container.decodeIfPresent(Double.self, forKey: .fps)
        quality = try container.decodeIfPresent(Int.self, forKey: .quality) ?? quality
        keepStreaming = try container.decodeIfPresent(Bool.self, forKey: .keepStreaming) ?? keepStreaming
        warmupFrames = try container.decodeIfPresent(Int.self, forKey: .warmupFrames) ?? warmupFrames
        ringFrames = try container.decodeIfPresent(Int.self, forKey: .ringFrames) ?? ringFrames
        ringMiB = try container.decodeIfPresent(Int.self, forKey: .ringMiB)
        cmaMiB = try container.decodeIfPresent(Int.self, forKey: .cmaMiB)
        if let cmaMiB, !(16...4096).contains(cmaMiB) { throw container.fail(.cmaMiB, "\(cmaMiB) is outside 16...4096") }
        orientation = try container.decodeIfPresent(Int.self, forKey: .orientation) ?? orientation
        if let zoomText = try container.decodeIfPresent(String.self, forKey: .digitalZoom) {
            guard let zoom = DigitalZoomOutput(rawValue: zoomText) else {
                throw container.fail(.digitalZoom, "'\(zoomText)' is not one of 'crop', 'scale'")
            }
            digitalZoom = zoom
        }
        bindings = try container.decodeIfPresent([String: String].self, forKey: .bindings) ?? bindings
        if let backendText = try container.decodeIfPresent(String.self, forKey: .backend) {
            guard let backend = CameraBackend(rawValue: backendText) else {
                throw container.fail(.backend, "'\(backendText)' is not one of 'libcamera', 'v4l2', 'auto'")
            }
            self.backend = backend
        }
        viewfinder = try container.decodeIfPresent(FrameDimensions.self, forKey: .viewfinder)
        if let modeText = try container.decodeIfPresent(String.self, forKey: .autofocus) {
            guard let mode = AutofocusMode(rawValue: modeText) else {
                throw container.fail(.autofocus, "'\(modeText)' is not one of 'continuous', 'onPrepare', 'manual'")
            }
            autofocus = mode
        }
        focusTimeoutMs = try container.decodeIfPresent(Int.self, forKey: .focusTimeoutMs) ?? focusTimeoutMs
        if !(0...10_000).contains(focusTimeoutMs) { throw container.fail(.focusTimeoutMs, "\(focusTimeoutMs) is outside 0...10000") }
        focusTimeoutFrames = try container.decodeIfPresent(Int.self, forKey: .focusTimeoutFrames) ?? focusTimeoutFrames
        if !(1...600).contains(focusTimeoutFrames) {
            throw container.fail(.focusTimeoutFrames, "\(focusTimeoutFrames) is outside 1...600")
        }
        if let endText = try container.decodeIfPresent(String.self, forKey: .manualFocusEnds) {
            guard let end = ManualFocusEnd(rawValue: endText) else {
                throw container.fail(.manualFocusEnds, "'\(endText)' is not one of 'prepare', 'doubleLightPress'")
            }
            manualFocusEnds = end
        }
        exposureSettleMs = try container.decodeIfPresent(Int.self, forKey: .exposureSettleMs) ?? exposureSettleMs
        if !(0...10_000).contains(exposureSettleMs) { throw container.fail(.exposureSettleMs, "\(exposureSettleMs) is outside 0...10000") }
        startTimeoutMs = try container.decodeIfPresent(Int.self, forKey: .startTimeoutMs) ?? startTimeoutMs
        if !(1_000...600_000).contains(startTimeoutMs) {
            throw container.fail(.startTimeoutMs, "\(startTimeoutMs) is outside 1000...600000")
        }
        if viewfinder != nil, backend == .v4l2 {
            throw container.fail(.viewfinder, "a viewfinder stream needs the libcamera backend ('backend': 'libcamera' or 'auto')")
        }
        if let viewfinder, let width, let height, viewfinder.width * viewfinder.height > width * height {
            throw container.fail(.viewfinder, "\(viewfinder.width)x\(viewfinder.height) is larger than the still size \(width)x\(height)")
        }
        if device?.isEmpty == true {
            throw container.fail(.device, "must name a camera: 'synthetic', 'libcamera', a path or a card name (leave it out for the first camera found)")
        }
        if !(0...100).contains(warmupFrames) { throw container.fail(.warmupFrames, "\(warmupFrames) is outside 0...100") }
        if !(2...16).contains(ringFrames) { throw container.fail(.ringFrames, "\(ringFrames) is outside 2...16") }
        if let ringMiB, !(1...1024).contains(ringMiB) { throw container.fail(.ringMiB, "\(ringMiB) is outside 1...1024") }
        if !(1...8).contains(orientation) {
            throw container.fail(.orientation, "\(orientation) is outside 1...8 (EXIF orientation; 1 is upright)")
        }
        if let width, !(16...16384).contains(width) { throw container.fail(.width, "\(width) is outside 16...16384") }
        if let height, !(16...16384).contains(height) { throw container.fail(.height, "\(height) is outside 16...16384") }
        if (width == nil) != (height == nil) {
            throw container.fail(width == nil ? .width : .height, "missing: give both width and height, or neither")
        }
        if let pixelFormat, pixelFormat.utf8.count != 4, backend == .v4l2 || !libcameraFormatNames.contains(pixelFormat) {
            throw container.fail(.pixelFormat, "'\(pixelFormat)' is not a four-character code such as 'YUYV' or 'MJPG'"
                                 + (backend == .v4l2 ? "" : " nor a libcamera format (\(libcameraFormatNames.sorted().joined(separator: ", ")))"))
        }
        if let fps, !(fps >= 0.1 && fps <= 1000) { throw container.fail(.fps, "\(fps) is outside 0.1...1000 frames per second") }
        if !(1...100).contains(quality) { throw container.fail(.quality, "\(quality) is outside 1...100") }
    }
}

/// Where photos are written, from the board's `output` object.
public struct OutputSettings: Hashable, Sendable {
    /// The directory; relative paths are taken from the working directory.
    public var directory: String = "photos"
    /// The file name: strftime fields plus `{ms}` and `{seq}`.
    public var template: String = "IMG_%Y%m%d_%H%M%S_{ms}_{seq}.jpg"

    public init() {}
}

extension OutputSettings: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable { case directory, template }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        directory = try container.decodeIfPresent(String.self, forKey: .directory) ?? directory
        template = try container.decodeIfPresent(String.self, forKey: .template) ?? template
        if directory.isEmpty { throw container.fail(.directory, "must not be empty") }
        if template.isEmpty || template.contains("/") {
            throw container.fail(.template, "must be a file name without '/'")
        }
    }
}
