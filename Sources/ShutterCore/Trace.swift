#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An edge trace: JSON Lines, one edge a line, `{"t": 0.12, "line": "full", "active": true}`.
///
/// `t` is seconds from the start of the recording on the monotonic clock and never
/// decreases; `line` is a line name from the board; `active` is the logical level
/// after active-low. Users attach traces to bug reports; `shutter replay` reads them.
public struct Trace: Hashable, Sendable {
    public var edges: [Edge]

    public init(edges: [Edge]) { self.edges = edges }

    /// A problem in a trace, with its line number.
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        public var source: String
        public var line: Int
        public var message: String
        public var description: String { "\(source):\(line): \(message)" }
    }

    /// Reads a trace, resolving line names against `board`.
    ///
    /// Blank lines and lines starting with `#` are skipped, so a trace can carry notes.
    /// - Parameter source: the file's name, for error messages (`-` for stdin).
    public static func parse(_ text: String, board: Board, source: String) throws(ParseError) -> Trace {
        var edges: [Edge] = []
        var lastTime: Double = -.infinity
        var lineNumber = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let line = rawLine.trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") { continue }
            func fail(_ message: String) -> ParseError { ParseError(source: source, line: lineNumber, message: message) }
            let decoded: TraceLine
            do {
                decoded = try JSONDecoder().decode(TraceLine.self, from: Data(line.utf8))
            } catch let error as FieldError {
                throw fail(error.message)
            } catch let DecodingError.keyNotFound(key, _) {
                throw fail("missing '\(key.stringValue)' (a trace line is {\"t\": 0.12, \"line\": \"full\", \"active\": true})")
            } catch let DecodingError.typeMismatch(_, context) where context.codingPath.isEmpty {
                throw fail("expected a JSON object like {\"t\": 0.12, \"line\": \"full\", \"active\": true}")
            } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
                let key = context.codingPath.last?.stringValue ?? "t"
                throw fail(key == "active" ? "'active' must be true or false"
                           : key == "line" ? "'line' must be a line name in quotes" : "'t' must be a number of seconds")
            } catch {
                if let syntax = JSONSyntax.firstError(in: line) {
                    throw fail(syntax.isNumberOutOfRange ? (syntax.path.isEmpty ? "" : "'\(syntax.path)': ") + syntax.message
                                                         : "not valid JSON at column \(syntax.column): \(syntax.message)")
                }
                throw fail("expected a JSON object like {\"t\": 0.12, \"line\": \"full\", \"active\": true}")
            }
            let t = decoded.t
            guard t.isFinite, t >= 0 else { throw fail("'t' is \(t); time starts at 0") }
            guard t <= Instant.latestTraceSeconds else {
                throw fail("'t' is \(JSONLine.number(t)) s, beyond what the clock holds (at most \(JSONLine.number(Instant.latestTraceSeconds)) s)")
            }
            guard t >= lastTime else {
                throw fail("time goes backwards: t \(JSONLine.number(t)) comes after t \(JSONLine.number(lastTime))")
            }
            guard let index = board.line(named: decoded.line) else {
                let names = board.lines.map(\.name).joined(separator: ", ")
                throw fail("unknown line '\(decoded.line)'; board '\(board.name)' has \(names)")
            }
            lastTime = t
            edges.append(Edge(line: index, active: decoded.active, time: .seconds(t)))
        }
        return Trace(edges: edges)
    }

    /// One trace line for `edge`, its time taken relative to `origin`.
    public static func line(for edge: Edge, origin: Instant, board: Board) -> String {
        var json = JSONLine()
        json.add("t", Instant(rawValue: edge.time.rawValue - origin.rawValue))
        json.add("line", board[edge.line].name)
        json.add("active", edge.active)
        return json.description
    }
}

/// One line of a trace as written.
private struct TraceLine: Decodable {
    var t: Double
    var line: String
    var active: Bool

    enum CodingKeys: String, CodingKey, CaseIterable { case t, line, active }

    init(from decoder: any Decoder) throws {
        let keys = try decoder.container(keyedBy: AnyCodingKey.self).allKeys.map(\.stringValue)
        for key in keys where CodingKeys(rawValue: key) == nil {
            throw FieldError(path: FieldPath(key), message: "unknown key '\(key)' (a trace line has t, line and active)")
        }
        let container = try decoder.container(keyedBy: CodingKeys.self)
        t = try container.decode(Double.self, forKey: .t)
        line = try container.decode(String.self, forKey: .line)
        active = try container.decode(Bool.self, forKey: .active)
    }
}
