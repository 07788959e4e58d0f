import Testing
@testable import ShutterCore

@Suite("Edge traces")
struct TraceTests {
    let board: Board = {
        let text = """
        {"name": "t", "chip": "simulator", "lines": [{"name": "full", "role": "full", "activeLow": true},
         {"name": "pad0", "role": "pad"}, {"name": "pad1", "role": "pad"}]}
        """
        return try! Board.decode(.init(text.utf8), file: "t.json")
    }()

    @Test("parses edges, skipping blank lines and comments")
    func parses() throws {
        let trace = try Trace.parse("""
        # a press
        {"t": 0, "line": "full", "active": true}

        {"t": 0.120, "line": "full", "active": false}
        {"t": 0.120, "line": "pad1", "active": true}
        """, board: board, source: "x")
        #expect(trace.edges == [
            Edge(line: LineIndex(0), active: true, time: .zero),
            Edge(line: LineIndex(0), active: false, time: .nanoseconds(120_000_000)),
            Edge(line: LineIndex(2), active: true, time: .nanoseconds(120_000_000)),
        ])
    }

    @Test("refuses a malformed line with its number", arguments: [
        ("{\"t\": 0.1, \"line\": \"full\", \"active\": true}\n{\"t\": 0.05, \"line\": \"full\", \"active\": false}", 2, "time goes backwards"),
        ("{\"t\": 0.1, \"line\": \"shutter\", \"active\": true}", 1, "unknown line 'shutter'"),
        ("\n\n{\"t\": 0.1, \"line\": \"full\", \"active\": true", 3, "not valid JSON"),
        ("{\"t\": 0.1, \"line\": \"full\"}", 1, "missing 'active'"),
        ("{\"t\": \"soon\", \"line\": \"full\", \"active\": true}", 1, "'t' must be a number"),
        ("{\"t\": 0.1, \"line\": \"full\", \"active\": 1}", 1, "'active' must be true or false"),
        ("{\"t\": -1, \"line\": \"full\", \"active\": true}", 1, "time starts at 0"),
        ("{\"t\": 0.1, \"line\": \"full\", \"active\": true, \"level\": 1}", 1, "unknown key 'level'"),
        ("[1, 2]", 1, "expected a JSON object"),
        ("{\"t\": 1e400, \"line\": \"full\", \"active\": true}", 1, "'t': 1e400 is too large for a number"),
        ("{\"t\": -1e400, \"line\": \"full\", \"active\": true}", 1, "'t': -1e400 is too large for a number"),
    ])
    func refuses(text: String, line: Int, words: String) {
        do {
            _ = try Trace.parse(text, board: board, source: "bad.jsonl")
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.line == line, "\(error)")
            #expect(error.description.hasPrefix("bad.jsonl:\(line): "), "\(error)")
            #expect(error.message.contains(words), "\(error)")
        }
    }

    @Test("a written line reads back as the same edge")
    func roundTrip() throws {
        let origin = Instant.nanoseconds(5_000_000_000)
        let edge = Edge(line: LineIndex(1), active: true, time: origin + .microseconds(1_234_567))
        let line = Trace.line(for: edge, origin: origin, board: board)
        #expect(line == "{\"t\": 1.234567, \"line\": \"pad0\", \"active\": true}")
        let back = try Trace.parse(line, board: board, source: "x")
        #expect(back.edges == [Edge(line: LineIndex(1), active: true, time: .nanoseconds(1_234_567_000))])
    }
}

@Suite("JSON output")
struct JSONLineTests {
    @Test("keys keep their order; numbers print the same on every run")
    func ordered() {
        var line = JSONLine(event: "capture", at: .nanoseconds(120_000_000))
        line.add("phase", "began")
        line.add("value", 1.0 / 3.0, decimals: 4)
        line.add("index", 2)
        line.add("flick", false)
        #expect(line.description == "{\"event\": \"capture\", \"t\": 0.12, \"phase\": \"began\", \"value\": 0.3333, \"index\": 2, \"flick\": false}")
    }

    @Test("seconds", arguments: [(Int64(0), "0"), (1_000_000_000, "1"), (120_000_000, "0.12"), (1_000_001_000, "1.000001"),
                                 (1_499, "0.000001"), (-250_000_000, "-0.25")])
    func seconds(nanoseconds: Int64, text: String) {
        #expect(JSONLine.seconds(.nanoseconds(nanoseconds)) == text)
    }

