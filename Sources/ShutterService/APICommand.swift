import ShutterCore

/// One request of the daemon's API, whatever carried it (the Unix socket today; HTTP and MQTT
/// parse into the same commands and frame the same ``CommandResult``s).
///
/// Receiving events is not a command: each front-end delivers them its own way (the socket's
/// `subscribe`, server-sent events, MQTT topics); see ``APISocketRequest``.
public enum APICommand: Hashable, Sendable {
    case status
    case capture
    /// A capture by the whole rig (`"rig": true`): this node's photo, and the shot published to
    /// the rig's other nodes over MQTT, which take the frame of the same instant.
    case rigCapture
    case set(control: String, to: SetValue)
    case select(control: String)
    case enable(APITarget)
    case disable(APITarget)
    /// Reads the board file again, as SIGHUP does, and answers whether it applied.
    case reload

    /// What `set` was given: a slider's value, a picker's index or an item's title.
    public enum SetValue: Hashable, Sendable {
        case value(Double)
        case index(Int)
        case title(String)
    }

    /// The names `cmd` may take.
    public static let names = ["status", "capture", "set", "select", "enable", "disable", "reload"]
}

extension APICommand.SetValue {
    /// What a word on `shutter ctl set`'s command line gives: `#N` an index, a number or a
    /// fraction (`1/3`, ``WrittenNumber``) a value, anything else a title. A picker whose titles
    /// are numbers or fractions ("200", "1/125") still takes its item: the daemon matches the value.
    public init(word: String) {
        if word.hasPrefix("#"), let index = Int(word.dropFirst()) {
            self = .index(index)
        } else if let number = WrittenNumber.parse(word) {
            self = .value(number)
        } else {
            self = .title(word)
        }
    }
}

/// What `enable` and `disable` act on.
public enum APITarget: Hashable, Sendable {
    case capture
    case control(String)
}

/// A request: its command and the `id` to echo (as sent: a string, a number or null).
public struct APIRequest: Hashable, Sendable {
    public var id: JSONValue?
    public var command: APICommand

    public init(id: JSONValue?, command: APICommand) {
        self.id = id
        self.command = command
    }
}

/// A refused request: the `id` when one could be read, and what was wrong.
public struct APIRequestError: Error, Hashable, Sendable {
    public var id: JSONValue?
    public var message: String

    public init(id: JSONValue?, message: String) {
        self.id = id
        self.message = message
    }
}

/// One line a socket client sends: a command for the daemon, or `subscribe`, which the socket
/// serves itself (its events are the socket's way of delivering them).
public enum APISocketRequest: Hashable, Sendable {
    case command(APIRequest)
    /// From now on, every event line goes to this client too.
    case subscribe(id: JSONValue?)

    /// Parses one request line (without its newline); see ``APIRequest/parse(_:otherCommands:)``.
    public static func parse<Bytes: Collection<UInt8>>(_ line: Bytes) -> Result<APISocketRequest, APIRequestError> {
        let value: JSONValue
        do {
            value = try JSONValue.parse(line)
        } catch {
            return .failure(APIRequestError(id: nil, message: error.description))
        }
        if case .object(let members) = value, members["cmd"] == .string("subscribe") {
            let id = members["id"]
            if let id, let problem = APIRequest.idProblem(id) { return .failure(APIRequestError(id: nil, message: problem)) }
            if let key = members.keys.sorted().first(where: { $0 != "cmd" && $0 != "id" }) {
                return .failure(APIRequestError(id: id, message: "'subscribe' takes no '\(key.prefix(64))'"))
            }
            return .success(.subscribe(id: id))
        }
        return APIRequest.parse(value, otherCommands: ["subscribe"]).map(APISocketRequest.command)
    }

    /// The request as one line, as the command-line client sends it.
    public var line: String {
        switch self {
        case .command(let request): return request.line
        case .subscribe(let id):
            var members: [String: JSONValue] = ["cmd": .string("subscribe")]
            if let id { members["id"] = id }
            return JSONValue.object(members).text
        }
    }
}

