import Testing
@testable import ShutterCore

/// Random traces of any shape: never a crash, and the invariants every listener relies on.
@Suite("Fuzz: random traces keep the invariants")
struct FuzzTests {
    /// Sizes chosen so the suite runs in a few seconds in a debug build.
    static let traceCount = 25

    /// Any line, any spacing (ties included), bursts of thousands of edges, and sometimes times
    /// near the end of the clock; resynchronisations and availability changes mixed in.
    static func run(seed: UInt64, board: Board) -> [ShutterEvent] { runWithAfter(seed: seed, board: board).events }

    /// The events, and whatever came after `finish` when time went on (must be nothing).
    /// With `api`, controls are also enabled and disabled through the API between edges.
    static func runWithAfter(seed: UInt64, board: Board, api: Bool = false) -> (events: [ShutterEvent], after: [ShutterEvent]) {
        var random = SplitMix64(seed: seed)
        var machine = GestureStateMachine(board: board)
        var events: [ShutterEvent] = []
        var levels = Array(repeating: false, count: board.lines.count)
        var time: Int64 = random.chance(0.1) ? Int64.max - 50_000_000_000 : 0
        let steps = random.int(50...200)
        for _ in 0..<steps {
            switch random.int(0...39) {
            case 0:
                // A burst: thousands of edges on one line, 0–20 µs apart.
                let line = random.int(0...(board.lines.count - 1))
                for _ in 0..<random.int(300...3000) {
                    time = time &+ Int64(random.int(0...20_000))
                    if time < 0 { time = .max }
                    levels[line].toggle()
                    machine.edge(Edge(line: LineIndex(line), active: levels[line], time: Instant(rawValue: time)), into: &events)
                }
            case 1:
                machine.resynchronize(levels: levels.map { random.chance(0.5) ? $0 : !$0 }, at: Instant(rawValue: time), into: &events)
            case 2:
                machine.setCaptureAvailable(random.chance(0.7), at: Instant(rawValue: time), into: &events)
            case 3 where api:
                let id = board.controls[random.int(0...(board.controls.count - 1))].id
                try? machine.setControlEnabled(id, random.chance(0.5), at: Instant(rawValue: time), into: &events)
            default:
                // Ties (0), bounce-like gaps, human gaps, long rests.
                let gap: Int64 = switch random.int(0...4) {
                case 0: 0
                case 1: Int64(random.int(1...2_000_000))
                case 2: Int64(random.int(2_000_000...400_000_000))
                case 3: Int64(random.int(400_000_000...3_000_000_000))
                default: Int64(random.int(3_000_000_000...40_000_000_000))
                }
                time = time.addingReportingOverflow(gap).overflow ? .max : time + gap
                let line = random.int(0...(board.lines.count - 1))
                // Sometimes a repeated level, as a chip that merged edges gives.
                let active = random.chance(0.05) ? levels[line] : !levels[line]
                levels[line] = active
                machine.edge(Edge(line: LineIndex(line), active: active, time: Instant(rawValue: time)), into: &events)
            }
        }
        machine.finish(at: Instant(rawValue: time), into: &events)
        var after: [ShutterEvent] = []
        machine.advance(to: Instant(rawValue: time) + .seconds(3600), into: &after)
        return (events, after)
    }

