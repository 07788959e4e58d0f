#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import ShutterCore
@testable import ShutterAPI
@testable import ShutterNode
@testable import ShutterService

/// Clients that would exhaust the daemon: each bounded, none delaying the others.
@Suite(.serialized) struct APIAbuseTests {
    /// Small limits, so a test reaches them with a handful of sockets.
    static func options(_ change: (inout APIServer.Limits) -> Void = { _ in }) -> NodeOptions {
        var options = NodeOptions()
        change(&options.apiLimits)
        return options
    }

    @Test func aClientThatPipelinesThousandsWaitsItsTurnAndOthersAreAnsweredFirst() throws {
        let rig = try TestRig(options: Self.options(), api: true)
        defer { rig.close() }
        let api = try #require(rig.node.api)
        let flooder = try TestClient(rig)
        var size: CInt = 4096
        setsockopt(flooder.descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<CInt>.size))
        // About 900 requests in one read, never a reply read.
        try flooder.sendRaw(Array(String(repeating: "{\"cmd\":\"status\"}\n", count: 900).utf8))
        let before = api.requestsRun
        try rig.turn()
        #expect(api.requestsRun - before <= api.limits.requestsPerClientPerTurn, "one client's share of one turn")
        for _ in 0..<200 { try rig.turn() }
        // Its replies are not taken: what the daemon holds for it stays within the backlog limit
        // (and one reply), and the rest of its requests wait unread.
        #expect(api.requestsRun - before < 900)
        #expect(api.largestReplyBacklog <= api.limits.replyBacklogLimit + 4096)
        // Another client's request is answered within a turn or two.
        let other = try TestClient(rig)
        try other.send("{\"id\":7,\"cmd\":\"status\"}")
        let reply = try #require(other.readLine(turns: 2).flatMap(object))
        #expect(reply["id"] == .number(7, text: "7"))
    }

    @Test func requestsPipelinedByAClientThatClosesAtOnceAllRun() throws {
        let rig = try TestRig(options: Self.options(), api: true)
        defer { rig.close() }
        do {
            let client = try TestClient(rig)
            try client.sendRaw(Array("{\"cmd\":\"set\",\"control\":\"zoom\",\"value\":2}\n{\"cmd\":\"set\",\"control\":\"exposure\",\"value\":1}\n".utf8))
            // Closed by deinit before the daemon reads a byte.
        }
        for _ in 0..<20 { try rig.turn() }
        #expect(rig.node.api?.clientCount == 0)
        let status = try TestClient(rig).call("{\"cmd\":\"status\"}")
        guard case .array(let controls)? = status["controls"] else { Issue.record("no controls in \(status)"); return }
        let values = controls.compactMap { control -> (String, JSONValue)? in
            guard case .object(let members) = control, case .string(let id)? = members["id"], let value = members["value"] else { return nil }
            return (id, value)
        }
        #expect(values.first { $0.0 == "zoom" }?.1 == .number(2, text: "2"))
        #expect(values.first { $0.0 == "exposure" }?.1 == .number(1, text: "1"))
    }

    @Test func anIdleClientIsClosedAfterTheTimeoutAndASubscriberIsNot() throws {
        let rig = try TestRig(options: Self.options { $0.idleTimeout = .seconds(1) }, api: true)
        defer { rig.close() }
        let idle = try TestClient(rig)
        #expect(try idle.call("{\"cmd\":\"status\"}")["ok"] == .bool(true))
        let subscriber = try TestClient(rig)
        #expect(try subscriber.call("{\"cmd\":\"subscribe\"}")["ok"] == .bool(true))
        for _ in 0..<30 { try rig.advance(by: .milliseconds(100)) }
        let farewell = try #require(idle.readLine().flatMap(object))
        #expect(farewell["ok"] == .bool(false))
        #expect(try idle.waitUntilClosed())
        #expect(rig.node.api?.clientCount == 1)
        #expect(try subscriber.call("{\"cmd\":\"status\"}")["ok"] == .bool(true))
    }

    @Test func aFullDaemonMakesRoomByClosingTheLongestIdleClient() throws {
        let rig = try TestRig(options: Self.options { $0.maximumClients = 4 }, api: true)
        defer { rig.close() }
        var idle: [TestClient] = []
        for _ in 0..<4 {
            idle.append(try TestClient(rig))
            try rig.advance(by: .milliseconds(10))
        }
        let newcomer = try TestClient(rig)
        #expect(try newcomer.call("{\"cmd\":\"status\"}")["ok"] == .bool(true))
        #expect(try idle[0].waitUntilClosed(), "the longest idle made room")
        #expect(rig.node.api?.clientCount == 4)
        // Subscribers are never closed for room: with every slot subscribed, a newcomer is refused.
        for client in idle.dropFirst() { _ = try client.call("{\"cmd\":\"subscribe\"}") }
        _ = try newcomer.call("{\"cmd\":\"subscribe\"}")
        let refused = try TestClient(rig)
        let reply = try #require(refused.readLine().flatMap(object))
        guard case .string(let message)? = reply["error"] else { Issue.record("no error in \(reply)"); return }
        #expect(message.contains("too many clients"))
    }
}

