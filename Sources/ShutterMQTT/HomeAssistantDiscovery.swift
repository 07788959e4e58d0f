import ShutterCore
import ShutterService

/// Home Assistant's MQTT device discovery for one node: one retained message that makes the node a
/// device with its buttons, controls and counters.
///
/// Device-based discovery (Home Assistant 2024.11 and later): the message goes to
/// `<discoveryPrefix>/device/<object id>/config`, retained, and carries `dev` (the device), `o`
/// (the origin, this program) and `cmps` (one component per entity or trigger, each with its
/// platform `p`). Home Assistant re-reads retained discovery when it restarts; it also announces
/// itself with `online` on ``birthTopic(discoveryPrefix:)``, and the node sends the message again
/// then, so a broker that lost its retained messages heals. An empty retained message on the
/// same topic removes the device.
///
/// What it offers, all on the node's topics (`P/R/N/…`):
/// - an `event` entity and a `device_automation` trigger per gesture (``gestures``) from `event`;
/// - two `button`s, through `cmd`: take a photo here, and take one with the whole rig;
/// - a `number` per slider with a range, a `select` per picker and per slider with a list of
///   values, set through `cmd` and read from the retained `status`;
/// - `sensor`s for the photos taken, the last photo's path and the camera's state, from `status`;
/// - with live view, an `image` of the latest photo, fetched over HTTP.
///
/// Every entity is unavailable unless `availability` says `online`.
///
/// References: https://www.home-assistant.io/integrations/mqtt/ (device discovery payload,
/// availability, discovery topic), and the platform pages named at each component.
public struct HomeAssistantDiscovery: Sendable {
    /// The node's name, as its topics spell it.
    public var node: String
    /// The rig the node belongs to.
    public var rig: String
    /// The first levels of every topic (`shutter`).
    public var topicPrefix: String
    /// Home Assistant's discovery prefix (`homeassistant`).
    public var discoveryPrefix: String
    /// The board's name, shown as the device's model.
    public var boardName: String
    /// The board's controls, in order.
    public var controls: [ControlSpec]
    /// The live view's address (`http://rig-a.local:8080`), when live view is on and Home Assistant
    /// may fetch photos from it without a token (the board's `http.viewWithoutToken`).
    public var liveViewURL: String?
    /// The program's version, shown as the device's and origin's software version.
    public var softwareVersion: String?
    /// Where the daemon runs (its working directory): a photo path relative to it (a board whose
    /// output directory is relative, as the simulator's `photos`) is shown from there.
    public var workingDirectory: String

    public init(node: String, rig: String, topicPrefix: String = "shutter", discoveryPrefix: String = "homeassistant",
                board: Board, liveViewURL: String? = nil, softwareVersion: String? = shutterVersion, workingDirectory: String = "/") {
        self.node = node
        self.rig = rig
        self.topicPrefix = topicPrefix
        self.discoveryPrefix = discoveryPrefix
        self.boardName = board.name
        self.controls = board.controls
        // Without a trailing slash, so routes append as `/photos/…`.
        var url = liveViewURL
        while url?.hasSuffix("/") == true { url?.removeLast() }
        self.liveViewURL = url?.isEmpty == true ? nil : url
        self.softwareVersion = softwareVersion
        var directory = workingDirectory
        while directory.count > 1, directory.hasSuffix("/") { directory.removeLast() }
        self.workingDirectory = directory
    }

    // MARK: Topics

    /// `P/R/N`, the start of the node's own topics.
    public var nodeTopic: String { "\(topicPrefix)/\(rig)/\(node)" }
    /// Every event line (not retained).
    public var eventTopic: String { nodeTopic + "/event" }
    /// The retained `status` reply line.
    public var statusTopic: String { nodeTopic + "/status" }
    /// Retained `online` / `offline`.
    public var availabilityTopic: String { nodeTopic + "/availability" }
    /// Requests, as socket API lines.
    public var commandTopic: String { nodeTopic + "/cmd" }

    /// The rig's and the node's names as Home Assistant accepts them in a discovery topic,
    /// `<rig>_<node>` in `[a-zA-Z0-9_-]`, every other character (a host name's dots) replaced by
    /// `_`: two rigs on one broker may each have a node `front`.
    public var objectID: String { Self.identifier(rig + "_" + node, keeping: "-") }

    /// Where the discovery message goes: `<discoveryPrefix>/device/<object id>/config`, retained.
    public var topic: String { "\(discoveryPrefix)/device/\(objectID)/config" }

    /// Where earlier versions sent it, named by the node alone: the node clears it (an empty
    /// retained message), so the device it made goes from Home Assistant.
    public var legacyTopic: String { "\(discoveryPrefix)/device/\(Self.identifier(node, keeping: "-"))/config" }

