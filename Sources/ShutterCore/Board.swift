#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One rig, as its board file describes it: the GPIO chip, the lines and their
/// roles, gesture timings, controls, camera and output.
///
/// Load one with ``Board/load(path:)``; the schema is documented in `Boards/README.md`.
public struct Board: Sendable {
    /// A short name for the rig (`pi5-two-stage`); it goes into EXIF and events.
    public var name: String
    /// Free text for the person reading the file.
    public var summary: String?
    /// Which GPIO chip the lines are on.
    public var chip: ChipSelector
    /// The lines, in file order; pads in the order they sit along the strip.
    public var lines: [BoardLine]
    /// Every gesture timing.
    public var gestures: GestureTimings
    /// The controls a light press shows, in chooser order.
    public var controls: [ControlSpec]
    /// The camera and how stills are taken.
    public var camera: CameraSettings
    /// Where photos go.
    public var output: OutputSettings
    /// Output lines that show the rig's state: an LED, a buzzer (the file's `feedback`).
    public var feedback: [FeedbackLine] = []
    /// The local API.
    public var api = APISettings()
    /// Programs run after photos and on events.
    public var hooks = HookSettings()
    /// Live view over HTTP; nil = not served unless `shutter run --http` asks.
    public var http: HTTPSettings?
    /// The live view's preview JPEGs.
    public var preview = PreviewSettings()
    /// The rig's MQTT broker (multi-camera rigs, Home Assistant); nil = none.
    public var mqtt: MQTTSettings?

    /// The most controls a board may have, as the phone's `maxControlsCount`.
    public static let maximumControls = 8

    /// The most pads a strip may have: the strip keeps its touched pads in one 64-bit mask.
    public static let maximumPads = 64

    /// The index of the line with board name `name`.
    public func line(named name: String) -> LineIndex? {
        lines.firstIndex { $0.name == name }.map { LineIndex(rawValue: $0) }
    }

    /// The board line at `index`.
    public subscript(index: LineIndex) -> BoardLine { lines[index.rawValue] }

    /// The lines with `role`, in file order.
    public func lines(withRole role: LineRole) -> [LineIndex] {
        lines.indices.filter { lines[$0].role == role }.map { LineIndex(rawValue: $0) }
    }

    /// The slider strip's pads, in order along the strip.
    public var pads: [LineIndex] { lines(withRole: .pad) }
}

/// How a board names its GPIO chip.
///
/// The Pi 5's chip number changed between kernels but its label did not, so a
/// label is the safest way to name a chip on a Pi.
public enum ChipSelector: Hashable, Sendable, CustomStringConvertible {
    /// shutter's in-process mock chip (no hardware).
    case simulator
    /// A device node: `/dev/gpiochip0`.
    case path(String)
    /// A kernel chip name: `gpiochip4`.
    case name(String)
    /// A chip label: `pinctrl-rp1`.
    case label(String)

    /// Reads the board's `chip` string: `simulator`, a path (starts with `/`),
    /// a name (`gpiochipN`) or otherwise a label.
    public init(parsing text: String) {
        if text == "simulator" {
            self = .simulator
        } else if text.hasPrefix("/") {
            self = .path(text)
        } else if text.hasPrefix("gpiochip"), text.dropFirst(8).allSatisfy(\.isNumber), text.count > 8 {
            self = .name(text)
        } else {
            self = .label(text)
        }
    }

    public var description: String {
        switch self {
        case .simulator: "the simulator chip"
        case .path(let path): "chip \(path)"
        case .name(let name): "chip \(name)"
        case .label(let label): "chip labelled '\(label)'"
        }
    }
}

/// What a line does on the rig.
public enum LineRole: String, CaseIterable, Hashable, Sendable, Codable {
    /// First stage of a two-stage button: the light press.
    case half
    /// The full press: takes the photo.
    case full
    /// A second button, the phone's secondary action.
    case secondary
    /// One pad of the capacitive slider strip.
    case pad
}

/// How the chip finds a line: by the name the device tree gives it, or by offset.
public enum LineSelector: Hashable, Sendable, CustomStringConvertible {
    case name(String)
    case offset(UInt32)

    public var description: String {
        switch self {
        case .name(let name): name
        case .offset(let offset): "offset \(offset)"
        }
    }
}

