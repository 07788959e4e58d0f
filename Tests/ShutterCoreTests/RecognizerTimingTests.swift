import Testing
import Foundation
@testable import ShutterCore

/// When things are stamped: the photo of a release, and which lines the kernel may debounce.
@Suite("Recognizer timing: photo instants and debounce placement")
struct RecognizerTimingTests {
    /// `captureOn: "ended"`: the photo shows the release as the person made it, the first edge of the
    /// release's bounce run, not the instant debounce confirmed it.
    @Test(arguments: [0, 3, 6])
    func captureOnEndedStampsThePhotoWithTheReleasesFirstEdge(bounces: Int) {
        var trace = TraceBuilder(Rigs.board(gestures: #"{"captureOn": "ended"}"#))
        trace.fullClick(at: 100, lead: 30, hold: 120, trail: 30, bounces: bounces)
        let events = trace.run()
        let ended = events.first { if case .capture(.ended, _, _, _, _, _, _) = $0 { true } else { false } }
        #expect(ended?.photoInstant == ms(250))
        // Confirmed later than the release began (debounce 5 ms after the bounce settled).
        #expect(ended.map { $0.time > ms(250) } == true)
        #expect(events.first?.photoInstant == nil)
    }

    @Test func captureOnBeganStampsThePhotoWithThePress() {
        var trace = TraceBuilder(Rigs.board())
        trace.fullClick(at: 100, lead: 30, hold: 120, trail: 30, bounces: 4)
        let photos = trace.run().compactMap(\.photoInstant)
        #expect(photos == [ms(130)])
    }
}

/// Which lines the kernel may debounce (libgpiod 2.x): only where its late stamp cannot move a press.
@Suite("Kernel debounce placement")
struct KernelDebounceTests {
    static func board(withHalf: Bool) -> Board {
        let half = withHalf ? #"{"name": "half", "role": "half", "debounceMs": 12},"# : ""
        let text = """
        {"name": "debounce", "chip": "simulator",
         "lines": [\(half) {"name": "full", "role": "full", "debounceMs": 8}, {"name": "secondary", "role": "secondary", "debounceMs": 20},
           {"name": "pad0", "role": "pad", "debounceMs": 3}, {"name": "pad1", "role": "pad", "debounceMs": 4}, {"name": "pad2", "role": "pad", "debounceMs": 0}],
         "controls": [{"id": "zoom", "kind": "systemZoom", "label": "Zoom", "range": [1, 4], "initial": 1}]}
        """
        return try! Board.decode(Data(text.utf8), file: "debounce.json")
    }

    @Test func buttonsAreNeverKernelDebouncedPadsAreOnARigWithHalf() {
        let board = Self.board(withHalf: true)
        let periods = Dictionary(uniqueKeysWithValues: zip(board.lines.map(\.name), board.lines.kernelDebounces))
        #expect(periods == ["half": .zero, "full": .zero, "secondary": .zero,
                            "pad0": .milliseconds(3), "pad1": .milliseconds(4), "pad2": .zero])
    }

    /// Without `half` a strip tap is the light press: its instant must not move either.
    @Test func withoutHalfNothingIsKernelDebounced() {
        let board = Self.board(withHalf: false)
        #expect(board.lines.kernelDebounces.allSatisfy { $0 == .zero })
        #expect(board.lines.kernelDebounces.count == board.lines.count)
    }

    /// The recognizer's software debounce stamps a press at the first edge of its run, however long the
    /// debounce: the promise kernel debounce would break.
    @Test(arguments: [5.0, 20.0, 60.0])
    func softwareDebounceStampsThePressAtTheFirstEdge(debounceMs: Double) {
        var trace = TraceBuilder(DecisionRigs.board(halfDebounceMs: debounceMs, fullDebounceMs: debounceMs))
        trace.fullClick(at: 100, lead: 80, hold: 200, trail: 80, bounces: 4)
        let began = trace.run().first
        guard case .capture(.began, _, let pressedAt, _, _, _, let at)? = began else {
            Issue.record("no capture began: \(String(describing: began))")
            return
        }
        #expect(pressedAt == ms(180))
        #expect(at >= ms(180) + .milliseconds(debounceMs))
    }
}

/// Windows a board may state against the recognizer's settle hold
/// (`GestureStateMachine.settleLimit`, 50 ms): the longest debounce and glitch filter must not trap it.
@Suite("Longest board windows")
struct LongestWindowTests {
    static func board(debounceMs: Int, glitchFilterMs: Int) -> Board {
        let lines = ["half", "full", "secondary", "pad0", "pad1", "pad2"].map { name in
            "{\"name\": \"\(name)\", \"role\": \"\(name.hasPrefix("pad") ? "pad" : name)\", \"debounceMs\": \(debounceMs)}"
        }
        let text = """
        {"name": "windows", "chip": "simulator", "lines": [\(lines.joined(separator: ", "))],
         "gestures": {"glitchFilterMs": \(glitchFilterMs), "lightPressMaxMs": 5000, "tapMaxMs": 5000, "doublePressWindowMs": 5000},
         "controls": [{"id": "zoom", "kind": "systemZoom", "range": [1, 4]}]}
        """
        return try! Board.decode(Data(text.utf8), file: "windows.json")
    }

    @Test(arguments: [(1000, 100), (1000, 0), (0, 100), (60, 60)])
    func chatterAndPressesDoNotTrap(debounceMs: Int, glitchFilterMs: Int) {
        var trace = TraceBuilder(Self.board(debounceMs: debounceMs, glitchFilterMs: glitchFilterMs))
        // Chatter faster than either window for longer than the settle hold, then real gestures.
        for flip in 0..<400 { trace.set("half", flip % 2 == 0, at: 10 + Double(flip) * 0.7) }
        trace.set("half", false, at: 400)
        trace.fullClick(at: 3000, lead: 30, hold: 2500, trail: 1500, bounces: 3)
        trace.press("half", at: 9000, for: 1200)
        trace.press("half", at: 10_500, for: 1200)
        trace.swipe([0, 1, 2], at: 14_000, perPad: 1500, overlap: 200)
        trace.press("secondary", at: 20_000, for: 1500, bounces: 5)
        let events = trace.run()
        #expect(events.contains { $0.summary.hasPrefix("capture") })
    }
}
