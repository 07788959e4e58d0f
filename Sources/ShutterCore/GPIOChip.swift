/// A GPIO chip that can watch a board's input lines for edges.
///
/// Two implementations: the libgpiod one in `ShutterGPIO`, and ``MockChip``
/// for tests and `shutter replay`. The event loop sees only this protocol.
public protocol GPIOChip: AnyObject {
    /// Requests `lines` as inputs with both-edge events, bias and active-low applied.
    ///
    /// - Parameters:
    ///   - lines: the board's lines; their order defines ``LineIndex``.
    ///   - consumer: the name other programs see as the lines' user (`gpioinfo`).
    func watch(_ lines: [BoardLine], consumer: String) throws -> any EdgeWatcher
}

/// Lines being watched: where edges come from.
public protocol EdgeWatcher: AnyObject {
    /// File descriptors to poll for readability; empty when edges are injected in-process.
    var pollDescriptors: [CInt] { get }

    /// Lines the kernel already debounces (libgpiod 2.x); the rest are debounced in software.
    var kernelDebouncedLines: Set<LineIndex> { get }

    /// The logical level of every watched line now, in ``LineIndex`` order.
    func currentLevels() throws -> [Bool]

    /// Appends every edge waiting to be read, oldest first, without blocking.
    ///
    /// Levels always alternate per line: where the kernel dropped edges (its queue
    /// overflowed) the watcher drops the resulting repeat and counts it.
    /// - Returns: how many edges are known to have been lost since the last read.
    func readEdges(into edges: inout [Edge]) throws -> Int

    /// Releases the lines.
    func close()
}

/// Keeps a watcher's per-line levels alternating and counts what the kernel lost.
///
/// Shared by every watcher so that "lost" means the same everywhere: a repeat
/// of the previous level (an odd number of edges lost), or a gap in the
/// kernel's sequence numbers where it gives them.
public struct EdgeContinuity: Sendable {
    private var levels: [Bool?]
    private var lastGlobalSequence: UInt64 = 0

    public init(lineCount: Int) {
        levels = Array(repeating: nil, count: lineCount)
    }

    /// Records the level read at start, so the first edge can be checked too.
    public mutating func setLevel(_ active: Bool, of line: LineIndex) {
        levels[line.rawValue] = active
    }

    /// Checks one edge.
    ///
    /// - Parameters:
    ///   - globalSequence: the kernel's sequence number of the edge within the request
    ///     (libgpiod 2.x), or 0 when not given; it counts every line's losses.
    /// - Returns: whether to pass the edge on, and how many edges were lost before it.
    public mutating func check(_ edge: Edge, globalSequence: UInt64 = 0) -> (deliver: Bool, lost: Int) {
        var lost = 0
        if globalSequence > 0 {
            // The kernel numbers a request's edges from 1, so a gap before the first edge
            // read counts too: the queue overflowed before anything was read.
            if globalSequence > lastGlobalSequence + 1 {
                lost = Int(globalSequence - lastGlobalSequence - 1)
            }
            lastGlobalSequence = max(lastGlobalSequence, globalSequence)
        }
        let index = edge.line.rawValue
        if levels[index] == edge.active {
            // The opposite edge went missing in between (or this repeats a level
            // the kernel already reported); either way at least one edge was lost.
            return (false, max(lost, 1))
        }
        levels[index] = edge.active
        return (true, lost)
    }
}
