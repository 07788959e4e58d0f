import Testing
@testable import ShutterCore

/// A value a person types (`shutter ctl set`, the API, Home Assistant) is taken as the nearest
/// value the control can take when it lies within half a step of it; farther out it is refused.
@Suite("Values people type")
struct TypedValueTests {
    static let exposure = ControlSpec(id: "exposure", label: "Exposure", kind: .systemExposureBias(.range(-2...2, step: 1.0 / 3)),
                                      initial: .number(0))
    static let zoom = ControlSpec(id: "zoom", label: "Zoom", kind: .systemZoom(.range(1...8, step: 0.5)), initial: .number(1))
    static let stops = ControlSpec(id: "stops", label: "Stops", kind: .slider(.list([1, 2, 4, 8])), initial: .number(1))
    static let level = ControlSpec(id: "level", label: "Level", kind: .slider(.range(0...1, step: nil)), initial: .number(0))
    /// A range whose upper bound is no step: its last step is 0.9.
    static let tenths = ControlSpec(id: "tenths", label: "Tenths", kind: .slider(.range(0...1, step: 0.3)), initial: .number(0))

    static func taken(_ number: Double, _ spec: ControlSpec) -> Double? {
        guard case .number(let value)? = try? ControlsStateMachine.accepted(.number(number), for: spec) else { return nil }
        return value
    }

    static let thirds: [(Double, Double?)] = [
        // On a step, and a step's own rounding noise.
        (0, 0), (1.0 / 3, 0.333333333333), (-0.3333333333333333, -0.333333333333), (2, 2), (-2, -2),
        // Within half a step of one, either side.
        (0.33, 0.333333333333), (0.3, 0.333333333333), (0.333, 0.333333333333), (0.4, 0.333333333333),
        (-1.6667, -1.666666666667), (-1.7, -1.666666666667), (1.5, 1.666666666667), (0.1, 0),
        // Within half a step past a bound: the bound.
        (2.1, 2), (-2.16, -2),
        // More than half a step past a bound: out of range.
        (2.2, nil), (-2.17, nil), (9, nil), (-100, nil),
    ]

    @Test("a value within half a step of an exposure step is that step", arguments: thirds)
    func exposureSteps(number: Double, expected: Double?) throws {
        let value = Self.taken(number, Self.exposure)
        if let expected, let value {
            #expect(abs(value - expected) < 1e-12, "\(number) → \(value)")
        } else {
            #expect(value == expected, "\(number)")
        }
    }

    /// Exactly halfway between two steps, the one farther from zero: a rule that reads the same
    /// on both sides of zero (−⅙ EV is −⅓, as +⅙ is +⅓), as rounding on paper does.
    @Test("a value exactly halfway between two steps is the one farther from zero", arguments: [
        (1.0 / 6, 0.333333333333), (-1.0 / 6, -0.333333333333), (0.5, 0.666666666667),
    ])
    func halfwayIsAwayFromZero(number: Double, expected: Double) throws {
        let value = try #require(Self.taken(number, Self.exposure))
        #expect(abs(value - expected) < 1e-12, "\(number) → \(value)")
    }

    static let zoomSteps: [(Double, Double?)] = [
        (2.2, 2), (2.3, 2.5), (2.25, 2.5), (1.75, 2), (8.25, 8), (0.75, 1), (8.26, nil), (0.74, nil), (0, nil),
    ]

    @Test("a zoom factor snaps to its step; exactly half a step past a bound is the bound", arguments: zoomSteps)
    func zoomStepsSnap(number: Double, expected: Double?) {
        #expect(Self.taken(number, Self.zoom) == expected, "\(number)")
    }

    /// The last step of a range whose bound is no step takes the values within half a step of
    /// it, those past the bound too.
    @Test("the last step of a range ending off its steps", arguments: [(1.0, 0.9), (1.05, 0.9), (0.95, 0.9), (1.06, nil), (-0.15, 0)] as [(Double, Double?)])
    func lastStepOfARangeOffItsSteps(number: Double, expected: Double?) {
        #expect(Self.taken(number, Self.tenths) == expected, "\(number)")
    }

