import Foundation
import Testing
import ShutterCore
@testable import ShutterMQTT
@testable import ShutterService

/// Another node's shot as the broker hands it to this node's daemon: at QoS 1 a message comes
/// at least once, so the same shot may come again at once or after a while.
@Suite("MQTT node: a shot is taken at most once")
struct MQTTNodeShotTests {
    /// The shot comes twice at once, and again once its photo is written (a broker redelivering
    /// after a reconnection) while its frame is still in the ring: one photo, one file, one
    /// result, and no event for the copies.
    @Test func aShotDeliveredAgainTakesNoSecondPhoto() throws {
        let connected = try Self.streamingNode()
        defer { connected.close() }
        let rig = connected.rig
        let at = try #require(rig.daemon.capture.service.newestFrameAt)
        let id = "d4abe817-adb1-4ecb-9166-b47f8ea689e8"
        let message = ConnectedNode.shot(id, at: at)
        let before = rig.lines.count
        connected.fake.deliver(connected.topics.shot, message)
        connected.fake.deliver(connected.topics.shot, message)
        try rig.waitFor { rig.names.contains("photo") }
        // Less than the camera's stall limit: the ring keeps the shot's frame.
        connected.advance(by: .milliseconds(500))
        connected.fake.deliver(connected.topics.shot, message)
        // A second photo would be encoded and written after the first: let the loop run on a while.
        let limit = Date().addingTimeInterval(1)
        while Date() < limit { try rig.daemon.loop.runOnce(timeoutMilliseconds: 20) }
        #expect(rig.names.dropFirst(before) == ["shot", "photo"], "\(rig.lines.dropFirst(before).map(\.line))")
        #expect(rig.daemon.counters.photos == 1)
        #expect(try Self.photoFiles(in: rig.directory + "/photos") == ["\(id)/cam-a.jpg"])
        let results = connected.fake.payloads(on: connected.topics.result(id))
        #expect(results.count == 1 && results.first?.contains(#""result": "photo""#) == true, "\(results)")
    }

    /// This node's own shot, heard back from the broker (it subscribes to the rig's shots like
    /// every node): its photo is the press's, so nothing is taken, answered or announced again.
    @Test func aNodesOwnShotHeardBackIsNotTakenAgain() throws {
        let connected = try Self.streamingNode()
        defer { connected.close() }
        let rig = connected.rig
        let shot = connected.node.originate(pressedAt: try #require(rig.daemon.capture.service.newestFrameAt))
        let sent = try #require(connected.fake.payloads(on: connected.topics.shot).last)
        #expect(sent.contains(shot.id))
        let before = rig.lines.count
        connected.fake.deliver(connected.topics.shot, sent)
        connected.fake.deliver(connected.topics.shot, ConnectedNode.shot(shot.id, at: Instant(rawValue: shot.at), origin: "cam-a"))
        for _ in 0..<5 { try rig.daemon.loop.runOnce(timeoutMilliseconds: 20) }
        #expect(rig.names.dropFirst(before).isEmpty, "\(rig.lines.dropFirst(before).map(\.line))")
        #expect(rig.daemon.shots.inFlight.isEmpty)
        #expect(connected.fake.payloads(on: connected.topics.result(shot.id)).isEmpty)
    }

    /// Node `cam-a` with its camera streaming, its frames read, and its part in rig shots
    /// answered on MQTT as the daemon's node answers it.
    static func streamingNode() throws -> ConnectedNode {
        let cameras = ManualCameras()
        let connected = try ConnectedNode(cameras: cameras)
        connected.rig.daemon.rigParticipant = connected.node
        do {
            _ = try cameras.streamingWithFrames(in: connected.rig)
        } catch {
            connected.close()
            throw error
        }
        return connected
    }

    /// Every photo file under `directory`, by its path there; `latest.jpg` names the newest
    /// photo and is not one of its own.
    static func photoFiles(in directory: String) throws -> [String] {
        let enumerator = try #require(FileManager.default.enumerator(atPath: directory))
        return enumerator.compactMap { $0 as? String }
            .filter { $0.hasSuffix(".jpg") && $0 != "latest.jpg" && !$0.hasSuffix("/latest.jpg") }
            .sorted()
    }
}
