import Foundation
import Testing
import ShutterCore
@testable import ShutterDaemon

/// What a subscriber can see through `status` changes only with an event saying so, and a
/// refused command says nothing.
@Suite(.serialized) struct ChangeEventTests {
    /// The lines published since `start` (a count of `rig.lines` taken before).
    func lines(of rig: TestRig, from start: Int) -> [(name: String, line: String)] {
        Array(rig.lines[start...])
    }

    func run(_ rig: TestRig, _ command: APICommand) -> String {
        rig.daemon.execute(APIRequest(id: nil, command: command)).reply
    }

    @Test func aRefusedRemoteCaptureEmitsNothing() throws {
        let rig = try TestRig()
        defer { rig.close() }
        _ = run(rig, .disable(.capture))
        let start = rig.lines.count
        let reply = run(rig, .capture)
        #expect(reply.contains("\"ok\": false") && reply.contains("capture is disabled"), "\(reply)")
        #expect(lines(of: rig, from: start).map(\.line) == [])
    }

    @Test func selectingTheCurrentControlSendsAtMostOneEvent() throws {
        let rig = try TestRig()
        defer { rig.close() }
        let start = rig.lines.count
        #expect(run(rig, .select(control: "zoom")).contains("\"ok\": true"))
        #expect(lines(of: rig, from: start).filter { $0.name == "controlSelected" }.count <= 1)
        // Nothing changed (no chooser was open): nothing is said.
        #expect(lines(of: rig, from: start).map(\.line) == [])
        #expect(run(rig, .select(control: "exposure")).contains("\"ok\": true"))
        #expect(lines(of: rig, from: start).map(\.name) == ["controlSelected"])
    }

    @Test func aRemoteCaptureBeginsThenEnds() throws {
        let rig = try TestRig()
        defer { rig.close() }
        let start = rig.lines.count
        #expect(run(rig, .capture).contains("\"ok\": true"))
        let phases = lines(of: rig, from: start).filter { $0.name == "capture" }.compactMap { entry -> String? in
            guard case .string(let phase)? = object(entry.line)?["phase"] else { return nil }
            return phase
        }
        #expect(phases == ["began", "ended"])
        try rig.waitFor { rig.names.contains("photo") }
        #expect(rig.names.filter { $0 == "photo" }.count == 1)
        // A remote capture is no press.
        #expect(rig.daemon.counters.presses == 0)
    }
}
