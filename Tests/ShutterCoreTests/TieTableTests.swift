import Testing
@testable import ShutterCore

/// More deadline ties (burst interval, coalescing interval, the double window with bounce) and exact
/// coalescing through the whole rig, as tables: which events, how many values and which.
@Suite("Deadline ties: burst interval, coalescing, bounced window edges")
struct TieTableTests {
    static let burstBoard = Rigs.board(gestures: #"{"burst": true}"#)

    static let ties: [GestureCase] = [
        // Full confirmed pressed at 130; shots at 630, 830, 1030 (burstAfterMs 500, burstIntervalMs 200).
        GestureCase(name: "full released exactly at the second shot: it is taken", board: burstBoard, build: {
            $0.change("half", true, at: 100); $0.change("full", true, at: 130)
            $0.change("full", false, at: 830); $0.change("half", false, at: 900)
        }, expected: ["capture began primary", "burst began 1", "burst changed 2", "burst ended 2", "capture ended primary"]),
        GestureCase(name: "full released 1 ms before the second shot: one shot", board: burstBoard, build: {
            $0.change("half", true, at: 100); $0.change("full", true, at: 130)
            $0.change("full", false, at: 829); $0.change("half", false, at: 900)
        }, expected: ["capture began primary", "burst began 1", "burst ended 1", "capture ended primary"]),
        GestureCase(name: "release bouncing across the second shot counts from its first edge", board: burstBoard, build: {
            $0.change("half", true, at: 100); $0.change("full", true, at: 130)
            $0.change("full", false, at: 829, bounces: 4); $0.change("half", false, at: 900)
        }, expected: ["capture began primary", "burst began 1", "burst ended 1", "capture ended primary"]),
        GestureCase(name: "second light press bouncing at the window's end starts at its first edge (a double)", build: {
            $0.press("half", at: 100, for: 100); $0.press("half", at: 500, for: 100, bounces: 5)
        }, expected: ["doubleLightPress", "controlsActive zoom", "chooser began", "controlHighlighted zoom",
                      "chooser ended", "controlsInactive finish"]),
        GestureCase(name: "second light press 1 ms past the window: two light presses", build: {
            $0.press("half", at: 100, for: 100); $0.press("half", at: 501, for: 100)
        }, expected: ["lightPress", "controlsActive zoom", "lightPress", "controlsInactive finish"]),
    ]

    @Test(arguments: ties)
    func tie(_ row: GestureCase) {
        #expect(row.summaries() == row.expected)
    }

    /// A value change `offset` ms after the last value sent (coalescing interval 50 ms): at or past the
    /// interval it is sent at once, inside it is held and sent when the interval ends; never twice.
    struct CoalescingRow: Sendable, CustomTestStringConvertible {
        var offset: Double
        var sent: [String]
        var testDescription: String { "change \(offset) ms after the last send" }
    }

    static let coalescing: [CoalescingRow] = [
        CoalescingRow(offset: 10, sent: ["+⅓ EV@100", "+⅔ EV@150"]),
        CoalescingRow(offset: 49, sent: ["+⅓ EV@100", "+⅔ EV@150"]),
        CoalescingRow(offset: 50, sent: ["+⅓ EV@100", "+⅔ EV@150"]),
        CoalescingRow(offset: 51, sent: ["+⅓ EV@100", "+⅔ EV@151"]),
        CoalescingRow(offset: 300, sent: ["+⅓ EV@100", "+⅔ EV@400"]),
    ]

    @Test(arguments: coalescing)
    func coalescingAtTheInterval(_ row: CoalescingRow) {
        let board = AdjustRigs.board(control: AdjustRigs.exposure)
        var controls = ControlsDriver(ControlsStateMachine(controls: board.controls, padCount: 6, timings: board.gestures, initialValues: nil))
        controls.step(at: ms(0)) { $0.lightPress(at: ms(0), into: &$1) }
        controls.step(at: ms(100)) { $0.swipeBegan(deltaPads: 0.5, padsPerSecond: 1, at: ms(100), into: &$1) }
        // Let time pass as the rig does: every deadline up to the change fires first.
        let change = ms(100 + row.offset)
        while let due = controls.machine.tickDeadline, due <= change {
            controls.step(at: due) { $0.fireTick(at: due, into: &$1) }
        }
        controls.step(at: change) { $0.swipeChanged(deltaPads: 0.5, padsPerSecond: 1, at: change, into: &$1) }
        while let due = controls.machine.tickDeadline, due <= ms(1000) {
            controls.step(at: due) { $0.fireTick(at: due, into: &$1) }
        }
        let sent = controls.events.compactMap { event -> String? in
            if case .controlValue(_, _, let display, let at) = event { return "\(display.text)@\(at.rawValue / 1_000_000)" }
            return nil
        }
        #expect(sent == row.sent)
    }

    /// A quick swipe through the whole rig: values at least one interval apart, none repeated, the
    /// last one (the top) always sent.
    @Test func quickSwipeCoalescesToDistinctSpacedValuesEndingAtTheTop() {
        var trace = TraceBuilder(AdjustRigs.board(control: AdjustRigs.exposure))
        trace.press("half", at: 100, for: 100)
        trace.swipe(Array(0...5), at: 800, perPad: 30, overlap: 8)
        let sent = trace.run().compactMap { event -> (Double, Instant)? in
            if case .controlValue(_, .number(let value), _, let at) = event { return (value, at) }
            return nil
        }
        #expect(sent.last?.0 == 2)
        #expect(sent.count >= 2, "values on the way, not only the last: \(sent.map(\.0))")
        #expect(zip(sent, sent.dropFirst()).allSatisfy { $1.1 - $0.1 >= .milliseconds(50) && $1.0 != $0.0 })
        #expect(sent.count < 6, "a 150 ms swipe sends at most one value per 50 ms interval, plus the last: \(sent.map(\.0))")
    }
}
