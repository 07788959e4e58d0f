/// Builds one JSON object on one line, keys in the order they are added.
///
/// Events and traces are read by people as well as programs, so `"event"` and
/// `"t"` come first, and numbers print the same way on every run (replay output
/// is compared byte for byte). Not a general JSON encoder: values are strings,
/// numbers, booleans and nested lines.
public struct JSONLine: Sendable, CustomStringConvertible {
    private var text = "{"
    private var empty = true
    /// An event line's members as text, in order (strings unquoted, everything else as written),
    /// for hooks to fill into their templates without reading the line back; nil for other lines.
    public private(set) var members: [(key: String, text: String)]?

    public init() {}

    /// An event line: `{"event": name, "t": seconds`, which keeps its ``members``.
    public init(event name: String, at time: Instant) {
        members = []
        add("event", name)
        add("t", time)
    }

    /// Appends one member: its JSON, and for an event line its text (the string itself for a string).
    private mutating func append(_ key: String, json: String, text plain: String? = nil) {
        if !empty { text += ", " }
        empty = false
        text += JSONLine.quoted(key)
        text += ": "
        text += json
        members?.append((key, plain ?? json))
    }

    public mutating func add(_ name: String, _ value: String) {
        append(name, json: JSONLine.quoted(value), text: value)
    }

    public mutating func add(_ name: String, _ value: Bool) {
        append(name, json: value ? "true" : "false")
    }

    public mutating func add(_ name: String, _ value: Int) {
        append(name, json: String(value))
    }

    /// A number, printed with at most `decimals` digits after the point and no trailing zeros.
    public mutating func add(_ name: String, _ value: Double, decimals: Int = 6) {
        append(name, json: JSONLine.number(value, decimals: decimals))
    }

    /// An instant, as seconds on the monotonic clock with microsecond resolution.
    public mutating func add(_ name: String, _ value: Instant) {
        append(name, json: JSONLine.seconds(value))
    }

    /// A nested object.
    public mutating func add(_ name: String, _ value: JSONLine) {
        append(name, json: value.description)
    }

    /// A value already in JSON form; for a JSON string, its text is the string's (`plain`) when given.
    public mutating func add(_ name: String, json: String, text plain: String? = nil) {
        append(name, json: json, text: plain)
    }

    public var description: String { text + "}" }

    /// `instant` in seconds, exactly to the microsecond: `0.12`, `3.000001`, `0`.
    public static func seconds(_ instant: Instant) -> String {
        // Integer arithmetic so the same instant prints the same on every machine.
        let micros = (instant.rawValue >= 0 ? instant.rawValue + 500 : instant.rawValue - 500) / 1_000
        let sign = micros < 0 ? "-" : ""
        let magnitude = micros.magnitude
        let whole = magnitude / 1_000_000
        var fraction = String(magnitude % 1_000_000)
        if fraction == "0" { return "\(sign)\(whole)" }
        fraction = String(repeating: "0", count: 6 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return "\(sign)\(whole).\(fraction)"
    }

    /// `value` with at most `decimals` decimals and no trailing zeros; non-finite values print as `null`.
    public static func number(_ value: Double, decimals: Int = 6) -> String {
        guard value.isFinite else { return "null" }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (value * scale).rounded()
        if scaled == 0 { return "0" }
        if abs(scaled) >= 9e15 { return String(value) }
        let integer = Int64(scaled)
        let sign = integer < 0 ? "-" : ""
        let magnitude = integer.magnitude
        let divisor = UInt64(scale)
        let whole = magnitude / divisor
        var fraction = String(magnitude % divisor)
        if fraction == "0" || decimals == 0 { return "\(sign)\(whole)" }
        fraction = String(repeating: "0", count: decimals - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return "\(sign)\(whole).\(fraction)"
    }

    /// `string` as a JSON string literal.
    public static func quoted(_ string: String) -> String {
        var out = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let c where c.value < 0x20:
                let hex = String(c.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
