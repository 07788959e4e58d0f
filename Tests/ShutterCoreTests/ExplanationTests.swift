import Foundation
import Testing
@testable import ShutterCore

extension TraceBuilder {
    /// Runs the trace as ``run(available:finish:)`` does, with explanations on: the events and the
    /// explanation lines, in order.
    func explained(available: Bool = true) -> (events: [ShutterEvent], lines: [String]) {
        var machine = GestureStateMachine(board: board)
        machine.explains = true
        let events = run(on: &machine, available: available)
        return (events, machine.takeExplanations().map(\.line))
    }
}

/// One trace and the explanation lines setup mode must print for it.
struct ExplanationCase: CustomTestStringConvertible, Sendable {
    var name: String
    var board: Board = Rigs.simulator
    var build: @Sendable (inout TraceBuilder) -> Void
    /// Lines that must be among the explanations, in this order.
    var expected: [String]
    /// Text no explanation may contain.
    var absent: [String] = []

    var testDescription: String { name }
}

@Suite("Setup mode: the recognizer explains its decisions")
struct ExplanationTests {
    static let cases: [ExplanationCase] = [
        ExplanationCase(name: "a 3.2 ms pulse on full is dropped by the glitch filter", build: {
            $0.set("full", true, at: 100); $0.set("full", false, at: 103.2)
        }, expected: ["full: 3.2 ms pulse dropped (glitch filter 5 ms)"]),
        ExplanationCase(name: "a pulse shorter than a longer debounce names the debounce",
                        board: DecisionRigs.board(fullDebounceMs: 12), build: {
            $0.set("full", true, at: 100); $0.set("full", false, at: 108)
        }, expected: ["full: 8 ms pulse dropped (debounce 12 ms)"]),
        ExplanationCase(name: "a glitch followed after a quiet gap by a press: the glitch is dropped, the press counts", build: {
            $0.set("half", true, at: 100); $0.set("half", false, at: 101)
            $0.set("half", true, at: 104); $0.set("half", false, at: 204)
        }, expected: ["half: 1 ms pulse dropped (glitch filter 5 ms)",
                      "half: held 100 ms ≤ lightPressMaxMs 350: a light press"]),
        ExplanationCase(name: "half held 410 ms is too long for a light press", build: {
            $0.press("half", at: 100, for: 410, bounces: 2)
        }, expected: ["half: held prepareAfterMs 300: prepare began",
                      "half: held 410 ms > lightPressMaxMs 350: not a light press"],
                        absent: ["a light press:", "pulse dropped"]),
        ExplanationCase(name: "a full click is not a light press", build: {
            $0.fullClick(at: 100, hold: 100)
        }, expected: ["half: released after a full click: not a light press"], absent: ["a light press:"]),
        ExplanationCase(name: "a short touch on one pad is a tap", build: {
            $0.press("pad2", at: 100, for: 140)
        }, expected: ["strip: moved 0 pads in 140 ms ≤ tapMaxMs 180: a tap"], absent: ["a swipe"]),
        ExplanationCase(name: "a touch rolling over to the next pad is still a tap", build: {
            $0.set("pad2", true, at: 100); $0.set("pad3", true, at: 150)
            $0.set("pad2", false, at: 170); $0.set("pad3", false, at: 220)
        }, expected: ["strip: moved 1 pad in 120 ms ≤ tapMaxMs 180: a tap"], absent: ["a swipe"]),
        ExplanationCase(name: "a finger crossing pads is a swipe, and lifting slowly is no flick", build: {
            $0.swipe([1, 2, 3, 4], at: 100, perPad: 80, overlap: 20)
            // Pad 3 touched at 260 puts the finger 1.5 pads from where it landed at 100: 160 ms, in
            // the edges' own times as a tap's length is (confirmed 5 ms later, at 265).
        }, expected: ["strip: moved 1.5 pads in 160 ms: a swipe",
                      "strip: lifted at 7.1 pads/s < 15: the swipe ends, no flick"], absent: ["a tap"]),
        ExplanationCase(name: "a long touch that never moves is neither a tap nor a swipe", build: {
            $0.press("pad0", at: 100, for: 400)
        }, expected: ["strip: touched longer than tapMaxMs 180, moved 0 pads: not a tap",
                      "strip: touch of 400 ms > tapMaxMs 180 that moved 0 pads: neither a tap nor a swipe"]),
        ExplanationCase(name: "a second light press inside the double-press window makes a double", build: {
            $0.press("half", at: 100, for: 100); $0.press("half", at: 320, for: 80)
        }, expected: ["half: held 100 ms ≤ lightPressMaxMs 350: a light press",
                      "half: light press waits doublePressWindowMs 300 for a second one before it is reported",
                      "half: pressed again 120 ms after a light press ≤ doublePressWindowMs 300: a double light press if this one is light too",
                      "half: held 80 ms ≤ lightPressMaxMs 350: a light press",
                      "half: second light press inside the window: a double light press"]),
        ExplanationCase(name: "a second light press outside the window: two single light presses", build: {
            $0.press("half", at: 100, for: 100); $0.press("half", at: 550, for: 80)
        }, expected: ["half: held 100 ms ≤ lightPressMaxMs 350: a light press",
                      "half: no second press within doublePressWindowMs 300: a single light press",
                      "half: held 80 ms ≤ lightPressMaxMs 350: a light press",
                      "half: no second press within doublePressWindowMs 300: a single light press"],
                        absent: ["a double light press"]),
        ExplanationCase(name: "a second press inside the window held too long: no double", build: {
            $0.press("half", at: 100, for: 100); $0.press("half", at: 320, for: 500)
        }, expected: ["half: pressed again 120 ms after a light press ≤ doublePressWindowMs 300: a double light press if this one is light too",
                      "half: second press held too long to be light: no double, the light press is single",
                      "half: held 500 ms > lightPressMaxMs 350: not a light press"]),
        ExplanationCase(name: "a full click after a light press makes it single", build: {
            $0.press("half", at: 100, for: 100); $0.fullClick(at: 300)
        }, expected: ["half: a full press came instead of a second light press: the light press is single"]),
        ExplanationCase(name: "full without half on a two-stage button is noise", build: {
            $0.press("full", at: 100, for: 50)
        }, expected: ["full: pressed while half is released: a two-stage button cannot close its full stage alone, ignored as noise"]),
        ExplanationCase(name: "controls close after the idle timeout", board: Rigs.board(gestures: #"{"controlsIdleTimeoutMs": 1000}"#), build: {
            $0.press("half", at: 100, for: 100); $0.set("secondary", false, at: 3000)
        }, expected: ["half: no second press within doublePressWindowMs 300: a single light press",
                      "controls: no input for controlsIdleTimeoutMs 1000: inactive"]),
    ]