extension APIRequest {
    /// Why a request's `id` is refused, or `nil`: a string, a number or null. A string id is
    /// echoed in replies and events and fills a hook's `{request}` argument, so it may not begin
    /// with `-` (a hook would read it as an option) or hold control characters.
    static func idProblem(_ id: JSONValue) -> String? {
        switch id {
        case .number, .null: return nil
        case .string(let text):
            if text.hasPrefix("-") { return "'id' must not begin with '-' (it reaches hooks as an argument)" }
            if text.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7f...0x9f).contains($0.value) }) {
                return "'id' must not hold control characters"
            }
            return nil
        default: return "'id' must be a string or a number, not \(id.kindName)"
        }
    }

    /// Parses one request line (without its newline).
    ///
    /// Unknown commands, unknown or missing fields and wrong types are refused with a message that
    /// says what to send instead; nothing is guessed.
    public static func parse<Bytes: Collection<UInt8>>(_ line: Bytes) -> Result<APIRequest, APIRequestError> {
        let value: JSONValue
        do {
            value = try JSONValue.parse(line)
        } catch {
            return .failure(APIRequestError(id: nil, message: error.description))
        }
        return parse(value)
    }

    /// Reads a request from a parsed JSON value; `otherCommands` are the names a front-end serves
    /// itself, listed with the daemon's in the message for an unknown command.
    public static func parse(_ value: JSONValue, otherCommands: [String] = []) -> Result<APIRequest, APIRequestError> {
        let names = (APICommand.names + otherCommands).joined(separator: ", ")
        guard case .object(let members) = value else {
            return .failure(APIRequestError(id: nil, message: "a request is a JSON object like {\"cmd\":\"status\"}, not \(value.kindName)"))
        }
        var id: JSONValue?
        if let given = members["id"] {
            if let problem = idProblem(given) { return .failure(APIRequestError(id: nil, message: problem)) }
            id = given
        }
        func fail(_ message: String) -> Result<APIRequest, APIRequestError> { .failure(APIRequestError(id: id, message: message)) }
        guard let cmdValue = members["cmd"] else { return fail("missing 'cmd' (one of \(names))") }
        guard case .string(let cmd) = cmdValue else { return fail("'cmd' must be a string, not \(cmdValue.kindName)") }
        let allowed: Set<String>
        switch cmd {
        case "status", "reload": allowed = []
        case "capture": allowed = ["rig"]
        case "set": allowed = ["control", "value", "index", "title"]
        case "select": allowed = ["control"]
        case "enable", "disable": allowed = ["capture", "control"]
        default:
            return fail("unknown command '\(cmd.prefix(64))' (one of \(names))")
        }
        for key in members.keys.sorted() where key != "cmd" && key != "id" && !allowed.contains(key) {
            return fail("'\(cmd)' takes no '\(key.prefix(64))'" + (allowed.isEmpty ? "" : " (it takes \(allowed.sorted().joined(separator: ", ")))"))
        }
        func string(_ key: String) -> Result<String?, APIRequestError> {
            guard let member = members[key] else { return .success(nil) }
            guard case .string(let text) = member, !text.isEmpty else {
                return .failure(APIRequestError(id: id, message: "'\(key)' must be a non-empty string, not \(member.kindName)"))
            }
            return .success(text)
        }
        let command: APICommand
        switch cmd {
        case "status": command = .status
        case "capture":
            switch members["rig"] {
            case nil, .bool(false)?: command = .capture
            case .bool(true)?: command = .rigCapture
            case let other?: return fail("'rig' must be true or false, not \(other.kindName)")
            }
        case "reload": command = .reload
        case "select":
            switch string("control") {
            case .failure(let error): return .failure(error)
            case .success(nil): return fail("'select' needs 'control' (a control id)")
            case .success(let control?): command = .select(control: control)
            }
        case "set":
            let control: String
            switch string("control") {
            case .failure(let error): return .failure(error)
            case .success(nil): return fail("'set' needs 'control' (a control id)")
            case .success(let given?): control = given
            }
            let given = ["value", "index", "title"].filter { members[$0] != nil }
            guard given.count == 1 else {
                return fail("'set' needs exactly one of 'value' (sliders), 'index' or 'title' (pickers)")
            }
            switch (given[0], members[given[0]]!) {
            case ("value", .number(let number, _)):
                command = .set(control: control, to: .value(number))
            case ("value", .string(let text)):
                // JSON has no fractions: a third of an EV comes as the string "1/3".
                guard let number = WrittenNumber.parse(text) else {
                    return fail("'value' must be a number or a fraction such as \"1/3\", not '\(text.prefix(64))'")
                }
                command = .set(control: control, to: .value(number))
            case ("index", .number(let number, _)):
                guard number == number.rounded(), abs(number) < 1e9 else { return fail("'index' must be a whole number") }
                command = .set(control: control, to: .index(Int(number)))
            case ("title", .string(let title)):
                command = .set(control: control, to: .title(title))
            case (let key, let member):
                return fail("'\(key)' must be \(key == "title" ? "a string" : key == "value" ? "a number or a fraction such as \"1/3\"" : "a number"), not \(member.kindName)")
            }
        default:
            let hasCapture = members["capture"] != nil
            let control: String?
            switch string("control") {
            case .failure(let error): return .failure(error)
            case .success(let given): control = given
            }
            if hasCapture {
                guard members["capture"] == .bool(true) else { return fail("'capture' must be true") }
            }
            let target: APITarget
            switch (hasCapture, control) {
            case (true, nil): target = .capture
            case (false, let control?): target = .control(control)
            default: return fail("'\(cmd)' needs either \"capture\": true or \"control\": ID")
            }
            command = cmd == "enable" ? .enable(target) : .disable(target)
        }
        return .success(APIRequest(id: id, command: command))
    }

    /// The request as one line, as the command-line client sends it.
    public var line: String {
        var members: [String: JSONValue] = [:]
        if let id { members["id"] = id }
        func put(_ cmd: String) { members["cmd"] = .string(cmd) }
        switch command {
        case .status: put("status")
        case .capture: put("capture")
        case .rigCapture:
            put("capture")
            members["rig"] = .bool(true)
        case .reload: put("reload")
        case .select(let control):
            put("select")
            members["control"] = .string(control)
        case .set(let control, let value):
            put("set")
            members["control"] = .string(control)
            switch value {
            case .value(let number): members["value"] = .number(number, text: JSONLine.number(number, decimals: 12))
            case .index(let index): members["index"] = .number(Double(index), text: String(index))
            case .title(let title): members["title"] = .string(title)
            }
        case .enable(let target), .disable(let target):
            if case .enable = command { put("enable") } else { put("disable") }
            switch target {
            case .capture: members["capture"] = .bool(true)
            case .control(let control): members["control"] = .string(control)
            }
        }
        return JSONValue.object(members).text
    }
}

