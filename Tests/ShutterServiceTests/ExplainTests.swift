import Foundation
import Testing
import ShutterCore
@testable import ShutterService

/// `--explain` through the interpreter the daemon, monitor and replay share.
@Suite("GestureDriver explanations (setup mode)")
struct ExplainTests {
    /// The interpreter on the simulator board's mock chip, recording what it hands on, in order.
    final class Recorder {
        let chip = MockChip()
        let board: Board
        let interpreter: GestureDriver
        var lines: [String] = []

        init(explaining: Bool) throws {
            board = try Board.decode(Data(TestRig.simulatorBoard.utf8), file: "test-board.json")
            interpreter = GestureDriver(board: board, watcher: try chip.watch(board.lines, consumer: "explain-test"))
            interpreter.emit = { [unowned self] event in lines.append("event \(event.name)") }
            if explaining { interpreter.explain = { [unowned self] in lines.append("why \($0.line)") } }
        }

        /// A level change at `ms` milliseconds, then the interpreter catches up to it.
        func set(_ name: String, _ active: Bool, at ms: Double) throws {
            let now = Instant.nanoseconds(Int64(ms * 1e6))
            chip.clock.advance(to: now)
            chip.set(board.line(named: name)!, active: active, at: now)
            try interpreter.pump(now: now)
        }
    }

    @Test("a reason reaches the receiver before the event it explains")
    func reasonBeforeEvent() throws {
        let recorder = try Recorder(explaining: true)
        try recorder.set("half", true, at: 100)
        try recorder.set("half", false, at: 200)
        recorder.interpreter.finish(at: .nanoseconds(1_000_000_000))
        #expect(recorder.lines.prefix(4) == [
            "why half: held 100 ms ≤ lightPressMaxMs 350: a light press",
            "why half: light press waits doublePressWindowMs 300 for a second one before it is reported",
            "why half: no second press within doublePressWindowMs 300: a single light press",
            "event lightPress",
        ])
    }

    @Test("without a receiver the recognizer explains nothing, with one it explains a glitch")
    func onlyWhenAsked() throws {
        let quiet = try Recorder(explaining: false)
        #expect(!quiet.interpreter.machine.explains)
        try quiet.set("full", true, at: 100)
        try quiet.set("full", false, at: 102)
        quiet.interpreter.finish(at: .nanoseconds(1_000_000_000))
        #expect(quiet.lines.isEmpty)

        let explaining = try Recorder(explaining: true)
        #expect(explaining.interpreter.machine.explains)
        try explaining.set("full", true, at: 100)
        try explaining.set("full", false, at: 102)
        explaining.interpreter.finish(at: .nanoseconds(1_000_000_000))
        #expect(explaining.lines == ["why full: 2 ms pulse dropped (glitch filter 5 ms)"])
    }
}
