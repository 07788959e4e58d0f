import Foundation
import Testing
import ShutterCore
@testable import ShutterMQTT
@testable import ShutterService
@testable import ShutterSystem

@Suite("MQTT: topics, messages, clocks")
struct MQTTNodeTests {
    let topics = RigTopics(prefix: "studio/rigs", rig: "bullet", node: "cam-07")

    @Test func topicsFollowPrefixRigAndNode() {
        #expect(topics.event == "studio/rigs/bullet/cam-07/event")
        #expect(topics.status == "studio/rigs/bullet/cam-07/status")
        #expect(topics.availability == "studio/rigs/bullet/cam-07/availability")
        #expect(topics.command == "studio/rigs/bullet/cam-07/cmd")
        #expect(topics.reply == "studio/rigs/bullet/cam-07/reply")
        #expect(topics.shot == "studio/rigs/bullet/shot")
        #expect(topics.result("abc") == "studio/rigs/bullet/cam-07/shot/abc")
        #expect(topics.results == "studio/rigs/bullet/+/shot/+")
        #expect(topics.nodeTopic("studio/rigs/bullet/cam-02/shot/abc").map { [$0.node] + $0.rest.map(String.init) } == ["cam-02", "shot", "abc"])
        #expect(topics.nodeTopic("studio/rigs/other/cam-02/availability") == nil)
        #expect(topics.nodeTopic("studio/rigs/bullet/shot") == nil)
    }

    /// A request's MQTT v5 response topic is the caller's choice: a reply there only under the
    /// node's own reply topic, never on another service's (a Home Assistant config topic) nor on
    /// the node's own command topic; anything else is answered on `…/reply`.
    @Test(arguments: [
        (String?.none, "studio/rigs/bullet/cam-07/reply"),
        ("studio/rigs/bullet/cam-07/reply", "studio/rigs/bullet/cam-07/reply"),
        ("studio/rigs/bullet/cam-07/reply/ctl-42", "studio/rigs/bullet/cam-07/reply/ctl-42"),
        ("homeassistant/device/victim/config", "studio/rigs/bullet/cam-07/reply"),
        ("studio/rigs/bullet/cam-07/cmd", "studio/rigs/bullet/cam-07/reply"),
        ("studio/rigs/bullet/cam-07/status", "studio/rigs/bullet/cam-07/reply"),
        ("studio/rigs/bullet/cam-07/replyx", "studio/rigs/bullet/cam-07/reply"),
        ("studio/rigs/bullet/cam-07/reply/#", "studio/rigs/bullet/cam-07/reply"),
        ("studio/rigs/bullet/cam-07/reply/+/x", "studio/rigs/bullet/cam-07/reply"),
    ])
    func repliesGoOnlyUnderTheNodesOwnReplyTopic(responseTopic: String?, expected: String) {
        #expect(topics.replyTopic(for: responseTopic) == expected)
    }

