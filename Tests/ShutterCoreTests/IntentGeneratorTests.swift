import Foundation
import Testing
@testable import ShutterCore

/// What a person meant, generated with its timing, checked against what was recognized: the cases
/// the human-timing generator (IntentTests) leaves out. Each family is swept over a grid or seeded
/// random draws, so a rule that holds only at the values someone thought of fails here.
enum IntentGenerator {
    /// Light presses, holds and full clicks on a two-stage button whose stages debounce and settle
    /// differently (`full` may confirm before `half`), each with the pressedAt the person made.
    struct ButtonCase: CustomTestStringConvertible, Sendable {
        var halfDebounce: Double
        var fullDebounce: Double
        var halfBounces: Int
        var fullBounces: Int
        var testDescription: String {
            "half \(halfDebounce) ms/\(halfBounces) bounces, full \(fullDebounce) ms/\(fullBounces) bounces"
        }
    }

    static let buttonCases: [ButtonCase] = {
        var cases: [ButtonCase] = []
        for half in [0.0, 2, 5, 20, 40] {
            for full in [0.0, 5, 20, 40] where half != full || half == 5 {
                for (halfBounces, fullBounces) in [(0, 0), (8, 0), (0, 8), (3, 6)] {
                    cases.append(ButtonCase(halfDebounce: half, fullDebounce: full, halfBounces: halfBounces, fullBounces: fullBounces))
                }
            }
        }
        return cases
    }()

    /// A gesture meant, and the events (summary, pressedAt in ms) it must give.
    struct Meant {
        var summary: String
        var pressedAt: Double?
    }

    static func pressedAt(_ event: ShutterEvent) -> Double? {
        switch event {
        case .capture(.began, _, let at, _, _, _, _), .lightPress(_, let at, _, _), .doubleLightPress(_, let at, _),
             .prepare(.began, let at, _):
            Double(at.rawValue) / 1e6
        default:
            nil
        }
    }

    /// The gesture-level events with their pressedAt: what the person did, not how the controls answered.
    static func recognized(_ events: [ShutterEvent]) -> [String] {
        events.compactMap { event in
            switch event {
            case .capture(.began, _, _, _, _, _, _), .lightPress, .doubleLightPress, .prepare(.began, _, _):
                "\(event.summary) @\(String(format: "%.1f", pressedAt(event)!))"
            case .capture, .prepare:
                event.summary
            default:
                nil
            }
        }
    }

    /// 1 ms spikes every 4 ms for `span` ms on `line`, ending `before` ms ahead of `at`.
    static func noise(_ trace: inout TraceBuilder, _ line: String, before at: Double, span: Double) {
        var t = at - 4 - span
        while t + 1 < at - 4 {
            trace.set(line, true, at: t)
            trace.set(line, false, at: t + 1)
            t += 4
        }
    }
}

@Suite("Intent generator: asymmetric debounce, strip taps, quick succession, noise, swipes over every control kind")
struct IntentGeneratorTests {
    // MARK: Asymmetric debounce and settle between half and full

    @Test(arguments: IntentGenerator.buttonCases)
    func twoStageButtonWithAsymmetricStages(_ row: IntentGenerator.ButtonCase) {
        let board = DecisionRigs.board(halfDebounceMs: row.halfDebounce, fullDebounceMs: row.fullDebounce)
        var random = SplitMix64(seed: UInt64(row.halfDebounce * 100 + row.fullDebounce) &+ UInt64(row.halfBounces * 7 + row.fullBounces))
        for _ in 0..<6 {
            var trace = TraceBuilder(board)
            var meant: [String] = []
            var t = 200.0
            // A full click: full a few ms to 150 ms after half (it may confirm first), released before half.
            let lead = random.ms(4...150), hold = random.ms(60...400), trail = random.ms(8...120)
            trace.change("half", true, at: t, bounces: row.halfBounces)
            trace.change("full", true, at: t + lead, bounces: row.fullBounces)
            trace.change("full", false, at: t + lead + hold, bounces: row.fullBounces)
            trace.change("half", false, at: t + lead + hold + trail, bounces: row.halfBounces)
            meant += ["capture began primary @\(String(format: "%.1f", t + lead))", "capture ended primary"]
            t += lead + hold + trail + 1200
            // A light press, clear of the maximum (350 ms) and of the double window after it.
            let light = random.ms(60...300)
            trace.press("half", at: t, for: light, bounces: row.halfBounces)
            meant.append("lightPress @\(String(format: "%.1f", t))")
            t += light + 1200
            // A hold: prepare, no light press.
            trace.press("half", at: t, for: random.ms(500...900), bounces: row.halfBounces)
            meant += ["prepare began @\(String(format: "%.1f", t))", "prepare ended"]
            let got = IntentGenerator.recognized(trace.run())
            #expect(got == meant)
        }
    }

