import Testing
@testable import ShutterCore

/// A control disabled through the API (defect 9) is skipped and cannot be adjusted,
/// whatever the controls are doing when it goes: Boards/README's promise.
@Suite("Controls: a disabled control is skipped and never adjusted")
struct DisabledControlTests {
    /// The chooser open (a double light press) with its highlight moved one control on, to
    /// `exposure`, by a swipe of one pad that rests there; the current control is still `zoom`.
    static func chooserOnExposure() -> GestureStateMachine {
        var machine = ControlsSituation.choosing.machine()
        var trace = TraceBuilder(Rigs.board())
        trace.swipe([0, 1], at: 1100, perPad: 400, overlap: 100)
        _ = trace.run(on: &machine, finish: false)
        var events: [ShutterEvent] = []
        machine.advance(to: ms(2000), into: &events)
        return machine
    }

    @Test func disablingTheHighlightedControlMovesTheHighlightOffIt() throws {
        var machine = Self.chooserOnExposure()
        #expect(machine.controlsSnapshot.highlighted == "exposure")
        #expect(machine.controlsSnapshot.current == "zoom")
        var events: [ShutterEvent] = []
        try machine.setControlEnabled("exposure", false, at: ms(2100), into: &events)
        // The next enabled control on, as a swipe would land: the chooser stays open.
        #expect(events.map(\.summary) == ["controlEnabled exposure false", "controlHighlighted filter"])
        #expect(machine.controlsSnapshot.state == "choosing")
        #expect(machine.controlsSnapshot.highlighted == "filter")
    }

    @Test func aLightPressAfterTheHighlightedControlWasDisabledNeverSelectsIt() throws {
        var machine = Self.chooserOnExposure()
        var events: [ShutterEvent] = []
        try machine.setControlEnabled("exposure", false, at: ms(2100), into: &events)
        var trace = TraceBuilder(Rigs.board())
        trace.press("half", at: 2200, for: 80)
        trace.swipe([0, 1, 2, 3, 4], at: 3000, perPad: 150)
        events = trace.run(on: &machine)
        #expect(!events.contains { $0.summary.hasPrefix("controlSelected exposure") })
        #expect(!events.contains { $0.summary.hasPrefix("controlValue exposure") })
        #expect(events.contains { $0.summary == "controlSelected filter" })
        #expect(machine.controlsSnapshot.current == "filter")
    }

    /// The chooser chooses among enabled controls, and the current one is gone: it closes on the
    /// control that takes over, as the API's `select` closes it (`chooser ended`, then
    /// `controlSelected`), never reporting a selection while it stays open on a disabled control.
    @Test func disablingTheCurrentControlWithTheChooserOpenClosesItOnTheNext() throws {
        var machine = ControlsSituation.choosing.machine()
        #expect(machine.controlsSnapshot.highlighted == "zoom")
        var events: [ShutterEvent] = []
        try machine.setControlEnabled("zoom", false, at: ms(1100), into: &events)
        #expect(events.map(\.summary) == ["controlEnabled zoom false", "chooser ended", "controlSelected exposure"])
        #expect(machine.controlsSnapshot.state == "active")
        #expect(machine.controlsSnapshot.current == "exposure")
        #expect(machine.controlsSnapshot.highlighted == nil)
    }

    /// Disabling the current control while the chooser is open on another one: the chooser closes
    /// on the control taking over, whichever was highlighted, since the choice it offered changed.
    @Test func disablingTheCurrentControlWhileAnotherIsHighlightedClosesTheChooser() throws {
        var machine = Self.chooserOnExposure()
        var events: [ShutterEvent] = []
        try machine.setControlEnabled("zoom", false, at: ms(2100), into: &events)
        #expect(events.map(\.summary) == ["controlEnabled zoom false", "chooser ended", "controlSelected exposure"])
        #expect(machine.controlsSnapshot.current == "exposure")
    }

    @Test func disablingTheLastEnabledControlWithTheChooserOpenClosesTheControls() throws {
        var machine = ControlsSituation.choosing.machine()
        var events: [ShutterEvent] = []
        try machine.setControlEnabled("exposure", false, at: ms(1100), into: &events)
        try machine.setControlEnabled("filter", false, at: ms(1100), into: &events)
        events.removeAll()
        try machine.setControlEnabled("zoom", false, at: ms(1200), into: &events)
        #expect(events.map(\.summary) == ["controlEnabled zoom false", "chooser ended", "controlsInactive toggle"])
        #expect(machine.controlsSnapshot.state == "inactive")
    }

    /// A swipe while the chooser is open never lands on a disabled control (a light press after
    /// one is aLightPressAfterTheHighlightedControlWasDisabledNeverSelectsIt).
    @Test func aSwipeInTheChooserSkipsADisabledControl() throws {
        var machine = ControlsSituation.choosing.machine()
        var events: [ShutterEvent] = []
        try machine.setControlEnabled("exposure", false, at: ms(1050), into: &events)
        var trace = TraceBuilder(Rigs.board())
        trace.swipe([0, 1, 2], at: 1100, perPad: 150)
        events = trace.run(on: &machine, finish: false)
        #expect(events.filter { $0.summary.hasPrefix("controlHighlighted") }.map(\.summary) == ["controlHighlighted filter"])
    }
}
