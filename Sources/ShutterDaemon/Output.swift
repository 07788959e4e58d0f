#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import ShutterCapture
import ShutterCore
import Synchronization

/// Writes lines to standard output and standard error.
///
/// Every line goes out at once so a pipe reader (a photo booth script, `jq`) sees each event
/// when it happens; standard output goes through ``LineWriter/standardOutput``, so a reader that
/// stops reading never blocks the event loop.
public enum Console {
    public static func out(_ line: String) {
        LineWriter.standardOutput.send(line + "\n")
    }

    /// Waits until every line given to ``out(_:)`` is written (or the reader has gone).
    public static func flush() { LineWriter.standardOutput.flush() }

    public static func error(_ line: String) {
        if let divert = errorDiversion.withLock({ $0 }) {
            divert(line)
            return
        }
        write(line + "\n", to: STDERR_FILENO)
    }

    private static let errorDiversion = Mutex<(@Sendable (String) -> Void)?>(nil)

    /// Sends every line for standard error to `receiver` instead (nil: to standard error again):
    /// the terminal overlay prints them above itself when standard error is its terminal.
    public static func divertErrors(_ receiver: (@Sendable (String) -> Void)?) {
        errorDiversion.withLock { $0 = receiver }
    }

    /// Writes all of `text`, retrying short writes and EINTR.
    ///
    /// The corresponding C function is `write`.
    /// - Parameter waitsForRoom: on a non-blocking descriptor, wait (poll) for room when it is full
    ///   instead of failing: only for writers that run off the event loop.
    /// - Returns: `false` when the descriptor refused (a closed pipe, a full disk).
    @discardableResult
    public static func write(_ text: String, to descriptor: CInt, waitsForRoom: Bool = false) -> Bool {
        var text = text
        return text.withUTF8 { write(UnsafeRawBufferPointer($0), to: descriptor, waitsForRoom: waitsForRoom) }
    }

    /// Writes all of `bytes`, as ``write(_:to:waitsForRoom:)-(String,_,_)`` does a text's.
    @discardableResult
    public static func write(_ bytes: [UInt8], to descriptor: CInt, waitsForRoom: Bool = false) -> Bool {
        bytes.withUnsafeBytes { write($0, to: descriptor, waitsForRoom: waitsForRoom) }
    }

    private static func write(_ bytes: UnsafeRawBufferPointer, to descriptor: CInt, waitsForRoom: Bool) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN, waitsForRoom {
                    var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&ready, 1, 100)
                    continue
                }
                return false
            }
            offset += written
        }
        return true
    }
}

/// Exit statuses: 1 for a failure at run time (bad board, missing hardware), 2 for a usage mistake.
public enum ExitStatus {
    public static let success: Int32 = 0
    public static let failure: Int32 = 1
    public static let usage: Int32 = 2
}

/// A failure that ends a command with a message and exit status 1.
public struct CommandFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Loads a board file or fails with the board error's text.
public func loadBoard(_ path: String) throws -> Board {
    do {
        return try Board.load(path: path)
    } catch {
        throw CommandFailure(error.description)
    }
}

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
