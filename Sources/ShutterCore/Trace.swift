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
        var text = text
        text.makeContiguousUTF8()
        var reader = TraceReader(board: board, source: source)
        // A contiguous string always lends its storage; the copy is never made.
        let result = text.utf8.withContiguousStorageIfAvailable { reader.read($0) }
            ?? Array(text.utf8).withUnsafeBufferPointer { reader.read($0) }
        switch result {
        case .success(let edges): return Trace(edges: edges)
        case .failure(let error): throw error
        }
    }

    /// One trace line for `edge`, its time taken relative to `origin`.
    public static func line(for edge: Edge, origin: Instant, board: Board) -> String {
        var json = JSONLine()
        json.add("t", Instant(rawValue: edge.time.rawValue - origin.rawValue))
        json.add("line", board[edge.line].name)
        json.add("active", edge.active)
        return json.description
    }

    /// One line's fields through `JSONDecoder`, or why it is not a trace line (without the line number).
    ///
    /// The reference for every line ``TraceLineScanner`` does not read itself: what it accepts and
    /// the words of each refusal.
    static func decodeLine(_ line: String) -> Result<(t: Double, line: String, active: Bool), LineRefusal> {
        let decoded: TraceLine
        do {
            decoded = try JSONDecoder().decode(TraceLine.self, from: Data(line.utf8))
        } catch let error as FieldError {
            return .failure(LineRefusal(message: error.message))
        } catch let DecodingError.keyNotFound(key, _) {
            return .failure(LineRefusal(message: "missing '\(key.stringValue)' (a trace line is {\"t\": 0.12, \"line\": \"full\", \"active\": true})"))
        } catch let DecodingError.typeMismatch(_, context) where context.codingPath.isEmpty {
            return .failure(LineRefusal(message: "expected a JSON object like {\"t\": 0.12, \"line\": \"full\", \"active\": true}"))
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            let key = context.codingPath.last?.stringValue ?? "t"
            return .failure(LineRefusal(message: key == "active" ? "'active' must be true or false"
                                        : key == "line" ? "'line' must be a line name in quotes" : "'t' must be a number of seconds"))
        } catch {
            if let syntax = JSONSyntax.firstError(in: line) {
                return .failure(LineRefusal(message: syntax.isNumberOutOfRange
                    ? (syntax.path.isEmpty ? "" : "'\(syntax.path)': ") + syntax.message
                    : "not valid JSON at column \(syntax.column): \(syntax.message)"))
            }
            return .failure(LineRefusal(message: "expected a JSON object like {\"t\": 0.12, \"line\": \"full\", \"active\": true}"))
        }
        return .success((decoded.t, decoded.line, decoded.active))
    }

    /// Why one line is not a trace line.
    struct LineRefusal: Error, Hashable {
        var message: String
    }
}

/// Reads a trace's bytes line by line into edges.
private struct TraceReader {
    let source: String
    /// The board's name and its lines' names, for resolving and refusing names: the reader keeps
    /// only these, as a whole `Board` in it would be copied for each method a trace line calls.
    let boardName: String
    let lineNames: [String]
    /// Every board line's name as UTF-8, one after another, and where each is in it with the line
    /// that name resolves to (the first line whose name equals it, as `Board.line(named:)` finds):
    /// compared byte for byte on every trace line, without an array or a retain per name.
    let nameBytes: [UInt8]
    let names: [(start: Int, count: Int, line: LineIndex)]
    var edges: [Edge] = []
    var lastTime: Double = -.infinity
    var lineNumber = 0

    init(board: Board, source: String) {
        boardName = board.name
        lineNames = board.lines.map(\.name)
        self.source = source
        var bytes: [UInt8] = []
        names = board.lines.map { line in
            let start = bytes.count
            bytes += line.name.utf8
            return (start, bytes.count - start, board.line(named: line.name)!)
        }
        nameBytes = bytes
    }

    func fail(_ message: String) -> Trace.ParseError { Trace.ParseError(source: source, line: lineNumber, message: message) }

    mutating func read(_ bytes: UnsafeBufferPointer<UInt8>) -> Result<[Edge], Trace.ParseError> {
        edges.reserveCapacity(bytes.count / 40)
        var start = 0
        var index = 0
        while true {
            // A line ends at a line feed, but not at one after a carriage return: the text's lines
            // are split by `Character`, and a carriage return with its line feed is one character.
            let atEnd = index == bytes.count
            if atEnd || (bytes[index] == 0x0A && (index == 0 || bytes[index - 1] != 0x0D)) {
                lineNumber += 1
                do throws(Trace.ParseError) {
                    try line(bytes, start, index)
                } catch {
                    return .failure(error)
                }
                if atEnd { return .success(edges) }
                start = index + 1
            }
            index += 1
        }
    }

