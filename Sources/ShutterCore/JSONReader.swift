/// The one reader of JSON text (RFC 8259) in shutter: requests from the API, HTTP and MQTT are
/// read into ``JSONValue``s through it, and board files and traces are checked by it
/// (``JSONSyntax``) before `JSONDecoder` reads them into their types.
///
/// It finds what is wrong and where, as a ``Problem`` at a byte offset; each of its two users
/// words that for its own reader: a client gets "not valid JSON at byte 7: …", a person editing a
/// board gets a line, a column and a sentence with a hint.
struct JSONReader {
    /// What is wrong with a text, at ``Failure/offset``.
    enum Problem: Hashable, Sendable {
        /// Nested deeper than the reader's limit.
        case tooDeep
        /// The text ends where a value should start.
        case endInsteadOfValue
        /// A byte that starts no value.
        case unexpectedCharacter(UInt8)
        /// `word` (`true`, `false`, `null`) starting at `start`, broken off at the offset.
        case literal(String, start: Int)
        /// A member that does not start with a quoted key.
        case expectedKey
        /// A comma right before `closing` (`}` or `]`).
        case trailingComma(closing: UInt8)
        /// A key given twice in one object (only when building values).
        case repeatedKey(String)
        case expectedColon
        /// Neither `,` nor `closing` after a member or element; `atEnd` when the text ended there.
        case expectedSeparator(closing: UInt8, atEnd: Bool)
        case unterminatedString
        /// A backslash followed by `byte`, which escapes nothing; the offset is `byte`'s.
        case unknownEscape(UInt8)
        /// A `\u` escape whose four digits are not all hex; the offset is the first that is not.
        case badHexDigit
        /// A `\u` escape of half a surrogate pair (only when building values).
        case loneSurrogate
        /// A byte below 0x20 inside a string; the offset is its own.
        case controlCharacter
        /// A string that is not UTF-8 (only when building values).
        case invalidUTF8
        /// A minus sign without digits after it.
        case expectedDigit
        case expectedFractionDigit
        case expectedExponentDigit
        /// `01` (only when ``JSONReader/refusesLeadingZeros``).
        case leadingZero
        /// A number starting at `start` whose magnitude is beyond a Double; the offset is its end.
        case numberOutOfRange(String, start: Int)
        /// More than white space after the one value.
        case textAfterValue
    }

    /// A key or an index on the way from the top of the text to the value that failed.
    enum PathPart: Hashable, Sendable {
        /// The key's bytes between its quotes, as written (escapes unread).
        case key(Range<Int>)
        case index(Int)
    }

    /// Where and what: the byte offset of the problem, and the keys and indices leading to it.
    struct Failure: Error, Hashable, Sendable {
        var offset: Int
        var problem: Problem
        /// Innermost part first: filled in as the failure leaves each object and array.
        var reversedPath: [PathPart] = []
    }

    let bytes: [UInt8]
    private(set) var index = 0
    /// How deep arrays and objects may nest: a bound against hostile input for requests, and
    /// against the stack for any text (the reader recurses once a level).
    let maximumDepth: Int
    /// Whether values are built (strings decoded, their UTF-8 and surrogate pairs checked, a key
    /// given twice refused) or the syntax only is checked, each value read as `.null`.
    let buildsValues: Bool
    /// Whether `01` is refused as a number with a leading zero, or read as the grammar reads it:
    /// the number `0`, followed by a digit that is not JSON where it stands.
    let refusesLeadingZeros: Bool

