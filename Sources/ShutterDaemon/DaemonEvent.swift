import ShutterCapture
import ShutterCore

/// One event the daemon publishes, whichever producer made it, with its line encoded once.
///
/// Standard output, the socket's subscribers, the hooks and the simulator's terminal all get this
/// value: the line to print or send, and what it is, so no receiver reads meaning back out of the
/// text (a hook takes its fields from ``fields``, a front-end may switch on ``kind``).
public struct DaemonEvent: Sendable {
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
    }

    public let kind: Kind
    /// The event's name, the line's `"event"`.
    public let name: String
    /// The event as one JSON line, as standard output prints it.
    public let line: String
    /// The line's members in order, as text (strings unquoted): what a hook's `{field}` takes.
    public let fields: [(key: String, text: String)]

    public init(_ kind: Kind) {
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
            }
            json = event.json
            if let request {
                let plain: String? = if case .string(let text) = request { text } else { nil }
                json.add("request", json: request.text, text: plain)
            }
        case .edgesLost(let count, let resynchronised, let time):
            name = "edgesLost"
            json = JSONLine(event: name, at: time)
            json.add("count", count)
            json.add("resynchronised", resynchronised)
        }
        line = json.description
        fields = json.members ?? []
    }
}
