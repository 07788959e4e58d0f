#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShutterCore
import ShutterAPI
import ShutterHTTP
import ShutterMQTT
import ShutterNode
import ShutterService
import ShutterSystem

let socketOption = OptionSpec(name: "--socket", valueName: "PATH",
                              help: "the daemon's API socket (default $SHUTTER_SOCKET, else your own 'shutter run''s, else the service's)")

/// Where the client commands look for a daemon, for their help.
let socketHelp = """
    Without --socket (or $SHUTTER_SOCKET) the daemon is looked for on your own socket, which a
    'shutter run' of yours serves ($XDG_RUNTIME_DIR/shutter/shutter.sock, else
    /tmp/shutter-UID/shutter.sock), then on the installed service's, \(APISocketPaths.system).
    """

/// A connection to a running daemon's API, one request line out, reply lines in.
final class APIConnection {
    let path: String
    private let descriptor: CInt
    private var buffer: [UInt8] = []

    /// Connects to the first of `paths` (``APISocketPaths/candidates(given:environment:user:)``)
    /// where a daemon answers.
    ///
    /// - Throws: ``CommandFailure`` naming every path tried when none answers, or the reason
    ///   one that exists refused (permission denied).
    init(paths: [String]) throws {
        // A daemon that refuses the connection closes it: the write must fail, not kill us.
        signal(SIGPIPE, SIG_IGN)
        (path, descriptor) = try Self.connect(paths)
    }

    private static func connect(_ paths: [String]) throws -> (String, CInt) {
        for path in paths {
            do {
                return (path, try UnixSocket.connectClient(to: path))
            } catch {
                switch error.errno.rawValue {
                case ENOENT, ECONNREFUSED:
                    continue
                case EACCES:
                    throw CommandFailure("\(path): permission denied (the socket is mode 0660: join the service's group)")
                default:
                    throw CommandFailure(error.description)
                }
            }
        }
        let tried = paths.joined(separator: " or ")
        let start = paths.count == 1 ? "'shutter run --socket \(paths[0])'" : "'shutter run' (or the service: systemctl start shutter)"
        throw CommandFailure("no shutter daemon is listening on \(tried) (start one with \(start), or give --socket)")
    }

    /// Connects to the daemon the command's `--socket` names, else the one found by default.
    convenience init(_ arguments: ParsedArguments) throws {
        try self.init(paths: APISocketPaths.candidates(given: arguments.value("--socket"),
                                                       environment: ProcessInfo.processInfo.environment, user: geteuid()))
    }

    deinit { close(descriptor) }

    /// Sends one request line. A daemon that refused the connection (too many clients) closes
    /// it after one error line: the write fails (EPIPE; SIGPIPE is ignored, see `init`) and that
    /// line says why.
    func send(_ request: APISocketRequest) throws {
        guard Console.write(request.line + "\n", to: descriptor) else {
            let reason = String(cString: strerror(errno))
            if let line = try? readLine(), case .object(let members)? = try? JSONValue.parse(Array(line.utf8)),
               case .string(let message)? = members["error"] {
                throw CommandFailure(message)
            }
            throw CommandFailure("\(path): the daemon closed the connection (\(reason))")
        }
    }

    /// The next line from the daemon; nil when it closed the connection.
    func readLine() throws -> String? {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeFirst(newline + 1)
                return line
            }
            let count: Int
            switch valueOrErrno({ recv(descriptor, &chunk, chunk.count, 0) }) {
            case .success(let received): count = received
            case .failure(let errno): throw CommandFailure("\(path): reading the reply failed: \(String(cString: strerror(errno.rawValue)))")
            }
            if count == 0 { return nil }
            buffer.append(contentsOf: chunk[..<count])
        }
    }

    /// Sends `command` and returns its reply, or fails with the daemon's error text.
    func call(_ command: APICommand, id: JSONValue? = nil) throws -> [String: JSONValue] {
        try call(.command(APIRequest(id: id, command: command)))
    }

    /// Sends `request` and returns its reply, or fails with the daemon's error text.
    func call(_ request: APISocketRequest) throws -> [String: JSONValue] {
        try send(request)
        while let line = try readLine() {
            guard case .object(let members)? = try? JSONValue.parse(Array(line.utf8)) else { continue }
            // Event lines of an earlier subscription are not this reply.
            guard let ok = members["ok"] else { continue }
            guard ok == .bool(true) else {
                if case .string(let message)? = members["error"] { throw CommandFailure(message) }
                throw CommandFailure("the daemon refused: \(line)")
            }
            return members
        }
        throw CommandFailure("\(path): the daemon closed the connection before replying")
    }
}

// MARK: - status

