import Testing
@testable import ShutterCore

/// One reader serves two kinds of reader: the API's clients (``JSONValue/parse(_:)``: a byte
/// offset) and a person editing a board or a trace (``JSONSyntax/firstError(in:)``: a line, a
/// column and a hint). Each keeps its own words and offsets for the same problem.
@Suite("JSON reader")
struct JSONReaderTests {
    @Test("each problem in the API's words and in a board's", arguments: [
        ("", "0: unexpected end of the line", "1:1 unexpected end of text, expected a value"),
        ("  ", "2: unexpected end of the line", "1:3 unexpected end of text, expected a value"),
        ("{\"a\":tru}", "8: expected 'true'", "1:6 expected 'true'"),
        ("[1,]", "3: unexpected character", "1:4 trailing comma before ']'"),
        ("{\"a\":1,}", "7: expected a member name in quotes", "1:8 trailing comma before '}'"),
        ("{\"a\" 1}", "5: expected ':'", "1:6 expected ':' after the key"),
        ("[1 2]", "3: expected ',' or ']'", "1:4 expected ',' or ']' (is a comma missing?)"),
        ("[1", "2: expected ',' or ']'", "1:3 unexpected end of text, expected ',' or ']'"),
        ("{\"a\":1", "6: expected ',' or '}'", "1:7 unexpected end of text, expected ',' or '}'"),
        ("\"ab\\qc\"", "5: unknown escape", "1:5 bad escape '\\q'"),
        ("\"a\u{01}b\"", "3: a control character inside a string", "1:3 control character in a string (a line break inside quotes?)"),
        ("\"\\u12g4\"", "5: expected 4 hex digits", "1:6 bad \\u escape"),
        ("\"\\ud800\"", "7: a lone surrogate in \\u escape", "nil"),
        ("\"\\ud800\\u0041\"", "13: a lone surrogate in \\u escape", "nil"),
        ("\"\\udc00\"", "7: a lone surrogate in \\u escape", "nil"),
        ("01", "2: a number must not start with 0", "1:2 unexpected text after the end of the JSON value"),
        ("-", "1: expected a digit", "1:2 expected a digit"),
        ("1.", "2: expected a digit after '.'", "1:3 expected a digit after '.'"),
        ("1e", "2: expected a digit in the exponent", "1:3 expected a digit in the exponent"),
        ("1e400", "5: the number is out of range", "1:1 1e400 is too large for a number (a number's magnitude must be below 1.8e308) []"),
        ("[-1e400]", "7: the number is out of range", "1:2 -1e400 is too large for a number (a number's magnitude must be below 1.8e308) [[0]]"),
        ("{\"a\":1,\"a\":2}", "7: 'a' is given twice", "nil"),
        ("{} x", "3: unexpected text after the value", "1:4 unexpected text after the end of the JSON value"),
        ("{'a':1}", "1: expected a member name in quotes", "1:2 expected a key in double quotes"),
        ("[,]", "1: unexpected character", "1:2 unexpected character ',', expected a value"),
        ("nul", "3: expected 'null'", "1:1 expected 'null'"),
        ("\"never", "6: the string never ends", "1:7 unterminated string"),
        ("\"x\\", "3: the string never ends", "1:4 unterminated string"),
        ("{\"a\":{\"b\":[0,{\"c\":2e308}]}}", "23: the number is out of range", "1:19 2e308 is too large for a number (a number's magnitude must be below 1.8e308) [a.b[1].c]"),
    ] as [(String, String, String)])
    func problem(text: String, request: String, document: String) {
        var got = "nil"
        do throws(JSONValue.SyntaxError) {
            _ = try JSONValue.parse(Array(text.utf8))
        } catch {
            got = "\(error.offset): \(error.message)"
        }
        #expect(got == request)
        let failure = JSONSyntax.firstError(in: text)
        let shown = failure.map { "\($0.line):\($0.column) \($0.message)" + ($0.isNumberOutOfRange ? " [\($0.path)]" : "") }
        #expect((shown ?? "nil") == document)
    }

    @Test("a string that is not UTF-8 is refused where it ends")
    func invalidUTF8() {
        #expect(throws: JSONValue.SyntaxError(offset: 4, message: "the string is not valid UTF-8")) {
            try JSONValue.parse([UInt8(ascii: "\""), 0x61, 0xFF, UInt8(ascii: "\"")])
        }
    }

    @Test("nesting is bounded: 32 deep for a request, 512 for a document")
    func depth() {
        #expect(throws: JSONValue.SyntaxError(offset: 32, message: "nested more than 32 deep")) {
            try JSONValue.parse(Array(String(repeating: "[", count: 33).utf8))
        }
        #expect((try? JSONValue.parse(Array((String(repeating: "[", count: 32) + String(repeating: "]", count: 32)).utf8))) != nil)
        #expect(JSONSyntax.firstError(in: String(repeating: "[", count: 513))?.message == "nested too deeply")
        #expect(JSONSyntax.firstError(in: String(repeating: "[", count: 512) + String(repeating: "]", count: 512)) == nil)
    }

    @Test("values read back as the text they were, strings quoted as JSON lines quote them")
    func text() throws {
        let value = try JSONValue.parse(Array(#"{"b": [1.50, true, null], "a": "x\u0001\"\\y\u00e9"}"#.utf8))
        #expect(value.text == #"{"a":"x\u0001\"\\yé","b":[1.50,true,null]}"#)
        #expect(JSONValue.string("a\nb").text == JSONLine.quoted("a\nb"))
    }
}
