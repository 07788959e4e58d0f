import ShutterCore

/// What the daemon answered to one ``APICommand``: a typed result, or a typed refusal.
///
/// Every front-end frames the same value its own way: the Unix socket as one JSON line
/// (``APIReply/line(id:_:)``); HTTP maps ``CommandRefusal/Kind`` to a status code
/// (``CommandRefusal/Kind/httpStatus``) and answers with the same JSON, so no front-end reads
/// meaning back out of a message's text.
public enum CommandResult: Hashable, Sendable {
    /// Done, nothing more to say (`select`, `enable`, `disable`).
    case done
    /// A `set` was done: the control's value now, and the number given when the control took
    /// another value for it (the nearest step), which the reply says in a `note`.
    case set(ControlSetting)
    /// The daemon's state, as `status` reports it.
    case status(ServiceStatus)
    /// A remote capture was accepted: the press is stamped `pressedAt`. Accepted is not saved:
    /// the photo (or its `captureFailed`) follows as an event, carrying the request's `id` as
    /// `request` when the request had one.
    case captureAccepted(pressedAt: Instant, shot: String? = nil)
    /// A reload applied the board `board` read from `file`.
    case reloaded(file: String, board: String)
    /// The command was refused; nothing changed.
    case refused(CommandRefusal)

    /// The refusal, when the command was refused.
    public var refusal: CommandRefusal? {
        if case .refused(let refusal) = self { return refusal }
        return nil
    }
}

/// Why a command was refused: a kind for programs, a message for people.
public struct CommandRefusal: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of refusal, so a front-end answers it without matching text.
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        /// The request could not be read: bad JSON, an unknown command, a missing or wrong field.
        case invalidRequest
        /// No such control, or no picker item by that title.
        case notFound
        /// A value more than half a step outside a control's range (or its list); an index past its items.
        case outOfRange
        /// What the command acts on is disabled (capture, or a control).
        case disabled
        /// It cannot be done now: the camera is not ready, or there is no board file to reload.
        case unavailable
        /// The daemon is too busy for this client: too many clients, or replies not being taken.
        case busy
        /// This client's role may not run the command (a view-only client).
        case forbidden
        /// A reload's board file was refused; the running board keeps going.
        case invalidBoard

        /// The HTTP status a front-end answers this refusal with.
        public var httpStatus: Int {
            switch self {
            case .invalidRequest: 400
            case .forbidden: 403
            case .notFound: 404
            case .disabled: 409
            case .outOfRange, .invalidBoard: 422
            case .busy: 429
            case .unavailable: 503
            }
        }
    }

    public var kind: Kind
    public var message: String
    public var description: String { message }

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// A refusal by the controls, with its kind carried over.
    public init(_ refusal: ControlRefusal) {
        let kind: Kind = switch refusal.kind {
        case .notFound: .notFound
        case .outOfRange: .outOfRange
        case .disabled: .disabled
        case .invalid: .invalidRequest
        }
        self.init(kind, refusal.description)
    }
}

/// The daemon's state as `status` reports it: the board, the camera, capture, the controls,
/// the counters and who is listening.
public struct ServiceStatus: Hashable, Sendable {
    /// One control: its spec, its value and that value as the events write it.
    public struct Control: Hashable, Sendable {
        public var spec: ControlSpec
        public var value: ControlValue
        /// The value as `controlValue` events write it (``ControlDisplay``), so both read alike.
        public var text: String
    }

    /// The camera: the device in use (the board's, else the one found) and its state.
    public struct Camera: Hashable, Sendable {
        public var device: String?
        /// `streaming`, `stopped` (open, idle), `opening` (a reload's new camera) or `absent` (being looked for).
        public var state: String
    }

    /// The clients of the socket: connected, and of those subscribed to events.
    public struct Clients: Hashable, Sendable {
        public var connected: Int
        public var subscribed: Int

        public init(connected: Int, subscribed: Int) {
            self.connected = connected
            self.subscribed = subscribed
        }
    }

