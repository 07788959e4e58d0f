import Testing
@testable import ShutterCore

/// What `Trace.parse` accepts and refuses, line shape by line shape: every answer pinned, so a
/// faster reader cannot move one (a refusal's line number and words included).
@Suite("Trace lines, accepted and refused")
struct TraceParseTests {
    static let board: Board = {
        let text = """
        {"name": "t", "chip": "simulator", "lines": [{"name": "full", "role": "full", "activeLow": true},
         {"name": "pad0", "role": "pad"}, {"name": "pad1", "role": "pad"}, {"name": "zoom_é", "role": "pad"}]}
        """
        return try! Board.decode(.init(text.utf8), file: "t.json")
    }()

    /// One outcome as text: the edges (`line@ns+` or `-`), or the refusal as `error.description`.
    static func outcome(_ text: String) -> String {
        do {
            let trace = try Trace.parse(text, board: board, source: "p.jsonl")
            return "ok" + trace.edges.map { " \($0.line.rawValue)@\($0.time.rawValue)\($0.active ? "+" : "-")" }.joined()
        } catch {
            return error.description
        }
    }

    static let cases: [(String, String)] = [
        // Accepted shapes: spacing, key order, numbers, escapes, notes.
        (#"{"t":1.0,"line":"pad1","active":true}"#, "ok 2@1000000000+"),
        (#"  {"t" : 1 , "line" : "pad1" , "active" : false }  "#, "ok 2@1000000000-"),
        ("\t{\"t\":\t0.5,\t\"line\":\"pad0\",\"active\":true}\t", "ok 1@500000000+"),
        (#"{"active":true,"line":"pad1","t":0.25}"#, "ok 2@250000000+"),
        (#"{"line":"full","t":2,"active":false}"#, "ok 0@2000000000-"),
        (#"{"t":1e-3,"line":"pad1","active":true}"#, "ok 2@1000000+"),
        (#"{"t":1E3,"line":"pad1","active":true}"#, "ok 2@1000000000000+"),
        (#"{"t":1.5e+2,"line":"pad1","active":true}"#, "ok 2@150000000000+"),
        (#"{"t":2.5E-1,"line":"pad1","active":true}"#, "ok 2@250000000+"),
        (#"{"t":0.000001,"line":"pad1","active":true}"#, "ok 2@1000+"),
        (#"{"t":-0,"line":"pad1","active":true}"#, "ok 2@0+"),
        (#"{"t":0e0,"line":"pad1","active":true}"#, "ok 2@0+"),
        (#"{"t":1.2345678901234567890123,"line":"pad1","active":true}"#, "ok 2@1234567890+"),
        (#"{"t":0.1234567894,"line":"pad1","active":true}"#, "ok 2@123456789+"),
        (#"{"t":9200000000,"line":"pad1","active":true}"#, "ok 2@9200000000000000000+"),
        (#"{"t":1e-400,"line":"pad1","active":true}"#, "p.jsonl:1: expected a JSON object like {\"t\": 0.12, \"line\": \"full\", \"active\": true}"),
        (#"{"t":1,"line":"pad\u0031","active":true}"#, "ok 2@1000000000+"),
        (#"{"t":1,"line":"p\u0061d1","active":true}"#, "ok 2@1000000000+"),
        (#"{"\u0074":1,"line":"pad1","active":true}"#, "ok 2@1000000000+"),
        (#"{"t":1,"line":"zoom_é","active":true}"#, "ok 3@1000000000+"),
        (#"{"t":1,"line":"zoom_\u00e9","active":true}"#, "ok 3@1000000000+"),
        ("{\"t\":1,\"line\":\"zoom_e\u{301}\",\"active\":true}", "ok 3@1000000000+"),
        (#"{"t":1,"line":"pad\/1","active":true}"#, "p.jsonl:1: unknown line 'pad/1'; board 't' has full, pad0, pad1, zoom_é"),
        ("{\"t\":1,\r\"line\":\"pad1\",\"active\":true}", "ok 2@1000000000+"),
        ("\u{00A0}{\"t\":1,\"line\":\"pad1\",\"active\":true}\u{3000}", "ok 2@1000000000+"),
        ("\u{FEFF}{\"t\":1,\"line\":\"pad1\",\"active\":true}", "ok 2@1000000000+"),
        ("# a note\n\n   \n  # indented note\n#\n{\"t\":1,\"line\":\"pad1\",\"active\":true}\n", "ok 2@1000000000+"),
        ("#\u{301} not a note", "p.jsonl:1: not valid JSON at column 1: unexpected character '#', expected a value"),
        ("{\"t\":1,\"line\":\"pad1\",\"active\":true}\n{\"t\":1,\"line\":\"pad0\",\"active\":true}", "ok 2@1000000000+ 1@1000000000+"),
        ("{\"t\":1,\"line\":\"pad1\",\"active\":true}\r\n{\"t\":2,\"line\":\"pad0\",\"active\":true}\r\n", "p.jsonl:1: not valid JSON at column 1: unexpected text after the end of the JSON value"),
        ("", "ok"),
        ("\n\n", "ok"),
        // Duplicate keys.
        (#"{"t":1,"t":2,"line":"pad1","active":true}"#, "ok 2@1000000000+"),
        (#"{"t":1,"line":"full","line":"pad1","active":true}"#, "ok 0@1000000000+"),
        (#"{"t":1,"line":"pad1","active":true,"active":false}"#, "ok 2@1000000000+"),
        // Missing and extra fields.
        ("{}", "p.jsonl:1: missing 't' (a trace line is {\"t\": 0.12, \"line\": \"full\", \"active\": true})"),
        (#"{"t":1}"#, "p.jsonl:1: missing 'line' (a trace line is {\"t\": 0.12, \"line\": \"full\", \"active\": true})"),
        (#"{"t":1,"line":"pad1"}"#, "p.jsonl:1: missing 'active' (a trace line is {\"t\": 0.12, \"line\": \"full\", \"active\": true})"),
        (#"{"line":"pad1","active":true}"#, "p.jsonl:1: missing 't' (a trace line is {\"t\": 0.12, \"line\": \"full\", \"active\": true})"),
        (#"{"active":true}"#, "p.jsonl:1: missing 't' (a trace line is {\"t\": 0.12, \"line\": \"full\", \"active\": true})"),
        (#"{"t":1,"line":"pad1","active":true,"x":null}"#, "p.jsonl:1: unknown key 'x' (a trace line has t, line and active)"),
        (#"{"x":{"a":[1,{"b":2}]},"t":1,"line":"pad1","active":true}"#, "p.jsonl:1: unknown key 'x' (a trace line has t, line and active)"),
        (#"{"t":1,"x":1,"line":"pad1"}"#, "p.jsonl:1: unknown key 'x' (a trace line has t, line and active)"),
        (#"{"T":1,"line":"pad1","active":true}"#, "p.jsonl:1: unknown key 'T' (a trace line has t, line and active)"),
        // Wrong types.
        (#"{"t":"1","line":"pad1","active":true}"#, "p.jsonl:1: 't' must be a number of seconds"),
        (#"{"t":true,"line":"pad1","active":true}"#, "p.jsonl:1: 't' must be a number of seconds"),
        (#"{"t":null,"line":"pad1","active":true}"#, "p.jsonl:1: 't' must be a number of seconds"),
        (#"{"t":[1],"line":"pad1","active":true}"#, "p.jsonl:1: 't' must be a number of seconds"),
        (#"{"t":1,"line":1,"active":true}"#, "p.jsonl:1: 'line' must be a line name in quotes"),
        (#"{"t":1,"line":null,"active":true}"#, "p.jsonl:1: 'line' must be a line name in quotes"),
        (#"{"t":1,"line":"pad1","active":1}"#, "p.jsonl:1: 'active' must be true or false"),
        (#"{"t":1,"line":"pad1","active":"true"}"#, "p.jsonl:1: 'active' must be true or false"),
        (#"{"t":1,"line":"pad1","active":null}"#, "p.jsonl:1: 'active' must be true or false"),
        (#"{"t":"x","line":1,"active":2}"#, "p.jsonl:1: 't' must be a number of seconds"),
        // Not an object.
        ("[1, 2]", "p.jsonl:1: expected a JSON object like {\"t\": 0.12, \"line\": \"full\", \"active\": true}"),
        ("1", "p.jsonl:1: expected a JSON object like {\"t\": 0.12, \"line\": \"full\", \"active\": true}"),
        (#""x""#, "p.jsonl:1: expected a JSON object like {\"t\": 0.12, \"line\": \"full\", \"active\": true}"),
        ("true", "p.jsonl:1: expected a JSON object like {\"t\": 0.12, \"line\": \"full\", \"active\": true}"),
        ("null", "p.jsonl:1: 't' must be a number of seconds"),
        (#"{"t":1,"line":"pad1","active":true} x"#, "p.jsonl:1: not valid JSON at column 37: unexpected text after the end of the JSON value"),
        (#"{"t":1,"line":"pad1","active":true}{}"#, "p.jsonl:1: not valid JSON at column 36: unexpected text after the end of the JSON value"),
        // Numbers JSON does not have, or a Double cannot hold.
        (#"{"t":01,"line":"pad1","active":true}"#, "p.jsonl:1: not valid JSON at column 7: expected ',' or '}' (is a comma missing?)"),
        (#"{"t":.5,"line":"pad1","active":true}"#, "p.jsonl:1: not valid JSON at column 6: unexpected character '.', expected a value"),
        (#"{"t":1.,"line":"pad1","active":true}"#, "p.jsonl:1: not valid JSON at column 8: expected a digit after '.'"),
        (#"{"t":+1,"line":"pad1","active":true}"#, "p.jsonl:1: not valid JSON at column 6: unexpected character '+', expected a value"),
        (#"{"t":1e,"line":"pad1","active":true}"#, "p.jsonl:1: not valid JSON at column 8: expected a digit in the exponent"),
        (#"{"t":NaN,"line":"pad1","active":true}"#, "p.jsonl:1: not valid JSON at column 6: unexpected character 'N', expected a value"),
        (#"{"t":Infinity,"line":"pad1","active":true}"#, "p.jsonl:1: not valid JSON at column 6: unexpected character 'I', expected a value"),
        (#"{"t":0x10,"line":"pad1","active":true}"#, "p.jsonl:1: not valid JSON at column 7: expected ',' or '}' (is a comma missing?)"),
        (#"{"t":1e400,"line":"pad1","active":true}"#, "p.jsonl:1: 't': 1e400 is too large for a number (a number's magnitude must be below 1.8e308)"),
        (#"{"t":-1e400,"line":"pad1","active":true}"#, "p.jsonl:1: 't': -1e400 is too large for a number (a number's magnitude must be below 1.8e308)"),
        (#"{"t":1,"line":"pad1","active":true,"x":1e400}"#, "p.jsonl:1: unknown key 'x' (a trace line has t, line and active)"),
        (#"{"t":-1,"line":"pad1","active":true}"#, "p.jsonl:1: 't' is -1.0; time starts at 0"),
        (#"{"t":-0.5,"line":"pad1","active":true}"#, "p.jsonl:1: 't' is -0.5; time starts at 0"),
        (#"{"t":9300000000,"line":"pad1","active":true}"#, "p.jsonl:1: 't' is 9300000000.0 s, beyond what the clock holds (at most 9200000000.0 s)"),
        (#"{"t":1.7976931348623157e308,"line":"pad1","active":true}"#, "p.jsonl:1: 't' is 1.7976931348623157e+308 s, beyond what the clock holds (at most 9200000000.0 s)"),
        // Broken syntax.
        (#"{"t":1,"line":"pad1","active":true"#, "p.jsonl:1: not valid JSON at column 35: unexpected end of text, expected ',' or '}'"),
        (#"{"t":1,"line":"pad1","active":true,}"#, "ok 2@1000000000+"),
        (#"{'t':1,"line":"pad1","active":true}"#, "p.jsonl:1: not valid JSON at column 2: expected a key in double quotes"),
        (#"{t:1,"line":"pad1","active":true}"#, "p.jsonl:1: not valid JSON at column 2: expected a key in double quotes"),
        (#"{"t" 1,"line":"pad1","active":true}"#, "p.jsonl:1: not valid JSON at column 6: expected ':' after the key"),
        (#"{"t":1 "line":"pad1","active":true}"#, "p.jsonl:1: not valid JSON at column 8: expected ',' or '}' (is a comma missing?)"),
        (#"{"t":1,"line":"pad1","active":tru}"#, "p.jsonl:1: not valid JSON at column 31: expected 'true'"),
        (#"{"t":1,"line":"pad1","active":True}"#, "p.jsonl:1: not valid JSON at column 31: unexpected character 'T', expected a value"),
        (#"{"t":1,"line":"pad1,"active":true}"#, "p.jsonl:1: not valid JSON at column 22: expected ',' or '}' (is a comma missing?)"),
        ("{\"t\":1,\"line\":\"pa\td1\",\"active\":true}", "p.jsonl:1: not valid JSON at column 18: control character in a string (a line break inside quotes?)"),
        (#"{"t":1,"line":"pad\x","active":true}"#, "p.jsonl:1: not valid JSON at column 20: bad escape '\\x'"),
        (#"{"t":1,"line":"pad\u00","active":true}"#, "p.jsonl:1: not valid JSON at column 23: bad \\u escape"),
        (#"{"t":1,"line":"\ud800","active":true}"#, "p.jsonl:1: expected a JSON object like {\"t\": 0.12, \"line\": \"full\", \"active\": true}"),
        (#"{"t":1,"line":"\ud83d\ude00","active":true}"#, "p.jsonl:1: unknown line '😀'; board 't' has full, pad0, pad1, zoom_é"),
        (#"{"t":1,"line":"pad1","active":true}}"#, "p.jsonl:1: not valid JSON at column 36: unexpected text after the end of the JSON value"),
        ("{", "p.jsonl:1: not valid JSON at column 2: expected a key in double quotes"),
        ("}", "p.jsonl:1: not valid JSON at column 1: unexpected character '}', expected a value"),
        (#"{"#, "p.jsonl:1: not valid JSON at column 2: expected a key in double quotes"),
        ("{\"x\":" + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + ",\"t\":1,\"line\":\"pad1\",\"active\":true}", "p.jsonl:1: not valid JSON at column 517: nested too deeply"),
        // Lines and time.
        (#"{"t":1,"line":"pad2","active":true}"#, "p.jsonl:1: unknown line 'pad2'; board 't' has full, pad0, pad1, zoom_é"),
        (#"{"t":1,"line":"PAD1","active":true}"#, "p.jsonl:1: unknown line 'PAD1'; board 't' has full, pad0, pad1, zoom_é"),
        (#"{"t":1,"line":"","active":true}"#, "p.jsonl:1: unknown line ''; board 't' has full, pad0, pad1, zoom_é"),
        (#"{"t":1,"line":" pad1","active":true}"#, "p.jsonl:1: unknown line ' pad1'; board 't' has full, pad0, pad1, zoom_é"),
        ("{\"t\":2,\"line\":\"pad1\",\"active\":true}\n# note\n{\"t\":1.5,\"line\":\"pad1\",\"active\":false}", "p.jsonl:3: time goes backwards: t 1.5 comes after t 2"),
        ("{\"t\":2,\"line\":\"pad1\",\"active\":true}\n\n{\"t\":2,\"line\":\"pad9\",\"active\":false}", "p.jsonl:3: unknown line 'pad9'; board 't' has full, pad0, pad1, zoom_é"),
    ]

    @Test("every shape's answer", arguments: cases)
    func pinned(text: String, expected: String) {
        let got = Self.outcome(text)
        #expect(got == expected, "\(text.debugDescription) → \(got.debugDescription)")
    }
}


/// The line reader that skips the decoder agrees with it on every line it reads, and leaves it
/// every line it does not: random lines of the writer's shape, numbers of every form and length,
/// then the same lines cut, doubled and garbled.
@Suite("Trace lines read from their bytes")
struct TraceLineScannerTests {
    static func scan(_ line: String) -> TraceLineScanner.Fields? {
        var line = line
        line.makeContiguousUTF8()
        return line.utf8.withContiguousStorageIfAvailable { TraceLineScanner.scan($0, 0, $0.count) }!
    }

    static func randomNumber(_ random: inout SplitMix64) -> String {
        func digits(_ count: Int) -> String {
            String((0..<count).map { _ in Character(String(random.next() % 10)) })
        }
        var text = random.next() % 8 == 0 ? "-" : ""
        let whole = Int(random.next() % 25)
        text += whole == 0 || random.next() % 3 == 0 ? "0" : String(1 + random.next() % 9) + digits(whole)
        if random.next() % 2 == 0 { text += "." + digits(1 + Int(random.next() % 25)) }
        if random.next() % 3 == 0 {
            text += ["e", "E"][Int(random.next() % 2)] + ["", "+", "-"][Int(random.next() % 3)] + String(random.next() % 40)
        }
        if random.next() % 50 == 0 { text = ["1e400", "1e-400", "4.9e-324", "2.2250738585072014e-308", "1.7976931348623157e308", "-0", "0.0"][Int(random.next() % 7)] }
        return text
    }

    static func randomLine(_ random: inout SplitMix64) -> String {
        let space = { (random: inout SplitMix64) -> String in [" ", "", "", "\t", "  ", "\r"][Int(random.next() % 6)] }
        let names = ["pad0", "pad1", "full", "zoom_é", "pad9", ""]
        var members = [
            "\"t\"" + space(&random) + ":" + space(&random) + randomNumber(&random),
            "\"line\"" + space(&random) + ":" + space(&random) + "\"" + names[Int(random.next() % 6)] + "\"",
            "\"active\"" + space(&random) + ":" + space(&random) + (random.next() % 2 == 0 ? "true" : "false"),
        ]
        for index in stride(from: 2, to: 0, by: -1) { members.swapAt(index, Int(random.next() % UInt64(index + 1))) }
        return space(&random) + "{" + members.joined(separator: space(&random) + "," + space(&random)) + "}" + space(&random)
    }

    static func garbled(_ line: String, _ random: inout SplitMix64) -> String {
        var bytes = Array(line.utf8)
        let pieces = Array(#"{}[]":,. -+eE0123456789tlinacvrusfx\"#.utf8)
        for _ in 0..<(1 + random.next() % 3) where !bytes.isEmpty {
            let at = Int(random.next() % UInt64(bytes.count))
            switch random.next() % 3 {
            case 0: bytes.remove(at: at)
            case 1: bytes.insert(pieces[Int(random.next() % UInt64(pieces.count))], at: at)
            default: bytes[at] = pieces[Int(random.next() % UInt64(pieces.count))]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test("agrees with the decoder on 30 000 lines, garbled or not")
    func agreesWithTheDecoder() {
        var random = SplitMix64(seed: 45)
        var read = 0
        for round in 0..<30_000 {
            var line = Self.randomLine(&random)
            if round % 2 == 1 { line = Self.garbled(line, &random) }
            guard let fields = Self.scan(line) else { continue }
            read += 1
            let name = line.utf8.withContiguousStorageIfAvailable { String(decoding: UnsafeBufferPointer(rebasing: $0[fields.name]), as: UTF8.self) }
            switch Trace.decodeLine(line) {
            case .failure(let refusal):
                Issue.record("read \(line.debugDescription), which the decoder refuses: \(refusal.message)")
            case .success(let decoded):
                #expect(decoded.t.bitPattern == fields.t.bitPattern && decoded.line == name && decoded.active == fields.active,
                        "\(line.debugDescription): \(decoded) by the decoder, \(fields.t) \(name ?? "") \(fields.active) read")
            }
        }
        // Most lines of the writer's shape are read without the decoder.
        #expect(read > 12_000, "\(read)")
    }

    @Test("a whole trace reads as the decoder reads each line")
    func wholeTraces() {
        var random = SplitMix64(seed: 4545)
        for _ in 0..<300 {
            var text = ""
            var expected: [Edge] = []
            var refusal: String?
            var last = -Double.infinity
            for number in 1...20 {
                var line = Self.randomLine(&random)
                if random.next() % 10 == 0 { line = Self.garbled(line, &random) }
                // A carriage return before the line feed joins two lines (pinned above).
                while line.hasSuffix("\r") { line.removeLast() }
                text += line + "\n"
                guard refusal == nil else { continue }
                switch Trace.decodeLine(line.trimmingWhitespace()) {
                case .failure(let why): refusal = "p.jsonl:\(number): \(why.message)"
                case .success(let fields):
                    guard fields.t.isFinite, fields.t >= 0, fields.t <= Instant.latestTraceSeconds, fields.t >= last,
                          let index = TraceParseTests.board.line(named: fields.line)
                    else { refusal = "p.jsonl:\(number):"; continue }
                    last = fields.t
                    expected.append(Edge(line: index, active: fields.active, time: .seconds(fields.t)))
                }
            }
            do {
                let trace = try Trace.parse(text, board: TraceParseTests.board, source: "p.jsonl")
                #expect(refusal == nil && trace.edges == expected, "\(text)")
            } catch {
                #expect(refusal.map { error.description.hasPrefix($0) } == true, "\(error) \(refusal ?? "accepted")")
            }
        }
    }
}