    static let boards: [Board] = [
        Rigs.simulator,
        Rigs.board(withoutHalf: true),
        Rigs.board(gestures: #"{"burst": true, "secondaryAction": "nextControl", "captureOn": "ended", "stuckAfterMs": 1000, "padStuckAfterMs": 1000}"#),
        Rigs.board(gestures: #"{"secondaryAction": "toggleControls", "coalescingIntervalMs": 0, "liftGraceMs": 0}"#, withoutHalf: true),
    ]

    @Test(arguments: 0..<boards.count)
    func invariants(boardIndex: Int) {
        let board = Self.boards[boardIndex]
        for seed in 1...UInt64(Self.traceCount) {
            let (events, after) = Self.runWithAfter(seed: seed &* 7919 &+ UInt64(boardIndex), board: board)
            var problems = Self.problems(events, board: board)
            if !after.isEmpty { problems.append("events after finish: \(after.map(\.json.description))") }
            #expect(problems.isEmpty, "seed \(seed): \(problems.prefix(3))")
            if !problems.isEmpty { return }
        }
    }

    /// The same raw fuzz on GeneratedBoardTests' boards (long windows, up to 64 pads, extreme
    /// ranges), with API enable/disable mixed in: no trap, and the stream invariants hold.
    @Test func generatedBoards() throws {
        for seed in 1...UInt64(12) {
            let board = try GeneratedBoardTests.board(seed: seed &* 31)
            let (events, after) = Self.runWithAfter(seed: seed, board: board, api: true)
            var problems = Self.problems(events, board: board) + GeneratedBoardTests.valuesOfDisabled(events, board: board)
            if !after.isEmpty { problems.append("events after finish: \(after.map(\.json.description))") }
            #expect(problems.isEmpty, "board seed \(seed &* 31), \(board.pads.count) pads: \(problems.prefix(3))")
            if !problems.isEmpty { return }
        }
    }

    @Test func secondRunIsByteIdentical() {
        for seed in 1...UInt64(4) {
            let first = Self.run(seed: seed, board: Self.boards[2]).map(\.json.description)
            let second = Self.run(seed: seed, board: Self.boards[2]).map(\.json.description)
            #expect(first == second)
        }
    }

    /// What must hold of any event stream; `inputOnly` false for a run with API calls, where a
    /// `set` after the controls closed rightly sends its `controlValue`.
    static func problems(_ events: [ShutterEvent], board: Board, inputOnly: Bool = true) -> [String] {
        var problems: [String] = []
        var last = Instant(rawValue: .min)
        var open: [String: Int] = [:]
        for event in events {
            if event.time < last { problems.append("time goes back at \(event.json)") }
            last = max(last, event.time)
            // Phase pairs: every began has exactly one ended or cancelled.
            let key: String?
            let phase: EventPhase?
            switch event {
            case .capture(let p, let action, _, _, _, _, _): key = "capture \(action)"; phase = p
            case .burst(let p, _, _, _): key = "burst"; phase = p
            case .prepare(let p, _, _): key = "prepare"; phase = p
            case .swipe(let p, _, _, _, _, _): key = "swipe"; phase = p
            case .controlsAdjusting(let p, _, _): key = "adjusting"; phase = p
            case .chooser(let p, _): key = "chooser"; phase = p
            default: key = nil; phase = nil
            }
            if let key, let phase {
                switch phase {
                case .began:
                    if open[key, default: 0] != 0 { problems.append("\(key) began twice") }
                    open[key] = 1
                case .changed:
                    if open[key, default: 0] != 1 { problems.append("\(key) changed while not begun") }
                case .ended, .cancelled:
                    // A capture refused at once (unavailable) is cancelled without a began.
                    if open[key, default: 0] != 1, !(key.hasPrefix("capture") && phase == .cancelled) {
                        problems.append("\(key) \(phase) without began")
                    }
                    open[key] = 0
                }
            }
            if case .controlValue(let id, let value, _, _) = event {
                guard let spec = board.controls.first(where: { $0.id == id }) else { problems.append("unknown control \(id)"); continue }
                // Against the board's own range and step, not the code's `validated`: a snap that
                // rounds wrong would agree with itself.
                if let wrong = Self.offTheBoard(value, spec.kind) { problems.append("\(id) value \(value) \(wrong)") }
            }
        }
        for (key, count) in open where count != 0 { problems.append("\(key) still open at the end") }
        if inputOnly, let opening = events.lastIndex(where: { $0.name == "controlsActive" }) {
            // After finish the controls are closed: controls that became active must end inactive,
            // and nothing follows the last controlsInactive but what input ending itself reports
            // (captures, prepare, swipe ends, lines).
            if let closing = events.lastIndex(where: { $0.name == "controlsInactive" }), closing > opening {
                if events[closing...].contains(where: { ["controlValue", "controlsActive", "chooser"].contains($0.name) }) {
                    problems.append("controls event after the controls closed")
                }
            } else {
                problems.append("controls still active after finish")
            }
        }
        return problems
    }

    /// Why `value` is not one the board's control can take (its literal range, step, list or
    /// picker count), or nil when it is.
    static func offTheBoard(_ value: ControlValue, _ kind: ControlKind) -> String? {
        switch (kind, value) {
        case (.picker(let count, _), .index(let index)):
            return (0..<count).contains(index) ? nil : "not an index below \(count)"
        case (_, .number(let number)):
            switch kind.sliderValues {
            case .range(let range, let step)?:
                let slack = 1e-9
                guard number >= range.lowerBound - slack, number <= range.upperBound + slack else { return "outside \(range)" }
                guard let step else { return nil }
                let steps = (number - range.lowerBound) / step
                return abs(steps - steps.rounded()) < 1e-6 ? nil : "not a multiple of \(step) from \(range.lowerBound)"
            case .list(let list)?:
                return list.contains { abs($0 - number) < 1e-9 } ? nil : "not in \(list)"
            case nil:
                return "a number for a picker"
            }
        default:
            return "the wrong kind of value"
        }
    }
}
