/// A control's number as a person writes it, in a board file, `shutter ctl` or the API.
///
/// A number is a decimal (`0.5`, `-2`, `1e-3`) or a fraction of two decimals (`1/3`, `-2/3`): a
/// third of an EV, the step cameras use, has no decimal.
///
/// A board's `step` written as a decimal to three or more decimals stands for the one fraction
/// with a denominator up to 12 that lies closer to it than half a unit of its last decimal
/// (`0.333` and `0.3333` for ⅓, `0.667` for ⅔). Fewer decimals are taken as written: `0.3` is a
/// step of three tenths, not a third (and `0.25` stays a quarter), so a decimal that is a step in
/// its own right keeps its meaning. The decimals counted are those of the number's shortest form
/// (`0.3330` has three). A value, unlike a step, needs no such rule: it is taken as the value the
/// control can take within half a step of it (``SliderValues/nearest(to:)``).
public enum WrittenNumber {
    /// The fewest decimals that mark a number as rounded: a third written `0.333` (three decimals)
    /// is within 0.0005 of it, while `0.33` and `0.3` are values of their own.
    static let roundedDecimals = 3

    /// The largest denominator a decimal step is taken as a fraction of: thirds, sixths, eighths
    /// and twelfths of an EV, and any two such fractions are at least 1/132 apart, far more than
    /// the 0.001 three decimals tell apart, so at most one fits.
    static let largestDenominator = 12

    /// The number `text` writes: a decimal or a fraction (`1/3`, `-2/3`, surrounding spaces
    /// allowed); nil for anything else, a zero or signed denominator, and what a Double cannot hold.
    public static func parse(_ text: String) -> Double? {
        let trimmed = text.trimmingWhitespace()
        let parts = trimmed.split(separator: "/", omittingEmptySubsequences: false)
        switch parts.count {
        case 1:
            return decimal(parts[0], signed: true)
        case 2:
            guard let numerator = decimal(parts[0], signed: true), let denominator = decimal(parts[1], signed: false),
                  denominator != 0 else { return nil }
            let value = numerator / denominator
            return value.isFinite ? value : nil
        default:
            return nil
        }
    }

    /// A plain decimal: an optional sign (when `signed`), digits with at most one point, an
    /// optional exponent. Swift's own reading also takes `inf`, `nan` and hexadecimal, which no
    /// person means as a control's value.
    private static func decimal(_ text: Substring, signed: Bool) -> Double? {
        var bytes = Array(text.utf8)[...]
        if signed, let first = bytes.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
        var digits = 0, points = 0
        while let byte = bytes.first, byte != UInt8(ascii: "e"), byte != UInt8(ascii: "E") {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digits += 1
            case UInt8(ascii: "."): points += 1
            default: return nil
            }
            bytes = bytes.dropFirst()
        }
        guard digits > 0, points <= 1 else { return nil }
        if !bytes.isEmpty {
            bytes = bytes.dropFirst()
            if let sign = bytes.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
            guard !bytes.isEmpty, bytes.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        }
        guard let value = Double(String(text)), value.isFinite else { return nil }
        return value
    }

    /// How many decimals `number` has in its shortest form: 0.333 has 3, 2 has 0, 1e-7 has 7.
    static func decimals(_ number: Double) -> Int {
        guard number.isFinite else { return 0 }
        let text = String(describing: abs(number))  // "0.333", "2.0", "1e-07", "2.5e-05", "1e+16"
        let parts = text.split(separator: "e", maxSplits: 1)
        let exponent = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
        let mantissa = parts[0].split(separator: ".", maxSplits: 1)
        var fraction = mantissa.count > 1 ? mantissa[1] : ""
        while fraction.hasSuffix("0") { fraction = fraction.dropLast() }
        return max(0, fraction.count - exponent)
    }

    /// Half a unit of `number`'s last decimal when it is written rounded (three or more decimals),
    /// else nil: how far from it the value it stands for may lie.
    static func roundingReach(of number: Double) -> Double? {
        let places = decimals(number)
        guard places >= roundedDecimals else { return nil }
        var unit = 1.0
        for _ in 0..<places { unit /= 10 }
        // Strictly closer than half: a value at the midpoint rounds either way and is not meant.
        return unit / 2 * (1 - 1e-9)
    }

    /// The step a board's `step` stands for: the fraction it rounds (`0.333` → ⅓), else itself.
    public static func step(_ written: Double) -> Double {
        guard let reach = roundingReach(of: written) else { return written }
        for denominator in 2...largestDenominator {
            let n = Double(denominator)
            let fraction = (written * n).rounded() / n
            if fraction > 0, fraction != written, abs(written - fraction) < reach { return fraction }
        }
        return written
    }

    /// The fraction (denominator up to 12) within 2% of `step`, for a hint when a decimal step
    /// with too few decimals leaves a value off it (`0.33` for ⅓: write "1/3").
    public static func nearbyFraction(of step: Double) -> String? {
        guard step > 0, step.isFinite else { return nil }
        for denominator in 2...largestDenominator {
            let n = Double(denominator)
            let numerator = (step * n).rounded()
            guard numerator >= 1, numerator < 1e6, numerator / n != step, abs(step - numerator / n) <= step / 50 else { continue }
            // In lowest terms: 4/12 is written 1/3.
            var (a, b) = (Int(numerator), denominator)
            var (x, y) = (a, b)
            while y != 0 { (x, y) = (y, x % y) }
            (a, b) = (a / x, b / x)
            if b > 1 { return "\(a)/\(b)" }
        }
        return nil
    }
}