    /// A list's item takes the values nearer to it than to its neighbours; the first and last
    /// take as far outward as half the gap to their one neighbour.
    static let listValues: [(Double, Double?)] = [
        (1, 1), (2.9, 2), (3, 4), (3.1, 4), (5.9, 4), (6, 8), (1.4, 1), (1.5, 2),
        (0.5, 1), (0.4, nil), (10, 8), (10.1, nil), (-1, nil),
    ]

    @Test("a list value takes the values nearer to it than to its neighbours", arguments: listValues)
    func listItems(number: Double, expected: Double?) {
        #expect(Self.taken(number, Self.stops) == expected, "\(number)")
    }

    /// A list along the strip in descending order has the same items, each taking the same values.
    @Test func aDescendingListTakesTheSameValues() {
        let descending = ControlSpec(id: "stops", label: "Stops", kind: .slider(.list([8, 4, 2, 1])), initial: .number(8))
        for (number, expected) in Self.listValues {
            #expect(Self.taken(number, descending) == expected, "\(number)")
        }
    }

    @Test("a range without steps takes any value inside it and none outside", arguments: [
        (0.5, 0.5), (0.123456, 0.123456), (1, 1), (1.01, nil), (-0.01, nil),
    ] as [(Double, Double?)])
    func continuousRange(number: Double, expected: Double?) {
        #expect(Self.taken(number, Self.level) == expected, "\(number)")
    }

    @Test func aValueOutOfRangeSaysTheRangeAndTheStep() {
        #expect(throws: ControlRefusal(.outOfRange, "value 2.2 is out of range for 'exposure' (-2...2 in steps of 0.333333; a value within half a step of a step is taken as that step)")) {
            try ControlsStateMachine.accepted(.number(2.2), for: Self.exposure)
        }
        #expect(throws: ControlRefusal(.outOfRange, "value 0.4 is out of range for 'stops' (1, 2, 4, 8; a value nearer to one of these than to its neighbours is taken as it)")) {
            try ControlsStateMachine.accepted(.number(0.4), for: Self.stops)
        }
    }

    /// A picker takes an index or a title, never a snapped number.
    @Test func aPickerIsUntouched() {
        let picker = ControlSpec(id: "filter", label: "Filter", kind: .picker(count: 3, titles: ["None", "Mono", "Vivid"]), initial: .index(0))
        #expect(throws: ControlRefusal.self) { try ControlsStateMachine.accepted(.number(1.2), for: picker) }
        #expect(throws: ControlRefusal.self) { try ControlsStateMachine.accepted(.index(3), for: picker) }
        #expect(throws: ControlRefusal.self) { try ControlsStateMachine.accepted(.index(-1), for: picker) }
        #expect((try? ControlsStateMachine.accepted(.index(2), for: picker)) == .index(2))
    }

    /// A set says which value it took: the number given comes back when it was another, with a
    /// note for people; a step given as itself (or as its rounding noise) has none.
    @Test func aSetSaysWhichValueItTook() throws {
        var machine = GestureStateMachine(board: Rigs.board())
        var events: [ShutterEvent] = []
        let snapped = try machine.setControl("exposure", to: .number(0.33), at: ms(100), into: &events)
        #expect(snapped.value == .number(0.333333333333))
        #expect(snapped.given == 0.33)
        #expect(snapped.note == "0.33 taken as +⅓ EV (0.333333)")
        guard case .controlValue("exposure", .number(let value), let display, _)? = events.last else {
            Issue.record("no controlValue: \(events.map(\.summary))")
            return
        }
        #expect(value == 0.333333333333 && display.text == "+⅓ EV")
        let exact = try machine.setControl("exposure", to: .number(-1.0 / 3), at: ms(200), into: &events)
        #expect(exact.given == nil && exact.note == nil)
        let picked = try machine.setControl("filter", to: .index(1), at: ms(300), into: &events)
        #expect(picked.given == nil && picked.note == nil && picked.display.text == "Mono")
    }

    @Test func nonFiniteValuesAreRefused() {
        for number in [Double.nan, .infinity, -.infinity] {
            #expect(throws: ControlRefusal.self) { try ControlsStateMachine.accepted(.number(number), for: Self.exposure) }
            #expect(throws: ControlRefusal.self) { try ControlsStateMachine.accepted(.number(number), for: Self.stops) }
        }
    }
}
