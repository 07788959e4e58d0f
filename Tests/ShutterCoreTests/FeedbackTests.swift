import Foundation
import Testing
@testable import ShutterCore

/// One input to the feedback machine at a millisecond.
enum FeedbackInput: Sendable, CustomStringConvertible {
    case controlsActive(Double)
    case controlsInactive(Double)
    case chooserOpen(Double)
    case chooserClosed(Double)
    case photo(Double)
    case failure(Double)

    var description: String {
        switch self {
        case .controlsActive(let t): "controlsActive@\(t)"
        case .controlsInactive(let t): "controlsInactive@\(t)"
        case .chooserOpen(let t): "chooser began@\(t)"
        case .chooserClosed(let t): "chooser ended@\(t)"
        case .photo(let t): "photo@\(t)"
        case .failure(let t): "captureFailed@\(t)"
        }
    }

    var time: Double {
        switch self {
        case .controlsActive(let t), .controlsInactive(let t), .chooserOpen(let t), .chooserClosed(let t),
             .photo(let t), .failure(let t): t
        }
    }

    func apply(to machine: inout FeedbackStateMachine) {
        let at = Instant.zero + .milliseconds(time)
        switch self {
        case .controlsActive: machine.event(.controlsActive(control: "zoom", display: ControlDisplay(label: "Zoom", text: "1.0×"), at: at))
        case .controlsInactive: machine.event(.controlsInactive(reason: .idle, at: at))
        case .chooserOpen: machine.event(.chooser(phase: .began, at: at))
        case .chooserClosed: machine.event(.chooser(phase: .ended, at: at))
        case .photo: machine.photoSaved(at: at)
        case .failure: machine.captureFailed(at: at)
        }
    }
}

/// A table row: inputs, then the (led, buzzer) levels expected at sample milliseconds.
struct FeedbackCase: Sendable, CustomTestStringConvertible {
    var name: String
    var inputs: [FeedbackInput]
    /// (ms, led, buzzer)
    var samples: [(Double, Bool, Bool)]
    var testDescription: String { name }
}

@Suite("Feedback state machine")
struct FeedbackStateMachineTests {
    static let cases: [FeedbackCase] = [
        FeedbackCase(name: "idle: everything off and nothing to wake for", inputs: [],
                     samples: [(0, false, false), (10_000, false, false)]),
        FeedbackCase(name: "LED lit while the controls are active, dark after",
                     inputs: [.controlsActive(100), .controlsInactive(5_100)],
                     samples: [(50, false, false), (100, true, false), (3_000, true, false), (5_100, false, false)]),
        FeedbackCase(name: "the chooser blinks the LED 250 ms on, 250 ms off, from when it opened",
                     inputs: [.controlsActive(0), .chooserOpen(1_000), .chooserClosed(2_100)],
                     samples: [(999, true, false), (1_000, true, false), (1_249, true, false), (1_250, false, false),
                               (1_499, false, false), (1_500, true, false), (1_750, false, false), (2_100, true, false)]),
        FeedbackCase(name: "a photo flashes the LED 150 ms (then 100 ms dark) and clicks the buzzer 20 ms",
                     inputs: [.photo(1_000)],
                     samples: [(999, false, false), (1_000, true, true), (1_019, true, true), (1_020, true, false),
                               (1_149, true, false), (1_150, false, false), (1_300, false, false)]),
        FeedbackCase(name: "a photo while the LED is lit shows as a dark gap, then lit again",
                     inputs: [.controlsActive(0), .photo(500)],
                     samples: [(600, true, false), (650, false, false), (749, false, false), (750, true, false)]),
        FeedbackCase(name: "a failure blinks the LED fast and beeps long-long",
                     inputs: [.failure(1_000)],
                     samples: [(1_000, true, true), (1_050, false, true), (1_100, true, true), (1_299, false, true),
                               (1_300, true, false), (1_400, true, true), (1_599, false, true), (1_700, false, false)]),
        FeedbackCase(name: "a burst: each photo restarts the flash and the click",
                     inputs: [.photo(0), .photo(200), .photo(400)],
                     samples: [(10, true, true), (160, false, false), (210, true, true), (410, true, true), (560, false, false)]),
        FeedbackCase(name: "a photo does not cut a failure short",
                     inputs: [.failure(0), .photo(120)],
                     samples: [(120, true, true), (150, false, true), (200, true, true), (300, true, false)]),
    ]

    @Test("levels over time", arguments: cases)
    func levels(_ row: FeedbackCase) {
        var machine = FeedbackStateMachine()
        var inputs = row.inputs[...]
        for (ms, led, buzzer) in row.samples {
            while let next = inputs.first, next.time <= ms {
                next.apply(to: &machine)
                inputs.removeFirst()
            }
            let levels = machine.advance(to: .zero + .milliseconds(ms))
            #expect(levels == FeedbackLevels(led: led, buzzer: buzzer), "at \(ms) ms")
        }
    }

