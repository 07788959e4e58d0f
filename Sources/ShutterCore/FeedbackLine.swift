/// What an output line on the rig tells the person holding it.
public enum FeedbackRole: String, CaseIterable, Hashable, Sendable, Codable {
    /// A status LED: lit while the controls are active, blinking while the chooser is open,
    /// a flash on each photo, a fast blink when a capture fails.
    case led
    /// A piezo buzzer: a click on each photo (the rig's shutter sound), a distinct pattern on failure.
    case buzzer
}

/// One output line of the board (the board file's `feedback[]`), driven by the daemon.
public struct FeedbackLine: Hashable, Sendable {
    /// The board's own name for the line (`led`).
    public var name: String
    public var role: FeedbackRole
    /// The line on the chip.
    public var selector: LineSelector
    /// `true` when the LED or buzzer is on while the pin is low (wired to 3.3 V through the load).
    public var activeLow: Bool

    public init(name: String, role: FeedbackRole, selector: LineSelector, activeLow: Bool = false) {
        self.name = name
        self.role = role
        self.selector = selector
        self.activeLow = activeLow
    }
}

extension FeedbackLine: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable { case name, role, line, activeLow }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard let role = try container.decodeEnum(FeedbackRole.self, forKey: .role) else {
            throw DecodingError.keyNotFound(CodingKeys.role, .init(codingPath: container.codingPath, debugDescription: ""))
        }
        self.role = role
        // The role is a fine name for the one LED and the one buzzer a rig has.
        name = try container.decodeIfPresent(String.self, forKey: .name) ?? role.rawValue
        if name.isEmpty || name.contains(where: { $0.isWhitespace || $0 == "\"" }) {
            throw container.fail(.name, "'\(name)' is not a usable name: use letters, digits, '-' or '_'")
        }
        if let offset = try? container.decode(UInt32.self, forKey: .line) {
            selector = .offset(offset)
        } else if let lineName = try? container.decode(String.self, forKey: .line), !lineName.isEmpty {
            selector = .name(lineName)
        } else if container.contains(.line) {
            throw container.fail(.line, "expected the line's name on the chip (\"GPIO16\") or its offset (16)")
        } else {
            selector = .name(name)
        }
        activeLow = try container.decodeIfPresent(Bool.self, forKey: .activeLow) ?? false
    }
}

extension Board {
    /// The output line with `role`, if the board has one.
    public func feedbackLine(_ role: FeedbackRole) -> FeedbackLine? {
        feedback.first { $0.role == role }
    }

    /// Checks the feedback lines against each other and against the input lines.
    func validateFeedback() throws {
        let root = FieldPath("feedback")
        for (index, line) in feedback.enumerated() {
            if let first = feedback[..<index].firstIndex(where: { $0.role == line.role }) {
                throw FieldError(path: root.element(index).member("role"),
                                 message: "only one line may have role '\(line.role.rawValue)'; feedback[\(first)] has it already")
            }
            if let first = feedback[..<index].firstIndex(where: { $0.name == line.name }) {
                throw FieldError(path: root.element(index).member("name"),
                                 message: "'\(line.name)' is already the name of feedback[\(first)]")
            }
            if let input = lines.firstIndex(where: { $0.name == line.name }) {
                throw FieldError(path: root.element(index).member("name"),
                                 message: "'\(line.name)' is already the name of lines[\(input)]")
            }
            if let input = lines.firstIndex(where: { $0.selector == line.selector }) {
                throw FieldError(path: root.element(index).member("line"),
                                 message: "\(line.selector) is already used by lines[\(input)] ('\(lines[input].name)'); an output needs a line of its own")
            }
            if let first = feedback[..<index].firstIndex(where: { $0.selector == line.selector }) {
                throw FieldError(path: root.element(index).member("line"),
                                 message: "\(line.selector) is already used by feedback[\(first)] ('\(feedback[first].name)')")
            }
        }
    }
}
