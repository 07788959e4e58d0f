import Foundation
import Testing
@testable import ShutterCore

/// Decisions a person would call wrong, on the buttons and the controls, each as the trace that
/// showed it: what a press meant must not depend on a contact's dropout, a jam or a line's order.
@Suite("Buttons: a dropout is the same press, a burst has a bound, a touch stops a glide, the idle timeout counts from opening")
struct ButtonDropoutAndBoundTests {
    /// The times (ms) of the events named `name`.
    static func times(_ events: [ShutterEvent], _ name: String) -> [Double] {
        events.filter { $0.name == name }.map { Double($0.time.rawValue) / 1e6 }
    }

    static func count(_ events: [ShutterEvent], _ summary: String) -> Int {
        events.filter { $0.summary == summary }.count
    }

    /// A board with zero debounce and glitch filter everywhere, `full` listed before `half`.
    static func fullFirstBoard(gestures: String = #"{"glitchFilterMs": 0}"#) -> Board {
        let text = """
        {"name": "full-first", "chip": "simulator", "lineDefaults": {"debounceMs": 0},
         "lines": [{"name": "full", "role": "full"}, {"name": "half", "role": "half"},
           {"name": "pad0", "role": "pad"}, {"name": "pad1", "role": "pad"}, {"name": "pad2", "role": "pad"},
           {"name": "pad3", "role": "pad"}, {"name": "pad4", "role": "pad"}, {"name": "pad5", "role": "pad"}],
         "gestures": \(gestures),
         "controls": [{"id": "zoom", "kind": "systemZoom", "label": "Zoom", "range": [1, 8], "initial": 1}]}
        """
        return try! Board.decode(Data(text.utf8), file: "full-first.json")
    }

    // MARK: A dropout shorter than secondPressGapMs is the same press

    @Test func halfPressWithA7msDropoutIsOneLightPress() {
        var trace = TraceBuilder(Rigs.simulator)
        trace.set("half", true, at: 1000); trace.set("half", false, at: 1100)
        trace.set("half", true, at: 1107); trace.set("half", false, at: 1200)
        let events = trace.run()
        #expect(events.map(\.summary) == ["lightPress", "controlsActive zoom", "controlsInactive finish"])
        // The light press keeps the first edge of its press and the last of its release.
        if case .lightPress(_, let pressedAt, let releasedAt, _)? = events.first {
            #expect(pressedAt == ms(1000) && releasedAt == ms(1200))
        } else {
            Issue.record("no light press first: \(events.map(\.summary))")
        }
    }

    @Test func twoHalfPressesAGapApartAreStillADouble() {
        var trace = TraceBuilder(Rigs.simulator)
        trace.press("half", at: 1000, for: 100)
        trace.press("half", at: 1125, for: 100)     // 25 ms after: a second press
        #expect(trace.run().first?.summary == "doubleLightPress")
    }

    @Test func burstWithA7msFullDropoutIsOneBurst() {
        var trace = TraceBuilder(Rigs.simulator)
        trace.set("half", true, at: 0); trace.set("full", true, at: 50)
        trace.set("full", false, at: 1000); trace.set("full", true, at: 1007)
        trace.set("full", false, at: 2000); trace.set("half", false, at: 2030)
        let events = trace.run()
        #expect(Self.count(events, "capture began primary") == 1)
        #expect(Self.count(events, "capture ended primary") == 1)
        #expect(Self.count(events, "burst began 1") == 1)
        // Shots every 200 ms from 550 ms to 1950 ms, none missed across the dropout.
        #expect(events.last { $0.name == "burst" }?.summary == "burst ended 8")
    }

    @Test func secondaryPressWithA7msDropoutIsOneCapture() {
        var trace = TraceBuilder(Rigs.simulator)
        trace.set("secondary", true, at: 1000); trace.set("secondary", false, at: 1060)
        trace.set("secondary", true, at: 1067); trace.set("secondary", false, at: 1150)
        #expect(trace.run().map(\.summary) == ["capture began secondary", "capture ended secondary"])
    }

    // MARK: A touch stops a flick's glide on a rig with half

