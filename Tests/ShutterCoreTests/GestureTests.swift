import Testing
@testable import ShutterCore

/// One table row: a trace and the events it must give.
struct GestureCase: Sendable, CustomTestStringConvertible {
    var name: String
    var board: Board = Rigs.simulator
    var available = true
    /// Event summaries starting with one of these are left out of the comparison.
    var ignoring: [String] = []
    var build: @Sendable (inout TraceBuilder) -> Void
    var expected: [String]

    var testDescription: String { name }

    func events() -> [ShutterEvent] {
        var trace = TraceBuilder(board)
        build(&trace)
        return trace.run(available: available)
    }

    func summaries() -> [String] {
        events().map(\.summary).filter { summary in !ignoring.contains { summary.hasPrefix($0) } }
    }
}

@Suite("Buttons: capture, light press, double light press, prepare, burst")
struct ButtonGestureTests {
    static let cases: [GestureCase] = [
        GestureCase(name: "full click", build: { $0.fullClick(at: 100) },
                    expected: ["capture began primary", "capture ended primary"]),
        GestureCase(name: "full click with bounce at press and release", build: { $0.fullClick(at: 100, bounces: 6) },
                    expected: ["capture began primary", "capture ended primary"]),
        GestureCase(name: "full click released sloppily (half first)", build: {
            $0.change("half", true, at: 100); $0.change("full", true, at: 120)
            $0.change("half", false, at: 260); $0.change("full", false, at: 262)
        }, expected: ["capture began primary", "capture ended primary"]),
        GestureCase(name: "full pulse shorter than the glitch filter", build: {
            $0.press("half", at: 100, for: 150); $0.press("full", at: 150, for: 4.9)
        }, expected: ["lightPress", "controlsActive zoom", "controlsInactive finish"]),
        GestureCase(name: "full pulse exactly the glitch filter captures", build: {
            $0.press("half", at: 100, for: 150); $0.press("full", at: 150, for: 5)
        }, expected: ["capture began primary", "capture ended primary"]),
        GestureCase(name: "full without half is noise", build: { $0.press("full", at: 100, for: 120, bounces: 3) },
                    expected: []),
        GestureCase(name: "light press", build: { $0.press("half", at: 100, for: 150, bounces: 4) },
                    expected: ["lightPress", "controlsActive zoom", "controlsInactive finish"]),
        GestureCase(name: "light press turning into a full click", build: {
            $0.change("half", true, at: 100, bounces: 3)
            $0.press("full", at: 220, for: 140, bounces: 3)
            $0.change("half", false, at: 400, bounces: 3)
        }, expected: ["capture began primary", "capture ended primary"]),
        GestureCase(name: "double light press", build: {
            $0.press("half", at: 100, for: 120, bounces: 3); $0.press("half", at: 400, for: 110, bounces: 3)
        }, expected: ["doubleLightPress", "controlsActive zoom", "chooser began", "controlHighlighted zoom",
                      "chooser ended", "controlsInactive finish"]),
        GestureCase(name: "second press exactly at the double-press window's end", build: {
            $0.press("half", at: 100, for: 100); $0.press("half", at: 500, for: 100)
        }, expected: ["doubleLightPress", "controlsActive zoom", "chooser began", "controlHighlighted zoom",
                      "chooser ended", "controlsInactive finish"]),
        GestureCase(name: "second press just after the window: two light presses", build: {
            $0.press("half", at: 100, for: 100); $0.press("half", at: 500.001, for: 100)
        }, expected: ["lightPress", "controlsActive zoom", "lightPress", "controlsInactive finish"]),
        GestureCase(name: "double light press whose second press is a full click", build: {
            $0.press("half", at: 100, for: 120, bounces: 2)
            $0.fullClick(at: 400, lead: 40, hold: 150, trail: 40, bounces: 2)
        }, expected: ["lightPress", "controlsActive zoom", "controlsInactive capture",
                      "capture began primary", "capture ended primary"]),
        GestureCase(name: "light press exactly at the maximum", board: Rigs.board(gestures: #"{"prepareAfterMs": 1000}"#),
                    build: { $0.press("half", at: 100, for: 350) },
                    expected: ["lightPress", "controlsActive zoom", "controlsInactive finish"]),
        GestureCase(name: "half press just past the maximum", board: Rigs.board(gestures: #"{"prepareAfterMs": 1000}"#),
                    build: { $0.press("half", at: 100, for: 350.001) }, expected: []),
        GestureCase(name: "light press long enough to start prepare is still light",
                    build: { $0.press("half", at: 100, for: 340, bounces: 2) },
                    expected: ["prepare began", "prepare ended", "lightPress", "controlsActive zoom",
                               "controlsInactive finish"]),
        GestureCase(name: "held half prepares", build: { $0.press("half", at: 100, for: 900, bounces: 2) },
                    expected: ["prepare began", "prepare ended"]),
        GestureCase(name: "prepare, then a full click", build: {
            $0.change("half", true, at: 100); $0.press("full", at: 700, for: 100); $0.change("half", false, at: 850)
        }, expected: ["prepare began", "capture began primary", "capture ended primary", "prepare ended"]),
        GestureCase(name: "trace that ends mid-press", build: {
            $0.change("half", true, at: 100, bounces: 2); $0.change("full", true, at: 130, bounces: 2)
        }, expected: ["capture began primary", "capture cancelled primary interrupted"]),
        GestureCase(name: "trace that ends on the release's first edge", build: {
            $0.change("half", true, at: 100); $0.press("full", at: 130, for: 100, bounces: 3)
            $0.change("half", false, at: 260, bounces: 3)
        }, expected: ["capture began primary", "capture ended primary"]),
        GestureCase(name: "capture unavailable", available: false, build: { $0.fullClick(at: 100) },
                    expected: ["capture cancelled primary unavailable"]),
        GestureCase(name: "secondary click", build: { $0.press("secondary", at: 100, for: 150, bounces: 4) },
                    expected: ["capture began secondary", "capture ended secondary"]),
        GestureCase(name: "secondary toggles controls",
                    board: Rigs.board(gestures: #"{"secondaryAction": "toggleControls"}"#),
                    build: { $0.press("secondary", at: 100, for: 150); $0.press("secondary", at: 600, for: 150) },
                    expected: ["controlsActive zoom", "controlsInactive toggle"]),
        GestureCase(name: "secondary moves to the next control",
                    board: Rigs.board(gestures: #"{"secondaryAction": "nextControl"}"#, exposureDisabled: true),
                    build: { $0.press("secondary", at: 100, for: 150); $0.press("secondary", at: 600, for: 150) },
                    expected: ["controlsActive zoom", "controlSelected filter", "controlsInactive finish"]),
        GestureCase(name: "burst", board: Rigs.board(gestures: #"{"burst": true}"#),
                    build: { $0.fullClick(at: 100, lead: 30, hold: 1000) },
                    expected: ["capture began primary", "burst began 1", "burst changed 2", "burst changed 3",
                               "burst ended 3", "capture ended primary"]),
        GestureCase(name: "burst held at the end of input terminates",
                    board: Rigs.board(gestures: #"{"burst": true}"#),
                    build: { $0.change("half", true, at: 100); $0.change("full", true, at: 130)
                             $0.set("secondary", false, at: 800) },
                    expected: ["capture began primary", "burst began 1",
                               "burst ended 1", "capture cancelled primary interrupted"]),
        GestureCase(name: "full click while controls are active collapses them first", build: {
            $0.press("half", at: 100, for: 120); $0.fullClick(at: 1000)
        }, expected: ["lightPress", "controlsActive zoom", "controlsInactive capture",
                      "capture began primary", "capture ended primary"]),
        GestureCase(name: "controls time out", build: {
            $0.press("half", at: 100, for: 120); $0.set("secondary", false, at: 7000)
        }, expected: ["lightPress", "controlsActive zoom", "controlsInactive idle"]),
    ]

    @Test(arguments: cases)
    func trace(_ row: GestureCase) {
        #expect(row.summaries() == row.expected)
    }

    @Test func pressedAtIsTheFirstEdge() throws {
        var trace = TraceBuilder()
        trace.fullClick(at: 100, lead: 30, bounces: 5)
        let events = trace.run()
        guard case .capture(.began, .primary, let pressedAt, _, true, nil, let at) = try #require(events.first) else {
            Issue.record("expected capture began, got \(events)")
            return
        }
        #expect(pressedAt == ms(130))
        // Confirmed once the bounce (5 × 0.6 ms) settled and held for the 5 ms debounce.
        #expect(at == ms(138))
    }

    @Test func captureOnEndedTakesThePhotoAtRelease() {
        var trace = TraceBuilder(Rigs.board(gestures: #"{"captureOn": "ended"}"#))
        trace.fullClick(at: 100)
        let photos = trace.run().compactMap { event -> Bool? in
            if case .capture(_, _, _, _, let photo, _, _) = event { return photo }
            return nil
        }
        #expect(photos == [false, true])
    }

    @Test func captureBecomingUnavailableCancelsAPressInProgress() {
        var machine = GestureStateMachine(board: Rigs.simulator)
        var events: [ShutterEvent] = []
        let half = Rigs.simulator.line(named: "half")!, full = Rigs.simulator.line(named: "full")!
        machine.edge(Edge(line: half, active: true, time: ms(100)), into: &events)
        machine.edge(Edge(line: full, active: true, time: ms(120)), into: &events)
        machine.setCaptureAvailable(false, at: ms(200), into: &events)
        machine.edge(Edge(line: full, active: false, time: ms(300)), into: &events)
        machine.finish(at: ms(400), into: &events)
        #expect(events.map(\.summary) == ["capture began primary", "capture cancelled primary unavailable"])
    }
}

@Suite("Slider strip: swipes, taps, controls")
struct StripGestureTests {
    static let swipeCases: [GestureCase] = [
        GestureCase(name: "swipe while inactive wakes the controls without a value",
                    build: { $0.swipe([0, 1, 2, 3, 4, 5], at: 100) },
                    expected: ["swipe began", "controlsActive zoom", "swipe changed", "swipe changed", "swipe changed",
                               "swipe changed", "swipe changed", "swipe changed", "swipe changed", "swipe ended",
                               "controlsInactive finish"]),
        GestureCase(name: "light press, then swipe zoom up across the strip", ignoring: ["swipe changed"], build: {
            $0.press("half", at: 100, for: 120); $0.swipe([0, 1, 2, 3, 4, 5], at: 600, perPad: 100)
        }, expected: ["lightPress", "controlsActive zoom", "swipe began", "controlsAdjusting began zoom",
                      // one pad at the tap window's end (+1.4); the next half pad is sent at the coalescing
                      // tick, before pad 1's release settles as movement (20 ms after it), which is coalesced
                      "controlValue zoom 1.366", "controlValue zoom 1.818", "controlValue zoom 2.484", "controlValue zoom 3.393", "controlValue zoom 4.635",
                      "controlValue zoom 6.331", "controlValue zoom 8",
                      "swipe ended", "controlsAdjusting ended zoom", "controlsInactive finish"]),
        GestureCase(name: "swipe reversing direction", ignoring: ["controlValue"], build: {
            $0.press("half", at: 100, for: 120)
            $0.swipe([1, 2, 3, 4, 3, 2], at: 600, perPad: 100)
        }, expected: ["lightPress", "controlsActive zoom", "swipe began", "controlsAdjusting began zoom",
                      // began at 2 (one pad, past the tap window); 2.5 3 3.5 4, reversal to 3 (3.5 is
                      // inside the hysteresis), 2.5, 2
                      "swipe changed", "swipe changed", "swipe changed", "swipe changed", "swipe changed",
                      "swipe changed", "swipe changed", "swipe ended", "controlsAdjusting ended zoom",
                      "controlsInactive finish"]),
        GestureCase(name: "a finger briefly off between spaced pads is one swipe", ignoring: ["swipe changed"], build: {
            $0.swipe([0, 1, 2, 3], at: 100, perPad: 100, overlap: -40)
        }, expected: ["swipe began", "controlsActive zoom", "swipe ended", "controlsInactive finish"]),
        GestureCase(name: "a gap longer than the lift grace is two touches", ignoring: ["swipe changed"], build: {
            $0.swipe([0, 1, 2], at: 100, perPad: 100, overlap: 20); $0.swipe([3, 4, 5], at: 500, perPad: 100)
        }, expected: ["swipe began", "controlsActive zoom", "swipe ended", "swipe began",
                      "controlsAdjusting began zoom", "controlValue zoom 1.366", "controlValue zoom 1.818", "controlValue zoom 2.484",
                      "swipe ended", "controlsAdjusting ended zoom", "controlsInactive finish"]),
        GestureCase(name: "a quick swipe that leaves the strip is a flick", ignoring: ["swipe changed"], build: {
            $0.swipe([0, 1, 2, 3, 4], at: 100, perPad: 35, overlap: 15)
        }, expected: ["swipe began", "controlsActive zoom", "swipe ended flick", "controlsInactive finish"]),
        GestureCase(name: "a pad touched for less than the glitch filter is no touch", build: {
            $0.press("pad2", at: 100, for: 4); $0.press("pad4", at: 300, for: 4.99)
        }, expected: []),
        GestureCase(name: "tap on a two-stage rig does nothing", build: { $0.press("pad2", at: 100, for: 120) },
                    expected: []),
        GestureCase(name: "exposure snaps to thirds", ignoring: ["swipe"], build: {
            $0.press("half", at: 100, for: 120); $0.press("half", at: 330, for: 100)   // chooser
            $0.swipe([2, 3], at: 800, perPad: 250, overlap: 30)                        // highlight exposure
            $0.press("half", at: 1600, for: 120)                                      // select
            $0.swipe([2, 3, 4], at: 2200, perPad: 120)
        }, expected: ["doubleLightPress", "controlsActive zoom", "chooser began", "controlHighlighted zoom",
                      "controlHighlighted exposure", "lightPress", "controlSelected exposure", "chooser ended",
                      "controlsAdjusting began exposure", "controlValue exposure 0.667", "controlValue exposure 1", "controlValue exposure 1.667",
                      "controlsAdjusting ended exposure",
                      "controlsInactive finish"]),
        GestureCase(name: "chooser skips disabled controls; picker steps one item per pad",
                    board: Rigs.board(exposureDisabled: true), ignoring: ["swipe"], build: {
            $0.press("half", at: 100, for: 120); $0.press("half", at: 330, for: 100)
            $0.swipe([1, 2], at: 800, perPad: 250, overlap: 30)
            $0.press("half", at: 1600, for: 120)
            $0.swipe([1, 2, 3, 4], at: 2200, perPad: 120)
        }, expected: ["doubleLightPress", "controlsActive zoom", "chooser began", "controlHighlighted zoom",
                      "controlHighlighted filter", "lightPress", "controlSelected filter", "chooser ended",
                      "controlsAdjusting began filter", "controlValue filter Mono", "controlValue filter Vivid",
                      "controlValue filter Warm", "controlsAdjusting ended filter", "controlsInactive finish"]),
        GestureCase(name: "picker stays in range", board: Rigs.board(exposureDisabled: true), ignoring: ["swipe"], build: {
            $0.press("half", at: 100, for: 120); $0.press("half", at: 330, for: 100)
            $0.swipe([1, 2], at: 800, perPad: 250, overlap: 30)
            $0.press("half", at: 1600, for: 120)
            $0.swipe([0, 1, 2, 3, 4, 5], at: 2200, perPad: 120)
        }, expected: ["doubleLightPress", "controlsActive zoom", "chooser began", "controlHighlighted zoom",
                      "controlHighlighted filter", "lightPress", "controlSelected filter", "chooser ended",
                      "controlsAdjusting began filter", "controlValue filter Mono", "controlValue filter Vivid",
                      "controlValue filter Warm", "controlsAdjusting ended filter", "controlsInactive finish"]),
        GestureCase(name: "chooser closes on idle", build: {
            $0.press("half", at: 100, for: 120); $0.press("half", at: 330, for: 100); $0.set("secondary", false, at: 9000)
        }, expected: ["doubleLightPress", "controlsActive zoom", "chooser began", "controlHighlighted zoom",
                      "chooser ended", "controlsInactive idle"]),
        GestureCase(name: "trace that ends mid-swipe", ignoring: ["swipe changed", "controlValue"], build: {
            $0.press("half", at: 100, for: 120)
            $0.set("pad0", true, at: 600); $0.set("pad1", true, at: 680); $0.set("pad0", false, at: 700)
            $0.set("pad2", true, at: 780); $0.set("pad1", false, at: 800)
        }, expected: ["lightPress", "controlsActive zoom", "swipe began", "controlsAdjusting began zoom",
                      "swipe ended", "controlsAdjusting ended zoom", "controlsInactive finish"]),
        GestureCase(name: "secondary capture collapses the controls too", ignoring: ["swipe changed", "controlValue"], build: {
            $0.press("half", at: 100, for: 120); $0.press("secondary", at: 1000, for: 150)
        }, expected: ["lightPress", "controlsActive zoom", "controlsInactive capture", "capture began secondary",
                      "capture ended secondary"]),
    ]

    @Test(arguments: swipeCases)
    func trace(_ row: GestureCase) {
        #expect(row.summaries() == row.expected)
    }

    static let tapCases: [GestureCase] = [
        GestureCase(name: "tap on one pad", board: Rigs.board(withoutHalf: true),
                    build: { $0.press("pad2", at: 100, for: 120) },
                    expected: ["lightPress", "controlsActive zoom", "controlsInactive finish"]),
        GestureCase(name: "tap rolling over two neighbouring pads", board: Rigs.board(withoutHalf: true), build: {
            $0.press("pad2", at: 100, for: 100); $0.press("pad3", at: 115, for: 120)
        }, expected: ["lightPress", "controlsActive zoom", "controlsInactive finish"]),
        GestureCase(name: "tap exactly as long as the tap window", board: Rigs.board(withoutHalf: true),
                    build: { $0.press("pad2", at: 100, for: 180) },
                    expected: ["lightPress", "controlsActive zoom", "controlsInactive finish"]),
        GestureCase(name: "touch longer than the tap window is no tap", board: Rigs.board(withoutHalf: true),
                    build: { $0.press("pad2", at: 100, for: 181) }, expected: []),
        GestureCase(name: "double tap", board: Rigs.board(withoutHalf: true), build: {
            $0.press("pad2", at: 100, for: 90); $0.press("pad2", at: 350, for: 90)
        }, expected: ["doubleLightPress", "controlsActive zoom", "chooser began", "controlHighlighted zoom",
                      "chooser ended", "controlsInactive finish"]),
        GestureCase(name: "tap, then swipe adjusts", board: Rigs.board(withoutHalf: true), ignoring: ["swipe changed"],
                    build: { $0.press("pad2", at: 100, for: 90); $0.swipe([2, 3, 4], at: 350, perPad: 100) },
                    expected: ["lightPress", "controlsActive zoom", "swipe began", "controlsAdjusting began zoom",
                               "controlValue zoom 1.366", "controlValue zoom 1.818", "controlValue zoom 2.484", "swipe ended",
                               "controlsAdjusting ended zoom", "controlsInactive finish"]),
    ]

    @Test(arguments: tapCases)
    func tap(_ row: GestureCase) {
        #expect(row.summaries() == row.expected)
    }

    /// A finger across the six pads at 100 ms a pad: one strip length in 0.5 s (2 lengths/s,
    /// 10 pads/s, under the 15 pads/s of a flick).
    @Test func swipeReportsPositionDeltaAndVelocity() {
        var trace = TraceBuilder()
        trace.swipe([0, 1, 2, 3, 4, 5], at: 100, perPad: 100)
        let swipes = trace.run().compactMap { event -> (phase: EventPhase, position: Double, delta: Double, velocity: Double, flick: Bool)? in
            if case .swipe(let phase, let position, let delta, let velocity, let flick, _) = event { return (phase, position, delta, velocity, flick) }
            return nil
        }
        #expect(swipes.first?.phase == .began)
        #expect(swipes.last?.phase == .ended)
        #expect(swipes.last?.position == 1)
        let positions = swipes.map(\.position)
        #expect(positions == positions.sorted())
        #expect(positions.allSatisfy { (0...1).contains($0) })
        // Each delta is the move since the previous swipe event (began: since touch-down on pad0, at 0).
        let previous = [0] + positions.dropLast()
        for (swipe, before) in zip(swipes, previous) {
            #expect(abs(swipe.delta - (swipe.position - before)) < 1e-9, "\(swipe.phase) delta \(swipe.delta) from \(before) to \(swipe.position)")
        }
        #expect(abs(swipes.map(\.delta).reduce(0, +) - 1) < 1e-9)
        // The finger's speed, 2 strip lengths a second, within a quarter while it moves; no flick.
        for swipe in swipes where swipe.phase != .ended {
            #expect(abs(swipe.velocity - 2) <= 0.5, "\(swipe.phase) at \(swipe.position): velocity \(swipe.velocity)")
        }
        #expect(swipes.last.map { $0.velocity > 0 && !$0.flick } == true)
    }
}
