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

/// How a control's value moves along the strip and reads as text: pure maths, no state.
///
/// Every control is laid on a line of *units*: one step of a stepped slider, one
/// entry of a list slider, one item of a picker, or 1/40 of a continuous range
/// (of its logarithm for a `log` scale). Slow movement moves one unit per half
/// pad (pickers: one item per pad, their detent); faster movement multiplies
/// that by ``gain(padsPerSecond:)``, as a scroll wheel accelerates.
struct ControlScale: Sendable {
    let kind: ControlKind
    let scale: SliderScale
    /// Units from one end of the range to the other.
    let units: Double
    /// Units a slow movement of one pad moves.
    let unitsPerPad: Double
    /// The most the speed multiplies movement by: enough for a quick end-to-end swipe to cover the range.
    let maximumGain: Double

    /// A continuous slider's range in slow steps: a person can set any of at least this many values.
    static let continuousUnits = 40.0
    /// Below this speed (pads per second) movement is fine control: no acceleration.
    static let slowPadsPerSecond = 3.0
    /// At and above this speed movement gets the full gain.
    static let fastPadsPerSecond = 8.0
    /// How much more than the whole range a quick end-to-end swipe would cover, so it surely reaches the end.
    static let fastSwipeReach = 1.5

    init(spec: ControlSpec, padSpan: Double) {
        kind = spec.kind
        scale = spec.scale
        switch spec.kind {
        case .picker(let count, _):
            units = Double(count - 1)
            unitsPerPad = 1
        case .slider(let values), .systemZoom(let values), .systemExposureBias(let values), .lensPosition(let values):
            switch values {
            case .range(let range, let step?):
                units = SliderValues.steps(in: range, of: step)
            case .range:
                units = Self.continuousUnits
            case .list(let list):
                units = Double(list.count - 1)
            }
            unitsPerPad = 2
        }
        maximumGain = max(1, Self.fastSwipeReach * units / (unitsPerPad * max(padSpan, 1)))
    }

    /// How many times faster than slow movement a movement at `padsPerSecond` moves the value:
    /// 1 up to 3 pads/s, rising in a straight line to ``maximumGain`` at 8 pads/s, flat above.
    func gain(padsPerSecond: Double) -> Double {
        let speed = abs(padsPerSecond)
        guard speed > Self.slowPadsPerSecond else { return 1 }
        let ramp = min((speed - Self.slowPadsPerSecond) / (Self.fastPadsPerSecond - Self.slowPadsPerSecond), 1)
        return 1 + (maximumGain - 1) * ramp
    }

    /// The units a movement of `deltaPads` at `padsPerSecond` moves.
    func units(deltaPads: Double, padsPerSecond: Double) -> Double {
        deltaPads * unitsPerPad * gain(padsPerSecond: padsPerSecond)
    }

    /// Where `value` sits on the unit line.
    func position(of value: ControlValue) -> Double {
        switch (kind, value) {
        case (.picker, .index(let index)):
            return Double(index)
        case (_, .number(let number)):
            guard let values = kind.sliderValues else { return 0 }
            switch values {
            case .range(let range, let step?):
                return ((number - range.lowerBound) / step).rounded()
            case .range(let range, nil):
                let fraction: Double
                if scale == .log, range.lowerBound > 0 {
                    fraction = log(number / range.lowerBound) / log(range.upperBound / range.lowerBound)
                } else {
                    fraction = (number - range.lowerBound) / (range.upperBound - range.lowerBound)
                }
                return min(max(fraction, 0), 1) * units
            case .list(let list):
                return Double(list.firstIndex(of: number) ?? 0)
            }
        default:
            return 0
        }
    }

    /// The value at `position` (clamped to the line), snapped to what the control can take.
    func value(at position: Double) -> ControlValue {
        // NaN compares false both ways and would pass through min and max (and trap Int() below).
        let clamped = position.isNaN ? 0 : min(max(position, 0), units)
        switch kind {
        case .picker:
            return .index(Int(clamped.rounded()))
        case .slider(let values), .systemZoom(let values), .systemExposureBias(let values), .lensPosition(let values):
            switch values {
            case .range(let range, let step?):
                return .number(ControlsStateMachine.snap(range.lowerBound + clamped.rounded() * step, values))
            case .range(let range, nil):
                let fraction = clamped / units
                let number: Double
                if scale == .log, range.lowerBound > 0 {
                    number = range.lowerBound * pow(range.upperBound / range.lowerBound, fraction)
                } else {
                    let width = range.upperBound - range.lowerBound
                    // A range wider than a Double (±1e308, which `check` refuses) is blended, never NaN.
                    number = width.isFinite ? range.lowerBound + fraction * width
                                            : range.lowerBound * (1 - fraction) + range.upperBound * fraction
                }
                // Four decimals: 2.3784 reads well and keeps 40 slow steps apart.
                let rounded = abs(number) < 1e15 ? (number * 1e4).rounded() / 1e4 : number
                return .number(min(max(rounded, range.lowerBound), range.upperBound))
            case .list(let list):
                return .number(list[Int(clamped.rounded())])
            }
        }
    }

