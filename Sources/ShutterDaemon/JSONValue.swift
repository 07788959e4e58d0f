import ShutterCore

/// A parsed JSON value, as the API reads requests.
///
/// A small strict parser (RFC 8259) rather than Foundation's: it keeps `true` apart from `1`
/// (Foundation bridges both to NSNumber), limits nesting, and never traps on any input bytes.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    /// The number and its text as sent (echoed back unchanged in a reply's `id`).
    case number(Double, text: String)
    case string(String)
    case array([JSONValue])
    /// Members in the order sent; a repeated key is refused by the parser.
    case object([String: JSONValue])

    /// The value as JSON text.
    public var text: String {
        switch self {
        case .null: "null"
        case .bool(let value): value ? "true" : "false"
        case .number(_, let text): text
        case .string(let string): JSONLine.quoted(string)
        case .array(let items): "[" + items.map(\.text).joined(separator: ",") + "]"
        case .object(let members):
            "{" + members.keys.sorted().map { JSONLine.quoted($0) + ":" + members[$0]!.text }.joined(separator: ",") + "}"
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

    /// Parses one JSON value from `bytes` (surrounding white space allowed).
    public static func parse<Bytes: Collection<UInt8>>(_ bytes: Bytes) throws(SyntaxError) -> JSONValue {
        var parser = Parser(bytes: Array(bytes))
        parser.skipSpace()
        let value = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.index == parser.bytes.count else { throw parser.fail("unexpected text after the value") }
        return value
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0
        static let maximumDepth = 32

        func fail(_ message: String) -> SyntaxError { SyntaxError(offset: index, message: message) }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipSpace() {
            while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
        }

        mutating func literal(_ word: String, _ value: JSONValue) throws(SyntaxError) -> JSONValue {
            for byte in word.utf8 {
                guard current == byte else { throw fail("expected '\(word)'") }
                index += 1
            }
            return value
        }

        mutating func value(depth: Int) throws(SyntaxError) -> JSONValue {
            guard depth < Self.maximumDepth else { throw fail("nested more than \(Self.maximumDepth) deep") }
            guard let byte = current else { throw fail("unexpected end of the line") }
            switch byte {
            case UInt8(ascii: "{"): return try object(depth: depth)
            case UInt8(ascii: "["): return try array(depth: depth)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): return try literal("true", .bool(true))
            case UInt8(ascii: "f"): return try literal("false", .bool(false))
            case UInt8(ascii: "n"): return try literal("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
            default: throw fail("unexpected character")
            }
        }

        mutating func object(depth: Int) throws(SyntaxError) -> JSONValue {
            index += 1
            var members: [String: JSONValue] = [:]
            skipSpace()
            if current == UInt8(ascii: "}") { index += 1; return .object(members) }
            while true {
                skipSpace()
                guard current == UInt8(ascii: "\"") else { throw fail("expected a member name in quotes") }
                let start = index
                let key = try string()
                guard members[key] == nil else { index = start; throw fail("'\(key)' is given twice") }
                skipSpace()
                guard current == UInt8(ascii: ":") else { throw fail("expected ':'") }
                index += 1
                skipSpace()
                members[key] = try value(depth: depth + 1)
                skipSpace()
                switch current {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "}"): index += 1; return .object(members)
                default: throw fail("expected ',' or '}'")
                }
            }
        }

        mutating func array(depth: Int) throws(SyntaxError) -> JSONValue {
            index += 1
            var items: [JSONValue] = []
            skipSpace()
            if current == UInt8(ascii: "]") { index += 1; return .array(items) }
            while true {
                skipSpace()
                items.append(try value(depth: depth + 1))
                skipSpace()
                switch current {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "]"): index += 1; return .array(items)
                default: throw fail("expected ',' or ']'")
                }
            }
        }

        mutating func string() throws(SyntaxError) -> String {
            index += 1
            var scalars = String.UnicodeScalarView()
            var run: [UInt8] = []
            func flush() throws(SyntaxError) {
                guard !run.isEmpty else { return }
                guard let text = String(validating: run, as: UTF8.self) else { throw fail("the string is not valid UTF-8") }
                scalars.append(contentsOf: text.unicodeScalars)
                run.removeAll(keepingCapacity: true)
            }
            while true {
                guard let byte = current else { throw fail("the string never ends") }
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    try flush()
                    return String(scalars)
                case UInt8(ascii: "\\"):
                    try flush()
                    guard let escape = current else { throw fail("the string never ends") }
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""): scalars.append("\"")
                    case UInt8(ascii: "\\"): scalars.append("\\")
                    case UInt8(ascii: "/"): scalars.append("/")
                    case UInt8(ascii: "b"): scalars.append("\u{8}")
                    case UInt8(ascii: "f"): scalars.append("\u{c}")
                    case UInt8(ascii: "n"): scalars.append("\n")
                    case UInt8(ascii: "r"): scalars.append("\r")
                    case UInt8(ascii: "t"): scalars.append("\t")
                    case UInt8(ascii: "u"):
                        var code = try hex4()
                        if (0xD800..<0xDC00).contains(code) {
                            guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                                throw fail("a lone surrogate in \\u escape")
                            }
                            index += 2
                            let low = try hex4()
                            guard (0xDC00..<0xE000).contains(low) else { throw fail("a lone surrogate in \\u escape") }
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        }
                        guard let scalar = Unicode.Scalar(code) else { throw fail("a lone surrogate in \\u escape") }
                        scalars.append(scalar)
                    default:
                        throw fail("unknown escape")
                    }
                case 0..<0x20:
                    throw fail("a control character inside a string")
                default:
                    run.append(byte)
                }
            }
        }

        mutating func hex4() throws(SyntaxError) -> UInt32 {
            var code: UInt32 = 0
            for _ in 0..<4 {
                guard let byte = current, let digit = Self.hexDigit(byte) else { throw fail("expected 4 hex digits") }
                code = code << 4 | digit
                index += 1
            }
            return code
        }

        static func hexDigit(_ byte: UInt8) -> UInt32? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
            default: nil
            }
        }

        mutating func number() throws(SyntaxError) -> JSONValue {
            let start = index
            if current == UInt8(ascii: "-") { index += 1 }
            func digits() -> Int {
                let from = index
                while let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { index += 1 }
                return index - from
            }
            let integer = index
            guard digits() > 0 else { throw fail("expected a digit") }
            if bytes[integer] == UInt8(ascii: "0"), index - integer > 1 { throw fail("a number must not start with 0") }
            if current == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { throw fail("expected a digit after '.'") }
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { throw fail("expected a digit in the exponent") }
            }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            guard let number = Double(text), number.isFinite else { throw fail("the number is out of range") }
            return .number(number, text: text)
        }
    }
}