    /// The device's identifier, and the start of every entity's unique id.
    public var deviceID: String { "shutter_\(objectID)" }

    /// The topic Home Assistant announces itself on (`<discoveryPrefix>/status`): subscribe to it
    /// and send the discovery message again when ``isBirth(_:)`` says so.
    public static func birthTopic(discoveryPrefix: String) -> String { discoveryPrefix + "/status" }

    /// Whether a message on the birth topic says Home Assistant came online (`online`; it sends
    /// `offline` as its last will).
    public static func isBirth<Bytes: Collection<UInt8>>(_ payload: Bytes) -> Bool {
        payload.elementsEqual("online".utf8)
    }

    // MARK: The message

    /// The discovery message as JSON text (keys sorted: the same node and board give the same bytes).
    public var text: String { payload.text }

    /// The discovery message.
    public var payload: JSONValue {
        var device: [String: JSONValue] = [
            "ids": .array([.string(deviceID)]),
            "name": .string(node),
            "mf": .string("shutter"),
            "mdl": .string(boardName),
        ]
        if let softwareVersion { device["sw"] = .string(softwareVersion) }
        if let liveViewURL, liveViewURL.hasPrefix("http://") || liveViewURL.hasPrefix("https://") {
            // Home Assistant refuses the whole device when this is not an http(s) address.
            device["cu"] = .string(liveViewURL + "/")
        }
        var origin: [String: JSONValue] = ["name": .string("shutter")]
        if let softwareVersion { origin["sw"] = .string(softwareVersion) }
        return .object(["dev": .object(device), "o": .object(origin), "cmps": .object(components)])
    }