    /// Whether `position` is at either end of the line.
    func isAtEnd(_ position: Double) -> Bool { position <= 0 || position >= units }
}

/// How a continuous slider maps movement to value.
public enum SliderScale: String, CaseIterable, Hashable, Sendable {
    /// Equal movement adds an equal amount.
    case linear
    /// Equal movement multiplies by an equal ratio (zoom: 1× → 2× is as far as 4× → 8×).
    case log
}

/// What a control's value reads as, for overlays, socket clients and logs.
public struct ControlDisplay: Hashable, Sendable {
    /// The control's label ("Zoom").
    public var label: String
    /// The value as the phone would show it: `2.0×`, `+⅓ EV`, `Mono`, `5 s`.
    public var text: String
    /// A picker item's title.
    public var title: String?

    public init(label: String, text: String, title: String? = nil) {
        self.label = label
        self.text = text
        self.title = title
    }

    /// The display of `value` for `spec`.
    public init(_ value: ControlValue, of spec: ControlSpec) {
        label = spec.label
        switch (spec.kind, value) {
        case (.picker(_, let titles), .index(let index)):
            title = titles.flatMap { $0.indices.contains(index) ? $0[index] : nil } ?? String(index)
            text = title!
        case (.systemZoom, .number(let number)):
            title = nil
            text = Self.decimal(number * (spec.displayMultiplier ?? 1), places: 1) + "×"
        case (.systemExposureBias, .number(let number)):
            title = nil
            text = Self.exposure(number)
        case (_, .number(let number)):
            title = nil
            let digits = Self.decimal(number, places: 2, trimmed: true)
            text = spec.unit.map { "\(digits) \($0)" } ?? digits
        case (_, .index(let index)):
            title = nil
            text = String(index)
        }
    }

    /// `number` with `places` decimals; `trimmed` drops trailing zeros. The minus is U+2212.
    static func decimal(_ number: Double, places: Int, trimmed: Bool = false) -> String {
        // Integer arithmetic, not String(format:): an event carries one of these on every value.
        var scale: Int64 = 1
        for _ in 0..<places { scale *= 10 }
        // Beyond what the digits hold (and for inf and nan) the number reads as itself, `1e+19`: a
        // cap would show a different number, and Int64 traps on what it cannot hold. Boards keep
        // values within ControlSpec.maximumMagnitude; this is for everything else.
        let magnitude = abs(number)
        guard magnitude < 1e15, magnitude * Double(scale) < 9e18 else {
            return (number < 0 ? "\u{2212}" : "") + String(describing: magnitude)
        }
        let units = Int64((magnitude * Double(scale)).rounded())
        var text = String(units / scale)
        if places > 0 {
            var fraction = String(units % scale)
            while fraction.count < places { fraction = "0" + fraction }
            if trimmed { while fraction.hasSuffix("0") { fraction.removeLast() } }
            if !fraction.isEmpty { text += "." + fraction }
        }
        return (number < 0 && units != 0 ? "\u{2212}" : "") + text
    }

    /// Exposure bias as a photographer writes it: `0 EV`, `+⅓ EV`, `−1 EV`, `+1⅔ EV`, else one decimal.
    static func exposure(_ ev: Double) -> String {
        let thirds = (ev * 3).rounded()
        let sign = ev > 0 ? "+" : (ev < 0 ? "\u{2212}" : "")
        // Thirds count in an Int below: a larger (or non-finite) bias is written out by `decimal`.
        guard abs(ev) < 1e15, abs(ev * 3 - thirds) < 1e-6 else { return sign + decimal(abs(ev), places: 1, trimmed: true) + " EV" }
        if thirds == 0 { return "0 EV" }
        let whole = Int(abs(thirds)) / 3
        let fraction = ["", "⅓", "⅔"][Int(abs(thirds)) % 3]
        return sign + (whole > 0 ? String(whole) : "") + fraction + " EV"
    }
}
