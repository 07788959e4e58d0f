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

    /// Unchecked for exclusivity, as the watcher's queue: see ``MockWatcher``.
    @exclusivity(unchecked) private var watcher: MockWatcher?
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
///
/// What changes is one value, reached once per call and unchecked for exclusivity: a replay
/// injects and reads every edge of a trace here, and the run-time checks of a class's properties
/// cost more than the queue's work. No access can overlap another: the queue's methods call
/// nothing outside it, and the watcher belongs to one thread.
final class MockWatcher: EdgeWatcher, @unchecked Sendable {
    /// The chip's clock (the chip holds this watcher, so the watcher holds only what it reads).
    private let clock: VirtualClock
    private let capacity: Int
    @exclusivity(unchecked) private var queue: Queue
    @exclusivity(unchecked) private var closed = false

    /// The lines' levels and the edges injected but not yet read, as the kernel's line queues.
    private struct Queue {
        var levels: [Bool]
        /// Edges injected but not yet read, in time order; `head` is the first not yet read.
        var pending: [Edge] = []
        var head = 0
        var pendingPerLine: [Int]
        var droppedSinceRead = 0
        var continuity: EdgeContinuity

        init(lineCount: Int) {
            levels = Array(repeating: false, count: lineCount)
            pendingPerLine = Array(repeating: 0, count: lineCount)
            continuity = EdgeContinuity(lineCount: lineCount)
            for index in 0..<lineCount { continuity.setLevel(false, of: LineIndex(index)) }
        }

        mutating func inject(line: LineIndex, active: Bool, at time: Instant, capacity: Int) {
            precondition(pending.last.map { $0.time <= time } ?? true, "edges must be injected in time order")
            guard levels[line.rawValue] != active else { return }
            levels[line.rawValue] = active
            if pendingPerLine[line.rawValue] >= capacity {
                // The kernel drops new events when a line's queue is full.
                droppedSinceRead += 1
                return
            }
            pendingPerLine[line.rawValue] += 1
            pending.append(Edge(line: line, active: active, time: time))
        }

        mutating func read(until now: Instant, into edges: inout [Edge]) -> Int {
            var lost = 0
            while head < pending.count, pending[head].time <= now {
                let edge = pending[head]
                head += 1
                pendingPerLine[edge.line.rawValue] -= 1
                let verdict = continuity.check(edge)
                lost += verdict.lost
                if verdict.deliver { edges.append(edge) }
            }
            // Read edges are let go of once all are read (the usual case), or once they are most of
            // the storage: removing them on every read would move the unread ones each time.
            if head == pending.count {
                pending.removeAll(keepingCapacity: true)
                head = 0
            } else if head > 64, head * 2 > pending.count {
                pending.removeFirst(head)
                head = 0
            }
            // A dropped edge the continuity check could not see (an even number lost) is still counted.
            lost = max(lost, droppedSinceRead)
            droppedSinceRead = 0
            return lost
        }
    }

    init(lineCount: Int, chip: MockChip) {
        clock = chip.clock
        capacity = chip.queueCapacityPerLine
        queue = Queue(lineCount: lineCount)
    }

    var pollDescriptors: [CInt] { [] }
    var kernelDebouncedLines: Set<LineIndex> { [] }

    func currentLevels() throws -> [Bool] { queue.levels }

    func level(of line: LineIndex) -> Bool { queue.levels[line.rawValue] }

    func inject(line: LineIndex, active: Bool, at time: Instant) {
        precondition(!closed, "edge injected after close()")
        queue.inject(line: line, active: active, at: time, capacity: capacity)
    }

    func readEdges(into edges: inout [Edge]) throws -> Int {
        queue.read(until: clock.now, into: &edges)
    }

    func close() { closed = true }
}
