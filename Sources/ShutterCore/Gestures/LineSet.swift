/// A set of line indices as a bit set: the lines whose debouncer has a change pending.
///
/// The recognizer scans the pending lines for the earliest confirmation and for the holds on its
/// timers after every edge. Scanning every line made the cost of an edge grow with the strip
/// (2.7× from 6 to 64 pads, shutter-bench); most of the time one to three lines are pending,
/// whatever the strip's size. Two words inline, no heap: a board has at most 64 pads and one line
/// of each other role (``Board/maximumPads``, `Board`'s checks), 67 lines in all.
struct LineSet: Sendable {
    private var low: UInt64 = 0
    private var high: UInt64 = 0

    /// The most lines a set can hold.
    static let capacity = 128

    /// Adds or removes `line` (below ``capacity``).
    @inline(__always)
    mutating func set(_ line: Int, _ member: Bool) {
        let bit = UInt64(1) << UInt64(line & 63)
        if line < 64 {
            if member { low |= bit } else { low &= ~bit }
        } else {
            if member { high |= bit } else { high &= ~bit }
        }
    }

    /// The members, in increasing order.
    @inline(__always)
    var members: Members { Members(low: low, high: high) }

    /// Iterates the members without touching the set, so the loop body may change the machine that holds it.
    struct Members: Sequence, IteratorProtocol {
        fileprivate var low: UInt64
        fileprivate var high: UInt64

        @inline(__always)
        mutating func next() -> Int? {
            if low != 0 {
                let line = low.trailingZeroBitCount
                low &= low - 1
                return line
            }
            if high != 0 {
                let line = 64 + high.trailingZeroBitCount
                high &= high - 1
                return line
            }
            return nil
        }
    }
}

extension LineSet {
    /// The lines in both sets.
    @inline(__always)
    func intersection(_ other: LineSet) -> LineSet {
        var both = self
        both.low &= other.low
        both.high &= other.high
        return both
    }
}