/// The pull resistor a line is requested with.
public enum Bias: String, CaseIterable, Hashable, Sendable, Codable {
    case pullUp = "pull-up"
    case pullDown = "pull-down"
    case disabled
    /// Leave the line as the firmware or device tree set it.
    case asIs = "as-is"
}

/// One line of the board.
public struct BoardLine: Hashable, Sendable {
    /// The board's own name for the line (`full`, `pad3`); traces use it.
    public var name: String
    public var role: LineRole
    /// The line on the chip.
    public var selector: LineSelector
    /// `true` when the line reads low while pressed or touched.
    public var activeLow: Bool
    public var bias: Bias
    /// Contact-bounce suppression; zero turns it off.
    public var debounce: Nanoseconds

    public init(name: String, role: LineRole, selector: LineSelector, activeLow: Bool = false,
                bias: Bias = .asIs, debounce: Nanoseconds = .milliseconds(5)) {
        self.name = name
        self.role = role
        self.selector = selector
        self.activeLow = activeLow
        self.bias = bias
        self.debounce = debounce
    }
}

// MARK: - Loading

extension Board {
    /// Reads and validates a board file.
    ///
    /// - Parameter path: the file, as the user named it; errors repeat it.
    /// - Throws: ``BoardError`` naming the file, and the field or the line and column.
    public static func load(path: String) throws(BoardError) -> Board {
        // Only a regular file, and only so much of it: a FIFO or a device named by mistake (or
        // swapped in before a SIGHUP) would block the daemon's loop or fill its memory.
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        var status = stat()
        guard lstat(resolved, &status) == 0 else {
            throw BoardError(file: path, path: "", message: "no such file")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw BoardError(file: path, path: "", message: "not a regular file (a board is a JSON file)")
        }
        let size = Int(status.st_size)
        guard size <= maximumFileBytes else {
            throw BoardError(file: path, path: "", message: "\(size) bytes: larger than a board file may be (\(maximumFileBytes / 1024) KiB)")
        }
        // Read no more than the limit even if the file grew since it was looked at.
        guard let data = readPrefix(of: resolved, upTo: maximumFileBytes + 1) else {
            throw BoardError(file: path, path: "", message: "cannot be read (permissions?)")
        }
        guard data.count <= maximumFileBytes else {
            throw BoardError(file: path, path: "", message: "larger than a board file may be (\(maximumFileBytes / 1024) KiB)")
        }
        return try decode(data, file: path)
    }

    /// The first `limit` bytes of the file at `path` (all of it when shorter); nil when it cannot be
    /// opened. A read that fails part-way gives no bytes, as Foundation's `FileHandle` did.
    /// The corresponding C functions are `open` and `read`.
    private static func readPrefix(of path: String, upTo limit: Int) -> Data? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var data = Data(count: limit)
        var count = 0
        let failed = data.withUnsafeMutableBytes { buffer -> Bool in
            while count < limit {
                let got = read(descriptor, buffer.baseAddress! + count, limit - count)
                if got > 0 { count += got } else if got == 0 { return false } else if errno != EINTR { return true }
            }
            return false
        }
        return failed ? Data() : data.prefix(count)
    }

    /// The largest board file read: boards are a few KiB.
    public static let maximumFileBytes = 1 << 20

    /// Validates a board from its JSON text; `file` names it in errors.
    public static func decode(_ data: Data, file: String) throws(BoardError) -> Board {
        // Foundation's decoder accepts some invalid JSON (trailing commas) and cannot say
        // where the text breaks; a strict check first gives the line and column.
        if let syntax = JSONSyntax.firstError(in: String(decoding: data, as: UTF8.self)) {
            throw BoardError(file: file, path: syntax.isNumberOutOfRange ? syntax.path : "",
                             message: syntax.isNumberOutOfRange ? syntax.message : "not valid JSON: \(syntax.message)",
                             position: (syntax.line, syntax.column))
        }
        do {
            return try JSONDecoder().decode(Board.self, from: data)
        } catch let error as FieldError {
            throw BoardError(file: file, path: error.path.description, message: error.message)
        } catch let error as DecodingError {
            throw BoardError(decodingError: error, file: file, text: String(decoding: data, as: UTF8.self))
        } catch {
            throw BoardError(file: file, path: "", message: "\(error)")
        }
    }
}

