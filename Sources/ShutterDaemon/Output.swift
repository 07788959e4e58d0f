#if canImport(Glibc)
import Glibc
#endif
import ShutterCore

/// Writes lines to standard output and standard error.
///
/// Live commands flush every line so a pipe reader (a photo booth script, `jq`)
/// sees each event at once; replay buffers and flushes at the end.
public enum Console {
    public static func out(_ line: String) {
        write(line + "\n", to: STDOUT_FILENO)
    }

    public static func error(_ line: String) {
        write(line + "\n", to: STDERR_FILENO)
    }

    /// Writes all of `text`, retrying short writes and EINTR.
    /// - Returns: `false` when the descriptor refused (a closed pipe, a full disk).
    @discardableResult
    public static func write(_ text: String, to descriptor: CInt) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += written
            }
            return true
        }
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
