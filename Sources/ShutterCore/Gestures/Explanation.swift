/// Why the recognizer decided what it did, one line for people: setup mode (`--explain`).
///
/// The recognizer makes these at its decision points, with the figures the decision was made on
/// ("full: 3.2 ms pulse dropped (glitch filter 5 ms)"), only while ``RigStateMachine/explains``
/// is on: off, no text is built and nothing is stored.
public struct Explanation: Hashable, Sendable {
    /// When the decision was made (the recognizer's time, as events are stamped).
    public var time: Instant
    /// What the decision is about: a line's name, `strip`, `controls` or `capture`.
    public var subject: String
    /// The decision and its reason.
    public var reason: String

    public init(time: Instant, subject: String, reason: String) {
        self.time = time
        self.subject = subject
        self.reason = reason
    }

    /// The line setup mode prints: "subject: reason".
    public var line: String { "\(subject): \(reason)" }
}

extension Explanation {
    /// A span as explanations state it: "3.2 ms", "410 ms" (one decimal below 10 ms, whole above).
    static func milliseconds(_ span: Nanoseconds) -> String {
        let value = span.milliseconds
        return JSONLine.number(value, decimals: abs(value) < 10 ? 1 : 0) + " ms"
    }

    /// A board timing with its field name: "lightPressMaxMs 350".
    static func setting(_ name: String, _ span: Nanoseconds) -> String {
        "\(name) \(JSONLine.number(span.milliseconds, decimals: 1))"
    }

    /// A distance on the strip: "0 pads", "0.5 pad", "1 pad", "1.5 pads".
    static func pads(_ distance: Double) -> String {
        let text = JSONLine.number(abs(distance), decimals: 2)
        return text + (text == "0" || abs(distance) > 1 ? " pads" : " pad")
    }
}
