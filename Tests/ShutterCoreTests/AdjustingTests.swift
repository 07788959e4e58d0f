import Foundation
import Testing
@testable import ShutterCore

/// Boards with one control of each kind, current first, on a 6-pad strip with `half`.
enum AdjustRigs {
    static func board(control: String, gestures: String = "{}") -> Board {
        let text = """
        {"name": "adjust", "chip": "simulator",
         "lines": [{"name": "half", "role": "half"}, {"name": "full", "role": "full"},
           {"name": "pad0", "role": "pad"}, {"name": "pad1", "role": "pad"}, {"name": "pad2", "role": "pad"},
           {"name": "pad3", "role": "pad"}, {"name": "pad4", "role": "pad"}, {"name": "pad5", "role": "pad"}],
         "gestures": \(gestures),
         "controls": [\(control)]}
        """
        do {
            return try Board.decode(Data(text.utf8), file: "adjust.json")
        } catch {
            fatalError("adjust board: \(error)")
        }
    }

    static let zoom = #"{"id": "zoom", "kind": "systemZoom", "label": "Zoom", "range": [1, 8], "initial": 1, "displayMultiplier": 1}"#
    static let exposure = #"{"id": "exposure", "kind": "systemExposureBias", "label": "Exposure", "range": [-2, 2], "step": 0.3333333333333333, "initial": 0}"#
    static let linear = #"{"id": "level", "kind": "slider", "label": "Level", "range": [0, 100], "unit": "%", "initial": 0}"#
    static let list = #"{"id": "iso", "kind": "slider", "label": "ISO", "values": [100, 200, 400, 800, 1600], "initial": 100}"#
    static let picker = #"{"id": "filter", "kind": "picker", "label": "Filter", "titles": ["None", "Mono", "Vivid", "Warm"], "initial": "None"}"#
    static let count = #"{"id": "slot", "kind": "picker", "label": "Slot", "count": 3}"#

    /// A light press, then one swipe from pad 0 to pad 5 at `perPad` ms a pad (overlapping neighbours).
    static func swipeValues(_ control: String, perPad: Double, reverse: Bool = false) -> [ControlValue] {
        var trace = TraceBuilder(board(control: control))
        trace.press("half", at: 100, for: 100)
        let pads = reverse ? Array((0...5).reversed()) : Array(0...5)
        trace.swipe(pads, at: 800, perPad: perPad, overlap: perPad / 4)
        return trace.run().compactMap { event in
            if case .controlValue(_, let value, _, _) = event { return value }
            return nil
        }
    }

    static func numbers(_ values: [ControlValue]) -> [Double] {
        values.compactMap { if case .number(let number) = $0 { number } else { nil } }
    }
}

@Suite("Adjusting: steps, speed curve, zoom scale, glide, formats")
struct AdjustingTests {
    @Test func slowSwipeMovesExposureOneThirdPerHalfPad() {
        // 400 ms a pad: 2.5 pads/s, below the speed curve. Ten half pads: +⅓ each, to the top.
        let values = AdjustRigs.numbers(AdjustRigs.swipeValues(AdjustRigs.exposure, perPad: 400))
        let thirds = values.map { Int(($0 * 3).rounded()) }
        #expect(thirds == Array(1...6))
        let down = AdjustRigs.numbers(AdjustRigs.swipeValues(AdjustRigs.exposure, perPad: 400, reverse: true))
        #expect(down.map { Int(($0 * 3).rounded()) } == Array((-6)...(-1)).reversed())
    }

    @Test func quickSwipeCoversTheWholeRangeOfEveryControl() {
        for control in [AdjustRigs.zoom, AdjustRigs.exposure, AdjustRigs.linear, AdjustRigs.list] {
            let board = AdjustRigs.board(control: control)
            let values = AdjustRigs.numbers(AdjustRigs.swipeValues(control, perPad: 40))
            #expect(values.last == board.controls[0].kind.sliderValues?.bounds.upperBound, "\(control)")
        }
    }

    @Test func slowContinuousStepIsAtMostOneFortiethOfTheRange() {
        // One unit (2.5) a half pad from the swipe's start: nine half pads after its one-pad threshold.
        let values = AdjustRigs.numbers(AdjustRigs.swipeValues(AdjustRigs.linear, perPad: 400))
        #expect(values == Array(stride(from: 2.5, through: 22.5, by: 2.5)))
        // Zoom: each slow step multiplies by the same ratio, at most 1/40 of the log range.
        let zoom = AdjustRigs.numbers(AdjustRigs.swipeValues(AdjustRigs.zoom, perPad: 400))
        let ratios = zip(zoom.dropFirst(), zoom).map { $0 / $1 }
        let limit = pow(8.0, 1.0 / 40) + 1e-3
        #expect(!ratios.isEmpty)
        #expect(ratios.allSatisfy { $0 <= limit && $0 > 1 })
        #expect(zoom.first.map { abs($0 - pow(8.0, 1.0 / 40)) < 1e-3 } == true)
    }

