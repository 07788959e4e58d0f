#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import ShutterCore
import Synchronization

/// Lines for a descriptor (standard output) written by a background queue, so the event loop
/// never waits for a pipe reader that stopped reading.
///
/// At most `capacity` bytes wait; lines beyond that are dropped and counted, and once there is
/// room again one `outputDropped` {`count`} line says how many. When the reader goes away
/// (`EPIPE`; SIGPIPE is ignored), further lines are discarded and the bells given to
/// ``ringWhenGone(_:)`` ring, so the event loop can end the run cleanly.
public final class LineWriter: Sendable {
    /// Standard output, 4 MiB of lines at most.
    public static let standardOutput = LineWriter(descriptor: STDOUT_FILENO, capacity: 4 << 20)

    private struct State {
        var queuedBytes = 0
        var dropped = 0
        var readerGone = false
        /// Rung once the reader has gone: each event loop's that wants to know.
        var goneBells: [LoopBell] = []
    }

    let descriptor: CInt
    let capacity: Int
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "shutter.output")

    public init(descriptor: CInt, capacity: Int) {
        self.descriptor = descriptor
        self.capacity = capacity
        // A reader that goes away must not kill the process mid-photo: writes fail with EPIPE instead.
        signal(SIGPIPE, SIG_IGN)
    }

    /// Whether the reader has gone (a write failed with EPIPE).
    public var readerGone: Bool { state.withLock { $0.readerGone } }

    /// Rings `bell` when the reader goes, or now when it has gone already. Bells of loops that
    /// are gone are let go of here, so a process that makes many loops (tests) keeps few.
    public func ringWhenGone(_ bell: LoopBell) {
        let gone = state.withLock { state in
            if !state.readerGone {
                state.goneBells.removeAll { $0.isSilent }
                state.goneBells.append(bell)
            }
            return state.readerGone
        }
        if gone { bell.ring() }
    }

    /// Queues `text` for writing; never blocks. Dropped (and counted) when `capacity` bytes wait already.
    public func send(_ text: String) {
        let bytes = text.utf8.count
        let report: Int? = state.withLock { state in
            if state.readerGone { return nil }
            if state.queuedBytes + bytes > capacity {
                state.dropped += 1
                return nil
            }
            state.queuedBytes += bytes
            // Room again after a loss: say how much was lost before the line that fits.
            defer { state.dropped = 0 }
            return state.dropped
        }
        guard let report else { return }
        var text = text
        if report > 0 {
            var line = JSONLine(event: "outputDropped", at: monotonicNow())
            line.add("count", report)
            text = line.description + "\n" + text
        }
        let pending = text
        queue.async { [self] in
            let written = writeAll(pending)
            state.withLock { state in
                state.queuedBytes -= bytes
                if !written, !state.readerGone {
                    state.readerGone = true
                    for bell in state.goneBells { bell.ring() }
                    state.goneBells = []
                }
            }
        }
    }

    /// Blocks until every queued line is written or discarded.
    public func flush() { queue.sync {} }

    /// Writes all of `text` (blocking: this runs on the writer's queue); `false` when the reader has gone.
    private func writeAll(_ text: String) -> Bool {
        if state.withLock({ $0.readerGone }) { return true }
        // A non-blocking descriptor (standard output shared with the loop): wait for room, off the loop.
        return Console.write(text, to: descriptor, waitsForRoom: true)
    }
}
