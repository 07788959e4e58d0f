import Foundation
import Testing
@testable import ShutterCore

/// Each defect issue 20 reported, as the trace that showed it.
@Suite("Issue 20: decisions a person would call wrong")
struct Issue20Tests {
    static let zero2w: Board = {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Boards/raspberry-pi-zero-2w.json").path
        return try! Board.load(path: path)
    }()

    /// The times (ms) of the events named `name`.
    static func times(_ events: [ShutterEvent], _ name: String) -> [Double] {
        events.filter { $0.name == name }.map { Double($0.time.rawValue) / 1e6 }
    }

    /// The numbers of the zoom values sent, in order.
    static func zooms(_ events: [ShutterEvent]) -> [Double] {
        events.compactMap { event in
            if case .controlValue("zoom", .number(let value), _, _) = event { return value }
            return nil
        }
    }

    // MARK: Defect 1: a full press whose half change was a glitch

    @Test func fullWhoseHalfChangeWasAGlitchIsNoiseAndTheNextLightPressCounts() {
        var trace = TraceBuilder(DecisionRigs.board())
        trace.set("full", true, at: 999)
        trace.set("half", true, at: 1000); trace.set("half", false, at: 1001)     // 1 ms glitch
        trace.set("full", false, at: 1050)
        trace.press("half", at: 3050, for: 150)
        #expect(trace.run().map(\.summary) == ["lightPress", "controlsActive zoom", "controlsInactive finish"])
    }

