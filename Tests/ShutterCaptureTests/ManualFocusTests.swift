import Testing
import ShutterCore
@testable import ShutterCapture

private func ms(_ value: Double) -> Instant { Instant(rawValue: Int64(value * 1_000_000)) }

@Suite("ManualFocus")
struct ManualFocusTests {
    /// What an input does, as the action's kind and the mode it leaves in effect.
    enum Did: Hashable { case none, moveLens, takeLens, giveBack }

    static func kind(_ action: ManualFocus.Action) -> Did {
        switch action {
        case .none: .none
        case .moveLens: .moveLens
        case .takeLens: .takeLens
        case .giveBack: .giveBack
        }
    }

    typealias Step = (input: ManualFocus.Input, did: Did, byHand: Bool)

    @Test("who drives the lens", arguments: [
        ("continuous: the starting value leaves the lens to autofocus", AutofocusMode.continuous, ManualFocusEnd.prepare, [
            (ManualFocus.Input.startingValue(control: "focus"), Did.none, false),
        ]),
        ("manual: the starting value moves the lens, a move too, and nothing gives it back", .manual, .prepare, [
            (.startingValue(control: "focus"), .moveLens, false),
            (.moved(control: "focus"), .moveLens, false),
            (.halfPress, .none, false),
        ]),
        ("continuous: a move takes the lens once, the next half press gives it back", .continuous, .prepare, [
            (.moved(control: "focus"), .takeLens, true),
            (.moved(control: "focus"), .moveLens, true),
            (.doubleLightPress(currentControl: "focus"), .none, true),
            (.halfPress, .giveBack, false),
            (.halfPress, .none, false),
        ]),
        ("onPrepare: a reload's starting value keeps the lens with the slider that holds it", .onPrepare, .prepare, [
            (.moved(control: "focus"), .takeLens, true),
            (.startingValue(control: "focus"), .moveLens, true),
        ]),
        ("doubleLightPress: only on the focus slider, and a half press keeps the slider's focus", .continuous, .doubleLightPress, [
            (.moved(control: "focus"), .takeLens, true),
            (.halfPress, .none, true),
            (.doubleLightPress(currentControl: "zoom"), .none, true),
            (.doubleLightPress(currentControl: nil), .none, true),
            (.doubleLightPress(currentControl: "focus"), .giveBack, false),
        ]),
    ] as [(String, AutofocusMode, ManualFocusEnd, [Step])])
    func drives(what: String, mode: AutofocusMode, end: ManualFocusEnd, steps: [Step]) {
        var focus = ManualFocus(boardMode: mode, endsOn: end)
        for (index, step) in steps.enumerated() {
            let action = focus.input(step.input, at: ms(1000 + Double(index)))
            #expect(Self.kind(action) == step.did, "\(what): step \(index)")
            #expect(focus.isByHand == step.byHand, "\(what): step \(index)")
        }
    }

    @Test func theChangeSaysWhoHasTheLensAndUntilWhen() {
        var focus = ManualFocus(boardMode: .continuous, endsOn: .prepare)
        guard case .takeLens(let taken) = focus.input(.moved(control: "focus"), at: ms(1000)) else {
            Issue.record("a move under continuous autofocus takes the lens")
            return
        }
        #expect(taken.mode == .manual && taken.until == .prepare && taken.at == ms(1000))
        #expect(taken.reason == "the focus slider 'focus' took the lens from continuous autofocus: manual focus until the next half press (prepare)")
        let line = CaptureEvent.focusMode(taken).json.description
        #expect(line.contains(#""event": "focusMode""#) && line.contains(#""control": "focus""#) && line.contains(#""until": "prepare""#), "\(line)")
        guard case .giveBack(let given) = focus.input(.halfPress, at: ms(2000)) else {
            Issue.record("the half press gives it back")
            return
        }
        #expect(given.mode == .continuous && given.until == nil)
        #expect(given.reason == "a half press (prepare) gave the lens back to continuous autofocus")
    }
}