    @Test("explanation lines for a trace", arguments: cases)
    func explains(_ testCase: ExplanationCase) {
        var builder = TraceBuilder(testCase.board)
        testCase.build(&builder)
        let lines = builder.explained().lines
        // The expected lines appear in order (others may come between them).
        let all = lines.joined(separator: "\n")
        var rest = lines[...]
        for line in testCase.expected {
            guard let found = rest.firstIndex(of: line) else {
                Issue.record("missing or out of order: \(line)\nexplanations:\n\(all)")
                return
            }
            rest = rest[(found + 1)...]
        }
        for text in testCase.absent {
            #expect(!lines.contains { $0.contains(text) }, "unexpected '\(text)' in:\n\(all)")
        }
    }

    @Test("explaining never changes a decision: the events are the same on and off", arguments: cases)
    func explainingChangesNothing(_ testCase: ExplanationCase) {
        var builder = TraceBuilder(testCase.board)
        testCase.build(&builder)
        #expect(builder.explained().events == builder.run())
    }

    @Test("off, the recognizer makes no explanation")
    func offMakesNone() {
        var builder = TraceBuilder()
        builder.set("full", true, at: 100); builder.set("full", false, at: 103)
        builder.press("half", at: 200, for: 500)
        var machine = GestureStateMachine(board: builder.board)
        var events: [ShutterEvent] = []
        for edge in builder.sorted { machine.edge(edge, into: &events) }
        machine.finish(at: ms(2000), into: &events)
        #expect(!machine.explains)
        #expect(machine.takeExplanations().isEmpty)
    }

    @Test("a press while capture is unavailable says why it was cancelled")
    func unavailableCapture() {
        var builder = TraceBuilder()
        builder.fullClick(at: 100)
        let lines = builder.explained(available: false).lines
        #expect(lines.first == "capture: unavailable (no camera, or disabled): presses are cancelled")
        #expect(lines.contains("full: pressed while capture is unavailable: cancelled"))
    }

    @Test("explanations carry the instant of their decision")
    func stamped() {
        var machine = GestureStateMachine(board: Rigs.simulator)
        machine.explains = true
        var events: [ShutterEvent] = []
        let full = Rigs.simulator.line(named: "full")!
        machine.edge(Edge(line: full, active: true, time: ms(100)), into: &events)
        machine.edge(Edge(line: full, active: false, time: ms(102)), into: &events)
        machine.advance(to: ms(200), into: &events)
        let explanations = machine.takeExplanations()
        // Dropped when the window after the last edge ran out: 102 ms + 5 ms.
        #expect(explanations == [Explanation(time: ms(107), subject: "full", reason: "2 ms pulse dropped (glitch filter 5 ms)")])
        #expect(machine.takeExplanations().isEmpty)
    }

    @Test("figures are formatted for people", arguments: [
        (Nanoseconds.milliseconds(3.2), "3.2 ms"), (.milliseconds(410), "410 ms"), (.milliseconds(12.6), "13 ms"), (.zero, "0 ms"),
    ])
    func milliseconds(_ span: Nanoseconds, _ text: String) {
        #expect(Explanation.milliseconds(span) == text)
    }

    @Test("distances on the strip", arguments: [(0.0, "0 pads"), (0.5, "0.5 pad"), (1.0, "1 pad"), (-1.5, "1.5 pads")])
    func pads(_ distance: Double, _ text: String) {
        #expect(Explanation.pads(distance) == text)
    }
}
