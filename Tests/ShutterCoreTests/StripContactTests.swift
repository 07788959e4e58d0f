import Foundation
import Testing
@testable import ShutterCore

/// Boards and a compact trace notation for the strip's contact tests.
enum StripRigs {
    /// A simulator board with `pads` pads, `half` unless `withoutHalf`, and `controls` (JSON array text).
    static func board(pads: Int = 6, withoutHalf: Bool = false, gestures: String = "{}",
                      controls: String = zoomFirst) -> Board {
        let half = withoutHalf ? "" : #"{"name": "half", "role": "half"},"#
        let padLines = (0..<pads).map { #"{"name": "pad\#($0)", "role": "pad"}"# }.joined(separator: ", ")
        let text = """
        {"name": "strip", "chip": "simulator",
         "lines": [\(half) {"name": "full", "role": "full"}, {"name": "secondary", "role": "secondary"}, \(padLines)],
         "gestures": \(gestures),
         "controls": \(controls)}
        """
        do {
            return try Board.decode(Data(text.utf8), file: "strip.json")
        } catch {
            fatalError("strip board: \(error)")
        }
    }

    static let zoomFirst = """
        [{"id": "zoom", "kind": "systemZoom", "label": "Zoom", "range": [1, 8], "initial": 1},
         {"id": "exposure", "kind": "systemExposureBias", "label": "Exposure", "range": [-2, 2], "step": 0.3333333333333333, "initial": 0}]
        """
    static let exposureFirst = """
        [{"id": "exposure", "kind": "systemExposureBias", "label": "Exposure", "range": [-2, 2], "step": 0.3333333333333333, "initial": 0},
         {"id": "zoom", "kind": "systemZoom", "label": "Zoom", "range": [1, 8], "initial": 1}]
        """

    static let zero2w: Board = {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Boards/raspberry-pi-zero-2w.json").path
        return try! Board.load(path: path)
    }()

    /// Edges written as the issue writes them: `1.0 pad2+ 1.05 pad2-` (seconds, line, + active / - released).
    static func edges(_ text: String, board: Board) -> [Edge] {
        var edges: [Edge] = []
        var time = Instant.zero
        for word in text.split(separator: " ") {
            if let seconds = Double(word) {
                time = .nanoseconds(Int64((seconds * 1e9).rounded()))
                continue
            }
            let active = word.hasSuffix("+")
            let name = String(word.dropLast())
            guard let line = board.line(named: name) else { fatalError("no line \(name)") }
            edges.append(Edge(line: line, active: active, time: time))
        }
        return edges
    }

    /// Runs `edges` on `machine` as `shutter replay` does, without finishing.
    static func feed(_ edges: [Edge], _ machine: inout GestureStateMachine, into events: inout [ShutterEvent]) {
        for edge in edges {
            machine.advance(to: edge.time, into: &events)
            machine.edge(edge, into: &events)
        }
    }

    static func run(_ text: String, board: Board) -> [ShutterEvent] {
        GestureStateMachine.replay(edges(text, board: board), board: board)
    }

    /// The light presses and double light presses `text` makes on the strip-only Zero 2 W board.
    static func lightPresses(_ text: String) -> [String] {
        run(text, board: zero2w).map(\.summary).filter { $0 == "lightPress" || $0 == "doubleLightPress" }
    }

    /// The value of control `id` once `before` has run and time reached `rest` seconds, and once
    /// `after` has run too and input ended.
    static func value(_ id: String, board: Board, before: String, rest: Double, after: String) -> (ControlValue?, ControlValue?) {
        var machine = GestureStateMachine(board: board)
        var events: [ShutterEvent] = []
        feed(edges(before, board: board), &machine, into: &events)
        machine.advance(to: .nanoseconds(Int64((rest * 1e9).rounded())), into: &events)
        let first = machine.controlValues[id]
        let rest = edges(after, board: board)
        feed(rest, &machine, into: &events)
        machine.finish(at: rest.last?.time ?? .zero, into: &events)
        return (first, machine.controlValues[id])
    }

    static func numbers(_ events: [ShutterEvent], _ id: String) -> [(time: Double, value: Double)] {
        events.compactMap { event in
            if case .controlValue(let control, .number(let value), _, let time) = event, control == id {
                return (Double(time.rawValue) / 1e9, value)
            }
            return nil
        }
    }
}

/// The finger on the strip as a contact with a life: landing, moving, lifting, lifted.
@Suite("Strip contacts")
struct StripContactTests {
    // MARK: Lifting is no movement

