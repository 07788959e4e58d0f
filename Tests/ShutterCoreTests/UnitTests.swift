import Foundation
import Testing
@testable import ShutterCore

@Suite("LineDebouncer")
struct LineDebouncerTests {
    @Test func bounceConfirmsOnceWithTheFirstEdgesTime() {
        var debouncer = LineDebouncer(window: .milliseconds(5))
        #expect(debouncer.edge(active: true, at: ms(10)) == nil)
        #expect(debouncer.edge(active: false, at: ms(10.3)) == nil)
        #expect(debouncer.edge(active: true, at: ms(10.6)) == nil)
        #expect(debouncer.deadline == ms(15.6))
        #expect(debouncer.pendingSince == ms(10))
        #expect(debouncer.fire() == ConfirmedTransition(active: true, since: ms(10)))
        #expect(debouncer.deadline == nil)
        #expect(debouncer.level)
    }

    @Test(arguments: [0.1, 1, 4.999])
    func pulseShorterThanTheWindowIsDropped(width: Double) {
        var debouncer = LineDebouncer(window: .milliseconds(5))
        _ = debouncer.edge(active: true, at: ms(10))
        _ = debouncer.edge(active: false, at: ms(10 + width))
        #expect(debouncer.fire() == nil)
        #expect(!debouncer.level)
        #expect(debouncer.deadline == nil)
    }

    @Test func zeroWindowPassesEdgesThrough() {
        var debouncer = LineDebouncer(window: .zero)
        #expect(debouncer.edge(active: true, at: ms(1)) == ConfirmedTransition(active: true, since: ms(1)))
        #expect(debouncer.edge(active: true, at: ms(2)) == nil)
        #expect(debouncer.edge(active: false, at: ms(3)) == ConfirmedTransition(active: false, since: ms(3)))
    }
}

@Suite("GestureStateMachine: time and JSON")
struct RigStateMachineTests {
    @Test func nextDeadlineDrivesTheDaemonsTimer() {
        let board = Rigs.simulator
        var machine = GestureStateMachine(board: board)
        var events: [ShutterEvent] = []
        #expect(machine.nextDeadline == nil)
        machine.edge(Edge(line: board.line(named: "half")!, active: true, time: ms(100)), into: &events)
        #expect(machine.nextDeadline == ms(105))
        machine.advance(to: ms(105), into: &events)
        #expect(machine.nextDeadline == ms(400))   // prepare
        machine.edge(Edge(line: board.line(named: "half")!, active: false, time: ms(200)), into: &events)
        // The release is confirmed once it has lasted secondPressGapMs (20 ms).
        #expect(machine.nextDeadline == ms(220))
        machine.advance(to: ms(220), into: &events)
        // The double-press window (one nanosecond past it, so its end is inside).
        #expect(machine.nextDeadline == .nanoseconds(500_000_001))
        machine.advance(to: ms(600), into: &events)
        #expect(events.map(\.summary) == ["lightPress", "controlsActive zoom"])
        // The idle timeout, from when the controls opened.
        #expect(machine.nextDeadline == .nanoseconds(500_000_001) + .milliseconds(5000))
    }

