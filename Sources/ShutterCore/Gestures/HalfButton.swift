/// The first stage of a two-stage button: light press and prepare (focus, metering).
struct HalfButton: Sendable {
    /// What a release of `half` meant.
    enum Release: Hashable, Sendable {
        /// Short and without a full click: a light press.
        case lightPress(pressedAt: Instant, releasedAt: Instant)
        /// Anything else: the press was not light.
        case notLight
    }

    private enum State: Sendable {
        case released
        /// Held since `since`; `fullClicked` once the full press came, `prepared` once prepare began.
        case pressed(since: Instant, fullClicked: Bool, prepared: Bool)
    }

    private var state = State.released
    let lightPressMaximum: Nanoseconds
    let prepareAfter: Nanoseconds

    init(timings: GestureTimings) {
        lightPressMaximum = timings.lightPressMaximum
        prepareAfter = timings.prepareAfter
    }

    @inline(__always)
    var deadline: Instant? {
        switch state {
        case .pressed(let since, false, false): since + prepareAfter
        case .released, .pressed: nil
        }
    }

    var isPressed: Bool {
        if case .pressed = state { return true }
        return false
    }

    /// The press in progress: its first edge and whether the full press came (setup mode's explanations).
    var pressInProgress: (since: Instant, fullClicked: Bool)? {
        if case .pressed(let since, let fullClicked, _) = state { return (since, fullClicked) }
        return nil
    }

    mutating func press(since: Instant) {
        state = .pressed(since: since, fullClicked: false, prepared: false)
    }

    /// The full press came: this half press is a click, not a light press, and prepare no longer starts.
    mutating func fullClicked() {
        if case .pressed(let since, _, let prepared) = state {
            state = .pressed(since: since, fullClicked: true, prepared: prepared)
        }
    }

    /// Prepare starts; appends `prepare began`.
    mutating func fire(at now: Instant, into events: inout [ShutterEvent]) {
        guard case .pressed(let since, false, false) = state else { return }
        state = .pressed(since: since, fullClicked: false, prepared: true)
        events.append(.prepare(phase: .began, pressedAt: since, at: now))
    }

    mutating func release(since releasedAt: Instant, at now: Instant, into events: inout [ShutterEvent]) -> Release {
        guard case .pressed(let since, let fullClicked, let prepared) = state else { return .notLight }
        state = .released
        if prepared { events.append(.prepare(phase: .ended, pressedAt: since, at: now)) }
        // Inclusive: a press exactly as long as the maximum is still light. A press that started
        // prepare (prepareAfter may be shorter than the maximum) is still light: the board's
        // maximum says what a light press is.
        if !fullClicked, releasedAt - since <= lightPressMaximum {
            return .lightPress(pressedAt: since, releasedAt: releasedAt)
        }
        return .notLight
    }

    /// Input ended with `half` down: prepare ends, nothing else.
    mutating func finish(at now: Instant, into events: inout [ShutterEvent]) {
        if case .pressed(let since, _, true) = state {
            events.append(.prepare(phase: .ended, pressedAt: since, at: now))
        }
        state = .released
    }
}