extension BoardError {
    /// Turns Codable's error into one that names the field the way the board file spells it.
    init(decodingError: DecodingError, file: String, text: String) {
        switch decodingError {
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            if let syntax = JSONSyntax.firstError(in: text) {
                self.init(file: file, path: syntax.isNumberOutOfRange ? syntax.path : "",
                          message: syntax.isNumberOutOfRange ? syntax.message : "not valid JSON: \(syntax.message)",
                          position: (syntax.line, syntax.column))
            } else {
                self.init(file: file, path: "", message: "not valid JSON (\(context.debugDescription))")
            }
        case .dataCorrupted(let context):
            self.init(file: file, path: FieldPath(codingPath: context.codingPath).description,
                      message: context.debugDescription)
        case .keyNotFound(let key, let context):
            self.init(file: file, path: FieldPath(codingPath: context.codingPath + [key]).description,
                      message: "missing (this field is required)")
        case .typeMismatch(let type, let context):
            self.init(file: file, path: FieldPath(codingPath: context.codingPath).description,
                      message: "expected \(Self.jsonKind(of: type))")
        case .valueNotFound(let type, let context):
            self.init(file: file, path: FieldPath(codingPath: context.codingPath).description,
                      message: "is null, expected \(Self.jsonKind(of: type))")
        @unknown default:
            self.init(file: file, path: "", message: "\(decodingError)")
        }
    }

    private static func jsonKind(of type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Int.Type, is UInt32.Type: "a whole number"
        case is Double.Type: "a number"
        case is [Any].Type: "an array"
        default:
            String(describing: type).hasPrefix("Array") ? "an array" : "an object"
        }
    }
}

// MARK: - Decoding