    @Test func touchStopsAGlideOnARigWithHalf() {
        var trace = TraceBuilder(Rigs.simulator)
        trace.press("half", at: 100, for: 100)      // controls open on zoom
        // A flick over three pads in 70 ms (about 40 pads a second).
        trace.set("pad0", true, at: 1000); trace.set("pad1", true, at: 1020); trace.set("pad0", false, at: 1030)
        trace.set("pad2", true, at: 1040); trace.set("pad1", false, at: 1050); trace.set("pad3", true, at: 1060)
        trace.set("pad2", false, at: 1070); trace.set("pad3", false, at: 1071)
        trace.set("pad3", true, at: 1191); trace.set("pad3", false, at: 1341)
        let events = trace.run()
        #expect(events.contains { $0.summary == "swipe ended flick" })
        // The touch is confirmed at 1196 ms: the glide ends there, and no value changes after it.
        #expect(Self.times(events, "controlsAdjusting").last == 1196)
        #expect(Self.times(events, "controlValue").allSatisfy { $0 <= 1196 })
    }

    // MARK: The idle timeout counts from when the controls opened

    @Test func overlayStaysTheWholeIdleTimeout() {
        var trace = TraceBuilder(Rigs.simulator)
        trace.press("half", at: 100, for: 100)
        trace.press("pad5", at: 20_000, for: 10)
        let events = trace.run()
        let opened = Self.times(events, "controlsActive").first ?? 0
        #expect(Self.times(events, "controlsInactive").first == opened + 5000)
    }

