import Foundation
import Testing
import ShutterCapture
import ShutterCore
@testable import ShutterMQTT
@testable import ShutterNode
@testable import ShutterService

/// Node `cam-a` of rig `bench` on a fake broker connection, over a test rig's daemon, connected;
/// the rig's clock is realtime's too (offset 0), so a shot's `at` is an instant of the rig.
final class ConnectedNode {
    let rig: TestRig
    let fake = FakeMQTTConnection()
    let node: MQTTNode
    var topics: RigTopics { node.topics }

    init(cameras: ManualCameras? = nil, boardJSON: String = TestRig.simulatorBoard) throws {
        rig = try TestRig(boardJSON: boardJSON, cameraFactory: cameras?.open)
        node = try MQTTNode(settings: MQTTSettings(host: "127.0.0.1", rig: "bench"), node: "cam-a", service: rig.daemon, liveViewURL: nil,
                            connection: fake)
        node.realtimeMapping = { RealtimeMapping(offset: 0) }
        node.advance(to: rig.chip.clock.now)
        fake.accept()
    }

    /// Moves the rig's clock on and lets the node act on what is due.
    func advance(by span: Nanoseconds) {
        rig.chip.clock.advance(by: span)
        node.advance(to: rig.chip.clock.now)
    }

    func close() {
        node.close()
        rig.close()
    }

    static func shot(_ id: String, at: Instant, origin: String = "cam-b") -> String {
        #"{"shot": "\#(id)", "at": \#(at.rawValue), "origin": "\#(origin)"}"#
    }
}

@Suite("MQTT node: nothing from the broker grows without bound")
struct MQTTNodeBoundsTests {
    @Test func aFloodOfOnlineAnnouncementsIsCappedAndAShotsCompletionStaysSmall() throws {
        let connected = try ConnectedNode()
        defer { connected.close() }
        for index in 0..<20_000 {
            connected.fake.deliver("shutter/bench/fake-\(index)/availability", "online", retained: true)
        }
        #expect(connected.node.statusSummary.nodesOnline == RigRoster.capacity)
        _ = connected.node.originate(pressedAt: connected.rig.chip.clock.now)
        connected.advance(by: .seconds(4))
        let complete = try #require(connected.rig.lines.last { $0.name == "shotComplete" }?.line)
        #expect(complete.utf8.count < 4096)
    }

    @Test func aNodeSilentTooLongIsForgottenAndOneThatAnnouncesItselfIsKept() throws {
        let connected = try ConnectedNode()
        defer { connected.close() }
        connected.fake.deliver("shutter/bench/cam-b/availability", "online", retained: true)
        connected.fake.deliver("shutter/bench/cam-c/availability", "online", retained: true)
        #expect(connected.node.statusSummary.nodesOnline == 3)
        // cam-c announces itself every minute, as a node does; cam-b said online once, ten minutes ago.
        for _ in 0..<10 {
            connected.advance(by: RigRoster.announceInterval)
            connected.fake.deliver("shutter/bench/cam-c/availability", "online", retained: false)
        }
        #expect(connected.node.statusSummary.nodesOnline == 2)
        // This node announces itself too, so that the others keep it.
        #expect(connected.fake.payloads(on: connected.topics.availability).filter { $0 == "online" }.count >= 10)
    }

    @Test func homeAssistantBirthsAreAnsweredAtMostOnceAnInterval() throws {
        let connected = try ConnectedNode()
        defer { connected.close() }
        let discoveryTopic = "homeassistant/device/bench_cam-a/config"
        #expect(connected.fake.payloads(on: discoveryTopic).count == 1)
        for _ in 0..<2_000 { connected.fake.deliver("homeassistant/status", "online") }
        connected.advance(by: .seconds(1))
        for _ in 0..<2_000 { connected.fake.deliver("homeassistant/status", "online") }
        for _ in 0..<30 { connected.advance(by: .seconds(1)) }
        // The flood is answered once more, not once per message: Home Assistant still learns of the node.
        #expect(connected.fake.payloads(on: discoveryTopic).count == 2)
    }