    /// Every component by its id (unique within the device).
    public var components: [String: JSONValue] {
        var components: [String: JSONValue] = [:]
        func add(_ id: String, platform: String, _ fields: [String: JSONValue]) {
            var fields = fields
            fields["p"] = .string(platform)
            if platform != "device_automation" {
                fields["unique_id"] = .string("\(deviceID)_\(id)")
                // The entity's id names the rig and the node too (`sensor.studio_front_photos`),
                // rather than Home Assistant's default from the device's name alone.
                fields["default_entity_id"] = .string(platform + "." + Self.entityObjectID(rig + "_" + node + "_" + id))
                fields["availability_topic"] = .string(availabilityTopic)
                fields["payload_available"] = .string("online")
                fields["payload_not_available"] = .string("offline")
            }
            precondition(components[id] == nil, "two components named \(id)")
            components[id] = .object(fields)
        }

        // https://www.home-assistant.io/integrations/event.mqtt/
        add("gesture", platform: "event", [
            "name": .string("Shutter"),
            "state_topic": .string(eventTopic),
            "event_types": .array(Self.gestures.map { .string($0.eventType) }),
            "value_template": .string(Self.eventTemplate),
            "device_class": .string("button"),
        ])
        // https://www.home-assistant.io/integrations/device_trigger.mqtt/
        for gesture in Self.gestures {
            add("trigger_" + Self.identifier(gesture.eventType), platform: "device_automation", [
                "automation_type": .string("trigger"),
                "topic": .string(eventTopic),
                "type": .string(gesture.triggerType),
                "subtype": .string(gesture.subtype),
                "payload": .string(gesture.key),
                "value_template": .string(Self.gestureKeyTemplate),
            ])
        }
        // https://www.home-assistant.io/integrations/button.mqtt/
        add("take_photo", platform: "button", [
            "name": .string("Take photo"),
            "command_topic": .string(commandTopic),
            "payload_press": .string(#"{"cmd":"capture"}"#),
            "icon": .string("mdi:camera"),
        ])
        // The same press for the whole rig: every node takes the frame of this instant.
        add("take_rig_photo", platform: "button", [
            "name": .string("Take rig photo"),
            "command_topic": .string(commandTopic),
            "payload_press": .string(#"{"cmd":"capture","rig":true}"#),
            "icon": .string("mdi:camera-burst"),
        ])
        for control in controls {
            if let (platform, fields) = component(for: control) {
                add("control_" + Self.identifier(control.id), platform: platform, fields)
            }
        }
        // https://www.home-assistant.io/integrations/sensor.mqtt/
        add("photos", platform: "sensor", [
            "name": .string("Photos taken"),
            "state_topic": .string(statusTopic),
            "value_template": .string("{{ value_json.counters.photos }}"),
            "state_class": .string("total_increasing"),
            "icon": .string("mdi:image-multiple"),
        ])
        add("last_photo", platform: "sensor", [
            "name": .string("Last photo"),
            "state_topic": .string(statusTopic),
            "value_template": .string(lastPhotoTemplate),
            "icon": .string("mdi:image"),
        ])
        add("camera", platform: "sensor", [
            "name": .string("Camera"),
            "state_topic": .string(statusTopic),
            "value_template": .string("{{ value_json.camera.state }}"),
            "entity_category": .string("diagnostic"),
            "icon": .string("mdi:camera-iris"),
        ])
        // https://www.home-assistant.io/integrations/image.mqtt/
        if let liveViewURL {
            add("latest_photo", platform: "image", [
                "name": .string("Latest photo"),
                "url_topic": .string(statusTopic),
                "url_template": .string(Self.imageTemplate(base: liveViewURL)),
            ])
        }
        return components
    }

    /// A control's entity: a `number` for a slider with a range, a `select` for a picker or a
    /// slider with a list of values; nil for a list whose values show alike (no option would
    /// name one value).
    func component(for control: ControlSpec) -> (String, [String: JSONValue])? {
        let id = Self.templateString(control.id)
        let pick = #"{% for c in value_json.controls if c.id == "# + Self.jinjaString(control.id) + " %}"
        var fields: [String: JSONValue] = [
            "name": .string(control.label),
            "command_topic": .string(commandTopic),
            "state_topic": .string(statusTopic),
        ]
        switch control.kind {
        case .picker(let count, let titles):
            // https://www.home-assistant.io/integrations/select.mqtt/
            let names = titles ?? (0..<count).map(String.init)
            fields["options"] = .array(names.map(JSONValue.string))
            fields["value_template"] = .string(pick + "{{ c.titles[c.index] }}{% endfor %}")
            // A picker without titles is set by index: its options are the indices' digits.
            fields["command_template"] = .string(titles == nil
                ? #"{"cmd":"set","control":"# + id + #","index":{{ value }}}"#
                : #"{"cmd":"set","control":"# + id + #","title":{{ value | to_json }}}"#)
            return ("select", fields)
        case .slider(let values), .systemZoom(let values), .systemExposureBias(let values), .lensPosition(let values):
            switch values {
            case .range(let range, let step):
                // https://www.home-assistant.io/integrations/number.mqtt/
                fields["min"] = Self.number(range.lowerBound)
                // The last step: Home Assistant's slider steps from `min`, and ends on a step then.
                fields["max"] = Self.number(values.highest)
                fields["step"] = Self.number(Self.step(step, range: range))
                if let unit = control.unit ?? Self.defaultUnit(of: control) { fields["unit_of_measurement"] = .string(unit) }
                fields["value_template"] = .string(pick + "{{ c.value }}{% endfor %}")
                fields["command_template"] = .string(#"{"cmd":"set","control":"# + id + #","value":{{ value }}}"#)
                return ("number", fields)
            case .list(let list):
                // Options are the values as the status's `text` shows them, so the state matches one.
                let texts = list.map { ControlDisplay(.number($0), of: control).text }
                guard Set(texts).count == texts.count else { return nil }
                fields["options"] = .array(texts.map(JSONValue.string))
                fields["value_template"] = .string(pick + "{{ c.text }}{% endfor %}")
                let table = zip(texts, list).map { Self.jinjaString($0) + ": " + "\($1)" }.joined(separator: ", ")
                fields["command_template"] = .string("{% set values = {" + table + "} %}"
                    + #"{"cmd":"set","control":"# + id + #","value":{{ values[value] }}}"#)
                return ("select", fields)
            }
        }
    }

    /// The unit a control has when the board names none: exposure bias is in EV, as `status`
    /// writes it (`+⅓ EV`).
    static func defaultUnit(of control: ControlSpec) -> String? {
        if case .systemExposureBias = control.kind { return "EV" }
        return nil
    }

    /// The step a `number` gets: the board's, else a hundredth (the resolution the value's text
    /// shows), never below a thousandth (Home Assistant's least step) nor past the range's width.
    static func step(_ step: Double?, range: ClosedRange<Double>) -> Double {
        let width = range.upperBound - range.lowerBound
        return max(0.001, step ?? min(0.01, width / 100))
    }

    // MARK: Gestures

    /// A gesture Home Assistant sees: as an event type of the `event` entity and as a device trigger.
    public struct Gesture: Hashable, Sendable {
        /// The event line's `event`, then `/` and its `phase` when it has one (`capture/began`).
        public var key: String
        /// The event entity's `event_type`.
        public var eventType: String
        /// The device trigger's `type` and `subtype` (Home Assistant names the trigger from them).
        public var triggerType: String
        public var subtype: String
    }

    /// The gestures offered, from the event lines of `EVENTS.md` and the daemon's `photo`: a light
    /// press, a double one, a full press (`capture began`, one per press whatever the board's
    /// `captureOn`), the start of a burst, and a photo on disk.
    public static let gestures: [Gesture] = [
        Gesture(key: "lightPress", eventType: "lightPress", triggerType: "button_short_press", subtype: "shutter"),
        Gesture(key: "doubleLightPress", eventType: "doubleLightPress", triggerType: "button_double_press", subtype: "shutter"),
        Gesture(key: "capture/began", eventType: "capture", triggerType: "capture", subtype: "shutter"),
        Gesture(key: "burst/began", eventType: "burst", triggerType: "burst", subtype: "shutter"),
        Gesture(key: "photo", eventType: "photo", triggerType: "photo", subtype: "camera"),
    ]

    /// An event line's gesture key: `event`, then `/phase` when the line has a phase. Each device
    /// trigger compares it with its `payload`.
    static let gestureKeyTemplate =
        "{{ value_json.event }}{% if value_json.phase is defined %}/{{ value_json.phase }}{% endif %}"

    /// The event entity's template: `{"event_type":…}` for a line of a listed gesture, and nothing
    /// for any other line. Home Assistant ignores an empty result quietly, while an `event_type`
    /// outside `event_types` would log a warning for every swipe and control change.
    static var eventTemplate: String {
        let table = gestures.map { jinjaString($0.key) + ": " + jinjaString($0.eventType) }.joined(separator: ", ")
        return "{% set types = {" + table + "} %}"
            + "{% set key = value_json.event ~ ('/' ~ value_json.phase if value_json.phase is defined else '') %}"
            + #"{% if key in types %}{"event_type":{{ types[key] | to_json }}}{% endif %}"#
    }

    /// The image's address: the last photo from live view's `/photos/NAME` while there is one,
    /// else the newest preview frame (`/snapshot`). Each `status` makes Home Assistant fetch again.
    static func imageTemplate(base: String) -> String {
        "{% set base = " + jinjaString(base) + " %}"
            + "{% if value_json.lastPhoto %}{{ base }}/photos/{{ value_json.lastPhoto.split('/') | last | urlencode }}"
            + "{% else %}{{ base }}/snapshot{% endif %}"
    }

    /// The "Last photo" sensor's template: the photo's live-view URL when live view serves
    /// photos, else its absolute path (a relative one is taken from ``workingDirectory``);
    /// `None` (which the sensor shows as unknown) before the first photo.
    var lastPhotoTemplate: String {
        let start = "{% set p = value_json.lastPhoto %}{% if not p %}None"
        if let liveViewURL {
            return start + "{% else %}{{ " + Self.jinjaString(liveViewURL + "/photos/") + " ~ (p.split('/') | last | urlencode) }}{% endif %}"
        }
        let base = workingDirectory == "/" ? "" : workingDirectory
        return start + "{% elif p.startswith('/') %}{{ p }}"
            + "{% else %}{{ " + Self.jinjaString(base + "/") + " ~ (p[2:] if p.startswith('./') else p) }}{% endif %}"
    }

    // MARK: Text helpers

    /// `text` as Home Assistant's entity ids take it after the domain: lower case, every run of
    /// characters outside `[a-z0-9]` one `_`, none at either end (its `valid_entity_id`).
    static func entityObjectID(_ text: String) -> String {
        let words = identifier(text).lowercased().split(separator: "_")
        return words.isEmpty ? "shutter" : words.joined(separator: "_")
    }

    /// `text` with every character outside `[a-zA-Z0-9_]` (and `keeping`) replaced by `_`.
    static func identifier(_ text: String, keeping: String = "") -> String {
        let kept = Set(keeping.unicodeScalars)
        let scalars = text.unicodeScalars.map { scalar -> Character in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_" || kept.contains(scalar))
                ? Character(scalar) : "_"
        }
        return scalars.isEmpty ? "_" : String(scalars)
    }

    /// `text` as a quoted string literal inside a Jinja expression (JSON's escapes are Python's too).
    static func jinjaString(_ text: String) -> String { JSONLine.quoted(text) }

    /// `text` as a JSON string in a template's output: quoted as is, unless it could open or close
    /// a Jinja tag (a control id with `{`), then written by an expression.
    static func templateString(_ text: String) -> String {
        let quoted = JSONLine.quoted(text)
        guard text.contains(where: { "{}%#".contains($0) }) else { return quoted }
        return "{{ " + quoted + " | to_json }}"
    }

    /// A number as JSON, in Swift's shortest text that reads back as the same Double.
    static func number(_ value: Double) -> JSONValue { .number(value, text: "\(value)") }
}