    public var board: String
    public var uptime: Nanoseconds
    public var camera: Camera
    public var captureAvailable: Bool
    public var captureEnabled: Bool
    /// The controls' state: `inactive`, `active` or `adjusting`.
    public var controlsState: String
    public var currentControl: String?
    public var highlightedControl: String?
    public var controls: [Control]
    public var counters: ServiceCounters
    public var lastPhoto: String?
    /// Nil when the daemon serves no socket.
    public var clients: Clients?
    /// The rig's broker, when the board has an `mqtt` section.
    public var mqtt: MQTT? = nil

    /// The node's place in its rig and its broker connection.
    public struct MQTT: Hashable, Sendable {
        public var broker: String
        /// `connected` or `disconnected`.
        public var state: String
        public var rig: String
        public var node: String
        /// The rig's nodes seen online, this one included.
        public var nodesOnline: Int

        public init(broker: String, state: String, rig: String, node: String, nodesOnline: Int) {
            self.broker = broker
            self.state = state
            self.rig = rig
            self.node = node
            self.nodesOnline = nodesOnline
        }
    }

    /// The status as the members of a reply line, in the order `shutter status` has always printed them.
    public func encode(into line: inout JSONLine) {
        line.add("board", board)
        line.add("uptime", uptime.milliseconds / 1000, decimals: 3)
        var camera = JSONLine()
        if let device = self.camera.device { camera.add("device", device) }
        camera.add("state", self.camera.state)
        line.add("camera", camera)
        line.add("captureAvailable", captureAvailable)
        line.add("captureEnabled", captureEnabled)
        line.add("controlsState", controlsState)
        if let currentControl { line.add("currentControl", currentControl) }
        if let highlightedControl { line.add("highlightedControl", highlightedControl) }
        line.add("controls", json: "[" + controls.map { $0.json.description }.joined(separator: ",") + "]")
        var counts = JSONLine()
        counts.add("presses", counters.presses)
        counts.add("photos", counters.photos)
        counts.add("failures", counters.failures)
        counts.add("lostEdges", counters.lostEdges)
        line.add("counters", counts)
        line.add("lastPhoto", json: lastPhoto.map(JSONLine.quoted) ?? "null")
        if let clients {
            var members = JSONLine()
            members.add("connected", clients.connected)
            members.add("subscribed", clients.subscribed)
            line.add("clients", members)
        }
        if let mqtt {
            var members = JSONLine()
            members.add("broker", mqtt.broker)
            members.add("state", mqtt.state)
            members.add("rig", mqtt.rig)
            members.add("node", mqtt.node)
            members.add("nodesOnline", mqtt.nodesOnline)
            line.add("mqtt", members)
        }
    }
}

extension ServiceStatus.Control {
    /// The control as `status` lists it.
    public var json: JSONLine {
        var line = JSONLine()
        line.add("id", spec.id)
        line.add("label", spec.label)
        line.add("kind", spec.kind.name)
        switch spec.kind {
        case .picker(let count, let titles):
            let names = titles ?? (0..<count).map(String.init)
            line.add("titles", json: "[" + names.map(JSONLine.quoted).joined(separator: ",") + "]")
        case .slider(let values), .systemZoom(let values), .systemExposureBias(let values), .lensPosition(let values):
            switch values {
            case .range(let range, let step):
                line.add("range", json: "[\(JSONLine.number(range.lowerBound, decimals: 12)),\(JSONLine.number(range.upperBound, decimals: 12))]")
                if let step { line.add("step", step, decimals: 12) }
            case .list(let list):
                line.add("values", json: "[" + list.map { JSONLine.number($0, decimals: 12) }.joined(separator: ",") + "]")
            }
            // What a client drawing the scale needs to move as a swipe does and show the text's numbers.
            line.add("scale", spec.scale.rawValue)
            if let unit = spec.unit { line.add("unit", unit) }
            if let multiplier = spec.displayMultiplier { line.add("displayMultiplier", multiplier, decimals: 12) }
        }
        switch value {
        case .number(let number): line.add("value", number, decimals: 12)
        case .index(let index): line.add("index", index)
        }
        line.add("text", text)
        line.add("enabled", spec.enabled)
        return line
    }
}
