import Foundation
import Testing
@testable import ShutterCore

private func board(mqtt: String?) -> String {
    let section = mqtt.map { #", "mqtt": \#($0)"# } ?? ""
    return #"{"name": "test", "chip": "simulator", "lines": [{"name": "full", "role": "full"}]\#(section)}"#
}

@Suite("Board mqtt section")
struct MQTTSettingsTests {
    @Test func noSectionNoBroker() throws {
        #expect(try Board.decode(Data(board(mqtt: nil).utf8), file: "rig.json").mqtt == nil)
    }

    @Test func defaults() throws {
        let parsed = try Board.decode(Data(board(mqtt: #"{"host": "192.168.1.10", "rig": "scanner"}"#).utf8), file: "rig.json")
        let mqtt = try #require(parsed.mqtt)
        #expect(mqtt.host == "192.168.1.10" && mqtt.port == 1883 && mqtt.rig == "scanner" && mqtt.node == nil)
        #expect(mqtt.topicPrefix == "shutter" && mqtt.shotTemplate == "{shot}/{node}.jpg" && mqtt.discovery && !mqtt.syncControls)
        #expect(mqtt.maxShotAge == .seconds(5) && mqtt.shotTimeout == .seconds(3) && mqtt.keepAlive == .seconds(30))
        #expect(!mqtt.usesTLS)
    }

    @Test func readsEveryField() throws {
        let section = #"""
        {"host": "broker.local", "port": 8883, "username": "cam", "passwordFile": "/etc/shutter/mqtt-password",
         "caFile": "/etc/ssl/ca.pem", "certFile": "/etc/ssl/cam.pem", "keyFile": "/etc/ssl/cam.key", "rig": "bullet",
         "node": "cam-07", "topicPrefix": "studio/rigs", "keepAliveS": 10, "maxShotAgeMs": 2000, "shotTimeoutMs": 1500,
         "shotTemplate": "{shot}_{node}.jpg", "syncControls": true, "discovery": false, "discoveryPrefix": "ha"}
        """#
        let mqtt = try #require(try Board.decode(Data(board(mqtt: section).utf8), file: "rig.json").mqtt)
        #expect(mqtt.port == 8883 && mqtt.username == "cam" && mqtt.passwordFile == "/etc/shutter/mqtt-password")
        #expect(mqtt.usesTLS && mqtt.caFile == "/etc/ssl/ca.pem" && mqtt.keyFile == "/etc/ssl/cam.key")
        #expect(mqtt.node == "cam-07" && mqtt.topicPrefix == "studio/rigs" && mqtt.keepAlive == .seconds(10))
        #expect(mqtt.maxShotAge == .milliseconds(2000) && mqtt.shotTimeout == .milliseconds(1500))
        #expect(mqtt.shotTemplate == "{shot}_{node}.jpg" && mqtt.syncControls && !mqtt.discovery && mqtt.discoveryPrefix == "ha")
    }

    @Test(arguments: [
        (#"{"rig": "r"}"#, "mqtt.host"),
        (#"{"host": "", "rig": "r"}"#, "mqtt.host"),
        (#"{"host": "h"}"#, "mqtt.rig"),
        (#"{"host": "h", "rig": "a/b"}"#, "mqtt.rig"),
        (##"{"host": "h", "rig": "#"}"##, "mqtt.rig"),
        (#"{"host": "h", "rig": "r", "node": "cam+1"}"#, "mqtt.node"),
        (#"{"host": "h", "rig": "r", "node": ""}"#, "mqtt.node"),
        (#"{"host": "h", "rig": "r", "port": 0}"#, "mqtt.port"),
        (#"{"host": "h", "rig": "r", "port": 70000}"#, "mqtt.port"),
        (#"{"host": "h", "rig": "r", "passwordFile": "/p"}"#, "mqtt.passwordFile"),
        (#"{"host": "h", "rig": "r", "username": "u", "passwordFile": "relative"}"#, "mqtt.passwordFile"),
        (#"{"host": "h", "rig": "r", "caFile": "/ca", "certFile": "/c"}"#, "mqtt.certFile"),
        (#"{"host": "h", "rig": "r", "certFile": "/c", "keyFile": "/k"}"#, "mqtt.caFile"),
        (#"{"host": "h", "rig": "r", "topicPrefix": "a//b"}"#, "mqtt.topicPrefix"),
        (#"{"host": "h", "rig": "r", "keepAliveS": 2}"#, "mqtt.keepAliveS"),
        (#"{"host": "h", "rig": "r", "maxShotAgeMs": 0}"#, "mqtt.maxShotAgeMs"),
        (#"{"host": "h", "rig": "r", "shotTimeoutMs": 1e400}"#, "mqtt.shotTimeoutMs"),
        (#"{"host": "h", "rig": "r", "shotTemplate": "{node}.jpg"}"#, "mqtt.shotTemplate"),
        (#"{"host": "h", "rig": "r", "shotTemplate": "/tmp/{shot}.jpg"}"#, "mqtt.shotTemplate"),
        (#"{"host": "h", "rig": "r", "shotTemplate": "../{shot}.jpg"}"#, "mqtt.shotTemplate"),
        (#"{"host": "h", "rig": "r", "shotTemplate": "a/b/{shot}.jpg"}"#, "mqtt.shotTemplate"),
        (#"{"host": "h", "rig": "r", "broker": "h"}"#, "mqtt.broker"),
    ])
    func refusesBadSettingsNamingTheField(section: String, field: String) {
        #expect {
            _ = try Board.decode(Data(board(mqtt: section).utf8), file: "rig.json")
        } throws: { error in
            guard let error = error as? BoardError else { return false }
            return error.path == field && error.file == "rig.json"
        }
    }
}

@Suite("Rig shots: seen ids, results, completion")
struct RigShotBookTests {
    private func at(_ ms: Double) -> Instant { Instant(rawValue: Int64(ms * 1e6)) }

    @Test func aShotIsTakenOnceWhateverTheDeliveries() {
        var book = RigShotBook()
        let answer1 = book.firstSighting(of: "s1")
        #expect(answer1)
        let answer2 = book.firstSighting(of: "s1")
        #expect(!answer2)
        let answer3 = book.firstSighting(of: "s2")
        #expect(answer3)
    }

    @Test func theOldestIdsAreForgottenPastTheLimit() {
        var book = RigShotBook()
        for index in 0..<(RigShotBook.remembered + 10) {
            let first = book.firstSighting(of: "s\(index)")
            #expect(first)
        }
        // The newest are still known; the first ten were forgotten to keep the set bounded.
        let answer4 = book.firstSighting(of: "s\(RigShotBook.remembered + 9)")
        #expect(!answer4)
        let answer5 = book.firstSighting(of: "s0")
        #expect(answer5)
    }

    @Test func completesWhenEveryExpectedNodeAnswered() {
        var book = RigShotBook()
        let shot = RigShot(id: "s", at: 1_000_000_000, origin: "a")
        book.originate(shot, expecting: ["a", "b", "c"], now: at(0), timeout: .seconds(3))
        let again = book.firstSighting(of: "s")
        #expect(!again)  // the origin never takes its own shot a second time
        #expect(book.nextDeadline == at(3000))
        let answer6 = book.record(RigShotResult(shot: "s", node: "a", outcome: .photo(frameAt: 1_000_000_000 - 5_000_000)))
        #expect(answer6 == nil)
        let answer7 = book.record(RigShotResult(shot: "s", node: "b", outcome: .photo(frameAt: 1_000_000_000 + 7_000_000)))
        #expect(answer7 == nil)
        // A second answer from b changes nothing.
        let answer8 = book.record(RigShotResult(shot: "s", node: "b", outcome: .missed(reason: "again")))
        #expect(answer8 == nil)
        let done = book.record(RigShotResult(shot: "s", node: "c", outcome: .missed(reason: "too old")))
        #expect(done == RigShotCompletion(shot: "s", nodes: 3, photos: 2, missed: 1, failed: 0, silent: [], spread: .milliseconds(12)))
        #expect(book.nextDeadline == nil)
        #expect(!book.isCollecting("s"))
    }

    @Test func theTimeoutCompletesWithWhatAnsweredAndNamesTheSilent() {
        var book = RigShotBook()
        book.originate(RigShot(id: "s", at: 0, origin: "a"), expecting: ["a", "b", "c"], now: at(0), timeout: .seconds(3))
        _ = book.record(RigShotResult(shot: "s", node: "a", outcome: .photo(frameAt: 10)))
        // An unexpected node's answer counts too.
        _ = book.record(RigShotResult(shot: "s", node: "d", outcome: .failed(reason: "disk full")))
        let answer9 = book.expire(now: at(2999))
        #expect(answer9.isEmpty)
        let done = book.expire(now: at(3000))
        #expect(done == [RigShotCompletion(shot: "s", nodes: 4, photos: 1, missed: 0, failed: 1, silent: ["b", "c"], spread: .zero)])
        let answer10 = book.expire(now: at(9000))
        #expect(answer10.isEmpty)
    }

    /// Answers from nodes that were not asked (any client may publish on a node's result topic)
    /// are counted only up to the roster's capacity.
    @Test func answersFromNodesNotAskedAreBounded() {
        var book = RigShotBook()
        book.originate(RigShot(id: "s", at: 0, origin: "a"), expecting: ["a", "b"], now: at(0), timeout: .seconds(3))
        for index in 0..<20_000 {
            _ = book.record(RigShotResult(shot: "s", node: "fake-\(index)", outcome: .missed(reason: "")))
        }
        let done = book.record(RigShotResult(shot: "s", node: "b", outcome: .missed(reason: "")))
        let expired = book.expire(now: at(3000))
        #expect(done == nil && expired.count == 1)
        #expect(expired.first.map { $0.nodes <= RigRoster.capacity && $0.missed < RigRoster.capacity && $0.silent == ["a"] } == true, "\(expired)")
    }

    @Test func resultsOfOtherShotsAreIgnored() {
        var book = RigShotBook()
        book.originate(RigShot(id: "mine", at: 0, origin: "a"), expecting: ["a"], now: at(0), timeout: .seconds(1))
        let answer11 = book.record(RigShotResult(shot: "theirs", node: "a", outcome: .photo(frameAt: 0)))
        #expect(answer11 == nil)
        #expect(book.isCollecting("mine"))
        let all = book.expireAll()
        #expect(all.map(\.shot) == ["mine"] && all[0].photos == 0 && all[0].spread == nil && all[0].silent == ["a"])
    }
}

@Suite("Rig roster: the nodes online, bounded")
struct RigRosterTests {
    private func at(_ seconds: Double) -> Instant { Instant(rawValue: Int64(seconds * 1e9)) }

    @Test func fullItRefusesNewNodesUntilOneLeaves() {
        var roster = RigRoster(own: "me")
        for index in 1..<RigRoster.capacity {
            #expect(roster.online("n\(index)", now: at(0)) == .added)
        }
        #expect(roster.count == RigRoster.capacity)
        #expect(roster.online("late", now: at(1)) == .refused)
        #expect(roster.online("n1", now: at(1)) == .known)
        #expect(roster.online("me", now: at(1)) == .known)
        roster.offline("n2")
        #expect(roster.online("late", now: at(2)) == .added)
        #expect(roster.nodes.contains("me") && roster.nodes.contains("late") && !roster.nodes.contains("n2"))
    }

    @Test func aNodeSilentPastTheLimitIsForgotten() {
        var roster = RigRoster(own: "me")
        _ = roster.online("quiet", now: at(0))
        _ = roster.online("talker", now: at(0))
        #expect(roster.nextDeadline == at(0) + RigRoster.silenceLimit)
        roster.heard(from: "talker", now: at(100))
        roster.heard(from: "stranger", now: at(100))
        #expect(roster.expire(now: at(0) + RigRoster.silenceLimit) == 1)
        #expect(roster.nodes == ["me", "talker"])
        #expect(roster.nextDeadline == at(100) + RigRoster.silenceLimit)
    }
}