    @Test("numbers", arguments: [(0.0, "0"), (-2.0, "-2"), (0.1 + 0.2, "0.3"), (-1.0 / 3.0, "-0.333333"), (.infinity, "null"), (8.0, "8")])
    func numbers(value: Double, text: String) {
        #expect(JSONLine.number(value) == text)
    }

    /// The digits as plain string arithmetic prints them, to check the line's writer on the stack
    /// against: whole part, point, fraction zero-padded, zeros trimmed.
    static func referenceDecimal(_ magnitude: UInt64, negative: Bool, decimals: Int) -> String {
        var divisor: UInt64 = 1
        for _ in 0..<decimals { divisor *= 10 }
        let sign = negative ? "-" : ""
        var fraction = String(magnitude % divisor)
        if fraction == "0" || decimals == 0 { return "\(sign)\(magnitude / divisor)" }
        fraction = String(repeating: "0", count: decimals - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return "\(sign)\(magnitude / divisor).\(fraction)"
    }

    @Test("numbers and seconds print as the string arithmetic did, for 20 000 random values")
    func digitsMatchTheReference() {
        var random = SplitMix64(seed: 23)
        for round in 0..<20_000 {
            let decimals = Int(random.next() % 8)
            // Magnitudes of every length, from 0 to UInt64's 20 digits.
            let magnitude = random.next() >> (random.next() % 64)
            let negative = round % 2 == 1
            #expect(JSONLine.decimal(magnitude, negative: negative, decimals: decimals)
                    == Self.referenceDecimal(magnitude, negative: negative, decimals: decimals), "\(magnitude) \(decimals)")
            let nanoseconds = Int64(bitPattern: random.next()) / 4
            let micros = (nanoseconds >= 0 ? nanoseconds + 500 : nanoseconds - 500) / 1_000
            #expect(JSONLine.seconds(.nanoseconds(nanoseconds)) == Self.referenceDecimal(micros.magnitude, negative: micros < 0, decimals: 6))
        }
        #expect(JSONLine.number(123.456, decimals: 0) == "123")
        #expect(JSONLine.number(-0.00004, decimals: 4) == "0")
        #expect(JSONLine.number(-0.00005, decimals: 4) == "-0.0001")
    }

    @Test("strings with nothing to escape are copied whole, whatever their script")
    func unescapedStrings() {
        #expect(JSONLine.quoted("") == "\"\"")
        #expect(JSONLine.quoted("Éclair 📷 f/2.8") == "\"Éclair 📷 f/2.8\"")
        var line = JSONLine(event: "controlValue", at: .nanoseconds(1_000))
        line.add("label", "Zoom ×2")
        #expect(line.description == #"{"event": "controlValue", "t": 0.000001, "label": "Zoom ×2"}"#)
        #expect(line.members?.map(\.text) == ["controlValue", "0.000001", "Zoom ×2"])
    }

    @Test("strings are escaped")
    func escaping() {
        #expect(JSONLine.quoted("a\"b\\c\nd\u{1}") == "\"a\\\"b\\\\c\\nd\\u0001\"")
    }

    @Test("syntax errors are found with line and column", arguments: [
        ("{\"a\": 1,}", 1, 9, "trailing comma"), ("{\n\"a\" 1}", 2, 5, "expected ':'"), ("[1 2]", 1, 4, "comma missing"),
        ("{\"a\": tru}", 1, 7, "expected 'true'"), ("{\"a\": \"x", 1, 9, "unterminated"), ("{} x", 1, 4, "after the end"),
    ])
    func syntax(text: String, line: Int, column: Int, words: String) throws {
        let failure = try #require(JSONSyntax.firstError(in: text))
        #expect(failure.line == line && failure.column == column, "\(failure)")
        #expect(failure.message.contains(words), "\(failure)")
    }

    @Test("valid JSON has no syntax error", arguments: ["{}", "[]", "{\"a\": [1, -2.5e3, true, null, \"\\u00e9\"]}", " 0 "])
    func valid(text: String) {
        #expect(JSONSyntax.firstError(in: text) == nil)
    }
}
