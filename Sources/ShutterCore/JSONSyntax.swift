/// Finds where a JSON text stops being valid, with a line and column.
///
/// Foundation's decoder only says "The given data was not valid JSON"; a person
/// editing a board file or a trace needs to know where. This checks syntax only
/// (RFC 8259), and finds numbers too large for a Double, which Foundation refuses as
/// invalid JSON without saying why.
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

    /// The first syntax error in `text`, or `nil` when it is valid JSON.
    public static func firstError(in text: String) -> Failure? {
        var scanner = Scanner(bytes: Array(text.utf8))
        do throws(Failure) {
            scanner.skipSpace()
            try scanner.value(depth: 0)
            scanner.skipSpace()
            if scanner.index < scanner.bytes.count { throw scanner.failure("unexpected text after the end of the JSON value") }
            return nil
        } catch {
            return error
        }
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0
        /// The keys and indices leading to the value being read.
        var path: [String] = []

        init(bytes: [UInt8]) { self.bytes = bytes }

        func failure(_ message: String) -> Failure {
            var line = 1, column = 1
            for byte in bytes[..<min(index, bytes.count)] {
                if byte == UInt8(ascii: "\n") { line += 1; column = 1 } else if byte & 0xC0 != 0x80 { column += 1 }
            }
            var rendered = ""
            for part in path { rendered += part.hasPrefix("[") || rendered.isEmpty ? part : "." + part }
            return Failure(line: line, column: column, message: message, path: rendered)
        }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipSpace() {
            while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
        }

        mutating func expect(_ literal: String) throws(Failure) {
            let start = index
            for byte in literal.utf8 {
                guard current == byte else {
                    index = start   // point at the word, not into it
                    throw failure("expected '\(literal)'")
                }
                index += 1
            }
        }

        mutating func value(depth: Int) throws(Failure) {
            guard depth < 512 else { throw failure("nested too deeply") }
            guard let byte = current else { throw failure("unexpected end of text, expected a value") }
            switch byte {
            case UInt8(ascii: "{"): try object(depth: depth)
            case UInt8(ascii: "["): try array(depth: depth)
            case UInt8(ascii: "\""): try string()
            case UInt8(ascii: "t"): try expect("true")
            case UInt8(ascii: "f"): try expect("false")
            case UInt8(ascii: "n"): try expect("null")
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
            default:
                throw failure("unexpected character '\(Character(Unicode.Scalar(byte)))', expected a value")
            }
        }

        mutating func object(depth: Int) throws(Failure) {
            index += 1
            skipSpace()
            if current == UInt8(ascii: "}") { index += 1; return }
            while true {
                skipSpace()
                guard current == UInt8(ascii: "\"") else {
                    throw failure(current == UInt8(ascii: "}") ? "trailing comma before '}'" : "expected a key in double quotes")
                }
                let keyStart = index + 1
                try string()
                let key = String(decoding: bytes[keyStart..<(index - 1)], as: UTF8.self)
                skipSpace()
                guard current == UInt8(ascii: ":") else { throw failure("expected ':' after the key") }
                index += 1
                skipSpace()
                path.append(key)
                try value(depth: depth + 1)
                path.removeLast()
                skipSpace()
                switch current {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "}"): index += 1; return
                case nil: throw failure("unexpected end of text, expected ',' or '}'")
                default: throw failure("expected ',' or '}' (is a comma missing?)")
                }
            }
        }

        mutating func array(depth: Int) throws(Failure) {
            index += 1
            skipSpace()
            if current == UInt8(ascii: "]") { index += 1; return }
            var element = 0
            while true {
                skipSpace()
                if current == UInt8(ascii: "]") { throw failure("trailing comma before ']'") }
                path.append("[\(element)]")
                try value(depth: depth + 1)
                path.removeLast()
                element += 1
                skipSpace()
                switch current {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "]"): index += 1; return
                case nil: throw failure("unexpected end of text, expected ',' or ']'")
                default: throw failure("expected ',' or ']' (is a comma missing?)")
                }
            }
        }

        mutating func string() throws(Failure) {
            index += 1
            while let byte = current {
                switch byte {
                case UInt8(ascii: "\""): index += 1; return
                case UInt8(ascii: "\\"):
                    index += 1
                    guard let escaped = current else { break }
                    if escaped == UInt8(ascii: "u") {
                        index += 1
                        for _ in 0..<4 {
                            guard let hex = current, (hex >= 0x30 && hex <= 0x39) || (hex | 0x20 >= 0x61 && hex | 0x20 <= 0x66)
                            else { throw failure("bad \\u escape") }
                            index += 1
                        }
                    } else if "\"\\/bfnrt".utf8.contains(escaped) {
                        index += 1
                    } else {
                        throw failure("bad escape '\\\(Character(Unicode.Scalar(escaped)))'")
                    }
                case 0..<0x20: throw failure("control character in a string (a line break inside quotes?)")
                default: index += 1
                }
            }
            throw failure("unterminated string")
        }

        mutating func number() throws(Failure) {
            let start = index
            try numberSyntax()
            // RFC 8259 lets a reader limit the range; Foundation refuses a number a Double cannot
            // hold with "not valid JSON", so find it here and name it.
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            if let value = Double(text), !value.isFinite {
                index = start
                var failure = failure("\(text) is too large for a number (a number's magnitude must be below 1.8e308)")
                failure.isNumberOutOfRange = true
                throw failure
            }
        }

        mutating func numberSyntax() throws(Failure) {
            func digits() -> Int {
                let start = index
                while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { index += 1 }
                return index - start
            }
            if current == UInt8(ascii: "-") { index += 1 }
            if current == UInt8(ascii: "0") { index += 1 } else if digits() == 0 { throw failure("expected a digit") }
            if current == UInt8(ascii: ".") {
                index += 1
                if digits() == 0 { throw failure("expected a digit after '.'") }
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                if digits() == 0 { throw failure("expected a digit in the exponent") }
            }
        }
    }
}
