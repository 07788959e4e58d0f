/// Why a board file was refused: the file, the field's path and what is wrong.
///
/// Printed as `Boards/rig.json: controls[1].step: must be above 0`, or with a
/// line and column for broken JSON: `Boards/rig.json:12:5: ...`.
public struct BoardError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The board file as the user named it.
    public var file: String
    /// The field's path (`lines[2].bias`); empty for the document as a whole.
    public var path: String
    /// What is wrong, and where it helps, what would be right.
    public var message: String
    /// Line and column in the file, when known (broken JSON).
    public var position: (line: Int, column: Int)?

    public init(file: String, path: String, message: String, position: (line: Int, column: Int)? = nil) {
        self.file = file
        self.path = path
        self.message = message
        self.position = position
    }

    public var description: String {
        var where_ = file
        if let position { where_ += ":\(position.line):\(position.column)" }
        return path.isEmpty ? "\(where_): \(message)" : "\(where_): \(path): \(message)"
    }

    public static func == (lhs: BoardError, rhs: BoardError) -> Bool {
        lhs.file == rhs.file && lhs.path == rhs.path && lhs.message == rhs.message
            && lhs.position?.line == rhs.position?.line && lhs.position?.column == rhs.position?.column
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(file)
        hasher.combine(path)
        hasher.combine(message)
    }
}

/// A field path being validated, printed the way users write it: `controls[1].step`.
public struct FieldPath: Hashable, Sendable, CustomStringConvertible {
    public private(set) var description: String

    public init(_ root: String = "") { self.description = root }

    /// The path of a member: `lines` → `lines.bias`.
    public func member(_ name: String) -> FieldPath {
        FieldPath(description.isEmpty ? name : "\(description).\(name)")
    }

    /// The path of an element: `lines` → `lines[2]`.
    public func element(_ index: Int) -> FieldPath {
        FieldPath("\(description)[\(index)]")
    }

    /// The path Codable reports, in the same notation.
    public init(codingPath: [any CodingKey]) {
        var path = FieldPath()
        for key in codingPath {
            if let index = key.intValue, key.stringValue.hasPrefix("Index ") || key.stringValue == "\(index)" {
                path = path.element(index)
            } else {
                path = path.member(key.stringValue)
            }
        }
        self = path
    }
}

/// A coding key for any string, used to see every key an object has.
struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) {
        self.stringValue = "\(intValue)"
        self.intValue = intValue
    }
}

/// Thrown from inside `init(from:)` when a value is present but unacceptable;
/// carries the path Codable was at so the message can name the field.
struct FieldError: Error {
    var path: FieldPath
    var message: String
}

extension Decoder {
    /// Refuses keys the type does not know: in a hand-written board file an
    /// unknown key is nearly always a typo that would otherwise be ignored.
    func rejectUnknownKeys<Key: CodingKey & CaseIterable>(_ known: Key.Type) throws {
        let container = try self.container(keyedBy: AnyCodingKey.self)
        let knownNames = Key.allCases.map(\.stringValue)
        for key in container.allKeys where !knownNames.contains(key.stringValue) {
            var message = "unknown key '\(key.stringValue)'"
            if let guess = closestName(to: key.stringValue, among: knownNames) {
                message += " (did you mean '\(guess)'?)"
            } else {
                message += " (known keys: \(knownNames.joined(separator: ", ")))"
            }
            throw FieldError(path: FieldPath(codingPath: codingPath + [key]), message: message)
        }
    }
}

/// The known name nearest `name` by edit distance, if it is close enough to be a typo.
func closestName(to name: String, among candidates: [String]) -> String? {
    let lowered = name.lowercased()
    var best: (name: String, distance: Int)?
    for candidate in candidates {
        let distance = editDistance(lowered, candidate.lowercased())
        if distance <= max(2, candidate.count / 3), distance < (best?.distance ?? .max) {
            best = (candidate, distance)
        }
    }
    return best?.name
}

/// Levenshtein distance; board keys are short, so the quadratic table is fine.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
        current[0] = i
        for j in 1...b.count {
            let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
            current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
        }
        swap(&previous, &current)
    }
    return previous[b.count]
}
