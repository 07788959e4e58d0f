import ShutterCore

/// The autofocus sequence of one shot, as a value (`camera.autofocus` `onPrepare`): `prepare` (or
/// a press without one) asks for a cycle, the frames that answer the trigger move it, and a
/// waiting press is served when the lens locks, fails, or the `timeoutFrames`-th frame answering
/// the trigger (or `timeout` after the first, whichever comes first) still says Scanning.
///
/// The trigger rides on a request queued after it is set: the requests queued before still
/// report the cycle before (a lens that was Focused stays Focused in them). So a frame counts
/// only when the camera says it answers the newest trigger (``LibcameraCamera/focusReport(ofFrame:)``),
/// and the count and the deadline start with the first such frame: the time spent behind the
/// requests queued earlier is not the lens's. The wait is counted in frames because the lens moves
/// once a frame: a cycle of 20 frames takes 0.4 s at 50 fps but 1.4 s in the Camera Module 3's
/// full-resolution mode (14 fps); the time is only a ceiling.
///
/// ``LibcameraAutofocus`` performs the actions (send `AfMode` auto + `AfTrigger` start) and asks
/// ``decide(frameAt:now:)`` which frame a waiting press may take.
public struct AutofocusSequence: Hashable, Sendable {
    public enum Phase: Hashable, Sendable {
        /// No cycle since the last shot.
        case idle
        /// The trigger was set at `at`; no frame has answered it yet.
        case requested(at: Instant)
        /// The first frame answering the trigger began at `since`; `frames` have answered it so
        /// far; a press waits until `deadline` at most.
        case scanning(since: Instant, deadline: Instant, frames: Int)
        /// The lens locked at the `frames`-th frame answering the trigger: frames from `at` on are focused.
        case locked(at: Instant, frames: Int)
        /// The cycle gave up at `at`, the `frames`-th frame answering the trigger.
        case failed(at: Instant, frames: Int)
    }

    /// What a waiting press does with a frame.
    public enum Decision: Hashable, Sendable {
        /// Keep waiting for a later frame.
        case wait
        /// Take this frame; the photo's focus was `outcome`.
        case take(FocusOutcome)
    }

    /// The ceiling on the wait, from the first frame answering the trigger.
    public let timeout: Nanoseconds
    /// How many frames answering the trigger a press waits for at most.
    public let timeoutFrames: Int
    public private(set) var phase: Phase = .idle

    /// - Parameters:
    ///   - timeoutFrames: frames answering the trigger a press waits for at most (board `focusTimeoutFrames`).
    ///   - timeout: the most a press waits after the first of them, whatever the frame rate (board `focusTimeoutMs`).
    public init(timeoutFrames: Int = .max, timeout: Nanoseconds) {
        self.timeoutFrames = timeoutFrames
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
        let frames: Int
        switch phase {
        case .requested:
            frames = 1
            phase = .scanning(since: frameAt, deadline: frameAt + timeout, frames: frames)
        case .scanning(let since, let deadline, let before):
            frames = before + 1
            phase = .scanning(since: since, deadline: deadline, frames: frames)
        case .idle, .locked, .failed:
            return
        }
        switch state {
        case .focused: phase = .locked(at: frameAt, frames: frames)
        case .failed: phase = .failed(at: frameAt, frames: frames)
        case .idle, .scanning, nil: break
        }
    }

    /// The deadline a waiting press has, once the trigger reached the camera.
    public var deadline: Instant? {
        if case .scanning(_, let deadline, _) = phase { return deadline }
        return nil
    }

    /// How many frames have answered the trigger of this cycle (up to the one that locked or
    /// failed); `nil` before the first.
    public var framesWaited: Int? {
        switch phase {
        case .idle, .requested: nil
        case .scanning(_, _, let frames), .locked(_, let frames), .failed(_, let frames): frames
        }
    }

    /// Whether a press now must wait for focus instead of taking the ring's frame.
    public var isScanning: Bool {
        switch phase {
        case .requested, .scanning: true
        case .idle, .locked, .failed: false
        }
    }