    @Test func zoomIsGeometric() {
        let scale = ControlScale(spec: AdjustRigs.board(control: AdjustRigs.zoom).controls[0], padSpan: 5)
        let one = scale.position(of: .number(1)), two = scale.position(of: .number(2))
        let four = scale.position(of: .number(4)), eight = scale.position(of: .number(8))
        #expect(abs((two - one) - (eight - four)) < 1e-9)
        let linear = ControlScale(spec: AdjustRigs.board(control: AdjustRigs.linear).controls[0], padSpan: 5)
        #expect(linear.value(at: 20) == .number(50))
    }

    @Test func speedCurveIsFlatWhenSlowAndRises() {
        let scale = ControlScale(spec: AdjustRigs.board(control: AdjustRigs.zoom).controls[0], padSpan: 5)
        #expect(scale.gain(padsPerSecond: 0) == 1)
        #expect(scale.gain(padsPerSecond: 3) == 1)
        #expect(scale.gain(padsPerSecond: -2) == 1)
        #expect(scale.gain(padsPerSecond: 5.5) > 1)
        #expect(scale.gain(padsPerSecond: 8) == scale.maximumGain)
        #expect(scale.gain(padsPerSecond: 40) == scale.maximumGain)
        // A quick end-to-end swipe (5 pads at the full gain) moves more than the whole range.
        #expect(scale.units(deltaPads: 5, padsPerSecond: 20) >= scale.units)
    }

    @Test func listSliderSlowVisitsEveryEntry() {
        let values = AdjustRigs.numbers(AdjustRigs.swipeValues(AdjustRigs.list, perPad: 400))
        #expect(values == [200, 400, 800, 1600])
    }

    @Test func pickersKeepTheirDetents() {
        let slow = AdjustRigs.swipeValues(AdjustRigs.picker, perPad: 400)
        #expect(slow == [.index(1), .index(2), .index(3)])
        let count = AdjustRigs.swipeValues(AdjustRigs.count, perPad: 400)
        #expect(count == [.index(1), .index(2)])
    }

    @Test func flickGlidesAndEndsAdjusting() {
        var trace = TraceBuilder(AdjustRigs.board(control: AdjustRigs.linear))
        trace.press("half", at: 100, for: 100)
        trace.swipe([0, 1, 2], at: 800, perPad: 30, overlap: 10)   // a flick over two pads
        let events = trace.run()
        let swipeEnd = events.first { if case .swipe(.ended, _, _, _, true, _) = $0 { true } else { false } }
        #expect(swipeEnd != nil, "the trace must be a flick")
        guard let swipeEnd else { return }
        let after = events.filter { $0.time > swipeEnd.time && $0.name == "controlValue" }
        #expect(!after.isEmpty, "the glide moves the value after the finger left")
        let numbers = after.compactMap { if case .controlValue(_, .number(let n), _, _) = $0 { n } else { nil } }
        #expect(numbers == numbers.sorted())
        let ended = events.last { $0.name == "controlsAdjusting" }
        #expect(ended?.summary == "controlsAdjusting ended level")
        #expect(ended.map { $0.time >= after.last!.time } == true)
        // Decaying: the steps get smaller. A glide of one step or none shows no decay, so it fails
        // here rather than passing the comparison by skipping it.
        let steps = zip(numbers.dropFirst(), numbers).map { $0 - $1 }
        #expect(steps.count >= 2, "a glide with a decay to check: \(numbers)")
        guard steps.count >= 2 else { return }
        #expect(steps.last! < steps.first!, "steps \(steps)")
        // The first tick can be longer than the second (it spans the time since the finger's last
        // value); from the second on, each is no larger than the one before.
        let gliding = steps.dropFirst()
        #expect(zip(gliding.dropFirst(), gliding).allSatisfy { $0 <= $1 }, "steps \(steps)")
    }