    @Test func aShotAtTheInstantOfOneInFlightIsAnsweredAndTheFirstKeepsItsPhoto() throws {
        let cameras = ManualCameras()
        let connected = try ConnectedNode(cameras: cameras)
        defer { connected.close() }
        _ = try cameras.streamingWithFrames(in: connected.rig)
        let at = try #require(connected.rig.daemon.capture.service.newestFrameAt)
        let first = "d4abe817-adb1-4ecb-9166-b47f8ea689e8", second = "0b1c2d3e-4f50-4172-8394-a5b6c7d8e9f0"
        connected.fake.deliver(connected.topics.shot, ConnectedNode.shot(first, at: at))
        connected.fake.deliver(connected.topics.shot, ConnectedNode.shot(second, at: at))
        let answer = connected.fake.payloads(on: connected.topics.result(second))
        #expect(answer.count == 1 && answer.first?.contains(#""result": "missed""#) == true, "\(answer)")
        let shot = try #require(connected.rig.daemon.shots.inFlight.first { $0.pressedAt == at })
        let rigShot = try #require(shot.rigShot)
        #expect(rigShot.id == first)
        let failure = CaptureFailure(at: connected.rig.chip.clock.now, shot: shot, error: .notReady(reason: "test"))
        connected.node.answered(rigShot, with: try #require(ShotOutcome(.captureFailed(failure))))
        let result = connected.fake.payloads(on: connected.topics.result(first))
        #expect(result.count == 1 && result.first?.contains(#""result": "failed""#) == true, "\(result)")
    }

    /// Every topic the node reads: a payload over 64 KiB is refused by its size, never parsed.
    @Test(arguments: ["cmd", "shot", "controls", "result", "availability", "birth"])
    func aPayloadOver64KiBIsRefusedUnread(on kind: String) throws {
        let connected = try ConnectedNode()
        defer { connected.close() }
        let topics = connected.topics
        let shot = "d4abe817-adb1-4ecb-9166-b47f8ea689e8"
        if kind == "result" { _ = connected.node.originate(pressedAt: connected.rig.chip.clock.now) }
        let (topic, json): (String, String) = switch kind {
        case "cmd": (topics.command, #"{"id": 7, "cmd": "status"}"#)
        case "shot": (topics.shot, ConnectedNode.shot(shot, at: connected.rig.chip.clock.now))
        case "controls": (topics.controls, #"{"origin": "cam-b", "control": "zoom", "value": 2}"#)
        case "result": ("shutter/bench/cam-b/shot/\(shot)", #"{"result": "missed", "reason": "x"}"#)
        case "availability": ("shutter/bench/cam-b/availability", "online")
        default: ("homeassistant/status", "online")
        }
        let before = connected.fake.published.count
        // Well-formed, but for the spaces that take it past 64 KiB.
        connected.fake.deliver(topic, json + String(repeating: " ", count: MQTTNode.maximumPayloadBytes))
        #expect(connected.node.malformedCount == 1)
        let published = connected.fake.published.dropFirst(before)
        if kind == "cmd" {
            #expect(published.count == 1 && published.first?.payload.contains(#""ok": false"#) == true, "\(published.map(\.payload))")
        } else {
            #expect(published.isEmpty, "\(published.map(\.topic))")
        }
    }

    @Test func aCompletionWithThousandsOfSilentNodesIsSummarised() throws {
        var book = RigShotBook()
        book.originate(RigShot(id: "s", at: 1, origin: "a"), expecting: Set((0..<20_000).map { "node-\($0)" }), now: .zero,
                       timeout: .seconds(3))
        let completion = try #require(book.expire(now: Instant(rawValue: 0) + .seconds(3)).first)
        let line = RigEvent.complete(completion, at: Instant(rawValue: 1)).json.description
        #expect(line.utf8.count < 2048)
        #expect(line.contains(#""silentCount": 20000"#) && line.contains(#""node-0""#))
    }
}