/// A reply line: `{"id":…,"ok":true,…}`, or `{"id":…,"ok":false,"kind":"…","error":"…"}`.
public enum APIReply {
    /// The socket's framing of a command's result.
    public static func line(id: JSONValue?, _ result: CommandResult) -> String {
        switch result {
        case .done:
            return success(id: id)
        case .set(let setting):
            // The value taken, as the `controlValue` event writes it, with 12 decimals: a client
            // that sent 0.33 reads back the third it set.
            return success(id: id) { line in
                line.add("control", setting.control)
                switch setting.value {
                case .number(let number): line.add("value", number, decimals: 12)
                case .index(let index): line.add("index", index)
                }
                line.add("text", setting.display.text)
                if let given = setting.given {
                    line.add("given", json: JSONLine.number(given, decimals: 12))
                    if let note = setting.note { line.add("note", note) }
                }
            }
        case .status(let status):
            return success(id: id) { status.encode(into: &$0) }
        case .captureAccepted(let pressedAt, let shot):
            return success(id: id) { line in
                line.add("pressedAt", pressedAt)
                if let shot { line.add("shot", shot) }
                // Accepted, not saved: the photo event names this request.
                if let id { line.add("request", json: id.text) }
            }
        case .reloaded(let file, let board):
            return success(id: id) { $0.add("file", file); $0.add("board", board) }
        case .refused(let refusal):
            return failure(id: id, refusal)
        }
    }

    /// What `shutter ctl set` prints for a `set` reply: its `note` when the value taken is not
    /// the one given ("0.33 taken as +⅓ EV (0.333333)"), else the control and its value
    /// ("exposure: +⅓ EV"); nil for a reply that is neither.
    public static func summary(ofSet reply: [String: JSONValue]) -> String? {
        if case .string(let note)? = reply["note"] { return note }
        guard case .string(let control)? = reply["control"], case .string(let text)? = reply["text"] else { return nil }
        return "\(control): \(text)"
    }

    public static func success(id: JSONValue?, _ fill: (inout JSONLine) -> Void = { _ in }) -> String {
        var line = JSONLine()
        if let id { line.add("id", json: id.text) }
        line.add("ok", true)
        fill(&line)
        return line.description
    }

    public static func failure(id: JSONValue?, _ refusal: CommandRefusal) -> String {
        var line = JSONLine()
        if let id { line.add("id", json: id.text) }
        line.add("ok", false)
        line.add("kind", refusal.kind.rawValue)
        line.add("error", refusal.message)
        return line.description
    }
}