    @Test func liftingATwoPadContactKeepsTheValue() {
        let board = StripRigs.board(controls: StripRigs.exposureFirst)
        let (resting, lifted) = StripRigs.value("exposure", board: board,
            before: "0.2 half+ 0.3 half- 1.0 pad1+ 1.1 pad2+ 1.2 pad1- 1.3 pad3+ 1.4 pad2- 1.5 pad4+", rest: 1.79,
            after: "1.8 pad3- 1.802 pad4-")
        #expect(resting != nil)
        #expect(lifted == resting)
    }

    @Test func liftingAThreePadContactKeepsTheValue() {
        let board = StripRigs.board(controls: StripRigs.exposureFirst)
        let (resting, lifted) = StripRigs.value("exposure", board: board,
            before: "0.2 half+ 0.3 half- 1.0 pad3+ 1.0 pad4+ 1.0 pad5+ 1.15 pad2+ 1.2 pad5- 1.3 pad1+ 1.35 pad4- 1.45 pad0+ 1.5 pad3-",
            rest: 1.79, after: "1.8 pad0- 1.8 pad1- 1.8 pad2-")
        #expect(resting != nil)
        #expect(lifted == resting)
    }

    @Test func aDropoutOnOnePadOfATwoPadContactMidSwipeIsNoMovement() {
        let board = StripRigs.board(controls: StripRigs.exposureFirst)
        // Up over pads 0→3, resting on pads 2 and 3; pad 2 drops out for 8 ms.
        let (resting, after) = StripRigs.value("exposure", board: board,
            before: "0.2 half+ 0.3 half- 1.0 pad0+ 1.05 pad1+ 1.08 pad0- 1.13 pad2+ 1.16 pad1- 1.21 pad3+", rest: 1.5,
            after: "1.5 pad2- 1.508 pad2+ 1.9 pad3- 1.9 pad2-")
        #expect(resting != nil)
        #expect(after == resting)
    }

    // MARK: Landing within the grace

    @Test func regripAtTheOtherEndWithinTheGraceIsASecondSwipe() {
        let events = StripRigs.run("0.1 half+ 0.2 half- 1.0 pad0+ 1.03 pad1+ 1.045 pad0- 1.06 pad2+ 1.075 pad1- "
            + "1.09 pad3+ 1.105 pad2- 1.106 pad3- 1.151 pad0+ 1.181 pad1+ 1.196 pad0- 1.211 pad2+ 1.226 pad1- "
            + "1.241 pad3+ 1.256 pad2- 1.257 pad3-", board: Rigs.simulator)
        #expect(events.filter { $0.summary == "swipe began" }.count == 2)
        let zooms = StripRigs.numbers(events, "zoom").map(\.value)
        #expect(zooms == zooms.sorted(), "the jump back to pad 0 is no movement: \(zooms)")
    }

    @Test func aTouchThreePadsAwayAfterAFlickEndsTheFlickAndMovesNothing() {
        let events = StripRigs.run("0.1 half+ 0.2 half- 1.0 pad0+ 1.02 pad1+ 1.03 pad0- 1.04 pad2+ 1.05 pad1- "
            + "1.06 pad3+ 1.07 pad2- 1.08 pad4+ 1.09 pad3- 1.1 pad5+ 1.11 pad4- 1.111 pad5- 1.151 pad2+ 1.231 pad2-",
            board: Rigs.simulator)
        let swipes = events.map(\.summary).filter { $0.hasPrefix("swipe") && $0 != "swipe changed" }
        #expect(swipes == ["swipe began", "swipe ended flick"])
        let zooms = StripRigs.numbers(events, "zoom").map(\.value)
        #expect(zooms == zooms.sorted(), "no reverse movement or glide: \(zooms)")
    }

