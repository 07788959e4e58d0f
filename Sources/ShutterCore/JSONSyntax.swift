/// Finds where a JSON text stops being valid, with a line and column.
///
/// Foundation's decoder only says "The given data was not valid JSON"; a person
/// editing a board file or a trace needs to know where. This checks syntax only
/// (RFC 8259) through ``JSONReader``, and finds numbers too large for a Double, which
/// Foundation refuses as invalid JSON without saying why.
public enum JSONSyntax {
    /// A syntax error: where and what.
    public struct Failure: Error, Hashable, Sendable {
        public var line: Int
        public var column: Int
        public var message: String
        /// The text is valid JSON, but a number in it is too large for a Double (`1e400`): say
        /// so, not "not valid JSON". `message` then names the number, not its place.
        public var isNumberOutOfRange = false
        /// Where the failure is, the way a board names a field (`gestures.glitchFilterMs`, `controls[0].range[1]`).
        public var path = ""
    }

    /// How deep a board or a trace line may nest: only a bound on the reader's recursion.
    static let maximumDepth = 512

    /// The first syntax error in `text`, or `nil` when it is valid JSON.
    public static func firstError(in text: String) -> Failure? {
        var reader = JSONReader(bytes: Array(text.utf8), maximumDepth: maximumDepth, buildsValues: false, refusesLeadingZeros: false)
        do throws(JSONReader.Failure) {
            _ = try reader.document()
            return nil
        } catch {
            return Failure(error, in: reader.bytes)
        }
    }
}

extension JSONSyntax.Failure {
    /// A reader's failure in the words of a person editing the file: its line and column
    /// (counted in characters), and a hint at the likely slip.
    init(_ failure: JSONReader.Failure, in bytes: [UInt8]) {
        var offset = failure.offset
        var isNumberOutOfRange = false
        let message: String
        switch failure.problem {
        case .tooDeep: message = "nested too deeply"
        case .endInsteadOfValue: message = "unexpected end of text, expected a value"
        case .unexpectedCharacter(let byte): message = "unexpected character '\(Self.character(byte))', expected a value"
        case .literal(let word, let start):
            offset = start   // the word, not the byte inside it
            message = "expected '\(word)'"
        case .expectedKey: message = "expected a key in double quotes"
        case .trailingComma(let closing): message = "trailing comma before '\(Self.character(closing))'"
        case .repeatedKey(let key): message = "'\(key)' is given twice"
        case .expectedColon: message = "expected ':' after the key"
        case .expectedSeparator(let closing, let atEnd):
            message = atEnd ? "unexpected end of text, expected ',' or '\(Self.character(closing))'"
                : "expected ',' or '\(Self.character(closing))' (is a comma missing?)"
        case .unterminatedString: message = "unterminated string"
        case .unknownEscape(let byte): message = "bad escape '\\\(Self.character(byte))'"
        case .badHexDigit: message = "bad \\u escape"
        case .loneSurrogate: message = "a lone surrogate in \\u escape"
        case .controlCharacter: message = "control character in a string (a line break inside quotes?)"
        case .invalidUTF8: message = "the string is not valid UTF-8"
        case .expectedDigit: message = "expected a digit"
        case .expectedFractionDigit: message = "expected a digit after '.'"
        case .expectedExponentDigit: message = "expected a digit in the exponent"
        case .leadingZero: message = "a number must not start with 0"
        case .numberOutOfRange(let text, let start):
            offset = start
            isNumberOutOfRange = true
            message = "\(text) is too large for a number (a number's magnitude must be below 1.8e308)"
        case .textAfterValue: message = "unexpected text after the end of the JSON value"
        }
        var line = 1, column = 1
        for byte in bytes[..<min(offset, bytes.count)] {
            if byte == UInt8(ascii: "\n") { line += 1; column = 1 } else if byte & 0xC0 != 0x80 { column += 1 }
        }
        var rendered = ""
        for part in failure.reversedPath.reversed() {
            let name = switch part {
            case .key(let range): String(decoding: bytes[range], as: UTF8.self)
            case .index(let index): "[\(index)]"
            }
            rendered += name.hasPrefix("[") || rendered.isEmpty ? name : "." + name
        }
        self.init(line: line, column: column, message: message, isNumberOutOfRange: isNumberOutOfRange, path: rendered)
    }

    private static func character(_ byte: UInt8) -> Character { Character(Unicode.Scalar(byte)) }
}
