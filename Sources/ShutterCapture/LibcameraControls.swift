import ShutterCore

/// The `ScalerCrop` rectangle for a zoom factor: the ISP crops, the stream keeps its size.
///
/// The crop is centred in the sensor's maximum crop, `1/factor` of its width and height (the
/// aspect ratio stays), with even sizes and offsets as the ISPs want; factors below 1 are 1.
public func scalerCrop(forZoom factor: Double, maximum: PixelRect) -> PixelRect {
    let factor = max(1, factor.isFinite ? factor : 1)
    func even(_ value: Double) -> Int { max(2, Int(value / 2) * 2) }
    let width = min(maximum.width, even(Double(maximum.width) / factor))
    let height = min(maximum.height, even(Double(maximum.height) / factor))
    let x = maximum.x + ((maximum.width - width) / 2) & ~1
    let y = maximum.y + ((maximum.height - height) / 2) & ~1
    return PixelRect(x: x, y: y, width: width, height: height)
}

/// `ExposureValue` for an exposure bias of `ev` stops: the bias itself (libcamera's unit is EV),
/// clamped to the camera's range; 0 is plain auto exposure.
public func exposureValue(forBias ev: Double, range: ClosedRange<Double>) -> Double {
    guard ev.isFinite else { return 0 }
    return min(max(ev, range.lowerBound), range.upperBound)
}

/// `LensPosition` (dioptres: 0 is infinity, larger is closer) for a slider at `value` in `range`:
/// linear onto the lens's range.
public func lensPosition(for value: Double, in range: ClosedRange<Double>, lens: ClosedRange<Double>) -> Double {
    let span = range.upperBound - range.lowerBound
    let fraction = span > 0 ? min(max((value - range.lowerBound) / span, 0), 1) : 0
    return lens.lowerBound + fraction * (lens.upperBound - lens.lowerBound)
}

/// How a photo's focus ended, as the `photo` event reports it.
public enum FocusOutcome: String, Hashable, Sendable {
    /// The autofocus cycle locked before the frame was taken (or, with continuous autofocus,
    /// the frame's AfState was Focused).
    case locked
    /// The autofocus cycle reported failure; the frame was taken as the lens stood.
    case failed
    /// The lens had not locked within `focusTimeoutMs`; the frame was taken anyway.
    case timeout
    /// Continuous autofocus was still moving the lens for this frame (AfState Scanning).
    case scanning
    /// No autofocus (fixed-focus camera, V4L2, manual focus).
    case none

    /// The outcome a frame's own AfState says, under continuous autofocus.
    public init(continuous state: AfState?) {
        switch state {
        case .focused: self = .locked
        case .failed: self = .failed
        case .scanning: self = .scanning
        case .idle, nil: self = .none
        }
    }
}

/// The autofocus sequence of one shot, as a value (`camera.autofocus` `onPrepare`): `prepare` (or
/// a press without one) asks for a cycle, the frames that answer the trigger move it, and a
/// waiting press is served when the lens locks, fails, or `focusTimeout` after the trigger
/// reached the camera passes.
///
/// The trigger rides on a request queued after it is set: the requests queued before still
/// report the cycle before (a lens that was Focused stays Focused in them). So a frame counts
/// only when the camera says it answers the newest trigger (``LibcameraCamera/focusReport(ofFrame:)``),
/// and the deadline starts with the first such frame: the time spent behind the requests queued
/// earlier is not the lens's.
///
/// The service performs the actions (send `AfMode` auto + `AfTrigger` start) and asks
/// ``decide(frameAt:now:)`` which frame a waiting press may take.
public struct AutofocusSequence: Hashable, Sendable {
    public enum Phase: Hashable, Sendable {
        /// No cycle since the last shot.
        case idle
        /// The trigger was set at `at`; no frame has answered it yet.
        case requested(at: Instant)
        /// The first frame answering the trigger began at `since`; a press waits until `deadline`.
        case scanning(since: Instant, deadline: Instant)
        /// The lens locked: frames from `at` on are focused.
        case locked(at: Instant)
        /// The cycle gave up at `at`.
        case failed(at: Instant)
    }

    /// What a waiting press does with a frame.
    public enum Decision: Hashable, Sendable {
        /// Keep waiting for a later frame.
        case wait
        /// Take this frame; the photo's focus was `outcome`.
        case take(FocusOutcome)
    }

    public let timeout: Nanoseconds
    public private(set) var phase: Phase = .idle

    public init(timeout: Nanoseconds) {
        self.timeout = timeout
    }

    /// Asks for a cycle at `now` unless one is running or has locked; returns whether the camera
    /// must be sent `AfTrigger` start.
    public mutating func trigger(at now: Instant) -> Bool {
        switch phase {
        case .requested, .scanning, .locked: return false
        case .idle, .failed:
            phase = .requested(at: now)
            return true
        }
    }

    /// The frame whose exposure began at `frameAt` reported `state`; `answersTrigger` says whether
    /// its request was queued after the newest trigger was set. Frames that do not answer it
    /// (requests queued earlier) do not count.
    public mutating func frame(_ state: AfState?, at frameAt: Instant, answersTrigger: Bool) {
        guard answersTrigger else { return }
        switch phase {
        case .requested:
            phase = .scanning(since: frameAt, deadline: frameAt + timeout)
        case .scanning:
            break
        case .idle, .locked, .failed:
            return
        }
        switch state {
        case .focused: phase = .locked(at: frameAt)
        case .failed: phase = .failed(at: frameAt)
        case .idle, .scanning, nil: break
        }
    }

    /// The deadline a waiting press has, once the trigger reached the camera.
    public var deadline: Instant? {
        if case .scanning(_, let deadline) = phase { return deadline }
        return nil
    }

    /// Whether a press now must wait for focus instead of taking the ring's frame.
    public var isScanning: Bool {
        switch phase {
        case .requested, .scanning: true
        case .idle, .locked, .failed: false
        }
    }

    /// For a press waiting on focus: take the frame stamped `frameAt` (fed to
    /// ``frame(_:at:answersTrigger:)`` first), or wait. At `now` past the deadline the frame is taken with `timeout`.
    public func decide(frameAt: Instant, now: Instant) -> Decision {
        switch phase {
        case .idle: return .take(.none)
        case .requested: return .wait
        case .locked(let at): return frameAt >= at ? .take(.locked) : .wait
        case .failed: return .take(.failed)
        case .scanning(_, let deadline): return now >= deadline || frameAt >= deadline ? .take(.timeout) : .wait
        }
    }

    /// The outcome for a press served from the ring without waiting.
    public var outcome: FocusOutcome {
        switch phase {
        case .idle: .none
        case .locked: .locked
        case .failed: .failed
        case .requested, .scanning: .timeout
        }
    }

    /// The earliest frame time a ring frame may have to count as focused.
    public var focusedSince: Instant? {
        if case .locked(let at) = phase { return at }
        return nil
    }

    /// The shot is done (or the light press ended): the next shot focuses again.
    public mutating func reset() { phase = .idle }
}