    /// One line, `bytes[start..<end]`, without its line feed.
    mutating func line(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) throws(Trace.ParseError) {
        var first = start, last = end
        while first < last, bytes[first] == 0x20 || bytes[first] == 0x09 { first += 1 }
        while last > first, bytes[last - 1] == 0x20 || bytes[last - 1] == 0x09 { last -= 1 }
        if first == last { return }
        let hash = UInt8(ascii: "#")
        // Spaces beyond ASCII (U+00A0, U+3000, ...) trimmed, and a `#` with a combining mark (no
        // `#` as a character): the text's own rules, on the rare line that needs them.
        if bytes[first] >= 0x80 || bytes[last - 1] >= 0x80 || (bytes[first] == hash && last - first > 1 && bytes[first + 1] >= 0x80) {
            let line = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self).trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") { return }
            return try decoded(line)
        }
        if bytes[first] == hash { return }
        guard let fields = TraceLineScanner.scan(bytes, first, last) else {
            return try decoded(String(decoding: UnsafeBufferPointer(rebasing: bytes[first..<last]), as: UTF8.self))
        }
        try checkTime(fields.t)
        let name = UnsafeBufferPointer(rebasing: bytes[fields.name])
        if let line = boardLine(named: name) {
            return append(line: line, active: fields.active, t: fields.t)
        }
        // Not byte for byte a board name: the same name in another normalization still is one.
        try append(name: String(decoding: name, as: UTF8.self), active: fields.active, t: fields.t)
    }

    /// The board line whose name is byte for byte `name`.
    func boardLine(named name: UnsafeBufferPointer<UInt8>) -> LineIndex? {
        nameBytes.withUnsafeBufferPointer { all in
            for entry in names where entry.count == name.count {
                var offset = 0
                while offset < name.count, all[entry.start + offset] == name[offset] { offset += 1 }
                if offset == name.count { return entry.line }
            }
            return nil
        }
    }

    /// A line `TraceLineScanner` does not read, through the decoder.
    mutating func decoded(_ line: String) throws(Trace.ParseError) {
        switch Trace.decodeLine(line) {
        case .failure(let refusal): throw fail(refusal.message)
        case .success(let fields):
            try checkTime(fields.t)
            try append(name: fields.line, active: fields.active, t: fields.t)
        }
    }

    func checkTime(_ t: Double) throws(Trace.ParseError) {
        guard t.isFinite, t >= 0 else { throw fail("'t' is \(t); time starts at 0") }
        guard t <= Instant.latestTraceSeconds else {
            throw fail("'t' is \(JSONLine.number(t)) s, beyond what the clock holds (at most \(JSONLine.number(Instant.latestTraceSeconds)) s)")
        }
        guard t >= lastTime else {
            throw fail("time goes backwards: t \(JSONLine.number(t)) comes after t \(JSONLine.number(lastTime))")
        }
    }

    mutating func append(name: String, active: Bool, t: Double) throws(Trace.ParseError) {
        // The first line whose name equals it, as `Board.line(named:)` finds.
        guard let index = lineNames.firstIndex(of: name).map({ LineIndex($0) }) else {
            let names = lineNames.joined(separator: ", ")
            throw fail("unknown line '\(name)'; board '\(boardName)' has \(names)")
        }
        append(line: index, active: active, t: t)
    }

    mutating func append(line: LineIndex, active: Bool, t: Double) {
        lastTime = t
        edges.append(Edge(line: line, active: active, time: .seconds(t)))
    }
}

/// Reads the line shape the trace writer gives straight from its bytes: one object with `t` (a
/// number), `line` (a string without escapes) and `active` (true or false), once each in any
/// order, JSON's spaces anywhere between. A trace of a day's rig use has millions of these lines,
/// and a `JSONDecoder` per line was a third of a replay's time.
///
/// Anything else (escapes, keys missing, repeated or unknown, other types, broken syntax, a number
/// whose value is not plainly a finite Double) is nil: ``Trace/decodeLine(_:)`` reads it and
/// refuses it in its own words, so this reader only ever agrees with the decoder.
enum TraceLineScanner {
    struct Fields {
        var t: Double
        var name: Range<Int>
        var active: Bool
    }

    /// Powers of ten a Double holds exactly.
    private static let exactPowersOfTen: [Double] = (0...22).map { power in
        var value = 1.0
        for _ in 0..<power { value *= 10 }
        return value
    }

