import ShutterCapture
import ShutterCore

/// One event the daemon publishes, whichever producer made it, with its line encoded once.
///
/// Standard output, the socket's subscribers, the hooks and the simulator's terminal all get this
/// value: the line to print or send, and what it is, so no receiver reads meaning back out of the
/// text (a hook takes its fields from ``fields``, a front-end may switch on ``kind``).
public struct ServiceEvent: Sendable {
    /// What happened, as its producer said it.
    public enum Kind: Sendable {
        /// The gesture recognizer and the controls: captures, presses, control values.
        case gesture(ShutterEvent)
        /// The camera: a photo on disk, a failed press or camera, the camera ready. `request` is
        /// the `id` of the remote capture a photo or failure answers.
        case capture(CaptureEvent, request: JSONValue?)
        /// The kernel's event buffer overflowed: `count` edges were lost, and the state machines
        /// were resynchronised from the lines' levels when `resynchronised`.
        case edgesLost(count: Int, resynchronised: Bool, at: Instant)
        /// The rig on MQTT: a shot taken or missed, a shot's results collected, the broker connection.
        case rig(RigEvent)
    }

    public let kind: Kind
    /// The event's name, the line's `"event"`.
    public let name: String
    /// The event as one JSON line, as standard output prints it.
    public let line: String
    /// The line's members in order, as text (strings unquoted): what a hook's `{field}` takes.
    public let fields: [(key: String, text: String)]

    /// - Parameter shot: the rig's shot a photo or failure answers (its line says `"shot"`).
    public init(_ kind: Kind, shot: String? = nil) {
        self.kind = kind
        var json: JSONLine
        switch kind {
        case .gesture(let event):
            name = event.name
            json = event.json
        case .capture(let event, let request):
            name = switch event {
            case .photo: "photo"
            case .captureFailed: "captureFailed"
            case .cameraReady: "cameraReady"
            case .focusMode: "focusMode"
            }
            json = event.json
            if let request {
                let plain: String? = if case .string(let text) = request { text } else { nil }
                json.add("request", json: request.text, text: plain)
            }
            if let shot { json.add("shot", shot) }
        case .edgesLost(let count, let resynchronised, let time):
            name = "edgesLost"
            json = JSONLine(event: name, at: time)
            json.add("count", count)
            json.add("resynchronised", resynchronised)
        case .rig(let event):
            json = event.json
            name = event.name
        }
        line = json.description
        fields = json.members ?? []
    }

    /// Whether the event changes what `status` says: a photo or failure, the camera ready, a
    /// control's value, selection or state, capture or a control enabled, a capture's phase.
    public var changesStatus: Bool {
        switch kind {
        case .capture(let event, _):
            if case .focusMode = event { false } else { true }
        case .gesture(let event):
            switch event {
            case .controlValue, .controlSelected, .controlsActive, .controlsInactive, .controlsAdjusting,
                 .captureEnabled, .controlEnabled, .capture:
                true
            default:
                false
            }
        case .edgesLost, .rig:
            false
        }
    }
}

/// What the rig's MQTT side reports as event lines.
public enum RigEvent: Sendable {
    /// This node takes shot `shot` (its own press, or another node's): the frame of `pressedAt`.
    case shot(RigShot, pressedAt: Instant, at: Instant)
    /// This node cannot take the shot's instant, and why.
    case missed(RigShot, reason: String, at: Instant)
    /// The origin collected the rig's results of one of its shots.
    case complete(RigShotCompletion, at: Instant)
    /// The broker connection came or went.
    case connection(connected: Bool, broker: String, reason: String?, at: Instant)

    public var name: String {
        switch self {
        case .shot: "shot"
        case .missed: "shotMissed"
        case .complete: "shotComplete"
        case .connection: "mqtt"
        }
    }

    /// How many silent nodes `shotComplete` names (`silentCount` has them all): the line goes to
    /// standard output and every subscriber, and a rig of hundreds of silent nodes has a problem
    /// that the first few names show as well as all of them.
    static let silentNamesListed = 16

    /// `{"event":"shot","t":…,"shot":…,"origin":…,"at":NS,"pressedAt":…}`, `shotMissed` with
    /// `reason`, `shotComplete` with `nodes`, `photos`, `missed`, `failed`, `silent` (the first
    /// ``silentNamesListed``), `silentCount`, `spreadMs`, `mqtt` with `state`, `broker` and `reason`.
    public var json: JSONLine {
        switch self {
        case .shot(let shot, let pressedAt, let at):
            var line = JSONLine(event: name, at: at)
            line.add("shot", shot.id)
            line.add("origin", shot.origin)
            line.add("at", json: String(shot.at))
            line.add("pressedAt", pressedAt)
            return line
        case .missed(let shot, let reason, let at):
            var line = JSONLine(event: name, at: at)
            line.add("shot", shot.id)
            line.add("origin", shot.origin)
            line.add("reason", reason)
            return line
        case .complete(let completion, let at):
            var line = JSONLine(event: name, at: at)
            line.add("shot", completion.shot)
            line.add("nodes", completion.nodes)
            line.add("photos", completion.photos)
            line.add("missed", completion.missed)
            line.add("failed", completion.failed)
            line.add("silent", json: "[" + completion.silent.prefix(Self.silentNamesListed).map(JSONLine.quoted).joined(separator: ",") + "]")
            line.add("silentCount", completion.silent.count)
            line.add("spreadMs", json: completion.spread.map { JSONLine.number($0.milliseconds, decimals: 3) } ?? "null")
            return line
        case .connection(let connected, let broker, let reason, let at):
            var line = JSONLine(event: name, at: at)
            line.add("state", connected ? "connected" : "disconnected")
            line.add("broker", broker)
            if let reason { line.add("reason", reason) }
            return line
        }
    }
}