@Suite struct BoardFileLimitTests {
    @Test func aBoardThatIsNotARegularFileOrTooLargeIsRefusedUnread() throws {
        let directory = "/tmp/sbl-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A FIFO nobody writes: reading it would block for good.
        let fifo = directory + "/board.json"
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect { _ = try Board.load(path: fifo) } throws: { "\($0)".contains("not a regular file") }
        // Valid JSON, but 2 MiB of it.
        let large = directory + "/large.json"
        try Data(("{\"name\": \"x\"" + String(repeating: " ", count: 2 << 20) + "}").utf8).write(to: URL(fileURLWithPath: large))
        #expect { _ = try Board.load(path: large) } throws: { "\($0)".contains("larger than a board file may be") }
    }
}

@Suite struct APIOutputQueueTests {
    /// Everything the queue would write, as lines.
    static func drain(_ queue: inout APIOutputQueue, chunk: Int = .max) -> [String] {
        var bytes: [UInt8] = []
        while let count = queue.withNextBytes({ raw -> Int in
            let taken = min(chunk, raw.count)
            bytes.append(contentsOf: raw[..<taken])
            return taken
        }) { queue.consume(count) }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    @Test func eventsBeyondTheLimitBecomeOneNoticeBeforeTheSurvivors() {
        var queue = APIOutputQueue(eventLimit: 4)
        queue.appendReply("{\"ok\": true}")
        for index in 0..<1000 { queue.appendEvent("{\"event\": \"e\(index)\"}") }
        #expect(queue.eventCount == 4)
        let lines = Self.drain(&queue)
        // The notice goes out first: it is told before the next line, whatever that line is.
        #expect(lines == ["{\"event\": \"dropped\", \"count\": 996}", "{\"ok\": true}",
                          "{\"event\": \"e996\"}", "{\"event\": \"e997\"}", "{\"event\": \"e998\"}", "{\"event\": \"e999\"}"])
        #expect(queue.isEmpty && queue.byteCount == 0)
    }

    @Test func aNoticeNotStartedTakesInLaterDropsAndALineInFlightIsFinished() {
        var queue = APIOutputQueue(eventLimit: 2)
        for index in 0..<5 { queue.appendEvent("{\"event\": \"a\(index)\"}") }
        // The notice is made and its first byte written: it is in flight, later drops need a new one.
        var first: [UInt8] = []
        _ = queue.withNextBytes { raw in first = Array(raw) }
        #expect(String(decoding: first, as: UTF8.self) == "{\"event\": \"dropped\", \"count\": 3}\n")
        queue.consume(1)
        for index in 5..<10 { queue.appendEvent("{\"event\": \"a\(index)\"}") }
        var lines = Self.drain(&queue, chunk: 7)
        lines[0] = "{" + lines[0]
        #expect(lines == ["{\"event\": \"dropped\", \"count\": 3}", "{\"event\": \"dropped\", \"count\": 5}",
                          "{\"event\": \"a8\"}", "{\"event\": \"a9\"}"])
    }

    @Test func repliesAreNeverDropped() {
        var queue = APIOutputQueue(eventLimit: 1)
        for index in 0..<50 { queue.appendReply("{\"id\": \(index)}") ; queue.appendEvent("{\"event\": \"x\"}") }
        let lines = Self.drain(&queue)
        #expect(lines.filter { $0.hasPrefix("{\"id\"") }.count == 50)
        #expect(queue.replyBytes == 0)
    }
}
