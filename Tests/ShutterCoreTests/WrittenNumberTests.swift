import Testing
@testable import ShutterCore

@Suite("WrittenNumber")
struct WrittenNumberTests {
    static let texts: [(String, Double?)] = [
        ("0.5", 0.5), ("-2", -2), ("+1.25", 1.25), ("1e-3", 0.001), (" 1/3 ", 1.0 / 3), ("-2/3", -2.0 / 3),
        ("1.5/3", 0.5), ("1/125", 0.008),
        ("inf", nil), ("nan", nil), ("0x10", nil), ("1/0", nil), ("1/-3", nil), ("1/3/4", nil), ("/3", nil), ("1/", nil),
        ("", nil), (".", nil), ("1e", nil), ("1..2", nil), ("1e400", nil), ("Mono", nil),
    ]

    @Test("decimals and fractions are read; anything else is not a number", arguments: texts)
    func parse(text: String, value: Double?) {
        #expect(WrittenNumber.parse(text) == value)
    }

    static let counts: [(Double, Int)] = [(0.333, 3), (2.0, 0), (1e-7, 7), (2.5e-5, 6), (1e16, 0), (-1.667, 3), (0.3330, 3)]

    @Test("decimals are counted in the number's shortest form", arguments: counts)
    func decimals(number: Double, count: Int) {
        #expect(WrittenNumber.decimals(number) == count)
    }

    /// Three decimals mark a rounded fraction; fewer are a step of their own.
    static let steps: [(Double, Double)] = [
        (0.333, 1.0 / 3), (0.3333, 1.0 / 3), (0.667, 2.0 / 3), (0.167, 1.0 / 6), (1.333, 4.0 / 3), (0.143, 1.0 / 7), (0.083, 1.0 / 12),
        (0.3, 0.3), (0.33, 0.33), (0.25, 0.25), (0.126, 0.126), (0.005, 0.005), (2, 2),
    ]

    @Test("a decimal step rounded to three places is the fraction it rounds", arguments: steps)
    func step(written: Double, taken: Double) {
        #expect(WrittenNumber.step(written) == taken)
    }
}