    // MARK: Strip-only double taps of every length within the windows

    /// Tap lengths from 20 ms to `tapMaxMs` (180), gaps from `secondPressGapMs` (20) to the
    /// double-press window (300), on the same pad: always a double, never two singles or nothing.
    /// (A shorter gap is a dropout of one press.)
    @Test(arguments: [20.0, 60, 100, 140, 180])
    func stripDoubleTapOfEveryLength(first: Double) {
        let board = DecisionRigs.board(withoutHalf: true)
        var misread: [String] = []
        for second in [20.0, 60, 100, 121, 150, 180] {
            for gap in [20.0, 30, 59, 60, 61, 100, 200, 299, 300] {
                var trace = TraceBuilder(board)
                trace.press("pad2", at: 100, for: first)
                trace.press("pad2", at: 100 + first + gap, for: second)
                let got = IntentGenerator.recognized(trace.run())
                if got != ["doubleLightPress @100.0"] { misread.append("\(first)/\(gap)/\(second): \(got)") }
            }
        }
        #expect(misread.isEmpty, "first tap \(first) ms, then gap/second tap: \(misread)")
    }

    /// The same taps further apart than the window are two light presses.
    @Test(arguments: [20.0, 100, 180])
    func stripTapsBeyondTheWindowAreTwoLightPresses(length: Double) {
        let board = DecisionRigs.board(withoutHalf: true)
        for gap in [330.0, 400, 700] {
            var trace = TraceBuilder(board)
            trace.press("pad2", at: 100, for: length)
            trace.press("pad2", at: 100 + length + gap, for: length)
            let got = IntentGenerator.recognized(trace.run())
            #expect(got == ["lightPress @100.0", "lightPress @\(String(format: "%.1f", 100 + length + gap))"], "gap \(gap)")
        }
    }

    // MARK: Taps in quick succession

    /// Doubles and singles one after the other, each just past the previous one's window: each is
    /// recognized on its own, on the button and on a strip-tap rig.
    @Test(arguments: [false, true])
    func tapsInQuickSuccession(withoutHalf: Bool) {
        let board = DecisionRigs.board(withoutHalf: withoutHalf)
        let line = withoutHalf ? "pad3" : "half"
        var random = SplitMix64(seed: withoutHalf ? 11 : 12)
        for _ in 0..<40 {
            var trace = TraceBuilder(board)
            var meant: [String] = []
            var t = 100.0
            for _ in 0..<random.int(2...5) {
                let first = random.ms(40...160)
                if random.chance(0.5) {
                    // A second press comes at least secondPressGapMs (20) after: sooner is the same press.
                    let gap = random.ms(20...290), second = random.ms(40...160)
                    trace.press(line, at: t, for: first)
                    trace.press(line, at: t + first + gap, for: second)
                    meant.append("doubleLightPress @\(String(format: "%.1f", t))")
                    t += first + gap + second
                } else {
                    trace.press(line, at: t, for: first)
                    meant.append("lightPress @\(String(format: "%.1f", t))")
                    t += first
                }
                // Past the double window (300 ms; on the strip the tap ends after the 60 ms lift grace).
                t += random.ms(320...420) + (withoutHalf ? 60 : 0)
            }
            let got = IntentGenerator.recognized(trace.run())
            #expect(got == meant)
        }
    }