    @Test func idleTimeoutShorterThanTheDoublePressWindowStillShowsTheControls() {
        var trace = TraceBuilder(Rigs.board(gestures: #"{"controlsIdleTimeoutMs": 250, "doublePressWindowMs": 300}"#))
        trace.press("half", at: 100, for: 100)
        trace.press("pad5", at: 20_000, for: 10)
        let events = trace.run()
        let opened = Self.times(events, "controlsActive").first ?? 0
        #expect(opened > 0)
        #expect(Self.times(events, "controlsInactive").first == opened + 250)
    }

    // MARK: A burst has an upper bound; a full held past it is stuck

    @Test func jammedFullButtonStopsAtTheBurstBoundAndIsReportedOnce() {
        var trace = TraceBuilder(Rigs.simulator)
        trace.set("half", true, at: 1000); trace.set("full", true, at: 1030)
        trace.set("full", false, at: 601_000); trace.set("half", false, at: 601_020)
        let events = trace.run()
        let timings = Rigs.simulator.gestures
        let shots = events.filter { $0.name == "burst" && $0.summary != "burst ended \(0)" }.count
        #expect(shots <= timings.burstMaxShots + 1)
        #expect(Self.count(events, "lineStuck full") == 1)
        #expect(Self.count(events, "lineFreed full") == 1)
        #expect(Self.count(events, "capture cancelled primary stuck") == 1)
        #expect(Self.count(events, "capture ended primary") == 0)
        // No shot after the bound.
        let lastShot = Self.times(events, "burst").last ?? 0
        #expect(lastShot <= 1030 + Double(timings.burstMaximum.rawValue) / 1e6 + 200)
    }

    @Test func burstStopsAtItsMostShots() {
        var trace = TraceBuilder(Rigs.board(gestures: #"{"burst": true, "burstMaxShots": 3}"#))
        trace.set("half", true, at: 0); trace.set("full", true, at: 100)
        trace.set("full", false, at: 5000); trace.set("half", false, at: 5100)
        let events = trace.run()
        #expect(events.map(\.summary) == ["capture began primary", "burst began 1", "burst changed 2", "burst changed 3",
                                          "lineStuck full", "burst ended 3", "capture cancelled primary stuck",
                                          "lineFreed full"])
        // Stuck when the fourth shot would have come.
        #expect(Self.times(events, "lineStuck") == [1200])
    }

    @Test func burstStopsAtItsLongestTime() {
        var trace = TraceBuilder(Rigs.board(gestures: #"{"burst": true, "burstMaxMs": 1000}"#))
        trace.set("half", true, at: 0); trace.set("full", true, at: 100)
        trace.set("full", false, at: 5000); trace.set("half", false, at: 5100)
        let events = trace.run()
        // Shots at 600, 800 and 1000 ms; the one due at 1200 is past the bound (1100).
        #expect(Self.times(events, "burst").prefix(3) == [600, 800, 1000])
        #expect(Self.times(events, "lineStuck") == [1200])
        #expect(Self.count(events, "lineStuck full") == 1)
    }

    @Test func burstReleasedBeforeItsBoundIsNotStuck() {
        var trace = TraceBuilder(Rigs.board(gestures: #"{"burst": true, "burstMaxShots": 3}"#))
        trace.set("half", true, at: 0); trace.set("full", true, at: 100)
        trace.set("full", false, at: 1150); trace.set("half", false, at: 1250)
        let summaries = trace.run().map(\.summary)
        #expect(summaries.last == "capture ended primary")
        #expect(!summaries.contains("lineStuck full"))
    }

    @Test func burstBoundsAreBoardSettings() throws {
        let defaults = GestureTimings()
        #expect(defaults.burstMaxShots == 500)
        #expect(defaults.burstMaximum == .milliseconds(60_000))
        let board = Rigs.board(gestures: #"{"burst": true, "burstMaxShots": 20, "burstMaxMs": 9000}"#)
        #expect(board.gestures.burstMaxShots == 20)
        #expect(board.gestures.burstMaximum == .milliseconds(9000))
        #expect(throws: BoardError.self) {
            try Board.decode(Data(Self.boardText(gestures: #"{"burstMaxMs": 400, "burstAfterMs": 500}"#).utf8), file: "b.json")
        }
    }

    // MARK: Board extremes

    static func boardText(gestures: String = "{}", halfDebounce: String = "") -> String {
        """
        {"name": "extreme", "chip": "simulator",
         "lines": [{"name": "half", "role": "half"\(halfDebounce)}, {"name": "full", "role": "full"}],
         "gestures": \(gestures)}
        """
    }

    @Test func halfDebounceAboveTheLightPressMaximumIsRefused() {
        do {
            _ = try Board.decode(Data(Self.boardText(halfDebounce: #", "debounceMs": 400"#).utf8), file: "rig.json")
            Issue.record("a half debounce of 400 ms above lightPressMaxMs 350 was accepted")
        } catch {
            #expect(error.path == "lines[0].debounceMs")
            #expect(error.message.contains("lightPressMaxMs"))
        }
        // Through lineDefaults, the field named is the default's.
        let viaDefaults = """
        {"name": "extreme", "chip": "simulator", "lineDefaults": {"debounceMs": 400},
         "lines": [{"name": "half", "role": "half"}, {"name": "full", "role": "full"}]}
        """
        do {
            _ = try Board.decode(Data(viaDefaults.utf8), file: "rig.json")
            Issue.record("a default debounce of 400 ms on half was accepted")
        } catch {
            #expect(error.path == "lineDefaults.debounceMs")
        }
        // Below the maximum is fine.
        #expect(throws: Never.self) {
            try Board.decode(Data(Self.boardText(halfDebounce: #", "debounceMs": 300"#).utf8), file: "rig.json")
        }
    }

    @Test func bothStagesAtOneInstantAreAClickWhateverTheLineOrder() {
        for fullFirst in [true, false] {
            var trace = TraceBuilder(Self.fullFirstBoard())
            if fullFirst {
                trace.set("full", true, at: 1000); trace.set("half", true, at: 1000)
            } else {
                trace.set("half", true, at: 1000); trace.set("full", true, at: 1000)
            }
            trace.set("full", false, at: 1200); trace.set("half", false, at: 1250)
            let (events, lines) = trace.explained()
            #expect(events.map(\.summary) == ["capture began primary", "capture ended primary"], "full first: \(fullFirst)")
            // The explanation of the half release agrees: a click.
            #expect(lines.contains { $0.contains("released after a full click") })
            #expect(!lines.contains { $0.contains("ignored as noise") && !$0.contains("same instant") }, "\(lines)")
        }
    }

    @Test func fullAloneIsStillNoiseOnAZeroDebounceBoard() {
        var trace = TraceBuilder(Self.fullFirstBoard())
        trace.set("full", true, at: 1000); trace.set("full", false, at: 1100)
        trace.set("half", true, at: 1001); trace.set("half", false, at: 1150)
        #expect(!trace.run().contains { $0.name == "capture" })
    }

    @Test func landingExactlyAtTheLiftGraceEndContinuesTheSwipe() {
        var trace = TraceBuilder(Self.fullFirstBoard())
        trace.set("pad0", true, at: 1000); trace.set("pad1", true, at: 1030); trace.set("pad0", false, at: 1040)
        trace.set("pad2", true, at: 1070); trace.set("pad1", false, at: 1080)
        trace.set("pad3", true, at: 1110); trace.set("pad2", false, at: 1120)
        trace.set("pad3", false, at: 1200)
        // Exactly liftGraceMs (60) after the lift, on the next pad: the windows include their ends.
        trace.set("pad4", true, at: 1260); trace.set("pad4", false, at: 1400)
        let events = trace.run()
        #expect(Self.count(events, "swipe began") == 1)
        #expect(Self.times(events, "swipe").last.map { $0 > 1260 } == true, "\(events.map(\.summary))")
    }
}