    @Test func aShotKeepsItsNanosecondsExactly() throws {
        // 1.8e18 ns is past a double's 53 bits: read from the number's text, not its double.
        let payload = Array(#"{"shot": "d4abe817-adb1-4ecb-9166-b47f8ea689e8", "at": 1796353855500949969, "origin": "a"}"#.utf8)
        let shot = try MQTTNode.parseShot(payload).get()
        #expect(shot == RigShot(id: "d4abe817-adb1-4ecb-9166-b47f8ea689e8", at: 1_796_353_855_500_949_969, origin: "a"))
    }

    @Test(arguments: [
        "", "null", "[]", #"{"at": 1, "origin": "a"}"#, #"{"shot": "x", "origin": "a"}"#, #"{"shot": "x", "at": 1.5, "origin": "a"}"#,
        #"{"shot": "x", "at": -3, "origin": "a"}"#, #"{"shot": "a/b", "at": 1, "origin": "a"}"#, #"{"shot": "x", "at": 1, "origin": "+"}"#,
        #"{"shot": "x", "at": "1", "origin": "a"}"#, #"{"shot": 7, "at": 1, "origin": "a"}"#, "\u{0}\u{1}garbage",
        // Shot ids name a folder or file under the photos and reach hooks: UUIDs only.
        #"{"shot": "..", "at": 1, "origin": "a"}"#, #"{"shot": ".", "at": 1, "origin": "a"}"#,
        #"{"shot": ".hidden", "at": 1, "origin": "a"}"#, #"{"shot": "--output=x", "at": 1, "origin": "a"}"#,
        #"{"shot": "x", "at": 1, "origin": "a"}"#, #"{"shot": "d4abe817-adb1-4ecb-9166-b47f8ea689e8x", "at": 1, "origin": "a"}"#,
        #"{"shot": "d4abe817-adb1-4ecb-9166-b47f8ea689e", "at": 1, "origin": "a"}"#,
        #"{"shot": "d4abe817+adb1-4ecb-9166-b47f8ea689e8", "at": 1, "origin": "a"}"#,
        #"{"shot": "g4abe817-adb1-4ecb-9166-b47f8ea689e8", "at": 1, "origin": "a"}"#,
    ])
    func malformedShotsAreRefused(payload: String) {
        if case .success(let shot) = MQTTNode.parseShot(Array(payload.utf8)) { Issue.record("accepted \(shot)") }
    }

    @Test func resultsAreReadAndMalformedOnesRefused() throws {
        let photo = try MQTTNode.parseResult(Array(#"{"result": "photo", "frameAt": 1796353855490138318}"#.utf8), node: "b", shot: "s").get()
        #expect(photo == RigShotResult(shot: "s", node: "b", outcome: .photo(frameAt: 1_796_353_855_490_138_318)))
        let missed = try MQTTNode.parseResult(Array(#"{"result": "missed", "reason": "too old"}"#.utf8), node: "c", shot: "s").get()
        #expect(missed.outcome == .missed(reason: "too old"))
        for bad in [#"{"result": "photo"}"#, #"{"result": "maybe"}"#, "[]", "nonsense"] {
            if case .success(let result) = MQTTNode.parseResult(Array(bad.utf8), node: "c", shot: "s") { Issue.record("accepted \(result)") }
        }
    }

    @Test func commandsParseAsTheSocketsDoAndRigCaptureIsOne() throws {
        #expect(try APIRequest.parse(Array(#"{"id": 4, "cmd": "capture", "rig": true}"#.utf8)).get().command == .rigCapture)
        #expect(try APIRequest.parse(Array(#"{"cmd": "capture"}"#.utf8)).get().command == .capture)
        #expect(APIRequest(id: nil, command: .rigCapture).line == #"{"cmd":"capture","rig":true}"#)
        guard case .failure(let error) = APIRequest.parse(Array(#"{"id": "x", "cmd": "capture", "rig": 1}"#.utf8)) else {
            Issue.record("accepted rig: 1")
            return
        }
        #expect(error.id == .string("x") && error.message.contains("'rig'"))
    }

    @Test func realtimeMappingRoundTripsAndMatchesTheClocks() {
        let mapping = RealtimeMapping.sample()
        let monotonic = Instant(rawValue: clockNanoseconds(CLOCK_MONOTONIC))
        let realtime = clockNanoseconds(CLOCK_REALTIME)
        // The mapped instant is the realtime read next to it, within a millisecond on a loaded machine.
        #expect(abs(mapping.realtime(of: monotonic) - realtime) < 1_000_000)
        #expect(mapping.instant(ofRealtime: mapping.realtime(of: monotonic)) == monotonic)
        let fixed = RealtimeMapping(offset: 1_000)
        #expect(fixed.realtime(of: Instant(rawValue: 5)) == 1_005 && fixed.instant(ofRealtime: 1_005) == Instant(rawValue: 5))
    }
}
