/// Tells a light press from the first half of a double light press.
///
/// A light press is only reported once the double-press window has passed
/// without a second press, or once the second press turned out not to be light
/// (a full click, a hold, a swipe): reporting it at once would show the controls
/// and then the chooser for a double.
struct LightPressRecognizer: Sendable {
    private enum State: Sendable {
        case idle
        /// A light press ended at `releasedAt`; a second press may still come.
        case waiting(pressedAt: Instant, releasedAt: Instant)
        /// The second press started at `secondSince`, in time; it must be light too.
        case secondDown(pressedAt: Instant, releasedAt: Instant, secondSince: Instant, maximum: Nanoseconds)
    }

    private var state = State.idle
    let window: Nanoseconds

    init(window: Nanoseconds) { self.window = window }

    @inline(__always)
    var deadline: Instant? {
        switch state {
        case .idle: nil
        // One nanosecond past the window: a press starting exactly at its end still counts.
        case .waiting(_, let releasedAt): releasedAt + window + Nanoseconds(rawValue: 1)
        // The second press cannot be light once held past its maximum.
        case .secondDown(_, _, let secondSince, let maximum): secondSince + maximum + Nanoseconds(rawValue: 1)
        }
    }

    /// What a step of the recognizer decided; the rig reports singles and doubles as events.
    enum Action: Hashable, Sendable {
        /// Nothing to say: no light press was waiting, or none was completed.
        case none
        /// A press started `gap` after the light press waiting, inside the window: a double if it is light too.
        case secondPress(gap: Nanoseconds)
        /// A light press completed and waits for a second one before it is reported.
        case waiting
        /// A light press alone, and why it is known to be single.
        case single(pressedAt: Instant, releasedAt: Instant, because: SingleReason)
        /// The second light press completed inside the window.
        case double(pressedAt: Instant)
    }

    /// Why a light press is single.
    enum SingleReason: Hashable, Sendable {
        /// The double-press window ran out with no second press.
        case noSecondPress
        /// The second press was held past its maximum: it is no light press.
        case secondPressNotLight
        /// The next press started `gap` after the release, beyond the window.
        case pressedAgainLate(gap: Nanoseconds)
        /// Something else came first.
        case interrupted(by: Interruption)
        /// Another light press completed without its start being seen (defensive: every press
        /// start is reported first today); the first stands alone.
        case anotherLightPress
    }

    /// What came instead of a second light press.
    enum Interruption: Hashable, Sendable {
        case inputEnded, pressNotLight, fullPress, secondaryPress, touchNotTap, swipe
    }

    /// A press that may become a light press started at `since` (first edge).
    mutating func pressStarted(since: Instant, maximum: Nanoseconds) -> Action {
        switch state {
        case .idle, .secondDown:
            return .none
        case .waiting(let pressedAt, let releasedAt):
            let gap = since - releasedAt
            // Inclusive: a press exactly at the window's end still makes a double.
            if gap <= window {
                state = .secondDown(pressedAt: pressedAt, releasedAt: releasedAt, secondSince: since, maximum: maximum)
                return .secondPress(gap: gap)
            }
            state = .idle
            return .single(pressedAt: pressedAt, releasedAt: releasedAt, because: .pressedAgainLate(gap: gap))
        }
    }

    /// A light press completed.
    mutating func lightPress(pressedAt: Instant, releasedAt: Instant) -> Action {
        switch state {
        case .idle:
            state = .waiting(pressedAt: pressedAt, releasedAt: releasedAt)
            return .waiting
        case .secondDown(let firstPressedAt, _, _, _):
            state = .idle
            return .double(pressedAt: firstPressedAt)
        case .waiting(let firstPressedAt, let firstReleasedAt):
            // A light press without a reported start: the first stands alone, this one waits.
            state = .waiting(pressedAt: pressedAt, releasedAt: releasedAt)
            return .single(pressedAt: firstPressedAt, releasedAt: firstReleasedAt, because: .anotherLightPress)
        }
    }

    /// Something else happened (a full click, a swipe, input ended): a waiting light press is single.
    mutating func resolve(because interruption: Interruption) -> Action {
        switch state {
        case .idle:
            return .none
        case .waiting(let pressedAt, let releasedAt), .secondDown(let pressedAt, let releasedAt, _, _):
            state = .idle
            return .single(pressedAt: pressedAt, releasedAt: releasedAt, because: .interrupted(by: interruption))
        }
    }

    /// The deadline came: the window ran out, or the second press was held too long to be light.
    mutating func fire() -> Action {
        switch state {
        case .idle:
            return .none
        case .waiting(let pressedAt, let releasedAt):
            state = .idle
            return .single(pressedAt: pressedAt, releasedAt: releasedAt, because: .noSecondPress)
        case .secondDown(let pressedAt, let releasedAt, _, _):
            state = .idle
            return .single(pressedAt: pressedAt, releasedAt: releasedAt, because: .secondPressNotLight)
        }
    }
}