    @Test func quickClickUnderALongHalfDebounceLeavesTheNextLightPress() {
        // half 60 ms debounce: the 50 ms click's half press is dropped, full (5 ms) confirmed during it.
        var trace = TraceBuilder(DecisionRigs.board(halfDebounceMs: 60))
        trace.set("half", true, at: 100); trace.set("full", true, at: 105)
        trace.set("full", false, at: 140); trace.set("half", false, at: 150)
        trace.press("half", at: 2000, for: 150)
        #expect(trace.run().map(\.summary) == ["capture began primary", "capture ended primary",
                                               "lightPress", "controlsActive zoom", "controlsInactive finish"])
    }

    // MARK: Defect 2: a button held by a person is not stuck

    @Test func focusHeldLongerThanStuckAfterThenAFullClickTakesThePhoto() {
        var trace = TraceBuilder(DecisionRigs.board())
        trace.change("half", true, at: 100)
        trace.press("full", at: 31_100, for: 150)
        trace.change("half", false, at: 31_400)
        #expect(trace.run().map(\.summary) == ["prepare began", "capture began primary", "capture ended primary",
                                               "prepare ended"])
    }

    @Test func burstHeldLongerThanStuckAfterEndsWithItsRelease() {
        var trace = TraceBuilder(DecisionRigs.board(gestures: #"{"burst": true}"#))
        trace.change("half", true, at: 100); trace.change("full", true, at: 130)
        trace.change("full", false, at: 39_130); trace.change("half", false, at: 39_200)
        let summaries = trace.run().map(\.summary)
        #expect(!summaries.contains { $0.hasPrefix("lineStuck") })
        #expect(summaries.suffix(2) == ["burst ended 193", "capture ended primary"])
    }

    @Test func thumbRestingOnAPadForThirtySecondsIsNotStuck() {
        var trace = TraceBuilder(DecisionRigs.board())
        trace.change("pad0", true, at: 100)
        trace.change("pad0", false, at: 35_100)
        #expect(!trace.run().map(\.summary).contains { $0.hasPrefix("lineStuck") })
    }

    @Test func padsHaveTheirOwnStuckLimit() {
        var trace = TraceBuilder(DecisionRigs.board(gestures: #"{"padStuckAfterMs": 60000}"#))
        trace.change("pad0", true, at: 100)
        trace.change("pad0", false, at: 61_000)
        let events = trace.run()
        #expect(events.map(\.summary) == ["lineStuck pad0", "lineFreed pad0"])
        #expect(Self.times(events, "lineStuck") == [60_100])
    }

    @Test func fullJammedWithoutHalfIsStillStuck() {
        var trace = TraceBuilder(DecisionRigs.board(gestures: #"{"stuckAfterMs": 1000}"#))
        trace.change("full", true, at: 100)
        trace.change("full", false, at: 3000)
        trace.fullClick(at: 4000)
        #expect(trace.run().map(\.summary) == ["lineStuck full", "lineFreed full", "capture began primary",
                                               "capture ended primary"])
    }

    // MARK: Defect 3: a timer waits for the lines that can change it, each for its own window

    @Test func doubleLightPressUnderASixtyMillisecondDebounce() {
        var trace = TraceBuilder(DecisionRigs.board(halfDebounceMs: 60))
        trace.press("half", at: 100, for: 100)
        trace.press("half", at: 495, for: 100)       // 295 ms after the first release
        #expect(IntentGenerator.recognized(trace.run()) == ["doubleLightPress @100.0"])
    }

    @Test func aChatteringPadDoesNotDelayBurstShots() {
        var trace = TraceBuilder(DecisionRigs.board(gestures: #"{"burst": true}"#))
        trace.change("half", true, at: 100); trace.change("full", true, at: 130)
        var level = true
        for t in stride(from: 200.0, to: 1500, by: 1) { trace.set("pad3", level, at: t); level.toggle() }
        trace.set("pad3", false, at: 1500)
        trace.change("full", false, at: 1600); trace.change("half", false, at: 1650)
        let events = trace.run()
        #expect(Self.times(events, "burst").prefix(5) == [630, 830, 1030, 1230, 1430])
    }

    // MARK: Defect 4: two fingers on pads that are not neighbours

    @Test func aSecondFingerAwayFromTheThumbIsNoSwipe() {
        var trace = TraceBuilder(DecisionRigs.board())
        trace.press("half", at: 100, for: 120)                  // controls active
        trace.change("pad0", true, at: 1000)                    // thumb resting
        trace.press("pad5", at: 1500, for: 100)                 // a finger taps far away
        trace.change("pad0", false, at: 2500)
        let events = trace.run()
        #expect(!events.map(\.summary).contains { $0.hasPrefix("swipe") })
        #expect(Self.zooms(events).isEmpty)
    }

    @Test func aSecondFingerThatMovesIsFollowed() {
        var trace = TraceBuilder(DecisionRigs.board())
        trace.press("half", at: 100, for: 120)
        trace.change("pad0", true, at: 1000)                    // thumb resting
        trace.swipe([3, 4, 5], at: 1500, perPad: 100)            // a finger swipes away from it
        trace.change("pad0", false, at: 2500)
        let events = trace.run()
        let swipes = events.filter { $0.name == "swipe" }
        #expect(swipes.first?.summary == "swipe began")
        // The finger's place, never the mean of thumb and finger: from 3 onwards, rising.
        let positions = swipes.compactMap { event -> Double? in
            if case .swipe(_, let position, _, _, _, _) = event { return position }
            return nil
        }
        #expect(!positions.isEmpty && positions.allSatisfy { $0 >= 0.6 }, "\(positions)")
        let zooms = Self.zooms(events)
        #expect(!zooms.isEmpty && zooms.allSatisfy { $0 > 1 }, "the swipe zoomed in: \(zooms)")
    }

    // MARK: Defect 5: a flick after a rest

    @Test func flickAfterARestIsAFlick() {
        var trace = TraceBuilder(DecisionRigs.board())
        trace.press("half", at: 100, for: 120)                  // controls active
        trace.change("pad0", true, at: 1000)                    // rest one second
        for pad in 1...5 {                                      // pad0 -> pad5 in 50 ms
            let t = 2000 + Double(pad - 1) * 10
            trace.set("pad\(pad)", true, at: t); trace.set("pad\(pad - 1)", false, at: t + 5)
        }
        trace.set("pad5", false, at: 2050)
        let events = trace.run()
        #expect(events.map(\.summary).contains("swipe ended flick"))
        #expect(Self.zooms(events).last == 8)
    }

    // MARK: Defect 6: movement after an idle timeout

    @Test func movementAfterAnIdleTimeoutWakesTheControls() {
        var trace = TraceBuilder(DecisionRigs.board())
        trace.press("half", at: 100, for: 100)
        trace.set("pad0", true, at: 1000); trace.set("pad1", true, at: 1080); trace.set("pad0", false, at: 1100)
        trace.set("pad2", true, at: 1160); trace.set("pad1", false, at: 1180)
        // 6 s resting on pad2, then three pads of travel.
        trace.set("pad3", true, at: 7500); trace.set("pad2", false, at: 7520)
        trace.set("pad4", true, at: 7580); trace.set("pad3", false, at: 7600)
        trace.set("pad5", true, at: 7660); trace.set("pad4", false, at: 7680)
        trace.set("pad5", false, at: 7800)
        let summaries = trace.run().map(\.summary)
        guard let idle = summaries.firstIndex(of: "controlsInactive idle") else { Issue.record("no idle: \(summaries)"); return }
        let after = summaries[idle...]
        #expect(after.firstIndex(of: "controlsActive zoom").map { $0 < after.firstIndex(of: "swipe ended")! } == true,
                "\(summaries)")
    }

    // MARK: Defect 7: a dropout inside a swipe

    @Test func aShortDropoutDoesNotSplitASwipe() {
        var trace = TraceBuilder(DecisionRigs.board())
        trace.press("half", at: 100, for: 120)
        trace.swipe([0, 1, 2, 3, 4, 5], at: 2000, perPad: 80, overlap: 20)
        trace.set("pad3", false, at: 2280); trace.set("pad3", true, at: 2295)   // 15 ms dropout on pad3 alone
        let events = trace.run()
        #expect(events.filter { $0.summary == "swipe began" }.count == 1)
        #expect(Self.zooms(events).last == 8)
    }

    // MARK: Defect 8: a strip double tap that drifts one pad

    @Test func stripDoubleTapDriftingOnePadIsADouble() {
        var trace = TraceBuilder(Self.zero2w)
        trace.press("pad1", at: 100, for: 90); trace.press("pad2", at: 220, for: 90)
        #expect(IntentGenerator.recognized(trace.run()) == ["doubleLightPress @100.0"])
    }

    @Test func quickStripDoubleTapDriftingOnePadIsADouble() {
        var trace = TraceBuilder(Self.zero2w)
        trace.press("pad1", at: 100, for: 50); trace.press("pad2", at: 170, for: 60)
        #expect(IntentGenerator.recognized(trace.run()) == ["doubleLightPress @100.0"])
    }

    @Test func tapRollingOverToTheNextPadWithAShortGapIsOneTap() {
        // Off pad1 for 5 ms (less than secondPressGapMs) on the way to pad2: one finger rolling, one tap.
        var trace = TraceBuilder(Self.zero2w)
        trace.press("pad1", at: 100, for: 35); trace.press("pad2", at: 140, for: 40)
        #expect(IntentGenerator.recognized(trace.run()) == ["lightPress @100.0"])
    }
}
