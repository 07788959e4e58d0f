/// A point on the monotonic clock (CLOCK_MONOTONIC), in nanoseconds.
///
/// Every time in shutter is one of these: kernel edge timestamps, V4L2 frame
/// timestamps, deadlines. They share one clock so a press can be matched to a
/// frame. The origin is arbitrary (boot, or the start of a trace); only
/// differences carry meaning. The wall clock is never used for gestures.
public struct Instant: RawRepresentable, Hashable, Comparable, Sendable {
    /// Nanoseconds since the clock's origin.
    public var rawValue: Int64

    @inlinable
    public init(rawValue: Int64) { self.rawValue = rawValue }

    /// The clock's origin.
    public static let zero = Instant(rawValue: 0)

    /// An instant a whole number of nanoseconds after the origin.
    @inlinable
    public static func nanoseconds(_ value: Int64) -> Instant { Instant(rawValue: value) }

    /// An instant `seconds` after the origin, rounded to the nearest nanosecond.
    @inlinable
    public static func seconds(_ value: Double) -> Instant {
        Instant(rawValue: saturatingInt64(value * 1e9))
    }

    /// Seconds since the origin, as traces and events print them.
    @inlinable
    public var seconds: Double { Double(rawValue) / 1e9 }

    @inlinable
    public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.rawValue < rhs.rawValue }

    @inlinable
    public static func + (lhs: Instant, rhs: Nanoseconds) -> Instant {
        Instant(rawValue: saturating(lhs.rawValue.addingReportingOverflow(rhs.rawValue), rhs.rawValue >= 0))
    }

    @inlinable
    public static func - (lhs: Instant, rhs: Nanoseconds) -> Instant {
        Instant(rawValue: saturating(lhs.rawValue.subtractingReportingOverflow(rhs.rawValue), rhs.rawValue < 0))
    }

    @inlinable
    public static func - (lhs: Instant, rhs: Instant) -> Nanoseconds {
        Nanoseconds(rawValue: saturating(lhs.rawValue.subtractingReportingOverflow(rhs.rawValue), rhs.rawValue < 0))
    }

    /// The earlier of two optional instants (a missing one never wins): how deadlines of several
    /// machines combine into the one the loop waits for, without building an array on every wake-up.
    @inlinable
    public static func earliest(_ first: Instant?, _ second: Instant?) -> Instant? {
        guard let first else { return second }
        guard let second else { return first }
        return second < first ? second : first
    }

    /// The largest trace time `shutter replay` accepts, in seconds: far enough below the clock's
    /// end (about 9.22e9 s) that every deadline after it still fits.
    public static let latestTraceSeconds = 9.2e9
}

/// A span of monotonic time in nanoseconds.
///
/// A plain integer rather than `Swift.Duration` because the gesture state
/// machines compare spans on every edge and a 64-bit count keeps that cheap.
public struct Nanoseconds: RawRepresentable, Hashable, Comparable, Sendable {
    public var rawValue: Int64

    @inlinable
    public init(rawValue: Int64) { self.rawValue = rawValue }

    public static let zero = Nanoseconds(rawValue: 0)

    @inlinable
    public static func milliseconds(_ value: Double) -> Nanoseconds {
        Nanoseconds(rawValue: saturatingInt64(value * 1e6))
    }

    @inlinable
    public static func microseconds(_ value: Int64) -> Nanoseconds { Nanoseconds(rawValue: value * 1_000) }

    @inlinable
    public static func seconds(_ value: Double) -> Nanoseconds {
        Nanoseconds(rawValue: saturatingInt64(value * 1e9))
    }

    /// The span in milliseconds, as board files and events state spans.
    @inlinable
    public var milliseconds: Double { Double(rawValue) / 1e6 }

    @inlinable
    public static func < (lhs: Nanoseconds, rhs: Nanoseconds) -> Bool { lhs.rawValue < rhs.rawValue }

    @inlinable
    public static func + (lhs: Nanoseconds, rhs: Nanoseconds) -> Nanoseconds {
        Nanoseconds(rawValue: saturating(lhs.rawValue.addingReportingOverflow(rhs.rawValue), rhs.rawValue >= 0))
    }

    @inlinable
    public static func * (lhs: Nanoseconds, rhs: Int64) -> Nanoseconds {
        let (product, overflow) = lhs.rawValue.multipliedReportingOverflow(by: rhs)
        return Nanoseconds(rawValue: overflow ? ((lhs.rawValue < 0) != (rhs < 0) ? .min : .max) : product)
    }
}

/// Clock arithmetic never wraps: a result past either end of the clock stays at that end.
@inlinable
func saturating(_ result: (partialValue: Int64, overflow: Bool), _ upward: Bool) -> Int64 {
    result.overflow ? (upward ? .max : .min) : result.partialValue
}

/// A source of the current monotonic time.
///
/// Handed in at `init` to whatever needs "now", so tests can use a
/// ``VirtualClock`` and never sleep.
public protocol MonotonicClock: AnyObject, Sendable {
    /// The current instant.
    var now: Instant { get }
}

/// A clock that only moves when told to: tests and `shutter replay` advance it by hand.
public final class VirtualClock: MonotonicClock, @unchecked Sendable {
    // Unchecked: a virtual clock is owned by one test or one replay loop.
    public private(set) var now: Instant

    public init(start: Instant = .zero) { self.now = start }

    /// Moves the clock forward by `span`.
    public func advance(by span: Nanoseconds) {
        precondition(span >= .zero, "a monotonic clock cannot go back")
        now = now + span
    }

    /// Moves the clock to `instant`, which must not be in the past.
    public func advance(to instant: Instant) {
        precondition(instant >= now, "a monotonic clock cannot go back")
        now = instant
    }
}

/// `value` rounded to an `Int64`, held at the ends of its range (NaN at the end, `.max`) instead of
/// trapping: a span stated in a file must never stop the daemon, whatever its size.
@inlinable
func saturatingInt64(_ value: Double) -> Int64 {
    let rounded = value.rounded()
    // 2^63 is the first Double past Int64.max; -2^63 is Int64.min exactly.
    if !(rounded < 9_223_372_036_854_775_808.0) { return .max }
    if rounded < -9_223_372_036_854_775_808.0 { return .min }
    return Int64(rounded)
}
