/// A parsed JSON value, as the API reads requests.
///
/// Read by ``JSONReader`` rather than Foundation: it keeps `true` apart from `1` (Foundation
/// bridges both to NSNumber), limits nesting, and never traps on any input bytes.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    /// The number and its text as sent (echoed back unchanged in a reply's `id`).
    case number(Double, text: String)
    case string(String)
    case array([JSONValue])
    /// Members in the order sent; a repeated key is refused by the parser.
    case object([String: JSONValue])

    /// The value as JSON text, its strings quoted as ``JSONLine`` quotes them.
    public var text: String {
        var out: [UInt8] = []
        append(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    private func append(to out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let value): out.append(contentsOf: (value ? "true" : "false").utf8)
        case .number(_, let text): out.append(contentsOf: text.utf8)
        case .string(let string): JSONLine.appendQuoted(string, to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (offset, item) in items.enumerated() {
                if offset > 0 { out.append(UInt8(ascii: ",")) }
                item.append(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (offset, key) in members.keys.sorted().enumerated() {
                if offset > 0 { out.append(UInt8(ascii: ",")) }
                JSONLine.appendQuoted(key, to: &out)
                out.append(UInt8(ascii: ":"))
                members[key]?.append(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// What kind of value this is, for error messages ("a string", "a number").
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "true or false"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// Why a text is not JSON, with the byte offset.
    public struct SyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
        public var offset: Int
        public var message: String
        public var description: String { "not valid JSON at byte \(offset + 1): \(message)" }
    }

    /// How deep a request's arrays and objects may nest: far more than any command needs, and a
    /// bound on the reader's recursion for whatever a client sends.
    static let maximumDepth = 32

    /// Parses one JSON value from `bytes` (surrounding white space allowed).
    public static func parse<Bytes: Collection<UInt8>>(_ bytes: Bytes) throws(SyntaxError) -> JSONValue {
        var reader = JSONReader(bytes: Array(bytes), maximumDepth: maximumDepth, buildsValues: true, refusesLeadingZeros: true)
        do throws(JSONReader.Failure) {
            return try reader.document()
        } catch {
            throw SyntaxError(error)
        }
    }
}

extension JSONValue.SyntaxError {
    /// A reader's failure in the words the API's clients get. A control character and an unknown
    /// escape are reported at the byte after them, the offset the API's replies give for them.
    init(_ failure: JSONReader.Failure) {
        var offset = failure.offset
        let message: String
        switch failure.problem {
        case .tooDeep: message = "nested more than \(JSONValue.maximumDepth) deep"
        case .endInsteadOfValue: message = "unexpected end of the line"
        case .unexpectedCharacter: message = "unexpected character"
        // Where a value or a key should be, as any other byte there.
        case .trailingComma(let closing):
            message = closing == UInt8(ascii: "]") ? "unexpected character" : "expected a member name in quotes"
        case .literal(let word, _): message = "expected '\(word)'"
        case .expectedKey: message = "expected a member name in quotes"
        case .repeatedKey(let key): message = "'\(key)' is given twice"
        case .expectedColon: message = "expected ':'"
        case .expectedSeparator(let closing, _): message = "expected ',' or '\(Character(Unicode.Scalar(closing)))'"
        case .unterminatedString: message = "the string never ends"
        case .unknownEscape:
            offset += 1
            message = "unknown escape"
        case .badHexDigit: message = "expected 4 hex digits"
        case .loneSurrogate: message = "a lone surrogate in \\u escape"
        case .controlCharacter:
            offset += 1
            message = "a control character inside a string"
        case .invalidUTF8: message = "the string is not valid UTF-8"
        case .expectedDigit: message = "expected a digit"
        case .expectedFractionDigit: message = "expected a digit after '.'"
        case .expectedExponentDigit: message = "expected a digit in the exponent"
        case .leadingZero: message = "a number must not start with 0"
        case .numberOutOfRange: message = "the number is out of range"
        case .textAfterValue: message = "unexpected text after the value"
        }
        self.init(offset: offset, message: message)
    }
}
