/// A button that captures: `full` (primary) or `secondary` mapped to capture.
struct CaptureButton: Sendable {
    /// What a step of the button means; the rig turns it into `capture` and `burst` events.
    enum Action: Hashable, Sendable {
        case none
        /// The press began capturing; `photo` when the board takes the picture on `began`.
        case began(pressedAt: Instant, photo: Bool)
        /// Burst shot `shot` (1 is the burst's first).
        case burstShot(pressedAt: Instant, shot: Int)
        /// The capturing press was released; a burst of `shots` (0: none) ends with it.
        case ended(pressedAt: Instant, releasedAt: Instant, photo: Bool, shots: Int)
        /// The press cannot lead to a photo; a burst of `shots` (0: none) ends with it.
        case cancelled(pressedAt: Instant, reason: CancelReason, shots: Int)
        /// A press while capture is unavailable: cancelled as it begins, its release ignored.
        case refused(pressedAt: Instant)
        /// The next burst shot was due past the burst's bound (`burstMaxShots`, `burstMaxMs`): the
        /// button is still held, so it is jammed. No shot is taken; the owner ends the press as stuck.
        case burstBoundReached(pressedAt: Instant, shots: Int)
    }

    private enum State: Sendable {
        case released
        /// A press that cannot capture (noise, or cancelled): waits for its release, silently.
        case ignored
        /// Capturing; `shots` counts burst shots, `nextShot` is when the next is due.
        case pressed(pressedAt: Instant, shots: Int, nextShot: Instant?)
    }

    private var state = State.released
    let action: CaptureAction
    let captureOn: CapturePhase
    /// When to start a burst after the press, if bursts are enabled.
    let burstAfter: Nanoseconds?
    let burstInterval: Nanoseconds
    /// The most shots of one burst, and the latest a shot may be due after the press.
    let burstMaxShots: Int
    let burstMaximum: Nanoseconds

    init(action: CaptureAction, timings: GestureTimings, burst: Bool) {
        self.action = action
        captureOn = timings.captureOn
        burstAfter = burst && timings.burstEnabled ? timings.burstAfter : nil
        burstInterval = timings.burstInterval
        burstMaxShots = timings.burstMaxShots
        burstMaximum = timings.burstMaximum
    }

    @inline(__always)
    var deadline: Instant? {
        if case .pressed(_, _, let nextShot?) = state { return nextShot }
        return nil
    }

    var isDown: Bool {
        switch state {
        case .released: false
        case .ignored, .pressed: true
        }
    }

    /// Whether a press is capturing (began, maybe bursting): a person holds it.
    var isCapturing: Bool {
        if case .pressed = state { return true }
        return false
    }

    /// A press to be ignored (a `full` edge without `half`): its release must be ignored too.
    mutating func ignore() {
        state = .ignored
    }

    /// A confirmed press: `.began`, or `.refused` when capture is unavailable.
    mutating func press(since: Instant, available: Bool) -> Action {
        guard available else {
            state = .ignored
            return .refused(pressedAt: since)
        }
        state = .pressed(pressedAt: since, shots: 0, nextShot: burstAfter.map { since + $0 })
        return .began(pressedAt: since, photo: captureOn == .began)
    }

    /// The confirmed release, whose first edge was at `releasedAt`: `.ended` for a press that was capturing.
    mutating func release(since releasedAt: Instant) -> Action {
        switch state {
        case .released, .ignored:
            state = .released
            return .none
        case .pressed(let pressedAt, let shots, _):
            state = .released
            // After a burst the burst took the photos; `captureOn: ended` adds none.
            return .ended(pressedAt: pressedAt, releasedAt: releasedAt, photo: captureOn == .ended && shots == 0, shots: shots)
        }
    }

    /// The next burst shot is due.
    mutating func fire() -> Action {
        guard case .pressed(let pressedAt, let shots, let nextShot?) = state else { return .none }
        // Inclusive, as the other windows: a shot due exactly at the bound is still taken.
        guard shots < burstMaxShots, nextShot <= pressedAt + burstMaximum else {
            state = .pressed(pressedAt: pressedAt, shots: shots, nextShot: nil)
            return .burstBoundReached(pressedAt: pressedAt, shots: shots)
        }
        state = .pressed(pressedAt: pressedAt, shots: shots + 1, nextShot: nextShot + burstInterval)
        return .burstShot(pressedAt: pressedAt, shot: shots + 1)
    }

    /// The press can no longer lead to a photo: `.cancelled`; the release is then ignored.
    mutating func cancel(reason: CancelReason) -> Action {
        guard case .pressed(let pressedAt, let shots, _) = state else { return .none }
        state = .ignored
        return .cancelled(pressedAt: pressedAt, reason: reason, shots: shots)
    }

    /// Input ended: a press still down is cancelled.
    mutating func finish() -> Action {
        let action = cancel(reason: .interrupted)
        state = .released
        return action
    }
}