    @Test("the deadline is the next change, and waking only at deadlines sees every change")
    func deadlinesCatchEveryChange() {
        var machine = FeedbackStateMachine()
        #expect(machine.nextDeadline == nil)
        machine.captureFailed(at: .zero)
        var changes: [(Instant, FeedbackLevels)] = [(.zero, machine.advance(to: .zero))]
        while let deadline = machine.nextDeadline {
            let levels = machine.advance(to: deadline)
            if levels != changes.last?.1 { changes.append((deadline, levels)) }
        }
        // The LED changes every 50 ms until its last (dark) span starts at 550; the buzzer's
        // spans end at 300 and 400 (with an LED change) and 700, when everything is off.
        let ms = changes.map { $0.0.rawValue / 1_000_000 }
        #expect(ms == [0, 50, 100, 150, 200, 250, 300, 350, 400, 450, 500, 550, 700])
        #expect(changes.last?.1 == .off)
        #expect(machine.nextDeadline == nil)
    }

    @Test("while the chooser is open the deadline is the next blink, and it stops when the chooser closes")
    func blinkDeadline() {
        var machine = FeedbackStateMachine()
        machine.event(.chooser(phase: .began, at: .zero + .milliseconds(1_000)))
        #expect(machine.nextDeadline == .zero + .milliseconds(1_250))
        _ = machine.advance(to: .zero + .milliseconds(1_260))
        #expect(machine.nextDeadline == .zero + .milliseconds(1_500))
        machine.event(.controlsInactive(reason: .idle, at: .zero + .milliseconds(1_300)))
        #expect(machine.nextDeadline == nil)
        #expect(machine.advance(to: .zero + .milliseconds(1_300)) == .off)
    }

    @Test("an input stamped before the latest time is taken at the latest time")
    func lateInput() {
        var machine = FeedbackStateMachine()
        _ = machine.advance(to: .zero + .milliseconds(1_000))
        machine.photoSaved(at: .zero + .milliseconds(900))
        #expect(machine.advance(to: .zero + .milliseconds(1_010)) == FeedbackLevels(led: true, buzzer: true))
        #expect(machine.nextDeadline == .zero + .milliseconds(1_020))
    }
}

@Suite("Mock chip outputs")
struct MockOutputTests {
    @Test("levels set on a driven line are kept in the history with the mock clock's time")
    func history() throws {
        let chip = MockChip()
        let lines = [FeedbackLine(name: "led", role: .led, selector: .name("led")),
                     FeedbackLine(name: "buzzer", role: .buzzer, selector: .name("buzzer"))]
        let driver = try chip.drive(lines, consumer: "test")
        #expect(chip.outputLevel("led") == false)
        chip.clock.advance(to: .zero + .milliseconds(5))
        try driver.set(0, active: true)
        try driver.set(0, active: true)
        chip.clock.advance(to: .zero + .milliseconds(7))
        try driver.set(1, active: true)
        try driver.set(0, active: false)
        #expect(chip.outputChanges(of: "led").map { "\($0)" } == ["led on at 5 ms", "led off at 7 ms"])
        #expect(chip.outputChanges(of: "buzzer").map { "\($0)" } == ["buzzer on at 7 ms"])
        #expect(chip.outputLevel("buzzer") == true)
        #expect(chip.outputLevel("nothing") == nil)
    }
}

@Suite("Board feedback lines")
struct BoardFeedbackTests {
    static func board(_ feedback: String) -> String {
        """
        {"name": "t", "chip": "simulator", "lines": [{"name": "full", "role": "full"}], "feedback": \(feedback)}
        """
    }

    @Test("an LED and a buzzer are read with their settings")
    func parses() throws {
        let board = try Board.decode(Data(Self.board(#"[{"role": "led", "line": 16, "activeLow": true}, {"name": "beep", "role": "buzzer"}]"#).utf8), file: "b.json")
        #expect(board.feedbackLine(.led) == FeedbackLine(name: "led", role: .led, selector: .offset(16), activeLow: true))
        #expect(board.feedbackLine(.buzzer) == FeedbackLine(name: "beep", role: .buzzer, selector: .name("beep")))
    }

    @Test("bad feedback lines are refused naming the field", arguments: [
        (#"[{"role": "lamp"}]"#, "feedback[0].role: 'lamp' is not one of 'led', 'buzzer'"),
        (#"[{"role": "led"}, {"role": "led", "name": "led2"}]"#, "feedback[1].role: only one line may have role 'led'"),
        (#"[{"role": "led", "line": "full"}]"#, "feedback[0].line: full is already used by lines[0] ('full')"),
        (#"[{"role": "led", "name": "full", "line": 3}]"#, "feedback[0].name: 'full' is already the name of lines[0]"),
        (#"[{"role": "led", "colour": "red"}]"#, "feedback[0].colour: unknown key 'colour'"),
    ])
    func refuses(_ feedback: String, _ message: String) {
        #expect {
            _ = try Board.decode(Data(Self.board(feedback).utf8), file: "b.json")
        } throws: { error in
            "\(error)".contains(message)
        }
    }
}
