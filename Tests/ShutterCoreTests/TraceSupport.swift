import Foundation
@testable import ShutterCore

/// Test helpers: boards, a small trace builder in milliseconds, and compact event summaries.
enum Rigs {
    static let simulatorPath = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Boards/simulator.json").path

    static let simulator: Board = try! Board.load(path: simulatorPath)

    /// The simulator board with `gestures` replaced (JSON object text) and, optionally, without `half`
    /// or with `exposure` disabled.
    static func board(gestures: String = "{}", withoutHalf: Bool = false, exposureDisabled: Bool = false) -> Board {
        let half = withoutHalf ? "" : #"{"name": "half", "role": "half"},"#
        let exposureEnabled = exposureDisabled ? #", "enabled": false"# : ""
        let text = """
        {"name": "test", "chip": "simulator",
         "lines": [\(half) {"name": "full", "role": "full"}, {"name": "secondary", "role": "secondary"},
           {"name": "pad0", "role": "pad"}, {"name": "pad1", "role": "pad"}, {"name": "pad2", "role": "pad"},
           {"name": "pad3", "role": "pad"}, {"name": "pad4", "role": "pad"}, {"name": "pad5", "role": "pad"}],
         "gestures": \(gestures),
         "controls": [
           {"id": "zoom", "kind": "systemZoom", "label": "Zoom", "range": [1, 8], "initial": 1},
           {"id": "exposure", "kind": "systemExposureBias", "label": "Exposure", "range": [-2, 2], "step": 0.3333333333333333, "initial": 0\(exposureEnabled)},
           {"id": "filter", "kind": "picker", "label": "Filter", "titles": ["None", "Mono", "Vivid", "Warm"], "initial": "None"}]}
        """
        do {
            return try Board.decode(Data(text.utf8), file: "test.json")
        } catch {
            fatalError("test board: \(error)")
        }
    }
}

/// Builds raw edge traces with times in milliseconds.
struct TraceBuilder {
    let board: Board
    var edges: [Edge] = []

    init(_ board: Board = Rigs.simulator) { self.board = board }

    func line(_ name: String) -> LineIndex {
        guard let index = board.line(named: name) else { fatalError("no line \(name)") }
        return index
    }

    /// One raw edge.
    mutating func set(_ name: String, _ active: Bool, at ms: Double) {
        edges.append(Edge(line: line(name), active: active, time: .nanoseconds(Int64((ms * 1e6).rounded()))))
    }

    /// A level change with `bounces` extra flips after it, 0.3 ms apart.
    mutating func change(_ name: String, _ active: Bool, at ms: Double, bounces: Int = 0) {
        set(name, active, at: ms)
        for flip in 0..<(bounces * 2) {
            set(name, flip % 2 == 0 ? !active : active, at: ms + 0.3 * Double(flip + 1))
        }
    }

    /// Press at `ms`, release after `duration`.
    mutating func press(_ name: String, at ms: Double, for duration: Double, bounces: Int = 0) {
        change(name, true, at: ms, bounces: bounces)
        change(name, false, at: ms + duration, bounces: bounces)
    }

    /// A two-stage full click: half, then full `lead` ms later, full released, then half.
    mutating func fullClick(at ms: Double, lead: Double = 30, hold: Double = 120, trail: Double = 30, bounces: Int = 0) {
        change("half", true, at: ms, bounces: bounces)
        change("full", true, at: ms + lead, bounces: bounces)
        change("full", false, at: ms + lead + hold, bounces: bounces)
        change("half", false, at: ms + lead + hold + trail, bounces: bounces)
    }

    /// A swipe over `pads` (in order), `perPad` ms each; `overlap` > 0 touches the next pad before
    /// leaving the last, < 0 leaves a gap.
    mutating func swipe(_ pads: [Int], at ms: Double, perPad: Double = 80, overlap: Double = 20) {
        for (step, pad) in pads.enumerated() {
            let on = ms + Double(step) * perPad
            let off = step == pads.count - 1 ? on + perPad : on + perPad + overlap
            set("pad\(pad)", true, at: on)
            set("pad\(pad)", false, at: off)
        }
    }

    var sorted: [Edge] {
        edges.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
    }

    /// Runs the trace the way `shutter replay` does.
    func run(available: Bool = true, finish: Bool = true) -> [ShutterEvent] {
        var machine = GestureStateMachine(board: board)
        return run(on: &machine, available: available, finish: finish)
    }

    /// Runs the trace through `machine` as ``run(available:finish:)`` does.
    func run(on machine: inout GestureStateMachine, available: Bool = true, finish: Bool = true) -> [ShutterEvent] {
        var events: [ShutterEvent] = []
        if !available { machine.setCaptureAvailable(false, at: .zero, into: &events) }
        let trace = sorted
        for edge in trace {
            machine.advance(to: edge.time, into: &events)
            machine.edge(edge, into: &events)
        }
        if finish { machine.finish(at: trace.last?.time ?? .zero, into: &events) }
        return events
    }
}

extension ShutterEvent {
    /// A compact, timing-free description for tables.
    var summary: String {
        switch self {
        case .capture(let phase, let action, _, _, _, let reason, _):
            "capture \(phase.rawValue) \(action.rawValue)" + (reason.map { " \($0.rawValue)" } ?? "")
        case .burst(let phase, _, let shot, _): "burst \(phase.rawValue) \(shot)"
        case .prepare(let phase, _, _): "prepare \(phase.rawValue)"
        case .lightPress: "lightPress"
        case .doubleLightPress: "doubleLightPress"
        case .swipe(let phase, _, _, _, let flick, _): "swipe \(phase.rawValue)" + (flick ? " flick" : "")
        case .controlsActive(let control, _, _): "controlsActive \(control)"
        case .controlsAdjusting(let phase, let control, _): "controlsAdjusting \(phase.rawValue) \(control)"
        case .controlsInactive(let reason, _): "controlsInactive \(reason.rawValue)"
        case .controlValue(let control, let value, let display, _):
            switch value {
            case .number(let number): "controlValue \(control) \(JSONLine.number(number, decimals: 3))"
            case .index: "controlValue \(control) \(display.title ?? "?")"
            }
        case .chooser(let phase, _): "chooser \(phase.rawValue)"
        case .controlHighlighted(let control, _): "controlHighlighted \(control)"
        case .controlSelected(let control, _, _): "controlSelected \(control)"
        case .lineStuck(let line, _): "lineStuck \(line)"
        case .lineFreed(let line, _): "lineFreed \(line)"
        case .controlEnabled(let control, let enabled, _): "controlEnabled \(control) \(enabled)"
        case .captureEnabled(let enabled, _): "captureEnabled \(enabled)"
        }
    }
}

/// Millisecond instants for expectations.
func ms(_ value: Double) -> Instant { .nanoseconds(Int64((value * 1e6).rounded())) }
