#if canImport(Glibc)
import Glibc
#endif
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShutterCore
import ShutterSystem

/// Where the daemon keeps control values between runs, saved off the event loop.
public final class ControlState: @unchecked Sendable {
    // Unchecked: `lastSaved` is only touched on `queue`.
    public let path: String
    private let queue = DispatchQueue(label: "shutter.control-state")
    private var lastSaved: [String: ControlValue]?

    public init(board: Board, path: String?) throws {
        self.path = path ?? Self.defaultDirectory + "/\(board.name).controls.json"
        let directory = self.path.parentPath
        if !directory.isEmpty {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw CommandFailure("cannot create the state directory \(directory): \(fileErrorText(error)) (use --state FILE or --no-state)")
            }
        }
    }

    /// The state directory: systemd's `STATE_DIRECTORY`, else `$XDG_STATE_HOME/shutter`
    /// (`~/.local/state/shutter`).
    public static var defaultDirectory: String {
        let environment = ProcessInfo.processInfo.environment
        return environment["STATE_DIRECTORY"].flatMap { $0.split(separator: ":").first.map(String.init) }
            ?? (environment["XDG_STATE_HOME"] ?? (FileManager.default.homeDirectoryForCurrentUser.path + "/.local/state")) + "/shutter"
    }

    /// The directory the daemon keeps its state in: that of `--state FILE` when given, else the default.
    public static func stateDirectory(for options: ServiceOptions) -> String {
        guard let path = options.statePath else { return defaultDirectory }
        let directory = path.parentPath
        return directory.isEmpty ? "." : directory
    }

    /// The saved values; none when the file is missing or damaged (the board's initial values apply).
    public func load() -> [String: ControlValue] {
        let values = ControlStateFile.load(path: path)
        queue.sync { lastSaved = values }
        return values
    }

    /// Saves `values` in the background when they changed; a failure is reported, never fatal.
    public func save(_ values: [String: ControlValue]) {
        queue.async { [self] in
            guard values != lastSaved else { return }
            do throws(AtomicFile.Failure) {
                try Self.write(values, to: path)
                lastSaved = values
            } catch {
                Log.warning("shutter: cannot save control values to \(path): \(error.errno)")
            }
        }
    }

    /// Writes `values` to `path` whole or not at all: a power cut leaves the old file or the new
    /// one, never half of one, and the new one lasts once this returns (its directory is synced).
    /// Mode 0666 less the umask, as a file the daemon makes.
    ///
    /// - Throws: ``AtomicFile/Failure`` naming the call that failed.
    static func write(_ values: [String: ControlValue], to path: String) throws(AtomicFile.Failure) {
        try AtomicFile.replace(path, with: Array(ControlStateFile.text(of: values).utf8), mode: 0o666)
    }

    public func waitUntilSaved() { queue.sync {} }
}

/// What went wrong in one of FoundationEssentials' file calls: the C error under its
/// `CocoaError` as ``Errno`` prints it (`Not a directory (errno 20)`), else the error as it describes itself.
func fileErrorText(_ error: any Error) -> String {
    if let cocoa = error as? CocoaError, let posix = cocoa.userInfo["NSUnderlyingError"] as? POSIXError {
        return Errno(rawValue: posix.code.rawValue).description
    }
    if let posix = error as? POSIXError { return Errno(rawValue: posix.code.rawValue).description }
    return "\(error)"
}
