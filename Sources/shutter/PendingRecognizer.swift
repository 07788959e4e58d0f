import ShutterCore

// Stand-in until the gesture recognizer lands (issue 4): passes edges through as
// `edge` events. Same shape as the recognizer, so the interpreter does not change.

enum ShutterEvent {
    case edge(Edge, name: String)

    var time: Instant {
        switch self { case .edge(let edge, _): edge.time }
    }

    var json: JSONLine {
        switch self {
        case .edge(let edge, let name):
            var line = JSONLine(event: "edge", at: edge.time)
            line.add("line", name)
            line.add("active", edge.active)
            return line
        }
    }
}

struct RigStateMachine {
    let board: Board
    init(board: Board, softwareDebounce: Set<LineIndex>? = nil, initialValues: [String: ControlValue]? = nil) {
        self.board = board
    }
    mutating func edge(_ edge: Edge, into events: inout [ShutterEvent]) {
        events.append(.edge(edge, name: board[edge.line].name))
    }
    mutating func advance(to now: Instant, into events: inout [ShutterEvent]) {}
    var nextDeadline: Instant? { nil }
    mutating func setCaptureAvailable(_ available: Bool, at now: Instant, into events: inout [ShutterEvent]) {}
    mutating func finish(at now: Instant, into events: inout [ShutterEvent]) {}
    var controlValues: [String: ControlValue] { [:] }
}