    @Test func fullClickJSON() {
        var trace = TraceBuilder()
        trace.fullClick(at: 100, lead: 30, hold: 120, trail: 30)
        let lines = trace.run().map(\.json.description)
        #expect(lines == [
            #"{"event": "capture", "t": 0.135, "phase": "began", "action": "primary", "pressedAt": 0.13, "photo": true}"#,
            #"{"event": "capture", "t": 0.27, "phase": "ended", "action": "primary", "pressedAt": 0.13, "releasedAt": 0.25, "photo": false}"#,
        ])
    }

    @Test func controlsJSON() {
        var trace = TraceBuilder()
        trace.press("half", at: 100, for: 100)
        trace.press("half", at: 350, for: 100)
        trace.swipe([2, 3, 4], at: 900, perPad: 120)
        let lines = trace.run().map(\.json.description)
        #expect(lines == [
            #"{"event": "doubleLightPress", "t": 0.47, "source": "half", "pressedAt": 0.1}"#,
            #"{"event": "controlsActive", "t": 0.47, "control": "zoom", "label": "Zoom", "text": "1.0×"}"#,
            #"{"event": "chooser", "t": 0.47, "phase": "began"}"#,
            #"{"event": "controlHighlighted", "t": 0.47, "control": "zoom"}"#,
            // One pad from where it landed, past the tap window, resting there 50 ms (1.04 + 0.05 s).
            // Velocity: 1 pad from 2 (left no earlier than 0.92 s, 100 ms before it reached 2.5) to 3 at
            // 1.04 s (not 1.587, which would count the rest on pad2 since 0.9 s).
            #"{"event": "swipe", "t": 1.09, "phase": "began", "position": 0.6111, "delta": 0.2222, "velocity": 1.852}"#,
            #"{"event": "controlHighlighted", "t": 1.09, "control": "exposure"}"#,
            #"{"event": "swipe", "t": 1.145, "phase": "changed", "position": 0.7222, "delta": 0.1111, "velocity": 1.111}"#,
            // Pad 3 left at 1.16 with pad 4 staying: movement once it stayed secondPressGapMs (20 ms).
            #"{"event": "swipe", "t": 1.18, "phase": "changed", "position": 0.8333, "delta": 0.1111, "velocity": 1.852}"#,
            #"{"event": "controlHighlighted", "t": 1.18, "control": "filter"}"#,
            // Lifted at 1.26, ended after the 60 ms lift grace; still for the last 100 ms, so no flick.
            #"{"event": "swipe", "t": 1.32, "phase": "ended", "position": 0.8333, "delta": 0, "velocity": 0, "flick": false}"#,
            #"{"event": "chooser", "t": 1.32, "phase": "ended"}"#,
            #"{"event": "controlsInactive", "t": 1.32, "reason": "finish"}"#,
        ])
    }

    @Test func replayMatchesTheDrivingLoop() {
        var trace = TraceBuilder()
        trace.press("half", at: 100, for: 120, bounces: 3)
        trace.swipe([0, 1, 2, 3], at: 600)
        trace.fullClick(at: 1500, bounces: 3)
        #expect(GestureStateMachine.replay(trace.sorted, board: trace.board) == trace.run())
    }

    @Test func pickerValueJSON() {
        let event = ShutterEvent.controlValue(control: "filter", value: .index(2),
                                              display: ControlDisplay(label: "Filter", text: "Vivid", title: "Vivid"), at: ms(1500))
        #expect(event.json.description == #"{"event": "controlValue", "t": 1.5, "control": "filter", "index": 2, "title": "Vivid", "label": "Filter", "text": "Vivid"}"#)
    }

    @Test func persistedValuesAreRestoredValidated() {
        let machine = GestureStateMachine(board: Rigs.simulator, initialValues: [
            "zoom": .number(3.5), "exposure": .number(0.4), "filter": .index(9), "gone": .number(1),
        ])
        #expect(GestureStateMachine(board: Rigs.simulator, initialValues: ["exposure": .number(0.01)])
            .controlValues["exposure"] == .number(0))
        #expect(machine.controlValues["zoom"] == .number(3.5))
        #expect(machine.controlValues["exposure"] == .number(0.333333333333))
        #expect(machine.controlValues["filter"] == .index(3))
        #expect(machine.controlValues["gone"] == nil)
    }

    /// A pulse on `full` while half is held, on a rig whose lines the kernel debounces, and what it gives.
    struct GlitchCase: CustomTestStringConvertible, Sendable {
        var glitchFilterMs: Double
        var pulseMs: Double
        var captures: Bool
        var testDescription: String { "\(pulseMs) ms pulse, glitch filter \(glitchFilterMs) ms: \(captures ? "captures" : "dropped")" }
    }

    /// The kernel's debounce replaces the software debounce, not the glitch filter: with no line
    /// debounced here (`softwareDebounce: []`), a pulse shorter than the filter is still dropped.
    /// The controls show it is the filter that drops it: the same pulse with the filter at 0 ms
    /// captures, and a pulse longer than the filter captures with it on.
    @Test(arguments: [
        GlitchCase(glitchFilterMs: 5, pulseMs: 2, captures: false),
        GlitchCase(glitchFilterMs: 5, pulseMs: 4.9, captures: false),
        GlitchCase(glitchFilterMs: 0, pulseMs: 2, captures: true),
        GlitchCase(glitchFilterMs: 0, pulseMs: 4.9, captures: true),
        GlitchCase(glitchFilterMs: 5, pulseMs: 8, captures: true),
    ])
    func kernelDebouncedLinesStillHaveTheGlitchFilter(_ row: GlitchCase) {
        let board = Rigs.board(gestures: #"{"glitchFilterMs": \#(row.glitchFilterMs)}"#)
        #expect(board.gestures.glitchFilter == .milliseconds(row.glitchFilterMs))
        var machine = GestureStateMachine(board: board, softwareDebounce: [])
        var events: [ShutterEvent] = []
        let half = board.line(named: "half")!, full = board.line(named: "full")!
        machine.edge(Edge(line: half, active: true, time: ms(100)), into: &events)
        machine.edge(Edge(line: full, active: true, time: ms(130)), into: &events)
        machine.edge(Edge(line: full, active: false, time: ms(130 + row.pulseMs)), into: &events)
        machine.finish(at: ms(200), into: &events)
        let began = events.filter { if case .capture(.began, .primary, _, _, _, _, _) = $0 { true } else { false } }
        #expect(began.count == (row.captures ? 1 : 0), "\(events.map(\.summary))")
    }
}

@Suite("ControlStateFile")
struct ControlStateFileTests {
    @Test func damagedFileLoadsAsEmpty() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("shutter-bad-\(UInt64.random(in: 0...UInt64.max)).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: path))
        #expect(ControlStateFile.load(path: path).isEmpty)
    }
}