    static func scan(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Fields? {
        var index = start
        func skipSpace() {
            while index < end, bytes[index] == 0x20 || bytes[index] == 0x09 || bytes[index] == 0x0A || bytes[index] == 0x0D { index += 1 }
        }
        func take(_ byte: UInt8) -> Bool {
            guard index < end, bytes[index] == byte else { return false }
            index += 1
            return true
        }
        /// A string's contents without escapes or control characters, after its opening quote.
        func plainString() -> Range<Int>? {
            let first = index
            while index < end {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") { index += 1; return first..<(index - 1) }
                if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
                index += 1
            }
            return nil
        }
        func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard end - index >= count else { return false }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
            index += count
            return true
        }

        var t: Double?, name: Range<Int>?, active: Bool?
        skipSpace()
        guard take(UInt8(ascii: "{")) else { return nil }
        while true {
            skipSpace()
            guard take(UInt8(ascii: "\"")), let key = plainString() else { return nil }
            skipSpace()
            guard take(UInt8(ascii: ":")) else { return nil }
            skipSpace()
            switch (key.count, bytes[key.lowerBound]) {
            case (1, UInt8(ascii: "t")):
                guard t == nil, let value = number(bytes, &index, end) else { return nil }
                t = value
            case (4, UInt8(ascii: "l")) where literalAt(bytes, key, "line"):
                guard name == nil, take(UInt8(ascii: "\"")), let value = plainString() else { return nil }
                name = value
            case (6, UInt8(ascii: "a")) where literalAt(bytes, key, "active"):
                guard active == nil else { return nil }
                if literal("true") { active = true } else if literal("false") { active = false } else { return nil }
            default:
                return nil
            }
            skipSpace()
            if take(UInt8(ascii: ",")) { continue }
            guard take(UInt8(ascii: "}")) else { return nil }
            skipSpace()
            guard index == end, let t, let name, let active else { return nil }
            return Fields(t: t, name: name, active: active)
        }
    }

    private static func literalAt(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ word: StaticString) -> Bool {
        guard range.count == word.utf8CodeUnitCount else { return false }
        for offset in 0..<range.count where bytes[range.lowerBound + offset] != word.utf8Start[offset] { return false }
        return true
    }

    /// A JSON number at `index`, or nil when it is not one or its value is not plainly a finite
    /// Double (out of range, or so small it rounds to zero or below the normal range).
    private static func number(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int, _ end: Int) -> Double? {
        let start = index
        func isDigit(_ at: Int) -> Bool { at < end && bytes[at] >= UInt8(ascii: "0") && bytes[at] <= UInt8(ascii: "9") }
        var mantissa: UInt64 = 0
        var digits = 0          // significant digits in `mantissa`
        var nonzero = false
        var scale = 0           // decimal exponent of `mantissa`'s last digit
        func digit(_ value: UInt8, fraction: Bool) {
            let d = UInt64(value - UInt8(ascii: "0"))
            if d != 0 { nonzero = true }
            if digits == 0 && d == 0 {
                if fraction { scale -= 1 }
                return
            }
            if digits < 19 {
                mantissa = mantissa * 10 + d
                digits += 1
                if fraction { scale -= 1 }
            } else {
                digits += 1     // beyond what the quick conversion takes
                if !fraction { scale += 1 }
            }
        }
        let negative = index < end && bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        if index < end, bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if isDigit(index) {
            while isDigit(index) { digit(bytes[index], fraction: false); index += 1 }
        } else {
            return nil
        }
        if index < end, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard isDigit(index) else { return nil }
            while isDigit(index) { digit(bytes[index], fraction: true); index += 1 }
        }
        var exponent = 0
        if index < end, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            var exponentNegative = false
            if index < end, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                exponentNegative = bytes[index] == UInt8(ascii: "-")
                index += 1
            }
            guard isDigit(index) else { return nil }
            while isDigit(index) {
                if exponent < 100_000 { exponent = exponent * 10 + Int(bytes[index] - UInt8(ascii: "0")) }
                index += 1
            }
            if exponentNegative { exponent = -exponent }
        }
        // A JSON value ends at a space, a comma or a brace; anything else (`01`, `1x`) is not one.
        if index < end, !(bytes[index] == 0x20 || bytes[index] == 0x09 || bytes[index] == 0x0A || bytes[index] == 0x0D
                          || bytes[index] == UInt8(ascii: ",") || bytes[index] == UInt8(ascii: "}")) {
            return nil
        }
        // Zero written other than `0` or `-0`: the decoder refuses some (`0e5`), so it decides.
        if !nonzero { return index - start == (negative ? 2 : 1) ? (negative ? -0.0 : 0.0) : nil }
        let power = scale + exponent
        var value: Double
        // Up to 15 digits and a power of ten a Double holds exactly: one correctly rounded
        // multiplication or division, the value a full conversion gives.
        if digits <= 15, power >= -22, power <= 22 {
            value = power < 0 ? Double(mantissa) / exactPowersOfTen[-power] : Double(mantissa) * exactPowersOfTen[power]
        } else {
            guard let converted = Double(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
            else { return nil }
            value = converted.magnitude
        }
        guard value.isFinite, value.isNormal else { return nil }
        return negative ? -value : value
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