    // MARK: Noise before presses

    /// 1 ms spikes every 4 ms before a real press never move the press instant, nor make it something else.
    @Test(arguments: [20.0, 60, 100, 150])
    func noiseBeforeAPressKeepsItsInstant(span: Double) {
        // Light press (a 320 ms press must stay light, 30 ms under the maximum: the noise must not
        // lengthen it). Held past prepareAfterMs (300) it also prepares, and is still light.
        var light = TraceBuilder(Rigs.simulator)
        IntentGenerator.noise(&light, "half", before: 1000, span: span)
        light.press("half", at: 1000, for: 320, bounces: 3)
        #expect(IntentGenerator.recognized(light.run()) == ["prepare began @1000.0", "prepare ended", "lightPress @1000.0"])
        // Full click with noise on full and on half.
        var click = TraceBuilder(Rigs.simulator)
        IntentGenerator.noise(&click, "half", before: 1000, span: span)
        click.change("half", true, at: 1000, bounces: 2)
        IntentGenerator.noise(&click, "full", before: 1000 + span + 40, span: span)
        click.change("full", true, at: 1000 + span + 40, bounces: 4)
        click.change("full", false, at: 1000 + span + 200, bounces: 4)
        click.change("half", false, at: 1000 + span + 260, bounces: 2)
        #expect(IntentGenerator.recognized(click.run()) == ["capture began primary @\(String(format: "%.1f", 1000 + span + 40))",
                                                            "capture ended primary"])
        // Secondary click.
        var secondary = TraceBuilder(Rigs.simulator)
        IntentGenerator.noise(&secondary, "secondary", before: 1000, span: span)
        secondary.press("secondary", at: 1000, for: 150, bounces: 3)
        #expect(IntentGenerator.recognized(secondary.run()) == ["capture began secondary @1000.0", "capture ended secondary"])
        // A strip tap on a rig without half.
        var tap = TraceBuilder(DecisionRigs.board(withoutHalf: true))
        IntentGenerator.noise(&tap, "pad1", before: 1000, span: span)
        tap.press("pad1", at: 1000, for: 120)
        #expect(IntentGenerator.recognized(tap.run()) == ["lightPress @1000.0"])
    }
}

// MARK: - Swipes over every control kind

/// One control kind on the adjust rig, and what one unit of slow movement is for it.
struct ControlKindCase: CustomTestStringConvertible, Sendable {
    var name: String
    var control: String
    /// The values a slow swipe upward steps through from the initial value, in order (all of them).
    var ladder: [ControlValue]
    var isPicker: Bool
    /// The rung a flick over three pads starts from: for a slider, inside the range with rungs above
    /// what the flick's own movement reaches (two values while the finger is down), so a glide is owed;
    /// for a picker, its first item.
    var flickStart: Int
    var testDescription: String { name }

    static let all: [ControlKindCase] = [
        ControlKindCase(name: "stepped slider (exposure, ⅓ EV)", control: AdjustRigs.exposure,
                        ladder: [-2, -1.666666666667, -1.333333333333, -1, -0.666666666667, -0.333333333333, 0,
                                 0.333333333333, 0.666666666667, 1, 1.333333333333, 1.666666666667, 2].map { .number($0) },
                        isPicker: false, flickStart: 6),
        ControlKindCase(name: "continuous slider (linear 0-100)", control: AdjustRigs.linear,
                        ladder: (0...40).map { .number(Double($0) * 2.5) }, isPicker: false, flickStart: 20),
        ControlKindCase(name: "continuous slider (log zoom 1-8)", control: AdjustRigs.zoom,
                        ladder: (0...40).map { .number((pow(8.0, Double($0) / 40) * 1e4).rounded() / 1e4) }, isPicker: false,
                        flickStart: 20),
        ControlKindCase(name: "list slider (ISO)", control: AdjustRigs.list,
                        ladder: [100, 200, 400, 800, 1600].map { .number($0) }, isPicker: false, flickStart: 1),
        ControlKindCase(name: "picker (titles)", control: AdjustRigs.picker, ladder: (0...3).map { .index($0) }, isPicker: true,
                        flickStart: 0),
        ControlKindCase(name: "count-only picker", control: AdjustRigs.count, ladder: (0...2).map { .index($0) }, isPicker: true,
                        flickStart: 0),
    ]