extension Board: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, description, chip, lineDefaults, lines, gestures, controls, camera, output
        case api, hooks, feedback, http, preview, mqtt
    }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        guard !name.isEmpty else { throw FieldError(path: FieldPath("name"), message: "must not be empty") }
        summary = try container.decodeIfPresent(String.self, forKey: .description)
        let chipText = try container.decode(String.self, forKey: .chip)
        guard !chipText.isEmpty else {
            throw FieldError(path: FieldPath("chip"), message: "must name a chip: 'simulator', a path, a name or a label")
        }
        chip = ChipSelector(parsing: chipText)
        let defaults = try container.decodeIfPresent(LineDefaults.self, forKey: .lineDefaults) ?? LineDefaults()
        let rawLines = try container.decode([RawLine].self, forKey: .lines)
        lines = rawLines.map { $0.resolved(with: defaults) }
        gestures = try container.decodeIfPresent(GestureTimings.self, forKey: .gestures) ?? GestureTimings()
        controls = try container.decodeIfPresent([ControlSpec].self, forKey: .controls) ?? []
        camera = try container.decodeIfPresent(CameraSettings.self, forKey: .camera) ?? CameraSettings()
        output = try container.decodeIfPresent(OutputSettings.self, forKey: .output) ?? OutputSettings()
        feedback = try container.decodeIfPresent([FeedbackLine].self, forKey: .feedback) ?? []
        api = try container.decodeIfPresent(APISettings.self, forKey: .api) ?? APISettings()
        hooks = try container.decodeIfPresent(HookSettings.self, forKey: .hooks) ?? HookSettings()
        http = try container.decodeIfPresent(HTTPSettings.self, forKey: .http)
        preview = try container.decodeIfPresent(PreviewSettings.self, forKey: .preview) ?? PreviewSettings()
        mqtt = try container.decodeIfPresent(MQTTSettings.self, forKey: .mqtt)
        try validateLines()
        try validateHalfDebounce(rawLines)
        try validateControls()
        try validateFeedback()
    }

    /// Cross-field checks on the lines: names and chip lines used once, the roles a gesture needs.
    private func validateLines() throws {
        let root = FieldPath("lines")
        guard !lines.isEmpty else { throw FieldError(path: root, message: "a board needs at least a 'full' line") }
        var names: [String: Int] = [:]
        var selectors: [LineSelector: Int] = [:]
        for (index, line) in lines.enumerated() {
            if let first = names[line.name] {
                throw FieldError(path: root.element(index).member("name"),
                                 message: "'\(line.name)' is already the name of lines[\(first)]")
            }
            names[line.name] = index
            if let first = selectors[line.selector] {
                throw FieldError(path: root.element(index).member("line"),
                                 message: "\(line.selector) is already used by lines[\(first)] ('\(lines[first].name)')")
            }
            selectors[line.selector] = index
        }
        for role in [LineRole.half, .full, .secondary] {
            let holders = lines.indices.filter { lines[$0].role == role }
            if holders.count > 1 {
                throw FieldError(path: root.element(holders[1]).member("role"),
                                 message: "only one line may have role '\(role.rawValue)'; lines[\(holders[0])] has it already")
            }
        }
        guard lines.contains(where: { $0.role == .full }) else {
            throw FieldError(path: root, message: "no line has role 'full': the full press takes the photo and every rig needs one")
        }
        let padCount = lines.filter { $0.role == .pad }.count
        if padCount == 1, let pad = lines.firstIndex(where: { $0.role == .pad }) {
            throw FieldError(path: root.element(pad).member("role"),
                             message: "a slider strip needs at least 2 pads to tell a position; this board has 1")
        }
        let pads = lines.indices.filter { lines[$0].role == .pad }
        if pads.count > Board.maximumPads {
            throw FieldError(path: root.element(pads[Board.maximumPads]).member("role"),
                             message: "a slider strip has at most \(Board.maximumPads) pads; this board has \(pads.count)")
        }
    }

    /// `half`'s debounce must be shorter than the longest light press: a press must hold for the
    /// debounce to count at all, so a longer one would drop every light press as a glitch.
    private func validateHalfDebounce(_ rawLines: [RawLine]) throws {
        guard let index = lines.firstIndex(where: { $0.role == .half }),
              lines[index].debounce >= gestures.lightPressMaximum else { return }
        let path = rawLines[index].debounce != nil ? FieldPath("lines").element(index).member("debounceMs")
                                                    : FieldPath("lineDefaults").member("debounceMs")
        let debounce = lines[index].debounce.milliseconds.shortDescription
        let maximum = gestures.lightPressMaximum.milliseconds.shortDescription
        throw FieldError(path: path, message: "\(debounce) ms on the 'half' line must be shorter than gestures.lightPressMaxMs "
            + "(\(maximum) ms): a press must hold this long to count, so every light press would be dropped")
    }

    /// Checks the controls against each other and against the lines that operate them.
    private func validateControls() throws {
        let root = FieldPath("controls")
        if controls.count > Board.maximumControls {
            throw FieldError(path: root, message: "\(controls.count) controls, at most \(Board.maximumControls) are allowed")
        }
        var ids: [String: Int] = [:]
        for (index, control) in controls.enumerated() {
            if let first = ids[control.id] {
                throw FieldError(path: root.element(index).member("id"),
                                 message: "'\(control.id)' is already the id of controls[\(first)]")
            }
            ids[control.id] = index
        }
        if !controls.isEmpty {
            let padCount = lines.filter { $0.role == .pad }.count
            if padCount < 2 {
                throw FieldError(path: root, message: "controls are adjusted by swiping the slider strip, but no line has role 'pad'")
            }
        }
    }
}

/// Settings every line inherits unless it states its own.
struct LineDefaults: Decodable {
    var activeLow = false
    var bias = Bias.asIs
    var debounce = Nanoseconds.milliseconds(5)

    init() {}

    enum CodingKeys: String, CodingKey, CaseIterable { case activeLow, bias, debounceMs }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        activeLow = try container.decodeIfPresent(Bool.self, forKey: .activeLow) ?? activeLow
        bias = try container.decodeEnum(Bias.self, forKey: .bias) ?? bias
        debounce = try container.decodeMilliseconds(forKey: .debounceMs, in: 0...1000) ?? debounce
    }
}

/// A line as written, before the defaults fill its gaps.
struct RawLine: Decodable {
    var name: String
    var role: LineRole
    var selector: LineSelector
    var activeLow: Bool?
    var bias: Bias?
    var debounce: Nanoseconds?

