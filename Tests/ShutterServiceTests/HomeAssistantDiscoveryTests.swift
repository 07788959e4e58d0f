import Foundation
import Testing
import ShutterCore
@testable import ShutterMQTT
@testable import ShutterService

/// What Home Assistant requires of each component of a device discovery message, by platform.
///
/// From the platforms' configuration pages (`required: true`) and their discovery schemas:
/// - https://www.home-assistant.io/integrations/mqtt/#device-discovery-payload: `dev` (with `ids`
///   or `cns`), `o` (with `name`), `cmps`, each with `p`; entity components need `unique_id`.
/// - https://www.home-assistant.io/integrations/event.mqtt/: `state_topic`, `event_types`.
/// - https://www.home-assistant.io/integrations/device_trigger.mqtt/: `automation_type`
///   (`trigger`), `topic`, `type`, `subtype`.
/// - https://www.home-assistant.io/integrations/button.mqtt/: `command_topic`.
/// - https://www.home-assistant.io/integrations/number.mqtt/: `command_topic`.
/// - https://www.home-assistant.io/integrations/select.mqtt/: `command_topic`, `options`.
/// - https://www.home-assistant.io/integrations/sensor.mqtt/: `state_topic`.
/// - https://www.home-assistant.io/integrations/image.mqtt/: `url_topic` or `image_topic`.
/// Tests/MQTT/check-discovery.py checks the same table on what a broker hands back.
let requiredFields: [String: [String]] = [
    "event": ["state_topic", "event_types", "unique_id"],
    "device_automation": ["automation_type", "topic", "type", "subtype"],
    "button": ["command_topic", "unique_id"],
    "number": ["command_topic", "unique_id"],
    "select": ["command_topic", "options", "unique_id"],
    "sensor": ["state_topic", "unique_id"],
    "image": ["url_topic", "unique_id"],
]

@Suite struct HomeAssistantDiscoveryTests {
    static let simulator: Board = {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Boards/simulator.json").path
        return try! Board.load(path: path)
    }()

    static func discovery(liveView: String? = nil, node: String = "cam-1", rig: String = "studio", board: Board = simulator,
                          workingDirectory: String = "/home/maker/rig") -> HomeAssistantDiscovery {
        HomeAssistantDiscovery(node: node, rig: rig, topicPrefix: "shutter", discoveryPrefix: "homeassistant",
                               board: board, liveViewURL: liveView, softwareVersion: "0.9", workingDirectory: workingDirectory)
    }