func showStatus(_ arguments: ParsedArguments) throws -> Int32 {
    let connection = try APIConnection(arguments)
    let reply = try connection.call(.status)
    if arguments.has("--json") {
        Console.out(JSONValue.object(reply).text)
        return ExitStatus.success
    }
    func text(_ key: String, in object: [String: JSONValue] = reply) -> String {
        switch object[key] {
        case .string(let string)?: string
        case .number(_, let text)?: text
        case .bool(let value)?: value ? "yes" : "no"
        case .null?, nil: "-"
        case let value?: value.text
        }
    }
    var lines: [String] = []
    lines.append("board \(text("board")), up \(text("uptime")) s")
    if case .object(let camera)? = reply["camera"] {
        lines.append("camera \(text("device", in: camera)): \(text("state", in: camera)); capture available: \(text("captureAvailable")), enabled: \(text("captureEnabled"))")
    }
    var controlsLine = "controls \(text("controlsState"))"
    if reply["currentControl"] != nil { controlsLine += ", current \(text("currentControl"))" }
    if reply["highlightedControl"] != nil { controlsLine += ", chooser on \(text("highlightedControl"))" }
    lines.append(controlsLine)
    if case .array(let controls)? = reply["controls"] {
        for case .object(let control) in controls {
            lines.append("  \(text("id", in: control)) (\(text("label", in: control))): \(text("text", in: control))"
                + (control["enabled"] == .bool(false) ? " (disabled)" : ""))
        }
    }
    if case .object(let counts)? = reply["counters"] {
        lines.append("presses \(text("presses", in: counts)), photos \(text("photos", in: counts)), failures \(text("failures", in: counts)), lost edges \(text("lostEdges", in: counts))")
    }
    lines.append("last photo: \(text("lastPhoto"))")
    if case .object(let clients)? = reply["clients"] {
        lines.append("clients \(text("connected", in: clients)), subscribed \(text("subscribed", in: clients))")
    }
    Console.out(lines.joined(separator: "\n"))
    return ExitStatus.success
}

// MARK: - events

func followEvents(_ arguments: ParsedArguments) throws -> Int32 {
    let connection = try APIConnection(arguments)
    _ = try connection.call(.subscribe(id: nil))
    while let line = try connection.readLine() {
        guard Console.write(line + "\n", to: STDOUT_FILENO) else { return ExitStatus.success }
    }
    Console.error("shutter events: the daemon closed the connection")
    return ExitStatus.failure
}

// MARK: - ctl

/// The `ctl` words as an API command.
func parseControlCommand(_ words: [String]) throws -> APICommand {
    let hint = "(see 'shutter ctl --help')"
    guard let verb = words.first else { throw UsageError(message: "'ctl' needs a command: capture, set, select, enable or disable \(hint)") }
    let rest = Array(words.dropFirst())
    func expect(_ count: Int, _ shape: String) throws {
        guard rest.count == count else { throw UsageError(message: "usage: shutter ctl \(verb) \(shape) \(hint)") }
    }
    switch verb {
    case "capture":
        if rest == ["--rig"] { return .rigCapture }
        try expect(0, "[--rig]")
        return .capture
    case "select":
        try expect(1, "CONTROL")
        return .select(control: rest[0])
    case "set":
        try expect(2, "CONTROL VALUE|#INDEX|TITLE")
        return .set(control: rest[0], to: APICommand.SetValue(word: rest[1]))
    case "enable", "disable":
        try expect(1, "capture|CONTROL")
        let target: APITarget = rest[0] == "capture" ? .capture : .control(rest[0])
        return verb == "enable" ? .enable(target) : .disable(target)
    default:
        throw UsageError(message: "unknown ctl command '\(verb)': capture, set, select, enable or disable \(hint)")
    }
}

func controlDaemon(_ arguments: ParsedArguments) throws -> Int32 {
    let command = try parseControlCommand(arguments.positionals)
    let connection = try APIConnection(arguments)
    if arguments.has("--wait") {
        guard command == .capture || command == .rigCapture else {
            throw UsageError(message: "--wait is for 'capture' only (see 'shutter ctl --help')")
        }
        return try captureAndWait(connection, command: command)
    }
    var reply = try connection.call(command)
    if case .set = command, let summary = APIReply.summary(ofSet: reply) {
        Console.out(summary)
        return ExitStatus.success
    }
    reply["ok"] = nil
    Console.out(reply.isEmpty ? "ok" : JSONValue.object(reply).text)
    return ExitStatus.success
}

/// `ctl --wait capture`: takes a photo and waits until it is saved. Accepted is not saved: the
/// capture's reply comes at once, and the photo event naming this request (`"request": id`)
/// when the file is on disk, or its `captureFailed`.
func captureAndWait(_ connection: APIConnection, command: APICommand = .capture) throws -> Int32 {
    // Subscribed first, so the photo event cannot be missed however fast it comes.
    _ = try connection.call(.subscribe(id: nil))
    let id = JSONValue.string("ctl-\(getpid())")
    _ = try connection.call(command, id: id)
    while let line = try connection.readLine() {
        guard case .object(let members)? = try? JSONValue.parse(Array(line.utf8)), members["request"] == id else { continue }
        switch members["event"] {
        case .string("photo")?:
            if case .string(let path)? = members["path"] { Console.out(path) }
            return ExitStatus.success
        case .string("captureFailed")?:
            var reason = "the capture failed"
            if case .string(let message)? = members["reason"] { reason = message }
            throw CommandFailure(reason)
        default:
            continue
        }
    }
    throw CommandFailure("the daemon closed the connection before the photo was saved")
}

// MARK: - reload

func reloadDaemon(_ arguments: ParsedArguments) throws -> Int32 {
    let connection = try APIConnection(arguments)
    let reply = try connection.call(.reload)
    var text = "reloaded"
    if case .string(let file)? = reply["file"] { text += " \(file)" }
    if case .string(let board)? = reply["board"] { text += " (board \(board))" }
    Console.out(text)
    return ExitStatus.success
}