    enum CodingKeys: String, CodingKey, CaseIterable { case name, role, line, activeLow, bias, debounceMs }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        if name.isEmpty || name.contains(where: { $0.isWhitespace || $0 == "\"" }) {
            throw FieldError(path: FieldPath(codingPath: container.codingPath + [CodingKeys.name]),
                             message: "'\(name)' is not a usable name: use letters, digits, '-' or '_'")
        }
        guard let role = try container.decodeEnum(LineRole.self, forKey: .role) else {
            throw DecodingError.keyNotFound(CodingKeys.role, .init(codingPath: container.codingPath, debugDescription: ""))
        }
        self.role = role
        if let offset = try? container.decode(UInt32.self, forKey: .line) {
            selector = .offset(offset)
        } else if let lineName = try? container.decode(String.self, forKey: .line), !lineName.isEmpty {
            selector = .name(lineName)
        } else if container.contains(.line) {
            throw FieldError(path: FieldPath(codingPath: container.codingPath + [CodingKeys.line]),
                             message: "expected the line's name on the chip (\"GPIO17\") or its offset (17)")
        } else {
            // A board whose line names on the chip equal its own names can leave `line` out.
            selector = .name(name)
        }
        activeLow = try container.decodeIfPresent(Bool.self, forKey: .activeLow)
        bias = try container.decodeEnum(Bias.self, forKey: .bias)
        debounce = try container.decodeMilliseconds(forKey: .debounceMs, in: 0...1000)
    }

    func resolved(with defaults: LineDefaults) -> BoardLine {
        BoardLine(name: name, role: role, selector: selector, activeLow: activeLow ?? defaults.activeLow,
                  bias: bias ?? defaults.bias, debounce: debounce ?? defaults.debounce)
    }
}

extension KeyedDecodingContainer {
    /// Decodes a string enum, naming the accepted values when the string is not one of them.
    func decodeEnum<Value: RawRepresentable & CaseIterable>(_ type: Value.Type, forKey key: Key) throws -> Value?
    where Value.RawValue == String {
        guard let text = try decodeIfPresent(String.self, forKey: key) else { return nil }
        if let value = Value(rawValue: text) { return value }
        let accepted = Value.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
        throw FieldError(path: FieldPath(codingPath: codingPath + [key]),
                         message: "'\(text)' is not one of \(accepted)")
    }

    /// Decodes a span stated in milliseconds, refusing values outside `range`.
    func decodeMilliseconds(forKey key: Key, in range: ClosedRange<Double>) throws -> Nanoseconds? {
        guard let value = try decodeIfPresent(Double.self, forKey: key) else { return nil }
        guard range.contains(value) else {
            throw FieldError(path: FieldPath(codingPath: codingPath + [key]),
                             message: "\(value.shortDescription) ms is outside \(range.lowerBound.shortDescription)...\(range.upperBound.shortDescription) ms")
        }
        return .milliseconds(value)
    }

    /// Throws a ``FieldError`` at `key`.
    func fail(_ key: Key, _ message: String) -> FieldError {
        FieldError(path: FieldPath(codingPath: codingPath + [key]), message: message)
    }
}

extension Double {
    /// The number without a trailing `.0`: `5`, `0.25`.
    public var shortDescription: String {
        self == rounded() && abs(self) < 1e15 ? String(Int64(self)) : String(self)
    }
}

extension Board {
    /// What `control` acts on, as `shutter check` says it: the camera's zoom, exposure or focus
    /// for the system kinds; for a slider or picker, the camera control its binding names, else
    /// the photo effects its items apply, else nothing but what hooks and API clients do with
    /// its events. A picker without effects or a binding changes no photo, and a board's author
    /// should see that before a rig is built around it.
    public func drive(of control: ControlSpec) -> String {
        switch control.kind {
        case .systemZoom: return "the camera's zoom"
        case .systemExposureBias: return "the camera's exposure bias"
        case .lensPosition: return "the camera's lens position"
        case .slider, .picker:
            // A binding takes the control over from its effects, as the capture service does.
            if let name = camera.bindings[control.id] {
                return "camera control '\(name)'" + (control.effects == nil ? "" : " (bound: its effects are not applied)")
            }
            if let effects = control.effects { return "photo effects (\(effects.map(\.rawValue).joined(separator: ", ")))" }
            return "hooks and the API only"
        }
    }
}
