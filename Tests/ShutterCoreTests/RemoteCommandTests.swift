import Testing
@testable import ShutterCore

/// Where the controls are when a remote command comes.
enum ControlsSituation: String, CaseIterable, Sendable {
    case inactive, active, choosing

    /// The machine brought there by a light press (active) or a double light press (choosing).
    func machine(_ board: Board = Rigs.board()) -> GestureStateMachine {
        var machine = GestureStateMachine(board: board)
        var trace = TraceBuilder(board)
        switch self {
        case .inactive: break
        case .active: trace.press("half", at: 100, for: 80)
        case .choosing:
            trace.press("half", at: 100, for: 80)
            trace.press("half", at: 300, for: 80)
        }
        _ = trace.run(on: &machine, finish: false)
        var events: [ShutterEvent] = []
        machine.advance(to: ms(1000), into: &events)
        return machine
    }
}

/// Commands through the local API: each says what it changed, and a refused one says nothing.
@Suite("GestureStateMachine: remote commands")
struct RemoteCommandTests {
    @Test(arguments: [CapturePhase.began, .ended])
    func aRemoteCaptureBeginsThenEnds(captureOn: CapturePhase) {
        let board = Rigs.board(gestures: #"{"captureOn": "\#(captureOn.rawValue)"}"#)
        var machine = GestureStateMachine(board: board)
        var events: [ShutterEvent] = []
        #expect(machine.remoteCapture(at: ms(500), into: &events))
        #expect(events.map(\.summary) == ["capture began remote", "capture ended remote"])
        // One photo, on the phase the board takes it on, as for a press.
        let photos = events.filter { $0.photoInstant != nil }
        #expect(photos.count == 1)
        if case .capture(let phase, _, _, _, _, _, _)? = photos.first { #expect(phase.rawValue == captureOn.rawValue) }
        #expect(photos.first?.photoInstant == ms(500))
    }

    @Test func aRefusedRemoteCaptureEmitsNothing() {
        var machine = GestureStateMachine(board: Rigs.board())
        var events: [ShutterEvent] = []
        machine.setCaptureAvailable(false, at: ms(100), into: &events)
        events.removeAll()
        #expect(!machine.remoteCapture(at: ms(500), into: &events))
        #expect(events.map(\.summary) == [])
    }

    /// Selecting the current control changes nothing but an open chooser: `controlSelected` only
    /// comes from the chooser closing on it (as a light press there reports it), never twice.
    @Test(arguments: ControlsSituation.allCases)
    func selectingTheCurrentControlSaysSoAtMostOnce(situation: ControlsSituation) throws {
        var machine = situation.machine()
        var events: [ShutterEvent] = []
        try machine.selectControl("zoom", at: ms(1100), into: &events)
        let expected: [String] = situation == .choosing ? ["chooser ended", "controlSelected zoom"] : []
        #expect(events.map(\.summary) == expected)
        #expect(machine.controlsSnapshot.current == "zoom")
    }

    @Test(arguments: ControlsSituation.allCases)
    func selectingAnotherControlSaysSoOnce(situation: ControlsSituation) throws {
        var machine = situation.machine()
        var events: [ShutterEvent] = []
        try machine.selectControl("exposure", at: ms(1100), into: &events)
        #expect(events.filter { $0.summary.hasPrefix("controlSelected") }.map(\.summary) == ["controlSelected exposure"])
        #expect(machine.controlsSnapshot.current == "exposure")
    }

    /// `controlEnabled` only when the flag changes; the current control handing over says so
    /// whether the controls are showing or not, since `status` shows the current control either way
    /// (an open chooser closes first: DisabledControlTests).
    @Test(arguments: ControlsSituation.allCases)
    func disablingSaysSoOnceAndHandsTheCurrentControlOver(situation: ControlsSituation) throws {
        var machine = situation.machine()
        var events: [ShutterEvent] = []
        try machine.setControlEnabled("zoom", false, at: ms(1100), into: &events)
        let closing = situation == .choosing ? ["chooser ended"] : []
        #expect(events.map(\.summary) == ["controlEnabled zoom false"] + closing + ["controlSelected exposure"])
        #expect(machine.controlsSnapshot.current == "exposure")
        events.removeAll()
        try machine.setControlEnabled("zoom", false, at: ms(1200), into: &events)
        #expect(events.map(\.summary) == [])
        try machine.setControlEnabled("zoom", true, at: ms(1300), into: &events)
        #expect(events.map(\.summary) == ["controlEnabled zoom true"])
        #expect(machine.controlsSnapshot.current == "exposure")
    }
}
