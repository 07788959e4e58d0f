#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShutterCore
import ShutterSystem

/// Reads simulated edges from standard input for the simulator board, line by line,
/// and drives the mock chip with them at their time after start.
public final class SimulatorInput {
    private let board: Board
    private let chip: MockChip
    private let origin: Instant
    private var buffer: [UInt8] = []
    private var lineNumber = 0
    private var lastTime: Instant
    /// Edges read but not yet due, oldest first.
    public private(set) var scheduled: [Edge] = []
    public private(set) var ended = false

    public init(board: Board, chip: MockChip, origin: Instant) {
        self.board = board
        self.chip = chip
        self.origin = origin
        lastTime = origin
    }

    /// Reads what standard input has; parse errors are reported and the line skipped.
    public func readAvailable() {
        var chunk = [UInt8](repeating: 0, count: 4096)
        switch valueOrErrno({ read(STDIN_FILENO, &chunk, chunk.count) }) {
        case .success(let count) where count > 0:
            buffer.append(contentsOf: chunk.prefix(count))
        case .failure(let errno) where errno == .wouldBlock:
            return
        case .success, .failure:
            // The end of the input, or a read that failed: the last line counts without its newline.
            ended = true
            if !buffer.isEmpty { parse(line: buffer); buffer.removeAll() }
            return
        }
        while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
            parse(line: Array(buffer[..<newline]))
            buffer.removeFirst(newline + 1)
        }
    }

    private func parse(line: [UInt8]) {
        lineNumber += 1
        let text = String(decoding: line, as: UTF8.self)
        do {
            let trace = try Trace.parse(text, board: board, source: "<stdin>")
            for edge in trace.edges {
                var due = Edge(line: edge.line, active: edge.active, time: origin + Nanoseconds(rawValue: edge.time.rawValue))
                if due.time < lastTime {
                    Log.warning("shutter: <stdin>:\(lineNumber): time goes backwards; edge taken now")
                    due.time = lastTime
                }
                lastTime = due.time
                scheduled.append(due)
            }
        } catch {
            Log.warning("shutter: <stdin>:\(lineNumber): \(error.message) (line ignored)")
        }
    }

    /// The time the next simulated edge is due.
    public var nextEdgeTime: Instant? { scheduled.first?.time }

    /// Drives every edge due by `now` into the mock chip.
    public func deliver(upTo now: Instant) {
        chip.deliver(&scheduled, upTo: now)
    }
}

extension MockChip {
    /// Brings the chip's clock to `now` and sets every edge of `scheduled` (in time order) due by
    /// then, at its own time, removing it; returns how many were set.
    @discardableResult
    public func deliver(_ scheduled: inout [Edge], upTo now: Instant) -> Int {
        clock.advance(to: max(clock.now, now))
        var delivered = 0
        for edge in scheduled where edge.time <= now {
            set(edge.line, active: edge.active, at: edge.time)
            delivered += 1
        }
        scheduled.removeFirst(delivered)
        return delivered
    }
}
