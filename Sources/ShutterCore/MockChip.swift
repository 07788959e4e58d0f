/// An in-process GPIO chip for tests and `shutter replay`: edges are injected
/// by hand and delivered on a ``VirtualClock``, so nothing ever sleeps.
///
/// Like a kernel chip it queues edges until they are read and has a bounded
/// event queue (16 per line by default, as the kernel's), so overflow can be tested.
public final class MockChip: GPIOChip, @unchecked Sendable {
    // Unchecked: a mock chip belongs to one test or one replay loop.

    /// The clock edges are stamped and delivered by.
    public let clock: VirtualClock
    /// Edges queued a line before the oldest are dropped, as the kernel's kfifo does.
    public let queueCapacityPerLine: Int

    private var watcher: MockWatcher?
    /// Output lines' levels and their history (see `OutputLines.swift`).
    var outputLevels: [String: Bool] = [:]
    public internal(set) var outputHistory: [OutputChange] = []

    public init(clock: VirtualClock = VirtualClock(), queueCapacityPerLine: Int = 16) {
        self.clock = clock
        self.queueCapacityPerLine = queueCapacityPerLine
    }

    public func watch(_ lines: [BoardLine], consumer: String) throws -> any EdgeWatcher {
        let watcher = MockWatcher(lineCount: lines.count, chip: self)
        self.watcher = watcher
        return watcher
    }

    /// Sets a line's raw level at `time` (default: now), as a driven pin would.
    ///
    /// Setting the level it already has is no edge, as on a real chip.
    public func set(_ line: LineIndex, active: Bool, at time: Instant? = nil) {
        guard let watcher else { preconditionFailure("set(_:active:) before watch(_:consumer:)") }
        watcher.inject(line: line, active: active, at: time ?? clock.now)
    }

    /// Injects contact bounce: `toggles` level changes `spacing` apart from `time`,
    /// then the line settles at `settlesActive` one `spacing` later.
    public func bounce(_ line: LineIndex, at time: Instant, toggles: Int, spacing: Nanoseconds, settlesActive: Bool) {
        guard let watcher else { preconditionFailure("bounce before watch(_:consumer:)") }
        var level = watcher.level(of: line)
        for i in 0..<toggles {
            level.toggle()
            set(line, active: level, at: time + spacing * Int64(i))
        }
        set(line, active: settlesActive, at: time + spacing * Int64(toggles))
    }
}

/// The watcher ``MockChip`` hands out.
final class MockWatcher: EdgeWatcher, @unchecked Sendable {
    private unowned let chip: MockChip
    private var levels: [Bool]
    /// Edges injected but not yet read, in time order.
    private var pending: [Edge] = []
    private var pendingPerLine: [Int]
    private var droppedSinceRead = 0
    private var continuity: EdgeContinuity
    private var closed = false

    init(lineCount: Int, chip: MockChip) {
        self.chip = chip
        levels = Array(repeating: false, count: lineCount)
        pendingPerLine = Array(repeating: 0, count: lineCount)
        continuity = EdgeContinuity(lineCount: lineCount)
        for index in 0..<lineCount { continuity.setLevel(false, of: LineIndex(index)) }
    }

    var pollDescriptors: [CInt] { [] }
    var kernelDebouncedLines: Set<LineIndex> { [] }

    func currentLevels() throws -> [Bool] { levels }

    func level(of line: LineIndex) -> Bool { levels[line.rawValue] }

    func inject(line: LineIndex, active: Bool, at time: Instant) {
        precondition(!closed, "edge injected after close()")
        precondition(pending.last.map { $0.time <= time } ?? true, "edges must be injected in time order")
        guard levels[line.rawValue] != active else { return }
        levels[line.rawValue] = active
        if pendingPerLine[line.rawValue] >= chip.queueCapacityPerLine {
            // The kernel drops new events when a line's queue is full.
            droppedSinceRead += 1
            return
        }
        pendingPerLine[line.rawValue] += 1
        pending.append(Edge(line: line, active: active, time: time))
    }

    func readEdges(into edges: inout [Edge]) throws -> Int {
        let now = chip.clock.now
        var lost = 0
        var delivered = 0
        for edge in pending {
            guard edge.time <= now else { break }
            delivered += 1
            pendingPerLine[edge.line.rawValue] -= 1
            let verdict = continuity.check(edge)
            lost += verdict.lost
            if verdict.deliver { edges.append(edge) }
        }
        pending.removeFirst(delivered)
        // A dropped edge the continuity check could not see (an even number lost) is still counted.
        lost = max(lost, droppedSinceRead)
        droppedSinceRead = 0
        return lost
    }

    func close() { closed = true }
}
