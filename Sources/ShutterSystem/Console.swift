#if canImport(Glibc)
import Glibc
#endif
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
            switch valueOrErrno({ Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset) }) {
            case .success(let written):
                offset += written
            case .failure(let errno) where errno == .wouldBlock && waitsForRoom:
                var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                _ = poll(&ready, 1, 100)
            case .failure:
                // errno stays the write's, for a caller that says why.
                return false
            }
        }
        return true
    }
}
