import Foundation
import Testing
@testable import ShutterCore

/// Boards drawn at random within what `shutter check` accepts (long windows, 6–64 pads, extreme
/// slider ranges, controls disabled), driven by human-like input with several fingers on the strip
/// and API enable/disable/set/select interleaved; each run is checked against what a person relies on.
@Suite("Generated boards: random rigs keep the invariants")
struct GeneratedBoardTests {
    /// Small enough for a few seconds in a debug build.
    static let boardCount = 40

    /// One drawn board: its JSON goes through `Board.decode`, the parser and validation that
    /// `shutter check` and `Board.load` use, so a board the generator draws and check refuses is a
    /// test failure, not a skipped case.
    static func board(seed: UInt64) throws -> Board {
        var random = SplitMix64(seed: seed)
        let padCount = random.int(6...64)
        let twoStage = random.chance(0.85)
        // Windows over 50 ms, but short enough that a deliberate press still outlasts them.
        func debounce(upTo high: Int) -> Int { random.chance(0.3) ? random.int(0...10) : random.int(20...high) }
        var lines: [String] = []
        if twoStage { lines.append(#"{"name": "half", "role": "half", "debounceMs": \#(debounce(upTo: 150))}"#) }
        lines.append(#"{"name": "full", "role": "full", "debounceMs": \#(debounce(upTo: 150))}"#)
        // The secondary button is not used for the gestures checked, so it may have a window of a second.
        lines.append(#"{"name": "secondary", "role": "secondary", "debounceMs": \#(random.int(0...1000))}"#)
        for pad in 0..<padCount { lines.append(#"{"name": "pad\#(pad)", "role": "pad", "debounceMs": \#(debounce(upTo: 100))}"#) }
        let glitch = random.int(0...100)
        let lightPressMax = 700
        let gestures = #"{"glitchFilterMs": \#(glitch), "lightPressMaxMs": \#(lightPressMax), "prepareAfterMs": 1200, "#
            + #""doublePressWindowMs": \#(random.int(100...400)), "tapMaxMs": 400, "burst": \#(random.chance(0.5)), "#
            + #""captureOn": "\#(random.chance(0.3) ? "ended" : "began")"}"#
        // Extreme ranges: bounds up to ±1e9 and up to 1e6 steps.
        let magnitude = [1.0, 1e3, 1e6, 1e9][random.int(0...3)]
        let low = -magnitude * Double(random.int(0...1)), high = magnitude
        let steps = [1.0, 7, 1000, 1e6][random.int(0...3)]
        let step = (high - low) / steps
        func enabled() -> String { random.chance(0.2) ? #", "enabled": false"# : "" }
        let controls = [
            #"{"id": "zoom", "kind": "systemZoom", "label": "Zoom", "range": [1, 8], "initial": 1\#(enabled())}"#,
            #"{"id": "wide", "kind": "slider", "label": "Wide", "range": [\#(low), \#(high)], "step": \#(step), "initial": \#(low)\#(enabled())}"#,
            #"{"id": "free", "kind": "slider", "label": "Free", "range": [-1e9, 1e9], "initial": 0\#(enabled())}"#,
            #"{"id": "filter", "kind": "picker", "label": "Filter", "titles": ["None", "Mono", "Vivid"], "initial": "None"\#(enabled())}"#,
        ]
        let text = """
        {"name": "generated\(seed)", "chip": "simulator", "lineDefaults": {"debounceMs": 5},
         "lines": [\(lines.joined(separator: ", "))], "gestures": \(gestures),
         "controls": [\(controls.joined(separator: ", "))]}
        """
        return try Board.decode(Data(text.utf8), file: "generated\(seed).json")
    }

    /// An API call at a time, interleaved with the edges.
    enum Call { case enable(String, Bool), set(String, ControlValue), select(String) }

    /// A drawn input: edges in time order and API calls, and when the final clean gestures begin.
    struct Run {
        var edges: [Edge]
        var calls: [(time: Instant, call: Call)]
        var tailStart: Instant
    }

    /// The line's debounce window as the machine uses it (software debounce on the mock chip).
    static func window(_ board: Board, _ line: LineIndex) -> Double {
        Double(max(board.lines[Int(line.rawValue)].debounce, board.gestures.glitchFilter).rawValue) / 1e6
    }

    static func input(seed: UInt64, board: Board) -> Run {
        var random = SplitMix64(seed: seed ^ 0x5eed)
        var trace = TraceBuilder(board)
        var calls: [(time: Instant, call: Call)] = []
        let hasHalf = board.line(named: "half") != nil
        let padCount = board.pads.count
        let ids = board.controls.map(\.id)
        let halfWindow = hasHalf ? window(board, board.line(named: "half")!) : 0
        let fullWindow = window(board, board.line(named: "full")!)
        let padWindow = board.pads.map { window(board, $0) }.max() ?? 0
        var t = 100.0
        for _ in 0..<random.int(8...16) {
            switch random.int(0...6) {
            case 0 where hasHalf, 1 where hasHalf:    // full click, bounced, windows respected
                let lead = halfWindow + random.ms(10...60)
                trace.fullClick(at: t, lead: lead, hold: fullWindow + random.ms(40...300),
                                trail: random.ms(5...40), bounces: random.int(0...2))
            case 0, 1:                                 // no half: the full button alone
                trace.press("full", at: t, for: fullWindow + random.ms(40...300), bounces: random.int(0...2))
            case 2 where hasHalf:                      // light press
                trace.press("half", at: t, for: halfWindow + random.ms(30...200))
            case 3:                                    // several fingers on the strip at once
                for _ in 0..<random.int(2...4) {
                    let pad = random.int(0...(padCount - 1))
                    let on = t + random.ms(0...150)
                    trace.press("pad\(pad)", at: on, for: padWindow + random.ms(20...400))
                }
            case 4:                                    // a swipe over a few pads, maybe with a second finger resting
                let count = random.int(3...min(8, padCount))
                let start = random.int(0...(padCount - count))
                var pads = Array(start..<(start + count))
                if random.chance(0.5) { pads.reverse() }
                if random.chance(0.3) {
                    let far = random.int(0...(padCount - 1))
                    if !pads.contains(far) { trace.press("pad\(far)", at: t, for: Double(count) * 80 + 100) }
                }
                trace.swipe(pads, at: t, perPad: padWindow + random.ms(30...120), overlap: random.ms(5...25))
            case 5:                                    // sub-window noise
                let line = LineIndex(random.int(0...(board.lines.count - 1)))
                trace.edges.append(Edge(line: line, active: true, time: ms(t)))
                trace.edges.append(Edge(line: line, active: false, time: ms(t + 0.2)))
            default: break
            }
            // API calls while the input happens and between gestures.
            for _ in 0..<random.int(0...3) {
                let at = ms(t + random.ms(0...500))
                let id = ids[random.int(0...(ids.count - 1))]
                switch random.int(0...3) {
                case 0, 1: calls.append((at, .enable(id, random.chance(0.5))))
                case 2: calls.append((at, .set(id, id == "filter" ? .index(random.int(0...3)) : .number(random.ms(-2e9...2e9)))))
                default: calls.append((at, .select(id)))
                }
            }
            t += random.ms(600...2500)
        }
        // The tail, after a rest longer than any window, timer and double-press window: a clean
        // light press (on a two-stage rig), then a clean swipe; each must still be recognised.
        t += 5000
        let tailStart = ms(t)
        if hasHalf {
            trace.press("half", at: t, for: halfWindow + 100)
            t += 2000
        }
        trace.swipe([0, 1, 2, 3], at: t, perPad: padWindow + 80, overlap: 15)
        return Run(edges: trace.sorted, calls: calls.sorted { $0.time < $1.time }, tailStart: tailStart)
    }

    /// Feeds `run` through a machine for `board`, the edges the way the daemon does (advance, then
    /// the edge) with each API call at its time.
    static func events(_ run: Run, board: Board) -> [ShutterEvent] {
        var machine = GestureStateMachine(board: board)
        var events: [ShutterEvent] = []
        var calls = run.calls[...]
        func call(until time: Instant) {
            while let next = calls.first, next.time <= time {
                calls.removeFirst()
                switch next.call {
                case .enable(let id, let on): try? machine.setControlEnabled(id, on, at: next.time, into: &events)
                case .set(let id, let value): try? machine.setControl(id, to: value, at: next.time, into: &events)
                case .select(let id): try? machine.selectControl(id, at: next.time, into: &events)
                }
            }
        }
        for edge in run.edges {
            call(until: edge.time)
            machine.advance(to: edge.time, into: &events)
            machine.edge(edge, into: &events)
        }
        call(until: .nanoseconds(.max))
        machine.finish(at: max(run.edges.last?.time ?? .zero, run.calls.last?.time ?? .zero), into: &events)
        return events
    }

    // MARK: Invariants

    /// A primary capture began while the half line's debounced level was released. The level is
    /// derived from the raw edges: the debouncer confirms a level once the line held it for its
    /// window, so the debounced level at `T` is the level of the last raw run, ended by `T`, that
    /// lasted at least the window.
    static func capturesWithoutHalf(_ events: [ShutterEvent], edges: [Edge], board: Board, checked: inout Int) -> [String] {
        guard let half = board.line(named: "half"), board.line(named: "full") != nil else { return [] }
        let window = Int64((Self.window(board, half) * 1e6).rounded())
        let halfEdges = edges.filter { $0.line == half }
        var problems: [String] = []
        for event in events {
            guard case .capture(.began, .primary, _, _, _, _, let at) = event else { continue }
            checked += 1
            var confirmed = false, level = false, since = Int64.min
            for edge in halfEdges where edge.time <= at {
                guard edge.active != level else { continue }
                if edge.time.rawValue &- since >= window || since == .min { confirmed = level }
                level = edge.active; since = edge.time.rawValue
            }
            if at.rawValue &- since >= window { confirmed = level }
            if !confirmed { problems.append("capture began primary at \(at.rawValue) ns with half not confirmed pressed") }
        }
        return problems
    }

    /// A `controlValue` for a control while it was disabled (the board's flag, then each
    /// `controlEnabled`).
    static func valuesOfDisabled(_ events: [ShutterEvent], board: Board) -> [String] {
        var enabled = Dictionary(uniqueKeysWithValues: board.controls.map { ($0.id, $0.enabled) })
        var problems: [String] = []
        for event in events {
            switch event {
            case .controlEnabled(let id, let on, _): enabled[id] = on
            case .controlValue(let id, _, _, let at) where enabled[id] == false:
                problems.append("controlValue \(id) at \(at.rawValue) ns while disabled")
            default: break
            }
        }
        return problems
    }

    /// The clean gestures of the tail are recognised: `lightPress` (two-stage rigs) and `swipe began`.
    static func tailGestures(_ events: [ShutterEvent], tailStart: Instant, board: Board) -> [String] {
        let tail = events.filter { $0.time >= tailStart }.map(\.summary)
        var problems: [String] = []
        if board.line(named: "half") != nil, !tail.contains("lightPress") { problems.append("no lightPress in the tail: \(tail)") }
        if !tail.contains("swipe began") { problems.append("no swipe began in the tail: \(tail)") }
        return problems
    }

    @Test func everyGeneratedBoardKeepsTheInvariants() throws {
        var failures: [String] = []
        var capturesChecked = 0
        for seed in 1...UInt64(Self.boardCount) {
            let board = try Self.board(seed: seed)   // throws: check refused a board the generator drew
            let run = Self.input(seed: seed, board: board)
            // No trap: the run completes (a trap ends the test process, failing the run).
            let events = Self.events(run, board: board)
            let problems = Self.capturesWithoutHalf(events, edges: run.edges, board: board, checked: &capturesChecked)
                + Self.valuesOfDisabled(events, board: board)
                + Self.tailGestures(events, tailStart: run.tailStart, board: board)
                + FuzzTests.problems(events, board: board, inputOnly: false)
            if !problems.isEmpty { failures.append("board seed \(seed) (\(board.pads.count) pads): \(problems.prefix(3))") }
        }
        #expect(failures.isEmpty, "\(failures.count) of \(Self.boardCount) boards: \(failures.prefix(4))")
        // The rule means something only when the runs took photos on two-stage boards.
        #expect(capturesChecked >= Self.boardCount / 2, "\(capturesChecked) captures checked on \(Self.boardCount) boards")
    }

    @Test func generatedBoardsSpanTheLimits() throws {
        let boards = try (1...UInt64(Self.boardCount)).map(Self.board(seed:))
        #expect(boards.map(\.pads.count).min()! <= 16 && boards.map(\.pads.count).max()! >= 48)
        #expect(boards.contains { $0.gestures.glitchFilter > .milliseconds(50) })
        #expect(boards.contains { $0.lines.contains { $0.debounce > .milliseconds(500) } })
        #expect(boards.contains { $0.controls.contains { $0.enabled == false } })
        #expect(boards.contains { $0.line(named: "half") == nil })
    }
}
