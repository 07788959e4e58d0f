/// A button that captures: `full` (primary) or `secondary` mapped to capture.
struct CaptureButton: Sendable {
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

    init(action: CaptureAction, timings: GestureTimings, burst: Bool) {
        self.action = action
        captureOn = timings.captureOn
        burstAfter = burst && timings.burstEnabled ? timings.burstAfter : nil
        burstInterval = timings.burstInterval
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

    /// A confirmed press: `capture began`, or `cancelled` at once when capture is unavailable.
    mutating func press(since: Instant, available: Bool, at now: Instant, into events: inout [ShutterEvent]) {
        guard available else {
            state = .ignored
            events.append(.capture(phase: .cancelled, action: action, pressedAt: since, releasedAt: nil, photo: false,
                                   reason: .unavailable, at: now))
            return
        }
        state = .pressed(pressedAt: since, shots: 0, nextShot: burstAfter.map { since + $0 })
        events.append(.capture(phase: .began, action: action, pressedAt: since, releasedAt: nil, photo: captureOn == .began,
                               reason: nil, at: now))
    }

    /// The confirmed release, whose first edge was at `releasedAt`: `capture ended`.
    mutating func release(since releasedAt: Instant, at now: Instant, into events: inout [ShutterEvent]) {
        switch state {
        case .released, .ignored:
            state = .released
        case .pressed(let pressedAt, let shots, _):
            state = .released
            if shots > 0 { events.append(.burst(phase: .ended, pressedAt: pressedAt, shot: shots, at: now)) }
            // After a burst the burst took the photos; `captureOn: ended` adds none.
            events.append(.capture(phase: .ended, action: action, pressedAt: pressedAt, releasedAt: releasedAt,
                                   photo: captureOn == .ended && shots == 0, reason: nil, at: now))
        }
    }

    /// The next burst shot is due.
    mutating func fire(at now: Instant, into events: inout [ShutterEvent]) {
        guard case .pressed(let pressedAt, let shots, let nextShot?) = state else { return }
        state = .pressed(pressedAt: pressedAt, shots: shots + 1, nextShot: nextShot + burstInterval)
        events.append(.burst(phase: shots == 0 ? .began : .changed, pressedAt: pressedAt, shot: shots + 1, at: now))
    }

    /// The press can no longer lead to a photo: `capture cancelled`; the release is then ignored.
    mutating func cancel(reason: CancelReason, at now: Instant, into events: inout [ShutterEvent]) {
        guard case .pressed(let pressedAt, let shots, _) = state else { return }
        state = .ignored
        if shots > 0 { events.append(.burst(phase: .ended, pressedAt: pressedAt, shot: shots, at: now)) }
        events.append(.capture(phase: .cancelled, action: action, pressedAt: pressedAt, releasedAt: nil, photo: false,
                               reason: reason, at: now))
    }

    /// Input ended: a press still down is cancelled.
    mutating func finish(at now: Instant, into events: inout [ShutterEvent]) {
        cancel(reason: .interrupted, at: now, into: &events)
        state = .released
    }
}