    /// The message parsed back, and its components by id.
    static func parsed(_ discovery: HomeAssistantDiscovery) throws -> (root: [String: JSONValue], components: [String: [String: JSONValue]]) {
        guard case .object(let root) = try JSONValue.parse(Array(discovery.text.utf8)),
              case .object(let cmps)? = root["cmps"] else { throw Failure("no cmps object") }
        var components: [String: [String: JSONValue]] = [:]
        for (id, value) in cmps {
            guard case .object(let fields) = value else { throw Failure("\(id) is not an object") }
            components[id] = fields
        }
        return (root, components)
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    static func string(_ value: JSONValue?) -> String? {
        if case .string(let text)? = value { return text }
        return nil
    }

    static func number(_ value: JSONValue?) -> Double? {
        if case .number(let number, _)? = value { return number }
        return nil
    }

    static func strings(_ value: JSONValue?) -> [String]? {
        guard case .array(let items)? = value else { return nil }
        return items.compactMap { string($0) }
    }

    @Test func topics() {
        let discovery = Self.discovery()
        #expect(discovery.topic == "homeassistant/device/studio_cam-1/config")
        #expect(discovery.eventTopic == "shutter/studio/cam-1/event")
        #expect(discovery.statusTopic == "shutter/studio/cam-1/status")
        #expect(discovery.availabilityTopic == "shutter/studio/cam-1/availability")
        #expect(discovery.commandTopic == "shutter/studio/cam-1/cmd")
        #expect(HomeAssistantDiscovery.birthTopic(discoveryPrefix: "homeassistant") == "homeassistant/status")
        #expect(HomeAssistantDiscovery.isBirth(Array("online".utf8)))
        #expect(!HomeAssistantDiscovery.isBirth(Array("offline".utf8)))
        #expect(!HomeAssistantDiscovery.isBirth(Array("online\n".utf8)))
    }

    /// A host name's dots are not allowed in a discovery topic: they become `_`; the topics the
    /// node publishes keep its name.
    @Test func objectIDIsTopicSafe() {
        let discovery = Self.discovery(node: "cam.local+x")
        #expect(discovery.topic == "homeassistant/device/studio_cam_local_x/config")
        #expect(discovery.eventTopic == "shutter/studio/cam.local+x/event")
        #expect(discovery.deviceID == "shutter_studio_cam_local_x")
    }

    /// Two rigs on one broker whose nodes share a name are two devices: the discovery topic, the
    /// device's id, every unique id and every default entity id name the rig as well as the node.
    @Test func twoRigsWithTheSameNodeNamesDoNotCollide() throws {
        let studio = Self.discovery(node: "front", rig: "studio"), garden = Self.discovery(node: "front", rig: "garden")
        #expect(studio.topic != garden.topic)
        #expect(studio.deviceID != garden.deviceID)
        func ids(_ discovery: HomeAssistantDiscovery, _ key: String) throws -> Set<String> {
            Set(try Self.parsed(discovery).components.values.compactMap { Self.string($0[key]) })
        }
        for key in ["unique_id", "default_entity_id"] {
            let studioIDs = try ids(studio, key), gardenIDs = try ids(garden, key)
            #expect(!studioIDs.isEmpty)
            #expect(studioIDs.isDisjoint(with: gardenIDs), "\(key): \(studioIDs.intersection(gardenIDs))")
        }
        let (_, components) = try Self.parsed(studio)
        for (id, fields) in components where Self.string(fields["p"]) != "device_automation" {
            let platform = try #require(Self.string(fields["p"]))
            let entityID = try #require(Self.string(fields["default_entity_id"]), "\(id) has no default_entity_id")
            #expect(entityID.hasPrefix(platform + ".studio_front_"), "\(entityID)")
            // Home Assistant's entity ids: lower-case letters, digits and underscores after the domain.
            let objectID = entityID.dropFirst(platform.count + 1)
            #expect(objectID.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
                && !objectID.contains("__") && !objectID.hasPrefix("_") && !objectID.hasSuffix("_"), "\(entityID)")
        }
        // The node's earlier topic, which named only the node: cleared once by the node.
        #expect(studio.legacyTopic == "homeassistant/device/front/config")
    }

    /// The exposure bias's number is in EV whether or not the board names a unit, as `status`
    /// writes it ("+⅓ EV").
    @Test func exposureIsInEV() throws {
        let (_, components) = try Self.parsed(Self.discovery())
        #expect(Self.string(components["control_exposure"]?["unit_of_measurement"]) == "EV")
        #expect(components["control_zoom"]?["unit_of_measurement"] == nil)
    }

