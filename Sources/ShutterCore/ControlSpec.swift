/// One control the overlay offers, from the board's `controls` array.
public struct ControlSpec: Hashable, Sendable {
    /// Unique within the board; events name the control by it.
    public var id: String
    /// What a person calls it ("Zoom").
    public var label: String
    /// An optional symbol name for a UI that shows one.
    public var symbol: String?
    /// A disabled control is skipped by the chooser and cannot be adjusted.
    public var enabled: Bool
    public var kind: ControlKind
    /// The value at start (and in every replay).
    public var initial: ControlValue
    /// The board's `initial` as written, when it was not a value the control takes and
    /// ``initial`` is the one it lies nearest (``SliderValues/nearest(to:)``); `shutter check` says so.
    public var initialWritten: Double?
    /// How a continuous slider maps movement to value: `log` by default for zoom, `linear` otherwise.
    public var scale: SliderScale = .linear
    /// A slider's unit, shown after its value (`5 s`).
    public var unit: String?
    /// Zoom is shown multiplied by this (the phone's display zoom factor).
    public var displayMultiplier: Double?
    /// A picker's effect on the saved photo, one per item; `nil` when the picker drives no effect.
    public var effects: [PhotoEffect]?

    public init(id: String, label: String, symbol: String? = nil, enabled: Bool = true,
                kind: ControlKind, initial: ControlValue) {
        self.id = id
        self.label = label
        self.symbol = symbol
        self.enabled = enabled
        self.kind = kind
        self.initial = initial
    }
}

/// The kinds of control, after the phone's slider, index picker and system sliders.
public enum ControlKind: Hashable, Sendable {
    /// A custom slider.
    case slider(SliderValues)
    /// An index picker: `count` items, named by `titles` when given, by their index otherwise.
    case picker(count: Int, titles: [String]?)
    /// The system zoom slider; drives the camera's zoom.
    case systemZoom(SliderValues)
    /// The system exposure-bias slider, in EV; drives the camera's exposure.
    case systemExposureBias(SliderValues)
    /// Manual focus: the slider's range maps onto the lens's `LensPosition` range (libcamera cameras).
    case lensPosition(SliderValues)

    /// The name the board file uses for the kind.
    public var name: String {
        switch self {
        case .slider: "slider"
        case .picker: "picker"
        case .systemZoom: "systemZoom"
        case .systemExposureBias: "systemExposureBias"
        case .lensPosition: "lensPosition"
        }
    }

    /// The slider's values, for the three slider kinds.
    public var sliderValues: SliderValues? {
        switch self {
        case .slider(let values), .systemZoom(let values), .systemExposureBias(let values), .lensPosition(let values): values
        case .picker: nil
        }
    }
}

/// The values a slider can take.
public enum SliderValues: Hashable, Sendable {
    /// Any value in the range, or only the range's steps when `step` is given.
    case range(ClosedRange<Double>, step: Double?)
    /// Only these values, in this order along the strip.
    case list([Double])

    /// The lowest and highest values.
    public var bounds: ClosedRange<Double> {
        switch self {
        case .range(let range, _): range
        case .list(let values): values.min()!...values.max()!
        }
    }
}

/// A control's value: a number for sliders, an index for pickers.
public enum ControlValue: Hashable, Sendable {
    case number(Double)
    case index(Int)
}

extension ControlSpec {
    /// The largest magnitude a slider's bounds, values and initial value may have.
    ///
    /// A control's value is formatted with integer arithmetic (hundredths in an `Int64`), exposure in
    /// thirds of an EV in an `Int`, and snapped at 12 decimals; its range's width must be a finite
    /// Double. 1e9 keeps each of these far inside what it holds (1e11 hundredths, 3e9 thirds, a width
    /// of 2e9) and is more than any camera control or display needs.
    public static let maximumMagnitude = 1e9

    /// The most steps a stepped slider's range may hold: every step is a unit the strip can reach,
    /// and a person can choose among a million values but not among 1e300.
    public static let maximumSteps = 1e6
}

