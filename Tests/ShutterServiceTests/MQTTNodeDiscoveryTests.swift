import Foundation
import Testing
import ShutterCore
@testable import ShutterMQTT
@testable import ShutterService

@Suite("MQTT node: what Home Assistant is told, and in which order")
struct MQTTNodeDiscoveryTests {
    /// The device and the origin carry the version `shutter --version` prints.
    @Test func discoveryCarriesTheSoftwareVersion() throws {
        let connected = try ConnectedNode()
        defer { connected.close() }
        let text = try #require(connected.fake.payloads(on: "homeassistant/device/bench_cam-a/config").last)
        guard case .object(let root) = try JSONValue.parse(Array(text.utf8)),
              case .object(let device)? = root["dev"], case .object(let origin)? = root["o"] else {
            Issue.record("no dev or o in \(text)")
            return
        }
        #expect(device["sw"] == .string(shutterVersion))
        #expect(origin["sw"] == .string(shutterVersion))
    }

    /// The topic that named only the node, which a node of another rig with the same name shared,
    /// is cleared (an empty retained message removes that device from Home Assistant).
    @Test func theTopicThatNamedOnlyTheNodeIsCleared() throws {
        let connected = try ConnectedNode()
        defer { connected.close() }
        #expect(connected.fake.payloads(on: "homeassistant/device/cam-a/config") == [""])
        #expect(connected.fake.payloads(on: "homeassistant/device/bench_cam-a/config").count == 1)
    }

    /// A rig shot this node originated completes after the node's own photo of it is told:
    /// a client that waits for `shotComplete` has every node's photo event, this one's included.
    @Test func aShotsCompletionFollowsTheNodesOwnPhoto() throws {
        let connected = try ConnectedNode()
        defer { connected.close() }
        connected.rig.daemon.rigParticipant = connected.node
        let reply = connected.rig.daemon.execute(APIRequest(id: nil, command: .rigCapture))
        if case .refused(let refusal) = reply { Issue.record("refused: \(refusal.message)") }
        try connected.rig.waitFor { connected.rig.names.contains("photo") && connected.rig.names.contains("shotComplete") }
        let names = connected.rig.names
        let photo = try #require(names.firstIndex(of: "photo")), complete = try #require(names.firstIndex(of: "shotComplete"))
        #expect(photo < complete, "\(names)")
    }
}
