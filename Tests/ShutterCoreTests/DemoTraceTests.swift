import Foundation
import Testing
@testable import ShutterCore

/// The README's first command plays `Tests/Traces/demo.jsonl` on the simulator board;
/// this keeps the demo doing what its comment says.
@Suite("Demo trace")
struct DemoTraceTests {
    static func load(_ relative: String) throws -> String {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../\(relative)")
        return try String(contentsOf: url.standardizedFileURL, encoding: .utf8)
    }

    @Test("the demo shows, adjusts, chooses, and captures twice")
    func demo() throws {
        let board = try Board.decode(Data(try Self.load("Boards/simulator.json").utf8), file: "simulator.json")
        let trace = try Trace.parse(try Self.load("Tests/Traces/demo.jsonl"), board: board, source: "demo.jsonl")
        let events = GestureStateMachine.replay(trace.edges, board: board)
        let lines = events.filter { $0.name != "swipe" && $0.name != "controlValue" }.map { event -> String in
            let json = event.json.description
            // Keep the name and the phase, control or action: the shape of the session.
            let detail = ["phase", "control", "action"].compactMap { key -> String? in
                guard let range = json.range(of: "\"\(key)\": \"") else { return nil }
                return String(json[range.upperBound...].prefix { $0 != "\"" })
            }
            return ([event.name] + detail).joined(separator: " ")
        }
        #expect(lines == [
            "lightPress", "controlsActive zoom",
            "controlsAdjusting began zoom", "controlsAdjusting ended zoom",
            "doubleLightPress", "chooser began", "controlHighlighted zoom", "controlHighlighted exposure",
            "lightPress", "controlSelected exposure", "chooser ended",
            "controlsAdjusting began exposure", "controlsAdjusting ended exposure",
            "controlsInactive", "capture began primary", "capture ended primary",
            "capture began secondary", "capture ended secondary",
        ])
        let exposure = events.filter { $0.name == "controlValue" && $0.json.description.contains("\"exposure\"") }
        #expect(exposure.last?.json.description.contains("\"value\": -2,") == true)
        let zoom = events.filter { $0.name == "controlValue" && $0.json.description.contains("\"zoom\"") }
        #expect(zoom.count >= 2 && zoom.count <= 8, "coalesced: \(zoom.count) updates for one swipe")
    }
}