    @Test func touchStopsAGlide() {
        var trace = TraceBuilder(AdjustRigs.board(control: AdjustRigs.linear))
        trace.press("half", at: 100, for: 100)
        trace.swipe([0, 1, 2], at: 800, perPad: 30, overlap: 10)
        trace.swipe([3, 2, 1, 0], at: 1000, perPad: 300)
        let adjusting = trace.run().filter { $0.name == "controlsAdjusting" }.map(\.summary)
        #expect(adjusting == ["controlsAdjusting began level", "controlsAdjusting ended level",
                              "controlsAdjusting began level", "controlsAdjusting ended level"])
    }

    static let exposureTexts: [(Double, String)] = [
        (0.0, "0 EV"), (1.0 / 3, "+⅓ EV"), (-1.0, "\u{2212}1 EV"), (2.0 / 3, "+⅔ EV"), (5.0 / 3, "+1⅔ EV"),
        (-4.0 / 3, "\u{2212}1⅓ EV"), (0.5, "+0.5 EV"),
    ]

    @Test(arguments: exposureTexts)
    func exposureText(_ ev: Double, _ text: String) {
        #expect(ControlDisplay.exposure(ev) == text)
    }

    /// Nothing a value can be traps the text, and a number beyond what the
    /// digits hold reads as itself, not as 1000000000000000.
    static let extremeTexts: [(Double, String, String)] = [
        (-1e308, "\u{2212}1e+308", "\u{2212}1e+308 EV"), (1e19, "1e+19", "+1e+19 EV"), (-1e19, "\u{2212}1e+19", "\u{2212}1e+19 EV"),
        (.infinity, "inf", "+inf EV"), (-.infinity, "\u{2212}inf", "\u{2212}inf EV"), (.nan, "nan", "nan EV"),
        (1e9, "1000000000", "+1000000000 EV"), (-999_999_999.5, "\u{2212}999999999.5", "\u{2212}999999999.5 EV"),
    ]

    @Test(arguments: extremeTexts)
    func extremeValuesFormatWithoutTrapping(_ value: Double, _ decimal: String, _ exposure: String) {
        #expect(ControlDisplay.decimal(value, places: 2, trimmed: true) == decimal)
        #expect(ControlDisplay.exposure(value) == exposure)
    }

    /// A range wider than a Double's span (one `check` refuses) still maps every position to a finite value.
    @Test func aRangeWiderThanADoubleMapsToFiniteValues() {
        let spec = ControlSpec(id: "a", label: "A", kind: .slider(.range(-1e308...1e308, step: nil)), initial: .number(-1e308))
        let scale = ControlScale(spec: spec, padSpan: 5)
        for position in [0, 10, 20, 30, 40.0] {
            guard case .number(let number) = scale.value(at: position) else { Issue.record("not a number"); continue }
            #expect(number.isFinite, "position \(position): \(number)")
        }
        #expect(scale.value(at: 0) == .number(-1e308))
        #expect(scale.value(at: 20) == .number(0))
        #expect(scale.value(at: 40) == .number(1e308))
    }

    @Test func displayTexts() throws {
        let zoom = try #require(AdjustRigs.board(control: #"{"id": "zoom", "kind": "systemZoom", "range": [1, 8], "displayMultiplier": 0.5}"#).controls.first)
        #expect(ControlDisplay(.number(4), of: zoom).text == "2.0×")
        #expect(ControlDisplay(.number(4), of: zoom).label == "zoom")
        let level = AdjustRigs.board(control: AdjustRigs.linear).controls[0]
        #expect(ControlDisplay(.number(12.5), of: level).text == "12.5 %")
        let picker = AdjustRigs.board(control: AdjustRigs.picker).controls[0]
        #expect(ControlDisplay(.index(2), of: picker) == ControlDisplay(label: "Filter", text: "Vivid", title: "Vivid"))
    }

    @Test func controlValueCarriesLabelAndText() {
        var trace = TraceBuilder(AdjustRigs.board(control: AdjustRigs.exposure))
        trace.press("half", at: 100, for: 100)
        trace.swipe([0, 1], at: 800, perPad: 400, overlap: 100)
        let lines = trace.run().map(\.json.description)
        #expect(lines.contains { $0.contains(#""control": "exposure", "label": "Exposure", "text": "0 EV""#) && $0.contains("controlsActive") })
        #expect(lines.contains { $0.contains(#""label": "Exposure", "text": "+⅓ EV""#) && $0.contains("controlValue") })
    }

    static let badDisplays: [(String, String)] = [
        (#"{"id": "a", "kind": "slider", "range": [0, 1], "scale": "log"}"#, "controls[0].scale"),
        (#"{"id": "a", "kind": "slider", "range": [1, 2], "scale": "loud"}"#, "controls[0].scale"),
        (#"{"id": "a", "kind": "picker", "count": 2, "unit": "s"}"#, "controls[0].unit"),
        (#"{"id": "a", "kind": "slider", "range": [1, 2], "displayMultiplier": 2}"#, "controls[0].displayMultiplier"),
        (#"{"id": "a", "kind": "systemZoom", "displayMultiplier": 0}"#, "controls[0].displayMultiplier"),
    ]

    @Test(arguments: badDisplays)
    func badDisplayFieldsAreRefused(_ control: String, _ path: String) {
        let text = """
        {"name": "x", "chip": "simulator", "lines": [{"name": "full", "role": "full"},
          {"name": "p0", "role": "pad"}, {"name": "p1", "role": "pad"}], "controls": [\(control)]}
        """
        do {
            _ = try Board.decode(Data(text.utf8), file: "x.json")
            Issue.record("accepted \(control)")
        } catch {
            #expect(error.description.contains(path), "\(error.description)")
        }
    }

    @Test func scaleDefaultsLogForZoomOnly() {
        #expect(AdjustRigs.board(control: AdjustRigs.zoom).controls[0].scale == .log)
        #expect(AdjustRigs.board(control: AdjustRigs.linear).controls[0].scale == .linear)
        let linearZoom = AdjustRigs.board(control: #"{"id": "zoom", "kind": "systemZoom", "scale": "linear"}"#)
        #expect(linearZoom.controls[0].scale == .linear)
    }
}

/// Table tests for ties at deadlines and for exact coalescing.
@Suite("Deadline ties and coalescing")
struct DeadlineTieTests {
    static let ties: [GestureCase] = [
        // Lift grace 60 ms: a touch on another pad exactly at the grace's end continues the swipe.
        GestureCase(name: "next pad 1 ms before the lift grace's end continues", board: Rigs.board(withoutHalf: true),
                    ignoring: ["swipe changed", "controlValue", "controlsAdjusting"], build: {
            $0.press("pad0", at: 100, for: 100); $0.press("pad1", at: 200, for: 100)
            $0.press("pad2", at: 359, for: 100); $0.press("pad3", at: 459, for: 100)
        }, expected: ["swipe began", "controlsActive zoom", "swipe ended", "controlsInactive finish"]),
        GestureCase(name: "next pad exactly at the lift grace's end continues the swipe (ends included, as the tap window's)",
                    board: Rigs.board(withoutHalf: true), ignoring: ["swipe changed", "controlValue", "controlsAdjusting"], build: {
            $0.press("pad0", at: 100, for: 100); $0.press("pad1", at: 200, for: 100)
            $0.press("pad2", at: 360, for: 100); $0.press("pad3", at: 460, for: 100)
        }, expected: ["swipe began", "controlsActive zoom", "swipe ended", "controlsInactive finish"]),
        GestureCase(name: "half released exactly at prepareAfter gives prepare", build: {
            $0.press("half", at: 100, for: 300); $0.set("secondary", false, at: 2000)
        }, expected: ["prepare began", "prepare ended", "lightPress", "controlsActive zoom", "controlsInactive finish"]),
        GestureCase(name: "half released 1 ms before prepareAfter gives none", build: {
            $0.press("half", at: 100, for: 299)
        }, expected: ["lightPress", "controlsActive zoom", "controlsInactive finish"]),
        GestureCase(name: "full released exactly at burstAfter: the first shot is due", board: Rigs.board(gestures: #"{"burst": true}"#), build: {
            $0.change("half", true, at: 100); $0.change("full", true, at: 130)
            $0.change("full", false, at: 630); $0.change("half", false, at: 700)
        }, expected: ["capture began primary", "burst began 1", "burst ended 1", "capture ended primary"]),
        GestureCase(name: "full released 1 ms before burstAfter: no burst", board: Rigs.board(gestures: #"{"burst": true}"#), build: {
            $0.change("half", true, at: 100); $0.change("full", true, at: 130)
            $0.change("full", false, at: 629); $0.change("half", false, at: 700)
        }, expected: ["capture began primary", "capture ended primary"]),
        // The controls open when the double-press window has passed (500 ms and a nanosecond); the
        // idle timeout counts from there.
        GestureCase(name: "input exactly at the idle timeout's end comes too late", build: {
            $0.press("half", at: 100, for: 100); $0.press("secondary", at: 5500.000001, for: 100)
        }, expected: ["lightPress", "controlsActive zoom", "controlsInactive idle", "capture began secondary",
                      "capture ended secondary"]),
        GestureCase(name: "input 1 ms before the idle timeout keeps the controls", build: {
            $0.press("half", at: 100, for: 100); $0.press("secondary", at: 5499, for: 100)
        }, expected: ["lightPress", "controlsActive zoom", "controlsInactive capture", "capture began secondary",
                      "capture ended secondary"]),
    ]

    @Test(arguments: ties)
    func tie(_ row: GestureCase) {
        #expect(row.summaries() == row.expected)
    }

    /// Drives the controls directly: which values are sent, and when.
    @Test func coalescingSendsExactlyTheChangedValues() {
        let board = AdjustRigs.board(control: AdjustRigs.exposure)
        var controls = ControlsDriver(ControlsStateMachine(controls: board.controls, padCount: 6, timings: board.gestures, initialValues: nil))
        controls.step(at: ms(0)) { $0.lightPress(at: ms(0), into: &$1) }
        controls.step(at: ms(100)) { $0.swipeBegan(deltaPads: 0.5, padsPerSecond: 1, at: ms(100), into: &$1) }      // +⅓ sent at once
        controls.step(at: ms(110)) { $0.swipeChanged(deltaPads: 0.5, padsPerSecond: 1, at: ms(110), into: &$1) }    // +⅔ held
        controls.step(at: ms(120)) { $0.swipeChanged(deltaPads: -0.5, padsPerSecond: -1, at: ms(120), into: &$1) }  // back to +⅓: nothing to send
        controls.step(at: ms(150)) { $0.fireTick(at: ms(150), into: &$1) }
        controls.step(at: ms(160)) { $0.swipeChanged(deltaPads: 0.5, padsPerSecond: 1, at: ms(160), into: &$1) }    // +⅔ sent (interval over)
        controls.step(at: ms(170)) { $0.swipeChanged(deltaPads: 0.5, padsPerSecond: 1, at: ms(170), into: &$1) }    // +1 held
        controls.step(at: ms(180)) { $0.swipeChanged(deltaPads: 0.5, padsPerSecond: 1, at: ms(180), into: &$1) }    // +1⅓ held
        controls.step(at: ms(210)) { $0.fireTick(at: ms(210), into: &$1) }                                           // +1⅓ sent
        controls.step(at: ms(300)) { $0.swipeEnded(flick: false, padsPerSecond: 0, at: ms(300), into: &$1) }
        let sent = controls.events.compactMap { event -> String? in
            if case .controlValue(_, _, let display, let at) = event { return "\(display.text)@\(at.rawValue / 1_000_000)" }
            return nil
        }
        #expect(sent == ["+⅓ EV@100", "+⅔ EV@160", "+1⅓ EV@210"])
    }
}

/// The end-to-end swipe traces under Tests/Traces on the simulator board (the figures in the lead's note).
@Suite("Swipe traces on the simulator board")
struct SwipeTraceTests {
    static func values(_ name: String) throws -> [ControlValue] {
        let path = URL(fileURLWithPath: Rigs.simulatorPath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Tests/Traces/\(name).jsonl").path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let trace = try Trace.parse(text, board: Rigs.simulator, source: name)
        return GestureStateMachine.replay(trace.edges, board: Rigs.simulator).compactMap { event in
            if case .controlValue(_, let value, _, _) = event { return value }
            return nil
        }
    }

    @Test func slowSwipesVisitEveryStep() throws {
        #expect(try Self.values("swipe-slow-exposure") == [0.333333333333, 0.666666666667, 1, 1.333333333333, 1.666666666667, 2].map { .number($0) })
        #expect(try Self.values("swipe-slow-filter") == [.index(1), .index(2), .index(3)])
        let zoom = AdjustRigs.numbers(try Self.values("swipe-slow-zoom"))
        #expect(zoom.count == 9)
        #expect(zip(zoom.dropFirst(), zoom).allSatisfy { $0 / $1 <= pow(8.0, 1.0 / 40) + 1e-3 && $0 > $1 })
    }

    @Test func quickSwipesReachTheEnd() throws {
        #expect(try Self.values("swipe-quick-zoom").last == .number(8))
        #expect(try Self.values("swipe-quick-exposure").last == .number(2))
        #expect(try Self.values("swipe-quick-filter").last == .index(3))
    }
}

/// Drives ``ControlsStateMachine`` alone as the rig does: each step's actions become events
/// stamped with that step's instant.
struct ControlsDriver {
    var machine: ControlsStateMachine
    private(set) var events: [ShutterEvent] = []

    init(_ machine: ControlsStateMachine) { self.machine = machine }

    mutating func step(at now: Instant, _ body: (inout ControlsStateMachine, inout [ControlsStateMachine.Action]) -> Void) {
        var actions: [ControlsStateMachine.Action] = []
        body(&machine, &actions)
        events += actions.map { $0.event(at: now) }
    }
}
