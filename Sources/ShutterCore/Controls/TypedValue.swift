/// The value a slider takes for a number a person gives it: the nearest it can take, within half
/// a step.
///
/// People type values rounded (`0.33` or `0.3` for a third of an EV, `1.9` for a zoom that steps
/// by halves), and a client such as Home Assistant's number slider sends its own decimals: each is
/// taken as the value it lies within half a step of, and a reply says which (``ControlSetting``).
/// For each kind of values:
/// - a stepped range: the nearest step, when the number lies within half a step of it. The first
///   and last steps take half a step beyond them, past the range's bounds too (`2.1` is +2 EV in
///   steps of ⅓); a number farther out is out of range.
/// - a list: the nearest value, that is the one the number lies nearer to than to its neighbours;
///   the first and last take as far outward as half the gap to their one neighbour.
/// - a range without steps: the number itself, inside the range.
///
/// Exactly halfway between two values, the one farther from zero: the rule reads the same on both
/// sides of zero (−⅙ EV is −⅓ as +⅙ is +⅓), as rounding on paper does.
extension SliderValues {
    /// How near a number must lie to count as a step, or as halfway between two, in steps (or in
    /// a list's gaps): binary fractions hold neither a third nor a sixth exactly.
    static let stepSlack = 1e-6

    /// The value the slider takes for `number`, by the rule above; nil when `number` lies out of
    /// range (or is not finite).
    public func nearest(to number: Double) -> Double? {
        guard number.isFinite else { return nil }
        switch self {
        case .range(let range, nil):
            let slack = 1e-9 * max(1, range.upperBound - range.lowerBound)
            guard number >= range.lowerBound - slack, number <= range.upperBound + slack else { return nil }
            return min(max(number, range.lowerBound), range.upperBound)
        case .range(let range, let step?):
            let lastStep = Self.steps(in: range, of: step)
            let position = (number - range.lowerBound) / step
            guard position >= -0.5 - Self.stepSlack, position <= lastStep + 0.5 + Self.stepSlack else { return nil }
            // The steps on either side of it, the first or last for a number past them.
            let below = position.rounded(.down)
            let candidates = [below, below + 1].map { ControlsStateMachine.snap(range.lowerBound + min(max($0, 0), lastStep) * step, self) }
            let taken = Self.nearer(number, candidates[0], candidates[1])
            // A number on the step but for rounding noise is kept as given: 1/3 sent as
            // 0.3333333333333333 is stored and reported as sent.
            return isRoundingNoise(number, from: taken) ? min(max(number, range.lowerBound), range.upperBound) : taken
        case .list(let list):
            let sorted = list.sorted()
            guard sorted.count > 1 else { return sorted.first.flatMap { abs($0 - number) <= 1e-9 * max(1, abs($0)) ? $0 : nil } }
            let firstGap = sorted[1] - sorted[0], lastGap = sorted[sorted.count - 1] - sorted[sorted.count - 2]
            guard number >= sorted[0] - firstGap / 2 * (1 + Self.stepSlack),
                  number <= sorted[sorted.count - 1] + lastGap / 2 * (1 + Self.stepSlack) else { return nil }
            // The first value at or above the number and the one below it are the two candidates.
            let above = sorted.firstIndex { $0 >= number } ?? sorted.count - 1
            return Self.nearer(number, sorted[max(above - 1, 0)], sorted[above])
        }
    }

    /// How many whole steps of `step` the range holds: its last step is that many from the lower bound.
    static func steps(in range: ClosedRange<Double>, of step: Double) -> Double {
        ((range.upperBound - range.lowerBound) / step + 1e-9).rounded(.down)
    }

    /// The highest value the slider takes: a stepped range's last step (below the upper bound
    /// when that is no step), else the upper bound, or the list's highest value.
    public var highest: Double {
        switch self {
        case .range(let range, let step?): ControlsStateMachine.snap(range.lowerBound + Self.steps(in: range, of: step) * step, self)
        case .range(let range, nil): range.upperBound
        case .list(let list): list.max()!
        }
    }

    /// Of the neighbouring values `lower` and `upper` (`lower` ≤ `upper`), the one nearer `number`;
    /// exactly halfway (to ``stepSlack`` of the gap), the one farther from zero, the upper when
    /// both are as far.
    private static func nearer(_ number: Double, _ lower: Double, _ upper: Double) -> Double {
        guard lower != upper else { return lower }
        let fraction = (number - lower) / (upper - lower)
        if abs(fraction - 0.5) <= stepSlack { return abs(upper) >= abs(lower) ? upper : lower }
        return fraction < 0.5 ? lower : upper
    }

    /// Whether `number` is `value` but for rounding noise: within a millionth of a step (a third
    /// written 0.3333333333333333 is ⅓), else within a billionth of the value or of a range's width.
    public func isRoundingNoise(_ number: Double, from value: Double) -> Bool {
        switch self {
        case .range(_, let step?): abs(number - value) <= step * Self.stepSlack
        case .range(let range, nil): abs(number - value) <= 1e-9 * max(1, range.upperBound - range.lowerBound)
        case .list: abs(number - value) <= 1e-9 * max(1, abs(value))
        }
    }

    /// How the values read in a refusal: the range and its steps, or the list, and the rule.
    var typedValueRule: String {
        switch self {
        case .range(let range, nil):
            "\(range.lowerBound.shortDescription)...\(range.upperBound.shortDescription)"
        case .range(let range, let step?):
            "\(range.lowerBound.shortDescription)...\(range.upperBound.shortDescription) in steps of \(JSONLine.number(step, decimals: 6)); a value within half a step of a step is taken as that step"
        case .list(let list):
            list.map(\.shortDescription).joined(separator: ", ") + "; a value nearer to one of these than to its neighbours is taken as it"
        }
    }
}