    var board: Board { AdjustRigs.board(control: control) }

    /// The adjust rig with this control starting at `ladder[rung]` instead of its own initial value.
    func board(startingAt rung: Int) throws -> Board {
        var object = try #require(try JSONSerialization.jsonObject(with: Data(control.utf8)) as? [String: Any])
        switch ladder[rung] {
        case .number(let number): object["initial"] = number
        case .index(let index): object["initial"] = index
        }
        let json = String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        return AdjustRigs.board(control: json)
    }
    var initial: ControlValue { board.controls[0].initial }

    /// Where `value` sits on the ladder, if it is exactly one of its rungs.
    ///
    /// Exact, not within a tolerance: the ladders are the values the events must carry (a stepped
    /// slider's 12 decimals, a continuous one's 4, a list's own numbers), so a value rounded
    /// differently (0.333333 for 0.333333333333) is off the ladder.
    func rung(_ value: ControlValue) -> Int? {
        ladder.firstIndex { $0 == value }
    }
}

/// A light press (the controls wake), then one swipe; the values sent, and the events.
func swipeTrace(_ kind: ControlKindCase, on board: Board? = nil, pads: [Int], perPad: Double)
    -> (values: [ControlValue], events: [ShutterEvent]) {
    var trace = TraceBuilder(board ?? kind.board)
    trace.press("half", at: 100, for: 100)
    trace.swipe(pads, at: 800, perPad: perPad, overlap: perPad / 4)
    let events = trace.run()
    let values = events.compactMap { event -> ControlValue? in
        if case .controlValue(_, let value, _, _) = event { return value }
        return nil
    }
    return (values, events)
}

@Suite("Intent generator: slow, quick and flick swipes over every control kind")
struct SwipeIntentTests {
    /// Slow (below 3 pads/s), any start, length and direction: every value on the way, one rung at a
    /// time in the swipe's direction, one rung a half pad after the swipe's one-pad threshold for a
    /// slider, one item a pad for a picker, stopping at the end.
    @Test(arguments: ControlKindCase.all)
    func slowSwipeVisitsEveryRungOneAtATime(_ kind: ControlKindCase) throws {
        var random = SplitMix64(seed: UInt64(kind.name.utf8.count))
        let start = try #require(kind.rung(kind.initial))
        for _ in 0..<12 {
            let length = random.int(3...6)
            let first = random.int(0...(6 - length))
            let upward = random.chance(0.6)
            let pads = upward ? Array(first..<(first + length)) : Array((first..<(first + length)).reversed())
            let perPad = random.ms(360...600)
            let (values, _) = swipeTrace(kind, pads: pads, perPad: perPad)
            let rungs = values.map { kind.rung($0) }
            #expect(!rungs.contains(nil), "\(values) off the ladder")
            let direction = upward ? 1 : -1
            let available = upward ? kind.ladder.count - 1 - start : start
            let movement = kind.isPicker ? length - 1 : 2 * (length - 1) - 1
            let expected = (0..<min(movement, available)).map { start + direction * ($0 + 1) }
            #expect(rungs.compactMap { $0 } == expected, "\(length) pads \(upward ? "up" : "down") at \(Int(perPad)) ms a pad")
        }
    }

