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