    /// A wide finger lands on two pads at once; they are confirmed one at a time, and the first is
    /// within reach of where the finger lifted though the landing as a whole is not.
    @Test func aLandingOnTwoPadsBeyondReachIsANewTouchThoughItsFirstPadIsWithin() {
        let events = StripRigs.run("0.1 half+ 0.2 half- 1.0 pad0+ 1.0 pad1+ 1.1 pad2+ 1.12 pad0- 1.2 pad3+ 1.22 pad1- "
            + "1.4 pad2- 1.4 pad3- 1.44 pad4+ 1.44 pad5+ 1.55 pad3+ 1.57 pad5- 1.65 pad2+ 1.67 pad4- 1.9 pad2- 1.9 pad3-",
            board: Rigs.simulator)
        #expect(events.filter { $0.summary == "swipe began" }.count == 2)
        let swipes = events.filter { $0.name == "swipe" && $0.summary != "swipe changed" }.map(\.summary)
        #expect(swipes.count == 4 && swipes.first == "swipe began" && swipes.last?.hasPrefix("swipe ended") == true, "\(swipes)")
    }

    @Test func aLandingNextToTheLiftStillContinuesTheSwipe() {
        // Sliding up across a gap between pads 2 and 3: one swipe.
        let events = StripRigs.run("0.1 half+ 0.2 half- 1.0 pad0+ 1.05 pad1+ 1.08 pad0- 1.13 pad2+ 1.16 pad1- "
            + "1.2 pad2- 1.23 pad3+ 1.3 pad4+ 1.32 pad3- 1.5 pad4-", board: Rigs.simulator)
        #expect(events.filter { $0.summary == "swipe began" }.count == 1)
        #expect(events.filter { $0.summary.hasPrefix("swipe ended") }.count == 1)
    }

    // MARK: Dropouts

    @Test func aTapWithAnEightMillisecondDropoutIsOneLightPress() {
        let events = StripRigs.run("1.0 pad2+ 1.05 pad2- 1.058 pad2+ 1.12 pad2-", board: StripRigs.zero2w)
        #expect(events.map(\.summary) == ["lightPress", "controlsActive zoom", "controlsInactive finish"])
    }

    @Test func aSlideWithADropoutOnItsFirstPadIsOneSwipeWithoutALightPress() {
        let events = StripRigs.run("2.0 pad0+ 2.03 pad0- 2.038 pad0+ 2.08 pad1+ 2.1 pad0- 2.16 pad2+ 2.18 pad1- "
            + "2.24 pad3+ 2.26 pad2- 2.4 pad3-", board: StripRigs.zero2w)
        let summaries = events.map(\.summary)
        #expect(!summaries.contains("lightPress"))
        #expect(summaries.filter { $0 == "swipe began" }.count == 1)
    }

    // MARK: A resting thumb

    @Test func aRestingThumbDoesNotHideTaps() {
        let events = StripRigs.run("0.5 pad0+ 2.0 pad3+ 2.08 pad3- 4.0 pad3+ 4.08 pad3- 6.0 pad3+ 6.06 pad3- "
            + "6.15 pad3+ 6.21 pad3- 9.0 pad0-", board: StripRigs.zero2w)
        let presses = events.map(\.summary).filter { $0 == "lightPress" || $0 == "doubleLightPress" }
        #expect(presses == ["lightPress", "lightPress", "doubleLightPress"])
    }

    @Test func aRestingThumbDoesNotHideASwipe() {
        let events = StripRigs.run("0.5 pad0+ 3.0 pad3+ 3.05 pad2+ 3.075 pad3- 3.276 pad2- 9.0 pad0-",
                                   board: StripRigs.zero2w)
        #expect(events.map(\.summary).contains("swipe began"))
    }

