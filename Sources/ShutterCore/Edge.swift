/// The position of a line in the board file's `lines` array.
///
/// Everything after the GPIO layer names lines this way; the chip's own offset
/// and name stay in the ``BoardLine`` it indexes.
public struct LineIndex: RawRepresentable, Hashable, Comparable, Sendable {
    public var rawValue: Int

    @inlinable
    public init(rawValue: Int) { self.rawValue = rawValue }

    @inlinable
    public init(_ rawValue: Int) { self.rawValue = rawValue }

    @inlinable
    public static func < (lhs: LineIndex, rhs: LineIndex) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// One change of a line's logical level, stamped by the kernel.
///
/// `active` is the level after active-low is applied: `true` means pressed or
/// touched, whatever the wiring.
public struct Edge: Hashable, Sendable {
    /// Which board line changed.
    public var line: LineIndex
    /// The logical level after the change.
    public var active: Bool
    /// When the kernel saw the change (CLOCK_MONOTONIC).
    public var time: Instant

    @inlinable
    public init(line: LineIndex, active: Bool, time: Instant) {
        self.line = line
        self.active = active
        self.time = time
    }
}
