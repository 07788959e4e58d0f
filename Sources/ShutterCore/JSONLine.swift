/// Builds one JSON object on one line, keys in the order they are added.
///
/// Events and traces are read by people as well as programs, so `"event"` and
/// `"t"` come first, and numbers print the same way on every run (replay output
/// is compared byte for byte). Not a general JSON encoder: values are strings,
/// numbers, booleans and nested lines.
public struct JSONLine: Sendable, CustomStringConvertible {
    /// The line so far, as UTF-8, without its closing brace. Bytes rather than a `String`: every
    /// event reaches its subscribers through one of these, and a `String`'s `+=` costs a few
    /// hundred instructions of checks each time, which the press's path paid forty times a line.
    private var bytes: [UInt8] = [UInt8(ascii: "{")]
    private var empty = true
    /// An event line's members as text, in order (strings unquoted, everything else as written),
    /// for hooks to fill into their templates without reading the line back; nil for other lines.
    public private(set) var members: [(key: String, text: String)]?

    /// Room for a typical event line, so building one grows its storage once at most.
    private static let typicalLength = 160

    public init() {
        bytes.reserveCapacity(Self.typicalLength)
    }

    /// An event line: `{"event": name, "t": seconds`, which keeps its ``members`` unless told not
    /// to (a stream of lines that only ever go out as JSON).
    public init(event name: String, at time: Instant, keepingMembers: Bool = true) {
        self.init()
        if keepingMembers {
            members = []
            members?.reserveCapacity(8)
        }
        add("event", name)
        add("t", time)
    }

    /// Appends one member: its JSON, and for an event line its text (the string itself for a string).
    private mutating func append(_ key: String, json: String, text plain: String? = nil) {
        appendKey(key)
        JSONLine.appendUTF8(json, to: &bytes)
        members?.append((key, plain ?? json))
    }