    /// For a press waiting on focus: take the frame stamped `frameAt` (fed to
    /// ``frame(_:at:answersTrigger:)`` first), or wait. The `timeoutFrames`-th frame answering the
    /// trigger, or a frame at `now` past the deadline, is taken with `timeout`.
    public func decide(frameAt: Instant, now: Instant) -> Decision {
        switch phase {
        case .idle: return .take(.none)
        case .requested: return .wait
        case .locked(let at, _): return frameAt >= at ? .take(.locked) : .wait
        case .failed: return .take(.failed)
        case .scanning(_, let deadline, let frames):
            return frames >= timeoutFrames || now >= deadline || frameAt >= deadline ? .take(.timeout) : .wait
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
        if case .locked(let at, _) = phase { return at }
        return nil
    }

    /// The shot is done (or the light press ended): the next shot focuses again.
    public mutating func reset() { phase = .idle }
}

/// The autofocus of a libcamera camera that focuses itself (AfMode, AfTrigger and LensPosition:
/// Camera Module 3), in the board's `camera.autofocus` mode.
///
/// `continuous`: the lens keeps itself in focus and each photo says its frame's AfState.
/// `onPrepare`: a light press (or a press without one) starts an ``AutofocusSequence`` and a
/// press waits here until the lens locks, fails, or times out. `manual`: the lens moves only
/// for a `lensPosition` control.
public final class LibcameraAutofocus: CameraAutofocus {
    private let camera: LibcameraCamera
    /// The board's `camera.autofocus`.
    public let mode: AutofocusMode
    /// The cycle of the next shot (`onPrepare`).
    private var sequence: AutofocusSequence
    /// Shots waiting for the lens to lock (not yet handed to the capture state machine).
    private var held: [Shot] = []
    /// How focus ended for shots handed to the state machine.
    private var focusOfPress: [Shot: ShotFocus] = [:]

    /// The autofocus of `camera` (one that focuses itself) as the board's camera `settings` ask.
    init(camera: LibcameraCamera, settings: CameraSettings) {
        self.camera = camera
        mode = settings.autofocus
        sequence = AutofocusSequence(timeoutFrames: settings.focusTimeoutFrames, timeout: .milliseconds(Double(settings.focusTimeoutMs)))
    }

    /// Puts the camera in ``mode`` from its next request: `AfMode` continuous or manual
    /// (`onPrepare` sets AfModeAuto with each cycle's trigger).
    func applyMode() throws(CaptureError) {
        switch mode {
        case .continuous: try camera.focusContinuously()
        case .manual: try camera.focusManually()
        case .onPrepare: break
        }
    }

    public func requestCycle(at now: Instant) -> Bool {
        mode == .onPrepare && sequence.trigger(at: now)
    }

    public func sendTrigger() throws(CaptureError) {
        do throws(CaptureError) {
            try camera.triggerAutofocus()
        } catch {
            sequence.reset()
            throw error
        }
    }

    public func holdsPress(_ shot: Shot) -> Bool {
        guard mode == .onPrepare else { return false }
        if sequence.isScanning {
            held.append(shot)
            return true
        }
        focusOfPress[shot] = ShotFocus(outcome: sequence.outcome, frames: sequence.framesWaited)
        return false
    }

    /// Feeds the frame's AfState to the sequence, counting it only when its request answers the
    /// newest trigger (the camera knows which request carried it).
    public func frameArrived(_ frame: Frame, now: Instant) -> (presses: [Shot], focus: ShotFocus)? {
        let report = camera.focusReport(ofFrame: frame.sequence)
        sequence.frame(report?.state, at: frame.timestamp, answersTrigger: report?.answersTrigger ?? false)
        guard !held.isEmpty, case .take(let outcome) = sequence.decide(frameAt: frame.timestamp, now: now) else { return nil }
        defer { held.removeAll() }
        return (held, ShotFocus(outcome: outcome, frames: sequence.framesWaited))
    }

    public func focusOfShot(_ shot: Shot, frame: Frame, served: ShotFocus?) -> ShotFocus {
        // Continuous autofocus: the frame's own AfState says how it was focused.
        let continuous = mode == .continuous ? ShotFocus(outcome: FocusOutcome(continuous: camera.focusState(ofFrame: frame.sequence))) : nil
        let focus = served ?? focusOfPress.removeValue(forKey: shot) ?? continuous ?? ShotFocus(outcome: .none)
        // The next shot focuses again, unless a press still waits on this cycle.
        if held.isEmpty, focus.outcome != .none { sequence.reset() }
        return focus
    }

    public var heldCount: Int { held.count }

    public func releaseHeld() -> [Shot] {
        defer {
            held.removeAll()
            focusOfPress.removeAll()
            sequence.reset()
        }
        return held
    }

    public func standby() {
        if held.isEmpty { sequence.reset() }
    }

    /// The lens is driven by hand (a `lensPosition` control): the cycle that ran is over.
    func lensMovedByHand() {
        sequence.reset()
    }
}
