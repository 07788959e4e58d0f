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
/// (`EPIPE`; SIGPIPE is ignored), further lines are discarded and ``goneDescriptor`` becomes
/// readable, so the event loop can end the run cleanly.
public final class LineWriter: Sendable {
    /// Standard output, 4 MiB of lines at most.
    public static let standardOutput = LineWriter(descriptor: STDOUT_FILENO, capacity: 4 << 20)

    private struct State {
        var queuedBytes = 0
        var dropped = 0
        var readerGone = false
    }

    let descriptor: CInt
    let capacity: Int
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "shutter.output")
    /// Readable once the reader has gone: the event loop watches it.
    public let goneDescriptor: CInt
    private let goneSignal: CInt

    public init(descriptor: CInt, capacity: Int) {
        self.descriptor = descriptor
        self.capacity = capacity
        var ends: [CInt] = [-1, -1]
        if pipe(&ends) == 0 {
            for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC); _ = fcntl(end, F_SETFL, O_NONBLOCK) }
        } else {
            ends = [-1, -1]
        }
        goneDescriptor = ends[0]
        goneSignal = ends[1]
        // A reader that goes away must not kill the process mid-photo: writes fail with EPIPE instead.
        signal(SIGPIPE, SIG_IGN)
    }

    /// Whether the reader has gone (a write failed with EPIPE).
    public var readerGone: Bool { state.withLock { $0.readerGone } }

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
                    var one: UInt8 = 1
                    _ = Glibc.write(goneSignal, &one, 1)
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