    /// Appends the separator and `"key": `.
    private mutating func appendKey(_ key: String) {
        if !empty {
            bytes.append(UInt8(ascii: ","))
            bytes.append(UInt8(ascii: " "))
        }
        empty = false
        JSONLine.appendQuoted(key, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        bytes.append(UInt8(ascii: " "))
    }

    public mutating func add(_ name: String, _ value: String) {
        // Quoted straight into the line: every event has a few strings, and each a string of
        // its own cost an allocation on the way from a press to its subscribers.
        appendKey(name)
        JSONLine.appendQuoted(value, to: &bytes)
        members?.append((name, value))
    }

    public mutating func add(_ name: String, _ value: Bool) {
        append(name, json: value ? "true" : "false")
    }

    public mutating func add(_ name: String, _ value: Int) {
        guard members == nil else { return append(name, json: String(value)) }
        appendKey(name)
        JSONLine.appendDecimal(UInt64(value.magnitude), negative: value < 0, decimals: 0, to: &bytes)
    }

    /// A number, printed with at most `decimals` digits after the point and no trailing zeros.
    public mutating func add(_ name: String, _ value: Double, decimals: Int = 6) {
        guard members == nil, let scaled = JSONLine.scaled(value, decimals: decimals) else {
            return append(name, json: JSONLine.number(value, decimals: decimals))
        }
        // Digits straight into the line: a replay writes millions of numbers and keeps no members.
        appendKey(name)
        JSONLine.appendDecimal(scaled.magnitude, negative: scaled < 0, decimals: decimals, to: &bytes)
    }

    /// An instant, as seconds on the monotonic clock with microsecond resolution.
    public mutating func add(_ name: String, _ value: Instant) {
        guard members == nil else { return append(name, json: JSONLine.seconds(value)) }
        appendKey(name)
        let micros = JSONLine.microseconds(value)
        JSONLine.appendDecimal(micros.magnitude, negative: micros < 0, decimals: 6, to: &bytes)
    }

    /// A nested object.
    public mutating func add(_ name: String, _ value: JSONLine) {
        append(name, json: value.description)
    }

    /// A value already in JSON form; for a JSON string, its text is the string's (`plain`) when given.
    public mutating func add(_ name: String, json: String, text plain: String? = nil) {
        append(name, json: json, text: plain)
    }

    /// The line, closed.
    public var description: String {
        bytes.withUnsafeBufferPointer { line in
            String(unsafeUninitializedCapacity: line.count + 1) { text in
                _ = text.initialize(fromContentsOf: line)
                text[line.count] = UInt8(ascii: "}")
                return line.count + 1
            }
        }
    }

    /// Appends the line, closed and ended with a line feed, to `out`: many lines as one text,
    /// without a string made for each.
    public func appendClosedLine(to out: inout [UInt8]) {
        out.append(contentsOf: bytes)
        out.append(UInt8(ascii: "}"))
        out.append(UInt8(ascii: "\n"))
    }

    /// Appends `string`'s UTF-8 to `bytes`: one copy of its storage when it has contiguous UTF-8
    /// (every native string does), byte by byte otherwise (a bridged one).
    private static func appendUTF8(_ string: String, to bytes: inout [UInt8]) {
        var string = string
        string.withUTF8 { bytes.append(contentsOf: $0) }
    }

    /// `instant` in seconds, exactly to the microsecond: `0.12`, `3.000001`, `0`.
    public static func seconds(_ instant: Instant) -> String {
        let micros = microseconds(instant)
        return decimal(micros.magnitude, negative: micros < 0, decimals: 6)
    }

    /// `instant` in whole microseconds, rounded half away from zero: integer arithmetic, so the
    /// same instant prints the same on every machine.
    private static func microseconds(_ instant: Instant) -> Int64 {
        (instant.rawValue >= 0 ? instant.rawValue + 500 : instant.rawValue - 500) / 1_000
    }

    /// `value` with at most `decimals` decimals and no trailing zeros; non-finite values print as `null`.
    public static func number(_ value: Double, decimals: Int = 6) -> String {
        guard let integer = scaled(value, decimals: decimals) else { return value.isFinite ? String(value) : "null" }
        return decimal(integer.magnitude, negative: integer < 0, decimals: decimals)
    }

    /// `value` × 10^`decimals`, rounded, as ``decimal(_:negative:decimals:)`` prints it; nil when it
    /// is not finite or too large for exact digits (printed as `null` or by `String(value)`).
    private static func scaled(_ value: Double, decimals: Int) -> Int64? {
        guard value.isFinite else { return nil }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (value * scale).rounded()
        // Zero of either sign prints as `0`.
        if scaled == 0 { return 0 }
        return abs(scaled) >= 9e15 ? nil : Int64(scaled)
    }

    /// `magnitude` ÷ 10^`decimals` in decimal, after a minus sign when `negative`: at most
    /// `decimals` digits after the point and no trailing zeros (`120000`, 6 → `0.12`).
    ///
    /// Written from the last digit back into a buffer on the stack: a line's numbers then cost
    /// one string each, and none an allocation (they fit Swift's small strings).
    static func decimal(_ magnitude: UInt64, negative: Bool, decimals: Int) -> String {
        withDecimal(magnitude, negative: negative, decimals: decimals) { String(decoding: $0, as: UTF8.self) }
    }

    /// Appends ``decimal(_:negative:decimals:)``'s digits to `out`, with no string between.
    private static func appendDecimal(_ magnitude: UInt64, negative: Bool, decimals: Int, to out: inout [UInt8]) {
        withDecimal(magnitude, negative: negative, decimals: decimals) { out.append(contentsOf: $0) }
    }

    private static func withDecimal<T>(_ magnitude: UInt64, negative: Bool, decimals: Int,
                                       _ body: (UnsafeMutableBufferPointer<UInt8>) -> T) -> T {
        // UInt64's 20 digits, the point and the sign; a point beyond them needs as many zeros.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24 + max(0, decimals)) { buffer in
            var value = magnitude
            var fractionDigits = decimals
            while fractionDigits > 0, value % 10 == 0 {
                value /= 10
                fractionDigits -= 1
            }
            var start = buffer.count
            func put(_ byte: UInt8) {
                start -= 1
                buffer[start] = byte
            }
            if fractionDigits > 0 {
                for _ in 0..<fractionDigits {
                    put(UInt8(ascii: "0") + UInt8(value % 10))
                    value /= 10
                }
                put(UInt8(ascii: "."))
            }
            repeat {
                put(UInt8(ascii: "0") + UInt8(value % 10))
                value /= 10
            } while value > 0
            if negative { put(UInt8(ascii: "-")) }
            return body(UnsafeMutableBufferPointer(rebasing: buffer[start...]))
        }
    }

    /// `string` as a JSON string literal.
    public static func quoted(_ string: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(string.utf8.count + 2)
        appendQuoted(string, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `string` as a JSON string literal to `out`: at once when nothing in it needs an
    /// escape (the names and values of events), else byte by byte.
    static func appendQuoted(_ string: String, to out: inout [UInt8]) {
        var string = string
        string.withUTF8 { utf8 in
            out.append(UInt8(ascii: "\""))
            let needsEscape = utf8.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
            guard needsEscape else {
                out.append(contentsOf: utf8)
                out.append(UInt8(ascii: "\""))
                return
            }
            // Only ASCII is escaped, so a multi-byte scalar's bytes (all ≥ 0x80) pass through whole.
            for byte in utf8 {
                switch byte {
                case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
                case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
                case UInt8(ascii: "\n"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
                case UInt8(ascii: "\r"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
                case UInt8(ascii: "\t"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
                case ..<0x20:
                    let hex = Array("0123456789abcdef".utf8)
                    out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                            hex[Int(byte >> 4)], hex[Int(byte & 0xf)]])
                default: out.append(byte)
                }
            }
            out.append(UInt8(ascii: "\""))
        }
    }
}