    /// The "Last photo" sensor shows where the photo is: its absolute path when the board's output
    /// directory is relative (the simulator's `photos`), its live-view URL when live view serves it,
    /// unknown before the first photo. Rendered with Jinja (as Home Assistant does) when python3
    /// has it.
    @Test func lastPhotoIsAnAbsolutePathOrAURL() throws {
        func render(_ liveView: String?, _ lastPhoto: String?) throws -> String? {
            let (_, components) = try Self.parsed(Self.discovery(liveView: liveView))
            let template = try #require(Self.string(components["last_photo"]?["value_template"]))
            let status = lastPhoto.map { #"{"lastPhoto": "\#($0)"}"# } ?? #"{"lastPhoto": null}"#
            return try renderJinja(template, valueJSON: status)
        }
        guard let relative = try render(nil, "photos/IMG_1.jpg") else { return }
        #expect(relative == "/home/maker/rig/photos/IMG_1.jpg")
        #expect(try render(nil, "./photos/IMG_1.jpg") == "/home/maker/rig/photos/IMG_1.jpg")
        #expect(try render(nil, "/media/usb/IMG_1.jpg") == "/media/usb/IMG_1.jpg")
        #expect(try render(nil, nil) == "None")
        #expect(try render("http://cam-1.local:8080", "photos/IMG 1.jpg") == "http://cam-1.local:8080/photos/IMG%201.jpg")
        #expect(try render("http://cam-1.local:8080", nil) == "None")
    }

    @Test func deviceAndOrigin() throws {
        let (root, _) = try Self.parsed(Self.discovery(liveView: "http://cam-1.local:8080/"))
        guard case .object(let device)? = root["dev"], case .object(let origin)? = root["o"] else {
            Issue.record("no dev or o")
            return
        }
        #expect(Self.strings(device["ids"]) == ["shutter_studio_cam-1"])
        #expect(Self.string(device["sw"]) == "0.9")
        #expect(Self.string(device["name"]) == "cam-1")
        #expect(Self.string(device["mdl"]) == "simulator")
        #expect(Self.string(device["cu"]) == "http://cam-1.local:8080/")
        #expect(Self.string(origin["name"]) == "shutter")
        #expect(Self.string(origin["sw"]) == "0.9")
    }

    /// Every component has what its platform requires, and each entity has a unique id that
    /// starts with the node's device id and is unavailable unless the node says `online`.
    @Test(arguments: [nil, "http://cam-1.local:8080"])
    func requiredFieldsPerPlatform(liveView: String?) throws {
        let discovery = Self.discovery(liveView: liveView)
        let (_, components) = try Self.parsed(discovery)
        var uniqueIDs: [String] = []
        for (id, fields) in components {
            let platform = try #require(Self.string(fields["p"]), "\(id) has no platform")
            let required = try #require(requiredFields[platform], "\(id): unexpected platform \(platform)")
            for field in required {
                #expect(fields[field] != nil, "\(id) (\(platform)) lacks \(field)")
            }
            if platform == "device_automation" {
                #expect(Self.string(fields["automation_type"]) == "trigger")
                #expect(Self.string(fields["topic"]) == discovery.eventTopic)
                continue
            }
            let uniqueID = try #require(Self.string(fields["unique_id"]))
            #expect(uniqueID.hasPrefix("shutter_studio_cam-1_"), "\(uniqueID)")
            uniqueIDs.append(uniqueID)
            #expect(Self.string(fields["availability_topic"]) == discovery.availabilityTopic, "\(id)")
            #expect(Self.string(fields["payload_available"]) == "online")
            #expect(Self.string(fields["payload_not_available"]) == "offline")
            for key in ["state_topic", "command_topic", "url_topic"] {
                if let topic = Self.string(fields[key]) { #expect(topic.hasPrefix("shutter/studio/cam-1/"), "\(id).\(key)") }
            }
        }
        #expect(Set(uniqueIDs).count == uniqueIDs.count)
        #expect(components.values.contains { Self.string($0["p"]) == "image" } == (liveView != nil))
    }

    @Test func sliderNumbersMatchTheBoard() throws {
        let (_, components) = try Self.parsed(Self.discovery())
        let zoom = try #require(components["control_zoom"])
        #expect(Self.string(zoom["p"]) == "number")
        #expect(Self.number(zoom["min"]) == 1)
        #expect(Self.number(zoom["max"]) == 8)
        // Zoom has no step on the board: a hundredth, the resolution its text shows.
        #expect(Self.number(zoom["step"]) == 0.01)
        let exposure = try #require(components["control_exposure"])
        #expect(Self.number(exposure["min"]) == -2)
        #expect(Self.number(exposure["max"]) == 2)
        #expect(Self.number(exposure["step"]) == 0.3333333333333333)
        #expect(Self.string(exposure["command_template"]) == #"{"cmd":"set","control":"exposure","value":{{ value }}}"#)
        #expect(Self.string(exposure["value_template"])
            == #"{% for c in value_json.controls if c.id == "exposure" %}{{ c.value }}{% endfor %}"#)
        #expect(Self.string(exposure["state_topic"]) == "shutter/studio/cam-1/status")
    }

    /// Home Assistant's slider moves from `min` in steps of `step`: its `max` is the range's last
    /// step, so the slider's end sends a value the control takes as it is.
    @Test func aNumbersMaxIsTheLastStep() throws {
        let spec = ControlSpec(id: "level", label: "Level", kind: .slider(.range(0...1, step: 0.3)), initial: .number(0))
        let (platform, fields) = try #require(Self.discovery().component(for: spec))
        #expect(platform == "number")
        #expect(Self.number(fields["min"]) == 0)
        #expect(Self.number(fields["max"]) == 0.9)
        #expect(Self.number(fields["step"]) == 0.3)
    }

    @Test func pickerSelectOffersTheTitles() throws {
        let (_, components) = try Self.parsed(Self.discovery())
        let filter = try #require(components["control_filter"])
        #expect(Self.string(filter["p"]) == "select")
        #expect(Self.strings(filter["options"]) == ["None", "Mono", "Vivid", "Warm"])
        #expect(Self.string(filter["command_template"]) == #"{"cmd":"set","control":"filter","title":{{ value | to_json }}}"#)
        #expect(Self.string(filter["value_template"])
            == #"{% for c in value_json.controls if c.id == "filter" %}{{ c.titles[c.index] }}{% endfor %}"#)
    }

    /// With a sample value put where Home Assistant puts it, each command template's text is a
    /// request line the socket API reads.
    @Test func commandTemplatesMakeRequests() throws {
        let (_, components) = try Self.parsed(Self.discovery())
        let samples: [String: (String, String)] = [
            "control_zoom": ("{{ value }}", "2.5"),
            "control_exposure": ("{{ value }}", "-0.3333333333333333"),
            "control_filter": ("{{ value | to_json }}", #""Mono""#),
        ]
        for (id, (placeholder, sample)) in samples {
            let template = try #require(Self.string(components[id]?["command_template"]))
            #expect(template.contains(placeholder))
            let line = template.replacingOccurrences(of: placeholder, with: sample)
            guard case .object(let request) = try JSONValue.parse(Array(line.utf8)) else {
                Issue.record("\(id): \(line) is not an object")
                continue
            }
            #expect(Self.string(request["cmd"]) == "set")
            #expect(Self.string(request["control"]) == String(id.dropFirst("control_".count)))
            if case .failure(let error) = APIRequest.parse(Array(line.utf8)) { Issue.record("\(line): \(error.message)") }
        }
        let button = try #require(components["take_photo"])
        let press = try #require(Self.string(button["payload_press"]))
        let request = try JSONValue.parse(Array(press.utf8))
        #expect(request == .object(["cmd": .string("capture")]))
        let rigButton = try #require(components["take_rig_photo"])
        let rigPress = try #require(Self.string(rigButton["payload_press"]))
        #expect(try APIRequest.parse(Array(rigPress.utf8)).get().command == .rigCapture)
    }

    /// The event entity lists the gestures, and its template names exactly those (rendering to
    /// nothing for any other line, which Home Assistant ignores).
    @Test func eventEntityAndTriggers() throws {
        let discovery = Self.discovery()
        let (_, components) = try Self.parsed(discovery)
        let event = try #require(components["gesture"])
        let types = try #require(Self.strings(event["event_types"]))
        #expect(types == ["lightPress", "doubleLightPress", "capture", "burst", "photo"])
        #expect(Self.string(event["state_topic"]) == discovery.eventTopic)
        let template = try #require(Self.string(event["value_template"]))
        for gesture in HomeAssistantDiscovery.gestures {
            #expect(template.contains(JSONLine.quoted(gesture.key) + ": " + JSONLine.quoted(gesture.eventType)))
        }
        #expect(template.contains(#"{"event_type":{{ types[key] | to_json }}}"#))
        let triggers = components.filter { Self.string($0.value["p"]) == "device_automation" }
        #expect(Set(triggers.compactMap { Self.string($0.value["payload"]) })
            == Set(HomeAssistantDiscovery.gestures.map(\.key)))
        // Each trigger is a distinct (type, subtype): Home Assistant lists them by that pair.
        let pairs = triggers.map { "\(Self.string($0.value["type"]) ?? "")/\(Self.string($0.value["subtype"]) ?? "")" }
        #expect(Set(pairs).count == pairs.count)
    }

    /// The gesture keys are what the event lines carry: each gesture's event name is one the
    /// recognizer or the daemon prints.
    @Test func gestureKeysAreEventNames() {
        let names: Set<String> = ["capture", "burst", "prepare", "lightPress", "doubleLightPress", "photo"]
        for gesture in HomeAssistantDiscovery.gestures {
            #expect(names.contains(String(gesture.key.split(separator: "/")[0])), "\(gesture.key)")
        }
    }

    @Test func imageOnlyWithLiveView() throws {
        let (_, without) = try Self.parsed(Self.discovery())
        #expect(without["latest_photo"] == nil)
        let (_, with) = try Self.parsed(Self.discovery(liveView: "http://cam-1.local:8080/"))
        let image = try #require(with["latest_photo"])
        #expect(Self.string(image["url_topic"]) == "shutter/studio/cam-1/status")
        let template = try #require(Self.string(image["url_template"]))
        #expect(template.contains(#"{% set base = "http://cam-1.local:8080" %}"#))
        #expect(template.contains("{{ base }}/photos/"))
        #expect(template.contains("{{ base }}/snapshot"))
    }

    /// The same inputs give the same bytes (a retained message re-sent unchanged changes nothing).
    @Test func deterministic() {
        #expect(Self.discovery().text == Self.discovery().text)
    }

    /// A board with a list slider, a picker without titles and a control id that could open a Jinja tag.
    @Test func otherControlShapes() throws {
        let json = """
        {"name": "shapes", "chip": "simulator",
         "lines": [{"name": "full", "role": "full"}, {"name": "p0", "role": "pad"}, {"name": "p1", "role": "pad"}],
         "controls": [
           {"id": "iso", "kind": "slider", "values": [100, 200, 400, 800], "initial": 100},
           {"id": "scene", "kind": "picker", "count": 3},
           {"id": "odd{%x", "kind": "slider", "range": [0, 10], "step": 2}
         ]}
        """
        let board = try Board.decode(Data(json.utf8), file: "shapes.json")
        let (_, components) = try Self.parsed(Self.discovery(board: board))
        let iso = try #require(components["control_iso"])
        #expect(Self.string(iso["p"]) == "select")
        #expect(Self.strings(iso["options"]) == ["100", "200", "400", "800"])
        let isoTemplate = try #require(Self.string(iso["command_template"]))
        #expect(isoTemplate.hasPrefix(#"{% set values = {"100": 100.0, "200": 200.0, "400": 400.0, "800": 800.0} %}"#))
        let scene = try #require(components["control_scene"])
        #expect(Self.strings(scene["options"]) == ["0", "1", "2"])
        #expect(Self.string(scene["command_template"]) == #"{"cmd":"set","control":"scene","index":{{ value }}}"#)
        let odd = try #require(components["control_odd__x"])
        #expect(Self.string(odd["command_template"]) == #"{"cmd":"set","control":{{ "odd{%x" | to_json }},"value":{{ value }}}"#)
        #expect(Self.number(odd["step"]) == 2)
    }

    /// Tests/MQTT/check-discovery.py accepts the message (when python3 is there).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs python3 (the checker is a Python script)"))
    func pythonCheckerAccepts() throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../MQTT/check-discovery.py").path
        for liveView in [nil, "http://cam-1.local:8080"] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            process.arguments = [script]
            let input = Pipe(), output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = output
            try process.run()
            input.fileHandleForWriting.write(Data(Self.discovery(liveView: liveView).text.utf8))
            try input.fileHandleForWriting.close()
            let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(printed)")
        }
        // And refuses a message missing what a platform needs.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script]
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        input.fileHandleForWriting.write(Data(#"{"dev":{"ids":["x"]},"o":{"name":"y"},"cmps":{"a":{"p":"number","unique_id":"u"}}}"#.utf8))
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        #expect(process.terminationStatus != 0)
    }
}

/// `template` rendered by python3's Jinja with `value_json` parsed from `valueJSON`, as Home
/// Assistant renders a value template; nil when python3 or its jinja2 is missing.
func renderJinja(_ template: String, valueJSON: String) throws -> String? {
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else { return nil }
    let script = """
        import json, sys
        try:
            import jinja2
        except ImportError:
            sys.exit(3)
        template, value = json.load(sys.stdin)
        sys.stdout.write(jinja2.Environment().from_string(template).render(value_json=json.loads(value)))
        """
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    process.arguments = ["-c", script]
    let input = Pipe(), output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    try process.run()
    input.fileHandleForWriting.write(Data(JSONValue.array([.string(template), .string(valueJSON)]).text.utf8))
    try input.fileHandleForWriting.close()
    let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    if process.terminationStatus == 3 { return nil }
    #expect(process.terminationStatus == 0, "jinja2 failed on \(template)")
    return printed
}