    /// The thumb rolls onto the next pad as it lifts, after a finger's tap elsewhere: it has rested
    /// there for seconds, so its lift is no tap.
    @Test func aRestingThumbRollingOffAfterATapIsNoSecondTap() {
        let presses = StripRigs.lightPresses("0.5 pad0+ 2.0 pad3+ 2.1 pad3- 3.0 pad1+ 3.05 pad0- 3.1 pad1-")
        #expect(presses == ["lightPress"])
    }

    /// The thumb that rested on pad 0 swipes to pad 3 once the finger's tap is over: the swipe runs
    /// from where the thumb rested, the whole strip.
    @Test func aRestingThumbSwipingAfterATapSwipesFromWhereItRested() {
        let events = StripRigs.run("0.5 pad0+ 2.0 pad3+ 2.1 pad3- 3.0 pad1+ 3.05 pad0- 3.1 pad2+ 3.15 pad1- "
            + "3.2 pad3+ 3.25 pad2- 3.5 pad3-", board: StripRigs.zero2w)
        let deltas = events.compactMap { event -> Double? in
            if case .swipe(let phase, _, let delta, _, _, _) = event, phase != .ended { return delta }
            return nil
        }
        #expect(abs(deltas.reduce(0, +) - 1) < 1e-9, "swipe deltas \(deltas)")
    }

    /// Thumb and finger land together, the thumb's pad confirmed first; the finger swipes up at once.
    @Test func aThumbLandingWithTheFingerDoesNotHideItsSwipe() {
        let swipe = "1.003 pad2+ 1.04 pad3+ 1.06 pad2- 1.08 pad4+ 1.1 pad3- 1.12 pad5+ 1.14 pad4- 1.3 pad5-"
        let events = StripRigs.run("0.1 half+ 0.2 half- 1.0 pad0+ " + swipe + " 1.5 pad0-", board: Rigs.simulator)
        let alone = StripRigs.run("0.1 half+ 0.2 half- " + swipe + " 1.5 pad1+ 1.6 pad1-", board: Rigs.simulator)
        #expect(events.filter { $0.summary == "swipe began" }.count == 1)
        let zoom = StripRigs.numbers(events, "zoom").last?.value, zoomAlone = StripRigs.numbers(alone, "zoom").last?.value
        #expect(zoom != nil && zoom == zoomAlone, "zoom \(String(describing: zoom)), without the thumb \(String(describing: zoomAlone))")
    }

    /// Thumb and finger land together, the thumb's pad confirmed first; the finger taps.
    @Test func aThumbLandingWithTheFingerDoesNotHideItsTap() {
        #expect(StripRigs.lightPresses("1.0 pad0+ 1.003 pad3+ 1.08 pad3- 3.0 pad0-") == ["lightPress"])
    }

    // MARK: Pausing mid-swipe

    @Test func movingOnAfterAPauseMidSwipeStillAdjusts() {
        let events = StripRigs.run("0.1 half+ 0.2 half- 1.0 pad1+ 1.046 pad2+ 1.056 pad1- 1.146 pad3+ 1.156 pad2- "
            + "7.245 pad4+ 7.255 pad3- 7.345 pad5+ 7.355 pad4- 7.401 pad5-", board: Rigs.simulator)
        let zooms = StripRigs.numbers(events, "zoom")
        let before = zooms.last { $0.time < 7.0 }?.value ?? 1
        let after = zooms.last?.value ?? 1
        #expect(after > before, "zoom \(before) → \(after)")
    }

    // MARK: Short strips

    @Test func aQuickSlideOnATwoPadStripIsASwipe() {
        let events = StripRigs.run("0.1 half+ 0.2 half- 1.0 pad0+ 1.06 pad1+ 1.09 pad0- 1.091 pad1-",
                                   board: StripRigs.board(pads: 2))
        #expect(events.map(\.summary).contains("swipe began"))
    }
}
