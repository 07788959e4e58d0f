import Foundation
import Testing
@testable import ShutterCore

/// A minimal valid board; tests splice a change into it.
private let minimalBoard = """
{
  "name": "test",
  "chip": "simulator",
  "lines": [
    {"name": "full", "role": "full"},
    {"name": "pad0", "role": "pad"},
    {"name": "pad1", "role": "pad"}
  ]
}
"""

private func decode(_ text: String) throws(BoardError) -> Board {
    try Board.decode(Data(text.utf8), file: "rig.json")
}

/// `minimalBoard` with `key` set to the JSON `value` at the top level.
private func board(with key: String, _ value: String) -> String {
    minimalBoard.replacingOccurrences(of: "\n  \"chip\"", with: "\n  \"\(key)\": \(value),\n  \"chip\"")
}

@Suite("Board files")
struct BoardTests {
    @Test("every shipped board file is valid", arguments: ["simulator", "gpio-sim", "raspberry-pi-4", "raspberry-pi-5", "raspberry-pi-zero-2w"])
    func shippedBoards(name: String) throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Boards/\(name).json")
        let board = try Board.load(path: url.standardizedFileURL.path)
        #expect(board.lines.contains { $0.role == .full })
    }

    /// On a Pi with a camera module `/dev/video0` is the CSI receiver's raw Bayer node (unicam,
    /// rp1-cfe), which no photo can be made from; the camera module is served by libcamera.
    @Test("the Raspberry Pi boards take the first libcamera camera, not /dev/video0",
          arguments: ["raspberry-pi-4", "raspberry-pi-5", "raspberry-pi-zero-2w"])
    func piBoardsUseTheCameraModule(name: String) throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Boards/\(name).json")
        let board = try Board.load(path: url.standardizedFileURL.path)
        #expect(board.camera.device == "libcamera")
        #expect(board.camera.backend == .auto)
        // The webcam alternative is in the file itself, as the strict format allows: its description.
        #expect(board.summary?.contains("USB webcam") == true)
    }

    /// A Filter picker that drives nothing would change the overlay and never the photo.
    @Test("the shipped boards' Filter pickers apply the effects their titles name",
          arguments: ["simulator", "gpio-sim", "raspberry-pi-4", "raspberry-pi-5"])
    func filterPickersHaveEffects(name: String) throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Boards/\(name).json")
        let board = try Board.load(path: url.standardizedFileURL.path)
        let filter = try #require(board.controls.first { $0.id == "filter" })
        guard case .picker(_, let titles?) = filter.kind else { Issue.record("not a titled picker"); return }
        #expect(filter.effects?.map(\.rawValue) == titles.map { $0.lowercased() })
        #expect(board.camera.bindings["filter"] == nil)
        #expect(board.drive(of: filter) == "photo effects (none, mono, vivid, warm)")
    }

    /// `shutter check` says what each picker and custom slider acts on.
    @Test("what a control drives: an effect, a camera control, or hooks and the API only")
    func controlDrives() throws {
        let text = board(with: "controls", """
            [{"id": "look", "kind": "picker", "titles": ["Plain", "Mono"], "effects": ["none", "mono"]},
             {"id": "sat", "kind": "slider", "range": [0, 100]},
             {"id": "tag", "kind": "picker", "count": 3},
             {"id": "zoom", "kind": "systemZoom"}]
            """).replacingOccurrences(of: "\n  \"chip\"", with: "\n  \"camera\": {\"bindings\": {\"sat\": \"Saturation\"}},\n  \"chip\"")
        let board = try decode(text)
        #expect(board.controls.map { board.drive(of: $0) } == [
            "photo effects (none, mono)", "camera control 'Saturation'", "hooks and the API only", "the camera's zoom",
        ])
    }

    @Test("the simulator board has the issue's lines and controls")
    func simulatorBoard() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Boards/simulator.json")
        let board = try Board.load(path: url.standardizedFileURL.path)
        #expect(board.chip == .simulator)
        #expect(board.lines.map(\.name) == ["half", "full", "secondary", "pad0", "pad1", "pad2", "pad3", "pad4", "pad5"])
        #expect(board.pads.count == 6)
        #expect(board.controls.map(\.id) == ["zoom", "exposure", "filter"])
        #expect(board.controls[0].kind == .systemZoom(.range(1...8, step: nil)))
        #expect(board.controls[2].kind == .picker(count: 4, titles: ["None", "Mono", "Vivid", "Warm"]))
        #expect(board.controls[2].initial == .index(0))
    }

    @Test("defaults fill what a line leaves out")
    func lineDefaults() throws {
        let text = minimalBoard.replacingOccurrences(
            of: "\"lines\"", with: "\"lineDefaults\": {\"activeLow\": true, \"bias\": \"pull-up\", \"debounceMs\": 8},\n  \"lines\"")
            .replacingOccurrences(of: "{\"name\": \"pad1\", \"role\": \"pad\"}",
                                  with: "{\"name\": \"pad1\", \"role\": \"pad\", \"line\": 17, \"bias\": \"disabled\", \"debounceMs\": 0}")
        let board = try decode(text)
        #expect(board.lines[0].activeLow)
        #expect(board.lines[0].bias == .pullUp)
        #expect(board.lines[0].debounce == .milliseconds(8))
        #expect(board.lines[0].selector == .name("full"))
        #expect(board.lines[2].selector == .offset(17))
        #expect(board.lines[2].bias == .disabled)
        #expect(board.lines[2].debounce == .zero)
    }

    @Test("the loop wakes 1 ms ahead of a decision unless the board says otherwise; 0 turns it off")
    func wakeAhead() throws {
        #expect(try decode(minimalBoard).gestures.wakeAhead == .milliseconds(1))
        #expect(try decode(board(with: "gestures", "{\"wakeAheadMs\": 0.25}")).gestures.wakeAhead == .microseconds(250))
        #expect(try decode(board(with: "gestures", "{\"wakeAheadMs\": 0}")).gestures.wakeAhead == .zero)
    }

    @Test("the loop leaves the camera alone 10 ms before a decision unless the board says otherwise; 0 turns it off")
    func holdCamera() throws {
        #expect(try decode(minimalBoard).gestures.holdCamera == .milliseconds(10))
        #expect(try decode(board(with: "gestures", "{\"holdCameraMs\": 25}")).gestures.holdCamera == .milliseconds(25))
        #expect(try decode(board(with: "gestures", "{\"holdCameraMs\": 0}")).gestures.holdCamera == .zero)
    }

    @Test("chip selectors: simulator, path, name, label",
          arguments: [("simulator", ChipSelector.simulator), ("/dev/gpiochip0", .path("/dev/gpiochip0")),
                      ("gpiochip4", .name("gpiochip4")), ("pinctrl-rp1", .label("pinctrl-rp1")), ("gpiochipX", .label("gpiochipX"))])
    func chipSelectors(text: String, expected: ChipSelector) {
        #expect(ChipSelector(parsing: text) == expected)
    }

    /// A broken board and the error it must produce: (what, board text, path, words the message contains).
    static let refusals: [(String, String, String, String)] = [
        ("broken JSON names line and column", "{\n  \"name\": \"x\",\n  \"chip\": \"simulator\"\n  \"lines\": []\n}", "", "4:3"),
        ("trailing comma", "{\"name\": \"x\",}", "", "trailing comma"),
        ("unknown key suggests the right one", board(with: "contols", "[]"), "contols", "did you mean 'controls'"),
        ("unknown key in a line", minimalBoard.replacingOccurrences(of: "\"role\": \"full\"}", with: "\"role\": \"full\", \"debounce\": 5}"),
         "lines[0].debounce", "did you mean 'debounceMs'"),
        ("wrong type", minimalBoard.replacingOccurrences(of: "\"name\": \"test\"", with: "\"name\": 5"), "name", "expected a string"),
        ("missing required field", minimalBoard.replacingOccurrences(of: "  \"chip\": \"simulator\",\n", with: ""), "chip", "missing"),
        ("bad enum value", minimalBoard.replacingOccurrences(of: "\"role\": \"full\"}", with: "\"role\": \"full\", \"bias\": \"pullup\"}"),
         "lines[0].bias", "'pull-up'"),
        ("out of range", minimalBoard.replacingOccurrences(of: "\"role\": \"full\"}", with: "\"role\": \"full\", \"debounceMs\": -1}"),
         "lines[0].debounceMs", "outside 0...1000"),
        ("same line twice", minimalBoard.replacingOccurrences(of: "{\"name\": \"pad1\", \"role\": \"pad\"}",
                                                             with: "{\"name\": \"pad1\", \"role\": \"pad\", \"line\": \"pad0\"}"),
         "lines[2].line", "already used by lines[1]"),
        ("same name twice", minimalBoard.replacingOccurrences(of: "\"pad1\"", with: "\"pad0\""), "lines[2].name", "already the name"),
        ("no full line", minimalBoard.replacingOccurrences(of: "\"role\": \"full\"", with: "\"role\": \"secondary\""), "lines", "role 'full'"),
        ("one pad", minimalBoard.replacingOccurrences(of: ",\n    {\"name\": \"pad1\", \"role\": \"pad\"}", with: ""), "lines[1].role", "at least 2 pads"),
        ("slider without range", board(with: "controls", "[{\"id\": \"a\", \"kind\": \"slider\"}]"), "controls[0].range", "missing"),
        ("range upside down", board(with: "controls", "[{\"id\": \"a\", \"kind\": \"slider\", \"range\": [5, 1]}]"),
         "controls[0].range", "lower bound 5 is not below upper bound 1"),
        ("zero step", board(with: "controls", "[{\"id\": \"a\", \"kind\": \"slider\", \"range\": [0, 1], \"step\": 0}]"),
         "controls[0].step", "above 0"),
        ("range and values", board(with: "controls", "[{\"id\": \"a\", \"kind\": \"slider\", \"values\": [1, 2], \"range\": [0, 1]}]"),
         "controls[0].range", "not both"),
        ("picker count and titles disagree", board(with: "controls", "[{\"id\": \"a\", \"kind\": \"picker\", \"count\": 3, \"titles\": [\"x\"]}]"),
         "controls[0].count", "does not match"),
        ("initial outside range", board(with: "controls", "[{\"id\": \"a\", \"kind\": \"slider\", \"range\": [0, 1], \"initial\": 2}]"),
         "controls[0].initial", "outside 0...1"),
        ("unknown kind", board(with: "controls", "[{\"id\": \"a\", \"kind\": \"slidr\", \"range\": [0, 1]}]"),
         "controls[0].kind", "did you mean 'slider'"),
        ("duplicate control id", board(with: "controls", "[{\"id\": \"a\", \"kind\": \"picker\", \"count\": 2}, {\"id\": \"a\", \"kind\": \"picker\", \"count\": 2}]"),
         "controls[1].id", "already the id"),
        ("too many controls", board(with: "controls", "[" + (0..<9).map { "{\"id\": \"c\($0)\", \"kind\": \"picker\", \"count\": 2}" }.joined(separator: ", ") + "]"),
         "controls", "at most 8"),
        ("contradictory timings", board(with: "gestures", "{\"glitchFilterMs\": 50, \"tapMaxMs\": 40}"), "gestures.tapMaxMs", "longer than glitchFilterMs"),
        ("waking ahead of a decision for longer than it is worth", board(with: "gestures", "{\"wakeAheadMs\": 25}"),
         "gestures.wakeAheadMs", "outside 0...20 ms"),
        ("waking after a decision", board(with: "gestures", "{\"wakeAheadMs\": -1}"), "gestures.wakeAheadMs", "outside 0...20 ms"),
        ("holding the camera for longer than a press's window is worth", board(with: "gestures", "{\"holdCameraMs\": 150}"),
         "gestures.holdCameraMs", "outside 0...100 ms"),
        ("camera size half given", board(with: "camera", "{\"width\": 640}"), "camera.height", "both width and height"),
        ("output template with a slash", board(with: "output", "{\"template\": \"a/b.jpg\"}"), "output.template", "without '/'"),
        // Boards whose numbers would trap the daemon if `check` let them through.
        ("65 pads", minimalBoard.replacingOccurrences(of: "{\"name\": \"pad1\", \"role\": \"pad\"}",
                                                     with: (1..<65).map { "{\"name\": \"pad\($0)\", \"role\": \"pad\"}" }.joined(separator: ",\n    ")),
         "lines[65].role", "at most 64 pads; this board has 65"),
        ("slider range of ±1e308", board(with: "controls", "[{\"id\": \"a\", \"kind\": \"slider\", \"range\": [-1e308, 1e308]}]"),
         "controls[0].range", "at most 1000000000"),
        ("exposure range of ±1e19", board(with: "controls", "[{\"id\": \"ev\", \"kind\": \"systemExposureBias\", \"range\": [-1e19, 1e19]}]"),
         "controls[0].range", "at most 1000000000"),
        ("zoom range beyond the bound", board(with: "controls", "[{\"id\": \"z\", \"kind\": \"systemZoom\", \"range\": [1, 1e10]}]"),
         "controls[0].range", "at most 1000000000"),
        ("slider values beyond the bound", board(with: "controls", "[{\"id\": \"a\", \"kind\": \"slider\", \"values\": [0, 1e308]}]"),
         "controls[0].values", "at most 1000000000"),
        ("a step too fine to count", board(with: "controls", "[{\"id\": \"a\", \"kind\": \"slider\", \"range\": [0, 1], \"step\": 1e-300}]"),
         "controls[0].step", "at most 1000000 steps"),
        ("initial more than half a step past the range", board(with: "controls", "[{\"id\": \"a\", \"kind\": \"slider\", \"range\": [0, 1], \"step\": 0.25, \"initial\": 1.2}]"),
         "controls[0].initial", "1.2 is outside 0...1 in steps of 0.25; a value within half a step of a step is taken as that step"),
        ("initial more than half the gap past a list", board(with: "controls", "[{\"id\": \"a\", \"kind\": \"slider\", \"values\": [1, 2, 4], \"initial\": 5.1}]"),
         "controls[0].initial", "5.1 is outside 1, 2, 4; a value nearer"),
        ("a decimal step with too few decimals to be a third", board(with: "controls", "[{\"id\": \"ev\", \"kind\": \"systemExposureBias\", \"range\": [-2, 2], \"step\": 0.33, \"initial\": 0}]"),
         "controls[0].initial", "write the step as \"1/3\""),
        ("a fraction over zero", board(with: "controls", "[{\"id\": \"a\", \"kind\": \"slider\", \"range\": [0, 1], \"step\": \"1/0\"}]"),
         "controls[0].step", "'1/0' is not a number or a fraction"),
        ("a value that is no number", board(with: "controls", "[{\"id\": \"a\", \"kind\": \"slider\", \"range\": [0, 1], \"initial\": \"half\"}]"),
         "controls[0].initial", "'half' is not a number or a fraction"),
        ("a range bound that is no number", board(with: "controls", "[{\"id\": \"a\", \"kind\": \"slider\", \"range\": [0, \"1/3/4\"]}]"),
         "controls[0].range[1]", "'1/3/4' is not a number or a fraction"),
        ("a number too large for a Double", board(with: "gestures", "{\"glitchFilterMs\": 1e400}"),
         "gestures.glitchFilterMs", "1e400 is too large for a number"),
        ("a hook timeout beyond a day", board(with: "hooks", "{\"timeoutMs\": 1e300}"), "hooks.timeoutMs", "outside 1...86400000 ms"),
        ("a range bound too large for a Double", board(with: "controls", "[{\"id\": \"a\", \"kind\": \"slider\", \"range\": [0, 2e308]}]"),
         "controls[0].range[1]", "2e308 is too large for a number"),
    ]

    @Test("a bad board is refused naming the file and the field", arguments: refusals)
    func refusal(what: String, text: String, path: String, words: String) {
        do {
            _ = try decode(text)
            Issue.record("\(what): accepted")
        } catch {
            #expect(error.file == "rig.json", "\(what)")
            #expect(error.path == path, "\(what): \(error)")
            #expect(error.description.contains(words), "\(what): \(error)")
        }
    }

    /// Steps a binary fraction cannot hold exactly still count as on the step.
    @Test("initial on a step of a third is accepted", arguments: [0.0, -2.0, 2.0, 1.0 / 3, -0.3333333333333333, 0.6666666666666666])
    func initialOnAThirdStep(initial: Double) throws {
        let text = board(with: "controls", "[{\"id\": \"ev\", \"kind\": \"systemExposureBias\", \"range\": [-2, 2], \"step\": 0.3333333333333333, \"initial\": \(initial)}]")
        let board = try decode(text)
        #expect(board.controls[0].initial == .number(initial))
    }

    /// A third of an EV has no decimal: a board writes it as a fraction, and a decimal rounded
    /// to three or more decimals stands for the fraction it rounds (Deploy/CAMERAS.md's recipe).
    @Test("a step written as a fraction, or rounded to three decimals, is a third",
          arguments: ["\"1/3\"", "0.333", "0.3333", "\"0.333\""])
    func stepOfAThird(step: String) throws {
        let text = board(with: "controls", "[{\"id\": \"ev\", \"kind\": \"systemExposureBias\", \"range\": [-2, 2], \"step\": \(step), \"initial\": 0}]")
        let control = try decode(text).controls[0]
        #expect(control.kind == .systemExposureBias(.range(-2...2, step: 1.0 / 3)))
        #expect(control.initial == .number(0))
        // The strip reaches both ends: 12 steps, not 12.012.
        #expect(ControlScale(spec: control, padSpan: 5).value(at: 12) == .number(2))
    }

    @Test("values written as fractions or rounded to three decimals are the steps they stand for", arguments: [
        ("\"-1/3\"", -1.0 / 3), ("\"2/3\"", 0.666666666667), ("0.333", 0.333333333333), ("-1.667", -1.666666666667), ("\" 1/3 \"", 1.0 / 3),
    ])
    func valuesOnThirdSteps(initial: String, expected: Double) throws {
        let text = board(with: "controls", "[{\"id\": \"ev\", \"kind\": \"systemExposureBias\", \"range\": [\"-2\", 2], \"step\": \"1/3\", \"initial\": \(initial)}]")
        let control = try decode(text).controls[0]
        guard case .number(let value) = control.initial else { Issue.record("\(control.initial)"); return }
        #expect(abs(value - expected) < 1e-12, "\(value)")
    }

    /// A board's `initial` is a value a person types like any other: within half a step of a
    /// step (or nearer to a list's value than to its neighbours) it is that step, and the spec
    /// keeps the number written so `shutter check` can say which.
    @Test("initial near a step is the step, the number written kept", arguments: [
        ("\"range\": [0, 1], \"step\": 0.25", "0.3", 0.25), ("\"range\": [0, 1], \"step\": 0.0004", "0.001", 0.0012),
        ("\"range\": [-2, 2], \"step\": \"1/3\"", "0.33", 0.333333333333), ("\"range\": [-2, 2], \"step\": \"1/3\"", "2.1", 2),
        ("\"values\": [1, 2, 4]", "3.5", 4), ("\"values\": [1, 2, 4]", "0.6", 1),
    ] as [(String, String, Double)])
    func initialNearAStep(values: String, initial: String, expected: Double) throws {
        let text = board(with: "controls", "[{\"id\": \"a\", \"kind\": \"slider\", \(values), \"initial\": \(initial)}]")
        let control = try decode(text).controls[0]
        guard case .number(let value) = control.initial else { Issue.record("\(control.initial)"); return }
        #expect(abs(value - expected) < 1e-12, "\(initial) → \(value)")
        #expect(control.initialWritten == Double(initial))
    }

    @Test("initial on a step keeps no written number")
    func initialOnAStep() throws {
        let text = board(with: "controls", "[{\"id\": \"a\", \"kind\": \"slider\", \"range\": [-2, 2], \"step\": \"1/3\", \"initial\": \"-2/3\"}]")
        #expect(try decode(text).controls[0].initialWritten == nil)
    }

    @Test("a list of values may hold fractions")
    func listOfFractions() throws {
        let text = board(with: "controls", "[{\"id\": \"a\", \"kind\": \"slider\", \"values\": [\"1/3\", 0.5, \"2/3\"], \"initial\": 0.667}]")
        let control = try decode(text).controls[0]
        #expect(control.kind == .slider(.list([1.0 / 3, 0.5, 2.0 / 3])))
        #expect(control.initial == .number(2.0 / 3))
    }

    @Test("a strip of 64 pads, the most, is accepted")
    func sixtyFourPads() throws {
        let text = minimalBoard.replacingOccurrences(of: "{\"name\": \"pad1\", \"role\": \"pad\"}",
                                                     with: (1..<64).map { "{\"name\": \"pad\($0)\", \"role\": \"pad\"}" }.joined(separator: ",\n    "))
        #expect(try decode(text).pads.count == 64)
    }

    @Test("controls at the magnitude bound are accepted")
    func controlsAtTheBound() throws {
        let text = board(with: "controls", "[{\"id\": \"a\", \"kind\": \"slider\", \"range\": [-1e9, 1e9], \"initial\": -1e9}, {\"id\": \"ev\", \"kind\": \"systemExposureBias\", \"range\": [-1e9, 1e9], \"step\": 2000}]")
        let controls = try decode(text).controls
        #expect(ControlDisplay(controls[0].initial, of: controls[0]).text == "\u{2212}1000000000")
        #expect(ControlDisplay(controls[1].initial, of: controls[1]).text == "0 EV")
    }

    /// A span too long for the clock's nanoseconds holds at the end instead of trapping.
    @Test("spans beyond Int64 nanoseconds saturate", arguments: [1e300, .infinity, -1e300, -.infinity, .nan])
    func spansSaturate(value: Double) {
        let expected: Int64 = value < 0 ? .min : .max
        #expect(Nanoseconds.milliseconds(value).rawValue == expected)
        #expect(Nanoseconds.seconds(value).rawValue == expected)
        #expect(Instant.seconds(value).rawValue == expected)
    }

    @Test("a missing file is named")
    func missingFile() {
        #expect(throws: BoardError(file: "/nonexistent/rig.json", path: "", message: "no such file")) {
            try Board.load(path: "/nonexistent/rig.json")
        }
    }
}
