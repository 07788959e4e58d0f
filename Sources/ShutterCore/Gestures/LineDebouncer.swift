/// A level change of one line that survived debounce and the glitch filter.
struct ConfirmedTransition: Hashable, Sendable {
    /// The new level.
    var active: Bool
    /// The first raw edge of the change, before any bounce: when the person acted.
    var since: Instant
}

/// Software debounce and glitch filter for one line, as a value-type state machine.
///
/// A level is confirmed once the raw line has held it for `window` after its
/// last edge, so a bounce burst confirms `window` after it settles and a pulse
/// shorter than `window` is dropped. The confirmed change is stamped with the
/// first edge of the burst, so a press keeps the instant the person pressed
/// however long confirmation took.
struct LineDebouncer: Sendable {
    private enum State: Sendable {
        /// Raw equals the confirmed level and nothing is pending.
        case settled
        /// The raw line left the confirmed level at `start`; its last edge was at `lastEdge`.
        /// When raw is back at the confirmed level the attempt is kept for `window`, so
        /// a bounce that briefly returns does not lose the first edge's time.
        case attempt(start: Instant, lastEdge: Instant)
    }

    private var state = State.settled
    /// The confirmed level.
    private(set) var level = false
    /// The last raw level seen.
    private var raw = false
    /// How long a level must hold; zero passes edges straight through.
    let window: Nanoseconds
    /// How long a release must hold, at least `window`: a button's contact back sooner than the
    /// board's `secondPressGapMs` is the same press (no person presses again that soon), so a
    /// dropout shorter than it is dropped like a glitch and the press goes on.
    let releaseWindow: Nanoseconds

    /// How long the line must rest at its confirmed level between two pulses for the next pulse to
    /// start a new edge run: contact bounce flips back within a fraction of a millisecond, noise spikes
    /// leave milliseconds of quiet between them.
    let quietGap: Nanoseconds

    /// The longest quiet gap: rest this long and the next edge starts a new run.
    static let maximumQuietGap = Nanoseconds.milliseconds(2)

    /// - Parameter releaseWindow: how long a release must hold (nil: `window`); never shorter than `window`.
    init(window: Nanoseconds, releaseWindow: Nanoseconds? = nil) {
        precondition(window >= .zero, "a debounce window cannot be negative")
        self.window = window
        self.releaseWindow = max(window, releaseWindow ?? window)
        quietGap = Nanoseconds(rawValue: min(window.rawValue / 2, Self.maximumQuietGap.rawValue))
    }

    /// The window of the change away from the confirmed level: a release's or a press's.
    @inline(__always)
    var pendingWindow: Nanoseconds { level ? releaseWindow : window }

    /// Sets the confirmed and raw level at once (after levels were read back from the chip), dropping
    /// anything pending. Returns the transition when the level changed.
    mutating func resynchronize(active: Bool, at time: Instant) -> ConfirmedTransition? {
        state = .settled
        raw = active
        guard active != level else { return nil }
        level = active
        return ConfirmedTransition(active: active, since: time)
    }

    /// When ``fire(at:)`` must be called, if anything is pending.
    @inline(__always)
    var deadline: Instant? {
        switch state {
        case .settled: nil
        case .attempt(_, let lastEdge): lastEdge + pendingWindow
        }
    }

    /// The first edge of a change still being confirmed or dropped.
    @inline(__always)
    var pendingSince: Instant? {
        switch state {
        case .settled: nil
        case .attempt(let start, _): start
        }
    }

    /// The raw level last seen: while a change is pending, where the line is now.
    var rawLevel: Bool { raw }

    /// The change being confirmed or dropped: its first and last raw edge (setup mode's explanations).
    var pendingAttempt: (start: Instant, lastEdge: Instant)? {
        switch state {
        case .settled: nil
        case .attempt(let start, let lastEdge): (start, lastEdge)
        }
    }

    /// Feeds one raw edge; returns a transition only when `window` is zero.
    mutating func edge(active: Bool, at time: Instant) -> ConfirmedTransition? {
        // A repeated level means the chip merged or lost an edge; the level is what counts.
        guard active != raw else { return nil }
        raw = active
        if case .settled = state, pendingWindow == .zero {
            level = active
            return ConfirmedTransition(active: active, since: time)
        }
        let window = pendingWindow
        switch state {
        case .settled:
            state = .attempt(start: time, lastEdge: time)
        case .attempt(let start, let lastEdge):
            // The caller fires deadlines first; an expired attempt here means it did not. A line that
            // rested at its confirmed level for the quiet gap and now leaves it again starts a new
            // run: the earlier pulses were glitches, not the bounce of this change.
            if raw != level, time >= lastEdge + window || time - lastEdge >= quietGap {
                state = .attempt(start: time, lastEdge: time)
            } else {
                state = .attempt(start: start, lastEdge: time)
            }
        }
        return nil
    }

    /// Resolves the pending attempt at its deadline: a confirmed change, or nothing for a glitch.
    mutating func fire() -> ConfirmedTransition? {
        switch state {
        case .settled:
            return nil
        case .attempt(let start, _):
            state = .settled
            guard raw != level else { return nil }
            level = raw
            return ConfirmedTransition(active: raw, since: start)
        }
    }
}
