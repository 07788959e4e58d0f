/// The first stage of a two-stage button: light press and prepare (focus, metering).
struct HalfButton: Sendable {
    /// What a step of `half` means; the rig turns it into `prepare` events and light presses.
    enum Action: Hashable, Sendable {
        case none
        /// Held `prepareAfterMs`: prepare (focus, metering) begins.
        case prepareBegan(pressedAt: Instant)
        /// Input ended with prepare running.
        case prepareEnded(pressedAt: Instant)
        /// The press confirmed, first edge at `since`: it may be light, or a double's second.
        case pressed(since: Instant)
        /// The release confirmed: prepare ends first when the press had started it (`preparedSince`,
        /// the press's first edge), then what the release meant.
        case released(preparedSince: Instant?, Release)
    }

    /// What a release of `half` meant.
    enum Release: Hashable, Sendable {
        /// Short and without a full click: a light press, held `held`.
        case lightPress(pressedAt: Instant, releasedAt: Instant, held: Nanoseconds)
        /// The press was not light, and why.
        case notLight(reason: NotLight)
    }

    /// Why a release of `half` was no light press.
    enum NotLight: Hashable, Sendable {
        /// `half` was not pressed (input had ended): nothing to explain.
        case notPressed
        /// The full press came while it was held: it was a click.
        case fullClicked
        /// Held `held`, longer than `lightPressMaxMs`.
        case heldLongerThanMaximum(held: Nanoseconds)
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

    /// The confirmed press, whose first edge was at `since`; `inClick` when `full` clicked first
    /// (the press is then no light press when it releases, and prepare does not start).
    mutating func press(since: Instant, inClick: Bool) -> Action {
        state = .pressed(since: since, fullClicked: inClick, prepared: false)
        return .pressed(since: since)
    }

    /// The full press came: this half press is a click, not a light press, and prepare no longer starts.
    mutating func fullClicked() {
        if case .pressed(let since, _, let prepared) = state {
            state = .pressed(since: since, fullClicked: true, prepared: prepared)
        }
    }

    /// Prepare starts: `.prepareBegan`, unless the press already started it or was clicked.
    mutating func fire() -> Action {
        guard case .pressed(let since, false, false) = state else { return .none }
        state = .pressed(since: since, fullClicked: false, prepared: true)
        return .prepareBegan(pressedAt: since)
    }

    /// The confirmed release, whose first edge was at `releasedAt`: `.released`, saying whether
    /// prepare ends with it (the rig reports that before anything the release means) and what it meant.
    mutating func release(since releasedAt: Instant) -> Action {
        guard case .pressed(let since, let fullClicked, let prepared) = state else {
            return .released(preparedSince: nil, .notLight(reason: .notPressed))
        }
        state = .released
        let prepare = prepared ? since : nil
        if fullClicked { return .released(preparedSince: prepare, .notLight(reason: .fullClicked)) }
        // Inclusive: a press exactly as long as the maximum is still light. A press that started
        // prepare (prepareAfter may be shorter than the maximum, as the defaults are: 300 and
        // 350 ms) is still light: the board's maximum says what a light press is, and prepare
        // (focus, metering) held a little longer did no harm.
        let held = releasedAt - since
        guard held <= lightPressMaximum else {
            return .released(preparedSince: prepare, .notLight(reason: .heldLongerThanMaximum(held: held)))
        }
        return .released(preparedSince: prepare, .lightPress(pressedAt: since, releasedAt: releasedAt, held: held))
    }

    /// Input ended with `half` down: prepare ends, nothing else.
    mutating func finish() -> Action {
        defer { state = .released }
        if case .pressed(let since, _, true) = state { return .prepareEnded(pressedAt: since) }
        return .none
    }
}