    init(bytes: [UInt8], maximumDepth: Int, buildsValues: Bool, refusesLeadingZeros: Bool) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
        self.buildsValues = buildsValues
        self.refusesLeadingZeros = refusesLeadingZeros
    }

    /// Reads the one value of the whole text, white space allowed around it.
    mutating func document() throws(Failure) -> JSONValue {
        skipSpace()
        let value = try value(depth: 0)
        skipSpace()
        guard index == bytes.count else { throw fail(.textAfterValue) }
        return value
    }

    private func fail(_ problem: Problem) -> Failure { Failure(offset: index, problem: problem) }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipSpace() {
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    private mutating func literal(_ word: String, _ value: JSONValue) throws(Failure) -> JSONValue {
        let start = index
        for byte in word.utf8 {
            guard current == byte else { throw fail(.literal(word, start: start)) }
            index += 1
        }
        return value
    }

    private mutating func value(depth: Int) throws(Failure) -> JSONValue {
        guard depth < maximumDepth else { throw fail(.tooDeep) }
        guard let byte = current else { throw fail(.endInsteadOfValue) }
        switch byte {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return try string().map(JSONValue.string) ?? .null
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw fail(.unexpectedCharacter(byte))
        }
    }

    private mutating func object(depth: Int) throws(Failure) -> JSONValue {
        index += 1
        var members: [String: JSONValue] = [:]
        skipSpace()
        if current == UInt8(ascii: "}") { index += 1; return .object(members) }
        while true {
            skipSpace()
            guard current == UInt8(ascii: "\"") else {
                throw fail(current == UInt8(ascii: "}") ? .trailingComma(closing: UInt8(ascii: "}")) : .expectedKey)
            }
            let start = index
            let key = try string()
            let name = start + 1..<index - 1
            if let key, members[key] != nil {
                index = start
                throw fail(.repeatedKey(key))
            }
            skipSpace()
            guard current == UInt8(ascii: ":") else { throw fail(.expectedColon) }
            index += 1
            skipSpace()
            do throws(Failure) {
                let member = try value(depth: depth + 1)
                if let key { members[key] = member }
            } catch {
                var failure = error
                failure.reversedPath.append(.key(name))
                throw failure
            }
            skipSpace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return .object(members)
            default: throw fail(.expectedSeparator(closing: UInt8(ascii: "}"), atEnd: current == nil))
            }
        }
    }

    private mutating func array(depth: Int) throws(Failure) -> JSONValue {
        index += 1
        var items: [JSONValue] = []
        skipSpace()
        if current == UInt8(ascii: "]") { index += 1; return .array(items) }
        var element = 0
        while true {
            skipSpace()
            // Only after a comma: the first element is never missing (`[]` ended above).
            if current == UInt8(ascii: "]") { throw fail(.trailingComma(closing: UInt8(ascii: "]"))) }
            do throws(Failure) {
                let item = try value(depth: depth + 1)
                if buildsValues { items.append(item) }
            } catch {
                var failure = error
                failure.reversedPath.append(.index(element))
                throw failure
            }
            element += 1
            skipSpace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return .array(items)
            default: throw fail(.expectedSeparator(closing: UInt8(ascii: "]"), atEnd: current == nil))
            }
        }
    }

    /// The string at the opening quote, decoded when building values; nil when only checking.
    private mutating func string() throws(Failure) -> String? {
        index += 1
        var scalars = String.UnicodeScalarView()
        // Bytes since the last escape, checked as UTF-8 at the next escape or the closing quote.
        var run: [UInt8] = []
        func flush() throws(Failure) {
            guard !run.isEmpty else { return }
            guard let text = String(validating: run, as: UTF8.self) else { throw fail(.invalidUTF8) }
            scalars.append(contentsOf: text.unicodeScalars)
            run.removeAll(keepingCapacity: true)
        }
        while true {
            guard let byte = current else { throw fail(.unterminatedString) }
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard buildsValues else { return nil }
                try flush()
                return String(scalars)
            case UInt8(ascii: "\\"):
                index += 1
                if buildsValues { try flush() }
                guard let escape = current else { throw fail(.unterminatedString) }
                let unescaped: Unicode.Scalar
                switch escape {
                case UInt8(ascii: "\""): unescaped = "\""
                case UInt8(ascii: "\\"): unescaped = "\\"
                case UInt8(ascii: "/"): unescaped = "/"
                case UInt8(ascii: "b"): unescaped = "\u{8}"
                case UInt8(ascii: "f"): unescaped = "\u{c}"
                case UInt8(ascii: "n"): unescaped = "\n"
                case UInt8(ascii: "r"): unescaped = "\r"
                case UInt8(ascii: "t"): unescaped = "\t"
                case UInt8(ascii: "u"):
                    index += 1
                    let code = try hex4()
                    // The syntax allows any four hex digits; a value needs a whole scalar.
                    guard buildsValues else { continue }
                    unescaped = try scalar(startingWith: code)
                    scalars.append(unescaped)
                    continue
                default:
                    throw fail(.unknownEscape(escape))
                }
                index += 1
                if buildsValues { scalars.append(unescaped) }
            case 0..<0x20:
                throw fail(.controlCharacter)
            default:
                index += 1
                if buildsValues { run.append(byte) }
            }
        }
    }

    /// The scalar a `\u` escape of `code` stands for, with the low half of a surrogate pair when
    /// `code` is the high half.
    private mutating func scalar(startingWith code: UInt32) throws(Failure) -> Unicode.Scalar {
        var code = code
        if (0xD800..<0xDC00).contains(code) {
            guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                throw fail(.loneSurrogate)
            }
            index += 2
            let low = try hex4()
            guard (0xDC00..<0xE000).contains(low) else { throw fail(.loneSurrogate) }
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
        }
        guard let scalar = Unicode.Scalar(code) else { throw fail(.loneSurrogate) }
        return scalar
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        var code: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = current, let digit = Self.hexDigit(byte) else { throw fail(.badHexDigit) }
            code = code << 4 | digit
            index += 1
        }
        return code
    }

    private static func hexDigit(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    private mutating func number() throws(Failure) -> JSONValue {
        let start = index
        func digits() -> Int {
            let from = index
            while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { index += 1 }
            return index - from
        }
        if current == UInt8(ascii: "-") { index += 1 }
        if current == UInt8(ascii: "0") {
            index += 1
            if refusesLeadingZeros, digits() > 0 { throw fail(.leadingZero) }
        } else if digits() == 0 {
            throw fail(.expectedDigit)
        }
        if current == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { throw fail(.expectedFractionDigit) }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { throw fail(.expectedExponentDigit) }
        }
        // RFC 8259 lets a reader limit the range: a Double's, as JSONDecoder's, which refuses a
        // larger number without saying why.
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let number = Double(text), number.isFinite else { throw fail(.numberOutOfRange(text, start: start)) }
        return buildsValues ? .number(number, text: text) : .null
    }
}