    /// A quick end-to-end swipe reaches the end of the range in its direction, whatever the control.
    @Test(arguments: ControlKindCase.all)
    func quickEndToEndSwipeReachesTheEnd(_ kind: ControlKindCase) {
        var random = SplitMix64(seed: 99)
        for _ in 0..<6 {
            let perPad = random.ms(30...60)
            let up = swipeTrace(kind, pads: Array(0...5), perPad: perPad).values
            #expect(up.last.flatMap { kind.rung($0) } == kind.ladder.count - 1, "\(Int(perPad)) ms a pad: \(up)")
            // Back down from the top: a second quick swipe the other way reaches the bottom.
            var trace = TraceBuilder(kind.board)
            trace.press("half", at: 100, for: 100)
            trace.swipe(Array(0...5), at: 800, perPad: perPad, overlap: perPad / 4)
            trace.swipe(Array((0...5).reversed()), at: 2000, perPad: perPad, overlap: perPad / 4)
            let values = trace.run().compactMap { event -> ControlValue? in
                if case .controlValue(_, let value, _, _) = event { return value }
                return nil
            }
            #expect(values.last.flatMap { kind.rung($0) } == 0, "\(Int(perPad)) ms a pad, up then down: \(values)")
        }
    }

    /// A flick carries a slider on after the finger left, in the flick's direction, with values on the
    /// ladder, and adjusting ends after the last of them; a picker keeps its detents and does not glide.
    ///
    /// The flick starts mid-range (`flickStart`) and is required to end its contact short of the top,
    /// so the glide is always owed: a slider must send values after the lift, never "or it was at its
    /// end already". A picker with room left must send none.
    @Test(arguments: ControlKindCase.all)
    func flickGlidesSlidersOnly(_ kind: ControlKindCase) throws {
        var random = SplitMix64(seed: 5)
        let board = try kind.board(startingAt: kind.flickStart)
        let top = kind.ladder.count - 1
        for _ in 0..<6 {
            let perPad = random.ms(18...30)
            let (values, events) = swipeTrace(kind, on: board, pads: [0, 1, 2], perPad: perPad)
            let lift = try #require(events.first { if case .swipe(.ended, _, _, _, _, _) = $0 { true } else { false } })
            guard case .swipe(.ended, _, _, _, let flick, _) = lift else { return }
            #expect(flick, "\(Int(perPad)) ms a pad over two pads must be a flick")
            // A continuous slider glides through values between its slow rungs; the others stay on theirs.
            let continuous = board.controls[0].kind.sliderValues.map {
                if case .range(_, nil) = $0 { true } else { false }
            } ?? false
            let positions: [Double] = values.map { value in
                switch value {
                case .number(let number): continuous ? number : Double(kind.rung(value) ?? -1)
                case .index(let index): Double(index)
                }
            }
            #expect(!positions.contains(-1), "values off the ladder: \(values)")
            #expect(positions == positions.sorted() && Set(positions).count == positions.count, "moves one way: \(values)")
            let duringContact = events.filter { $0.time <= lift.time }.compactMap { event -> ControlValue? in
                if case .controlValue(_, let value, _, _) = event { return value }
                return nil
            }
            let afterLift = events.filter { $0.time > lift.time && $0.name == "controlValue" }
            // The finger moved the value, and left room: whatever follows is the glide's (or nothing, for a picker).
            let atLift = try #require(duringContact.last, "the flick moved nothing while the finger was down: \(values)")
            // A picker moves one item a pad, so the two-pad flick fills the count-only picker's three
            // items; "picker (titles)" (four) is the one whose room a glide could use.
            let pickerFilled = kind.isPicker && top - kind.flickStart <= 2
            if !pickerFilled {
                #expect(atLift != kind.ladder[top], "the flick reached the end before the lift: \(values)")
            }
            if kind.isPicker {
                #expect(afterLift.isEmpty, "a picker does not glide: \(values)")
            } else {
                #expect(!afterLift.isEmpty, "a slider glides on after the lift: \(values)")
            }
            let ended = events.last { $0.name == "controlsAdjusting" }
            #expect(ended.map { $0.summary.hasPrefix("controlsAdjusting ended") } == true)
            if let lastValue = afterLift.last { #expect(ended.map { $0.time >= lastValue.time } == true) }
        }
    }
}