extension ControlSpec: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, kind, label, symbol, enabled, range, step, values, count, titles, initial
        case scale, unit, displayMultiplier
        case effects
    }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        if id.isEmpty || id.contains(where: { $0.isWhitespace }) {
            throw container.fail(.id, "'\(id)' is not a usable id: use letters, digits, '-' or '_'")
        }
        let kindName = try container.decode(String.self, forKey: .kind)
        label = try container.decodeIfPresent(String.self, forKey: .label) ?? id
        symbol = try container.decodeIfPresent(String.self, forKey: .symbol)
        enabled = try container.decodeIfPresent(Bool.self, forKey: .enabled) ?? true

        switch kindName {
        case "slider":
            kind = .slider(try Self.sliderValues(container, defaultRange: nil))
        case "systemZoom":
            kind = .systemZoom(try Self.sliderValues(container, defaultRange: 1...8))
            if kind.sliderValues!.bounds.lowerBound <= 0 {
                throw container.fail(container.contains(.values) ? .values : .range, "zoom factors must be above 0")
            }
        case "systemExposureBias":
            kind = .systemExposureBias(try Self.sliderValues(container, defaultRange: -2...2))
        case "lensPosition":
            kind = .lensPosition(try Self.sliderValues(container, defaultRange: 0...1))
        case "picker":
            for key in [CodingKeys.range, .step, .values] where container.contains(key) {
                throw container.fail(key, "a picker has 'count' or 'titles', not '\(key.stringValue)'")
            }
            let titles = try container.decodeIfPresent([String].self, forKey: .titles)
            let count = try container.decodeIfPresent(Int.self, forKey: .count)
            switch (count, titles) {
            case (nil, nil):
                throw container.fail(.titles, "missing: a picker needs 'count' or 'titles'")
            case (let count?, let titles?) where count != titles.count:
                throw container.fail(.count, "\(count) does not match the \(titles.count) titles")
            case (_, let titles?) where titles.isEmpty:
                throw container.fail(.titles, "must not be empty")
            case (let count?, nil) where count < 1 || count > 1000:
                throw container.fail(.count, "\(count) is outside 1...1000")
            default:
                kind = .picker(count: titles?.count ?? count!, titles: titles)
            }
        default:
            let kinds = ["slider", "picker", "systemZoom", "systemExposureBias", "lensPosition"]
            var message = "'\(kindName)' is not one of \(kinds.map { "'\($0)'" }.joined(separator: ", "))"
            if let guess = closestName(to: kindName, among: kinds) { message += " (did you mean '\(guess)'?)" }
            throw container.fail(.kind, message)
        }
        (initial, initialWritten) = try Self.initialValue(container, kind: kind)
        try decodeDisplay(container)
        try decodeEffects(container)
    }

    /// `effects`: a picker's photo effect per item (`none`, `mono`, `vivid`, `warm`).
    private mutating func decodeEffects(_ container: KeyedDecodingContainer<CodingKeys>) throws {
        guard let names = try container.decodeIfPresent([String].self, forKey: .effects) else { return }
        guard case .picker(let count, _) = kind else { throw container.fail(.effects, "only a picker has effects (one per item)") }
        guard names.count == count else { throw container.fail(.effects, "\(names.count) effects for \(count) items: give one per item") }
        effects = try names.map { name in
            guard let effect = PhotoEffect(rawValue: name) else {
                let known = PhotoEffect.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
                throw container.fail(.effects, "'\(name)' is not one of \(known)")
            }
            return effect
        }
    }

    /// `scale`, `unit` and `displayMultiplier`, checked against the kind.
    private mutating func decodeDisplay(_ container: KeyedDecodingContainer<CodingKeys>) throws {
        if case .systemZoom = kind { scale = .log }
        if let chosen = try container.decodeEnum(SliderScale.self, forKey: .scale) {
            guard let values = kind.sliderValues else { throw container.fail(.scale, "a picker has no scale") }
            if chosen == .log, values.bounds.lowerBound <= 0 {
                throw container.fail(.scale, "'log' needs a range above 0 (this one starts at \(values.bounds.lowerBound.shortDescription))")
            }
            scale = chosen
        }
        unit = try container.decodeIfPresent(String.self, forKey: .unit)
        if unit != nil, kind.sliderValues == nil { throw container.fail(.unit, "a picker has titles, not a unit") }
        displayMultiplier = try container.decodeIfPresent(Double.self, forKey: .displayMultiplier)
        if let displayMultiplier {
            guard case .systemZoom = kind else { throw container.fail(.displayMultiplier, "only a systemZoom control has one") }
            guard displayMultiplier > 0, displayMultiplier.isFinite else { throw container.fail(.displayMultiplier, "must be above 0") }
        }
    }

    private static func sliderValues(_ container: KeyedDecodingContainer<CodingKeys>,
                                     defaultRange: ClosedRange<Double>?) throws -> SliderValues {
        for key in [CodingKeys.count, .titles] where container.contains(key) {
            throw container.fail(key, "'\(key.stringValue)' belongs to a picker; a slider has 'range' (and 'step') or 'values'")
        }
        if let values = try container.decodeIfPresent([WrittenNumberField].self, forKey: .values)?.map(\.value) {
            if container.contains(.range) { throw container.fail(.range, "give 'range' or 'values', not both") }
            if container.contains(.step) { throw container.fail(.step, "a list of 'values' has no step") }
            guard values.count >= 2 else { throw container.fail(.values, "needs at least 2 values") }
            if let far = values.first(where: { !(abs($0) <= maximumMagnitude) }) {
                throw container.fail(.values, "\(far.shortDescription) is beyond what a control holds: values are at most \(maximumMagnitude.shortDescription) in magnitude")
            }
            if Set(values).count != values.count { throw container.fail(.values, "has the same value twice") }
            return .list(values)
        }
        let bounds = try container.decodeIfPresent([WrittenNumberField].self, forKey: .range)?.map(\.value)
        let range: ClosedRange<Double>
        if let bounds {
            guard bounds.count == 2 else { throw container.fail(.range, "expected [lower, upper]") }
            guard bounds[0] < bounds[1] else {
                throw container.fail(.range, "lower bound \(bounds[0].shortDescription) is not below upper bound \(bounds[1].shortDescription)")
            }
            if let far = bounds.first(where: { !(abs($0) <= maximumMagnitude) }) {
                throw container.fail(.range, "\(far.shortDescription) is beyond what a control holds: bounds are at most \(maximumMagnitude.shortDescription) in magnitude")
            }
            range = bounds[0]...bounds[1]
        } else if let defaultRange {
            range = defaultRange
        } else {
            throw container.fail(.range, "missing: a slider needs 'range' ([lower, upper]) or 'values'")
        }
        let step = try container.decodeIfPresent(WrittenNumberField.self, forKey: .step).map { WrittenNumber.step($0.value) }
        if let step {
            guard step > 0 else { throw container.fail(.step, "must be above 0") }
            guard step <= range.upperBound - range.lowerBound else {
                throw container.fail(.step, "\(step.shortDescription) is larger than the range")
            }
            guard (range.upperBound - range.lowerBound) / step <= maximumSteps else {
                throw container.fail(.step, "\(step.shortDescription) makes more than \(maximumSteps.shortDescription) steps of the range; a slider has at most \(maximumSteps.shortDescription) steps")
            }
        }
        return .range(range, step: step)
    }

    /// Whether `value` is on one of a stepped range's steps (any value is, without a step), to a
    /// millionth of a step: a third of an EV written as 0.3333333333333333 is on it.
    static func isOnStep(_ value: Double, _ values: SliderValues) -> Bool {
        guard case .range(let range, let step?) = values else { return true }
        let steps = (value - range.lowerBound) / step
        return abs(steps - steps.rounded()) <= 1e-6
    }

    /// The board's `initial`, and the number written when the control took the value nearest it.
    private static func initialValue(_ container: KeyedDecodingContainer<CodingKeys>, kind: ControlKind) throws -> (ControlValue, Double?) {
        switch kind {
        case .picker(let count, let titles):
            if let title = try? container.decodeIfPresent(String.self, forKey: .initial) {
                guard let index = titles?.firstIndex(of: title) else {
                    throw container.fail(.initial, "'\(title)' is not one of the titles")
                }
                return (.index(index), nil)
            }
            let index = try container.decodeIfPresent(Int.self, forKey: .initial) ?? 0
            guard (0..<count).contains(index) else { throw container.fail(.initial, "index \(index) is outside 0...\(count - 1)") }
            return (.index(index), nil)
        case .slider(let values), .systemZoom(let values), .systemExposureBias(let values), .lensPosition(let values):
            let fallback: Double
            switch kind {
            case .systemZoom: fallback = values.bounds.lowerBound
            case .systemExposureBias: fallback = min(max(0, values.bounds.lowerBound), values.bounds.upperBound)
            default: fallback = values.bounds.lowerBound
            }
            guard let value = try container.decodeIfPresent(WrittenNumberField.self, forKey: .initial)?.value else {
                // The default 0 EV may fall between the steps of a range that does not straddle it evenly.
                return (.number(isOnStep(fallback, values) ? fallback : ControlsStateMachine.snap(fallback, values)), nil)
            }
            guard let taken = values.nearest(to: value) else {
                throw container.fail(.initial, "\(value.shortDescription) is outside \(values.typedValueRule)")
            }
            if values.isRoundingNoise(value, from: taken) { return (.number(taken), nil) }
            // A step written rounded to too few decimals (0.33 for a third) leaves values off it:
            // the step is what is wrong, and snapping the value to it would hide that.
            if case .range(let range, let step?) = values, let fraction = WrittenNumber.nearbyFraction(of: step) {
                throw container.fail(.initial, "\(value.shortDescription) is not on a step of \(step.shortDescription) from \(range.lowerBound.shortDescription) (the nearest is \(taken.shortDescription)); for steps of \(fraction) write the step as \"\(fraction)\" (or to three decimals)")
            }
            return (.number(taken), value)
        }
    }
}

/// A number in a board file: a JSON number, or a string holding a decimal or a fraction (`"1/3"`),
/// read by ``WrittenNumber``.
struct WrittenNumberField: Decodable {
    var value: Double

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Double.self) {
            value = number
            return
        }
        let fail = { (message: String) in FieldError(path: FieldPath(codingPath: decoder.codingPath), message: message) }
        guard let text = try? container.decode(String.self) else { throw fail("expected a number or a fraction such as \"1/3\"") }
        guard let number = WrittenNumber.parse(text) else {
            throw fail("'\(text.prefix(64))' is not a number or a fraction such as \"1/3\"")
        }
        value = number
    }
}
