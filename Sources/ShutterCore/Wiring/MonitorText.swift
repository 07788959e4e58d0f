/// What `shutter monitor` prints, for a person testing a rig's wiring line by line: each edge as it
/// happens with the line's name, what happened to it and, on a Raspberry Pi's header, its GPIO and
/// pin, so a touch on the wrong pad or a button on the wrong pin shows at once.
public struct MonitorText: Sendable {
    private let board: Board
    private let origin: Instant
    private let nameWidth: Int
    /// Where each line is, in ``LineIndex`` order: `GPIO17, pin 11`, or the board's own selector.
    private let places: [String]

    /// - Parameter origin: the instant monitoring began; every line is stamped with the time since.
    public init(board: Board, origin: Instant) {
        self.board = board
        self.origin = origin
        nameWidth = board.lines.map(\.name.count).max() ?? 0
        let wiring = WiringDiagram(board: board)
        places = board.lines.map { line in
            wiring.connection(of: line).map { "GPIO\($0.gpio), pin \($0.pin)" } ?? "line \(line.selector)"
        }
    }

    /// The seconds since monitoring began, right-aligned so that columns line up: `    1.204 s`.
    public func stamp(_ time: Instant) -> String {
        let seconds = JSONLine.number((time - origin).milliseconds / 1000, decimals: 3)
        return WiringDiagram.leftPadded(seconds, to: 9) + " s"
    }

    /// One raw edge: `    1.204 s  pad0       touched    GPIO17, pin 11`.
    public func edge(_ edge: Edge) -> String {
        let line = board[edge.line]
        let change = switch (line.role, edge.active) {
        case (.pad, true): "touched"
        case (.pad, false): "untouched"
        case (_, true): "pressed"
        case (_, false): "released"
        }
        return "\(stamp(edge.time))  \(WiringDiagram.rightPadded(line.name, to: nameWidth))  \(WiringDiagram.rightPadded(change, to: 9))  \(places[edge.line.rawValue])"
    }
}
