import Foundation
import Testing
import ShutterCore
@testable import ShutterNode
@testable import ShutterService

/// What a subscriber can see through `status` changes only with an event saying so, and a
/// refused command says nothing.
@Suite(.serialized) struct ChangeEventTests {
    /// The lines published since `start` (a count of `rig.lines` taken before).
    func lines(of rig: TestRig, from start: Int) -> [(name: String, line: String)] {
        Array(rig.lines[start...])
    }

    func run(_ rig: TestRig, _ command: APICommand) -> String {
        APIReply.line(id: nil, rig.daemon.execute(APIRequest(id: nil, command: command)))
    }

    /// A rig whose board is read from a file, so it can be reloaded: the rig, the file's path and
    /// the board's text (the caller writes it, as it is or edited).
    func reloadableRig() throws -> (rig: TestRig, file: String, board: String) {
        var options = NodeOptions()
        let file = "/tmp/sdt-board-\(UUID().uuidString.prefix(8)).json"
        options.boardPath = file
        let rig = try TestRig(options: options)
        return (rig, file, TestRig.simulatorBoard.replacingOccurrences(of: "PHOTOS", with: rig.directory + "/photos"))
    }

    @Test func aReloadThatNarrowsRangesSendsEveryValueItChanged() throws {
        let (rig, file, board) = try reloadableRig()
        defer { rig.close(); try? FileManager.default.removeItem(atPath: file) }
        try board.write(toFile: file, atomically: true, encoding: .utf8)
        #expect(run(rig, .set(control: "zoom", to: .value(6))).contains("\"ok\": true"))
        #expect(run(rig, .set(control: "filter", to: .title("Warm"))).contains("\"ok\": true"))
        // Zoom narrows to 1…4 (6 is clamped to 4), the filter loses two items (Warm is gone:
        // the last one left is taken), exposure keeps its range and its value.
        let narrowed = board.replacingOccurrences(of: "\"range\": [1, 8]", with: "\"range\": [1, 4]")
            .replacingOccurrences(of: "[\"None\", \"Mono\", \"Vivid\", \"Warm\"]", with: "[\"None\", \"Mono\"]")
        try narrowed.write(toFile: file, atomically: true, encoding: .utf8)
        let start = rig.lines.count
        #expect(rig.daemon.reload() == .reloaded(path: file, board: "test"))
        #expect(rig.daemon.interpreter.machine.controlValues["zoom"] == .number(4))
        #expect(rig.daemon.interpreter.machine.controlValues["filter"] == .index(1))
        let values = lines(of: rig, from: start).filter { $0.name == "controlValue" }.map(\.line)
        #expect(values.count == 2, "\(values)")
        #expect(values.contains { $0.contains("\"control\": \"zoom\"") && $0.contains("\"value\": 4,") })
        #expect(values.contains { $0.contains("\"control\": \"filter\"") && $0.contains("\"title\": \"Mono\"") })
        // A reload that changes no value sends none.
        let again = rig.lines.count
        #expect(rig.daemon.reload() == .reloaded(path: file, board: "test"))
        #expect(!lines(of: rig, from: again).contains { $0.name == "controlValue" })
    }

    /// A reload that disables the current control says so, and which control is current now.
    @Test func aReloadThatDisablesTheCurrentControlSaysSo() throws {
        let (rig, file, board) = try reloadableRig()
        defer { rig.close(); try? FileManager.default.removeItem(atPath: file) }
        try board.replacingOccurrences(of: "\"step\": 0.5, \"initial\": 1}", with: "\"step\": 0.5, \"initial\": 1, \"enabled\": false}")
            .write(toFile: file, atomically: true, encoding: .utf8)
        let start = rig.lines.count
        #expect(rig.daemon.reload() == .reloaded(path: file, board: "test"))
        #expect(lines(of: rig, from: start).map(\.line) == [
            "{\"event\": \"controlEnabled\", \"t\": 100, \"control\": \"zoom\", \"enabled\": false}",
            "{\"event\": \"controlSelected\", \"t\": 100, \"control\": \"exposure\", \"label\": \"Exposure\", \"text\": \"0 EV\"}",
        ])
        #expect(rig.daemon.interpreter.machine.controlsSnapshot.current == "exposure")
    }

    @Test func enableAndDisableSayWhatChangedOnlyWhenItChanged() throws {
        let rig = try TestRig()
        defer { rig.close() }
        var start = rig.lines.count
        #expect(run(rig, .disable(.control("exposure"))).contains("\"ok\": true"))
        #expect(lines(of: rig, from: start).map(\.line)
                    == ["{\"event\": \"controlEnabled\", \"t\": 100, \"control\": \"exposure\", \"enabled\": false}"])
        start = rig.lines.count
        #expect(run(rig, .disable(.control("exposure"))).contains("\"ok\": true"))
        #expect(lines(of: rig, from: start).isEmpty)
        #expect(run(rig, .enable(.control("exposure"))).contains("\"ok\": true"))
        #expect(lines(of: rig, from: start).map(\.line)
                    == ["{\"event\": \"controlEnabled\", \"t\": 100, \"control\": \"exposure\", \"enabled\": true}"])
        start = rig.lines.count
        #expect(run(rig, .disable(.capture)).contains("\"ok\": true"))
        #expect(lines(of: rig, from: start).map(\.line) == ["{\"event\": \"captureEnabled\", \"t\": 100, \"enabled\": false}"])
        start = rig.lines.count
        #expect(run(rig, .disable(.capture)).contains("\"ok\": true"))
        #expect(lines(of: rig, from: start).isEmpty)
        #expect(run(rig, .enable(.capture)).contains("\"ok\": true"))
        #expect(lines(of: rig, from: start).map(\.line) == ["{\"event\": \"captureEnabled\", \"t\": 100, \"enabled\": true}"])
    }

    /// The cause comes before what it does: a press held while capture is disabled is cancelled after `captureEnabled`.
    @Test func disablingCaptureMidPressSaysSoBeforeTheCancel() throws {
        let rig = try TestRig()
        defer { rig.close() }
        rig.chip.set(rig.line("half"), active: true, at: rig.chip.clock.now)
        try rig.advance(by: .milliseconds(40))
        rig.chip.set(rig.line("full"), active: true, at: rig.chip.clock.now)
        try rig.advance(by: .milliseconds(40))
        #expect(rig.lines.last?.line.contains("\"phase\": \"began\"") == true)
        let start = rig.lines.count
        _ = run(rig, .disable(.capture))
        let after = lines(of: rig, from: start)
        #expect(after.map(\.name) == ["captureEnabled", "capture"])
        #expect(after.last?.line.contains("\"reason\": \"unavailable\"") == true)
    }

    @Test func aRefusedRemoteCaptureEmitsNothing() throws {
        let rig = try TestRig()
        defer { rig.close() }
        _ = run(rig, .disable(.capture))
        let start = rig.lines.count
        let reply = run(rig, .capture)
        #expect(reply.contains("\"ok\": false") && reply.contains("capture is disabled"), "\(reply)")
        #expect(reply.contains("shutter ctl enable capture"), "the refusal says how to turn capture on: \(reply)")
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
