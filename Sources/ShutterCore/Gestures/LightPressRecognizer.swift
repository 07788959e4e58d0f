/// What the light-press recognizer decided.
enum LightPressOutcome: Hashable, Sendable {
    case single(pressedAt: Instant, releasedAt: Instant)
    case double(pressedAt: Instant)
}

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

    /// What is pending, for setup mode's explanations: when the light press ended, and whether a
    /// second press is down.
    var pending: (releasedAt: Instant, secondDown: Bool)? {
        switch state {
        case .idle: nil
        case .waiting(_, let releasedAt): (releasedAt, false)
        case .secondDown(_, let releasedAt, _, _): (releasedAt, true)
        }
    }

    /// A press that may become a light press started at `since` (first edge).
    mutating func pressStarted(since: Instant, maximum: Nanoseconds) -> LightPressOutcome? {
        switch state {
        case .idle, .secondDown:
            return nil
        case .waiting(let pressedAt, let releasedAt):
            // Inclusive: a press exactly at the window's end still makes a double.
            if since - releasedAt <= window {
                state = .secondDown(pressedAt: pressedAt, releasedAt: releasedAt, secondSince: since, maximum: maximum)
                return nil
            }
            state = .idle
            return .single(pressedAt: pressedAt, releasedAt: releasedAt)
        }
    }

    /// A light press completed.
    mutating func lightPress(pressedAt: Instant, releasedAt: Instant) -> LightPressOutcome? {
        switch state {
        case .idle:
            state = .waiting(pressedAt: pressedAt, releasedAt: releasedAt)
            return nil
        case .secondDown(let firstPressedAt, _, _, _):
            state = .idle
            return .double(pressedAt: firstPressedAt)
        case .waiting(let firstPressedAt, let firstReleasedAt):
            // A light press without a reported start: the first stands alone, this one waits.
            state = .waiting(pressedAt: pressedAt, releasedAt: releasedAt)
            return .single(pressedAt: firstPressedAt, releasedAt: firstReleasedAt)
        }
    }

    /// Something else happened (a full click, a hold, a swipe, a window ran out):
    /// a waiting light press is reported as single.
    mutating func resolve() -> LightPressOutcome? {
        switch state {
        case .idle:
            return nil
        case .waiting(let pressedAt, let releasedAt), .secondDown(let pressedAt, let releasedAt, _, _):
            state = .idle
            return .single(pressedAt: pressedAt, releasedAt: releasedAt)
        }
    }
}
