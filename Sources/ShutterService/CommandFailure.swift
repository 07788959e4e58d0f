import ShutterCore

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
