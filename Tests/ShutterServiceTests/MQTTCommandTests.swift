import Testing
import ShutterCore
@testable import ShutterMQTT
@testable import ShutterService

/// Commands on a node's `cmd` topic as Home Assistant sends them.
@Suite("MQTT node: Home Assistant's commands")
struct MQTTCommandTests {
    /// Home Assistant's `number` sends the value its slider or box holds, rendered into the
    /// discovery's command template: `0.33` typed for a third of an EV sets the third, and the
    /// reply says so.
    @Test(arguments: [("0.33", 1.0 / 3), ("-1.6667", -5.0 / 3), ("0.3333333333333333", 1.0 / 3), ("1.9", 2)])
    func aNumbersValueNearAStepSetsTheStep(sent: String, expected: Double) throws {
        let connected = try ConnectedNode(boardJSON: APIServerTests.thirdsBoard)
        defer { connected.close() }
        let exposure = try #require(connected.rig.daemon.board.controls.first { $0.id == "exposure" })
        let discovery = HomeAssistantDiscovery(node: "cam-a", rig: "bench", board: connected.rig.daemon.board)
        guard case .string(let template)? = try #require(discovery.component(for: exposure)).1["command_template"] else {
            Issue.record("no command template")
            return
        }
        let before = connected.fake.published.count
        connected.fake.deliver(connected.topics.command, template.replacingOccurrences(of: "{{ value }}", with: sent))
        guard case .number(let value)? = connected.rig.daemon.interpreter.machine.controlValues["exposure"] else {
            Issue.record("no exposure")
            return
        }
        #expect(abs(value - expected) < 1e-9, "\(sent) → \(value)")
        let replies = connected.fake.published.dropFirst(before).filter { $0.topic == connected.topics.reply }
        #expect(replies.count == 1)
        let reply = try #require(replies.first?.payload)
        #expect(reply.contains(#""ok": true"#), "\(reply)")
        #expect(reply.contains(#""note": "\#(sent) taken as"#) == (sent.count < 10), "\(reply)")
    }
}
