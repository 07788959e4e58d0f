import Foundation
import Testing
@testable import ShutterCore

/// The repository's root, for the shipped boards and the documentation's pictures.
private let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("../..").standardizedFileURL

private func shippedBoard(_ name: String) throws -> Board {
    try Board.load(path: repositoryRoot.appendingPathComponent("Boards/\(name).json").path)
}

/// A board on `chip` with the given line entries (JSON objects) and feedback entries.
private func rig(chip: String, lines: [String], feedback: [String] = []) throws -> Board {
    let text = """
        {"name": "rig", "chip": "\(chip)", "lines": [\(lines.joined(separator: ", "))],
         "feedback": [\(feedback.joined(separator: ", "))]}
        """
    return try Board.decode(Data(text.utf8), file: "rig.json")
}

private let twoPads = [#"{"name": "pad0", "role": "pad", "line": "GPIO17"}"#, #"{"name": "pad1", "role": "pad", "line": "GPIO22"}"#]

@Suite("The Raspberry Pi's 40-pin header")
struct RaspberryPiHeaderTests {
    @Test("GPIO numbers sit at the pins the Raspberry Pi pinout gives",
          arguments: [(17, 11), (5, 29), (6, 31), (13, 33), (22, 15), (26, 37), (2, 3), (21, 40), (0, 27)])
    func gpioPins(gpio: Int, pin: Int) {
        #expect(RaspberryPiHeader.pin(ofGPIO: gpio) == pin)
        #expect(RaspberryPiHeader.function(ofPin: pin) == .gpio(gpio))
    }

    @Test("GPIO0 to GPIO27 are each on exactly one pin; the rest are supplies")
    func everyGPIOOnce() {
        let functions = (1...40).compactMap { RaspberryPiHeader.function(ofPin: $0) }
        #expect(functions.count == 40)
        for gpio in 0...27 { #expect(functions.filter { $0 == .gpio(gpio) }.count == 1, "GPIO\(gpio)") }
        #expect(RaspberryPiHeader.pins(carrying: .power3V3) == [1, 17])
        #expect(RaspberryPiHeader.pins(carrying: .power5V) == [2, 4])
        #expect(RaspberryPiHeader.pins(carrying: .ground) == [6, 9, 14, 20, 25, 30, 34, 39])
        #expect(RaspberryPiHeader.pin(ofGPIO: 28) == nil)
        #expect(RaspberryPiHeader.function(ofPin: 0) == nil)
        #expect(RaspberryPiHeader.function(ofPin: 41) == nil)
    }
}

@Suite("Wiring diagram")
struct WiringDiagramTests {
    @Test("every line of a shipped Raspberry Pi board is drawn once, at its GPIO's pin",
          arguments: ["raspberry-pi-4", "raspberry-pi-5", "raspberry-pi-zero-2w"])
    func shippedPiBoards(name: String) throws {
        let board = try shippedBoard(name)
        let diagram = WiringDiagram(board: board)
        #expect(diagram.unplaced.isEmpty)
        #expect(diagram.connections.map(\.name) == board.lines.map(\.name))
        #expect(Set(diagram.connections.map(\.pin)).count == board.lines.count)
        for (line, connection) in zip(board.lines, diagram.connections) {
            #expect(line.selector == .name("GPIO\(connection.gpio)"))
            #expect(RaspberryPiHeader.function(ofPin: connection.pin) == .gpio(connection.gpio))
        }
    }

    @Test("the Pi 5 board's pads are pins 11, 15, 16, 18, 22, 37 and its buttons 29, 31, 33")
    func raspberryPi5Pins() throws {
        let diagram = WiringDiagram(board: try shippedBoard("raspberry-pi-5"))
        #expect(diagram.connections.map(\.pin) == [29, 31, 33, 11, 15, 16, 18, 22, 37])
    }

    @Test("a board not on a Raspberry Pi's header chip is reported line by line, not drawn",
          arguments: ["simulator", "gpio-sim"])
    func simulatedBoards(name: String) throws {
        let board = try shippedBoard(name)
        let diagram = WiringDiagram(board: board)
        #expect(diagram.connections.isEmpty)
        #expect(diagram.unplaced.map(\.name) == board.lines.map(\.name))
        #expect(diagram.text.contains("no line of this board is on the header"))
        #expect(!diagram.text.contains("●"))
        #expect(!diagram.svg.contains("<line "))
    }

    @Test("the gpio-sim board's chip is named as not a Raspberry Pi's")
    func gpioSimReason() throws {
        let diagram = WiringDiagram(board: try shippedBoard("gpio-sim"))
        #expect(diagram.unplaced.first?.reason == "chip labelled 'rig-sim' is not a Raspberry Pi's header chip ('pinctrl-rp1', 'pinctrl-bcm2711', 'pinctrl-bcm2835')")
    }

    @Test("a GPIO the header does not carry is reported with the range it does")
    func gpioBeyondTheHeader() throws {
        let board = try rig(chip: "pinctrl-rp1", lines: [#"{"name": "full", "role": "full", "line": "GPIO40"}"#] + twoPads)
        let diagram = WiringDiagram(board: board)
        #expect(diagram.connections.map(\.name) == ["pad0", "pad1"])
        #expect(diagram.unplaced == [.init(name: "full", selector: .name("GPIO40"),
                                           reason: "GPIO40 is not on the 40-pin header, which carries GPIO0 to GPIO27")])
    }

    @Test("a misspelt GPIO name is reported with the name meant", arguments: ["gpio6", "GPI06", "GPIO06"])
    func misspeltName(name: String) throws {
        let board = try rig(chip: "pinctrl-rp1", lines: [#"{"name": "full", "role": "full", "line": "\#(name)"}"#] + twoPads)
        let reason = try #require(WiringDiagram(board: board).unplaced.first).reason
        #expect(reason.hasPrefix("'\(name)' is not a header line's name"))
        #expect(reason.hasSuffix("did you mean 'GPIO6'?") == (name != "GPIO06"))
    }

    @Test("an offset is a GPIO number on a Raspberry Pi's chip found by label, and not on a chip named by number")
    func offsets() throws {
        let lines = [#"{"name": "full", "role": "full", "line": 6}"#] + twoPads
        let labelled = WiringDiagram(board: try rig(chip: "pinctrl-bcm2711", lines: lines))
        #expect(labelled.connection(atPin: 31)?.name == "full")
        let numbered = WiringDiagram(board: try rig(chip: "gpiochip0", lines: lines))
        #expect(numbered.connection(atPin: 31) == nil)
        #expect(numbered.connections.map(\.name) == ["pad0", "pad1"])
        #expect(numbered.unplaced.map(\.name) == ["full"])
    }

    @Test("a second line at a pin already taken is reported, not drawn over the first")
    func samePinTwice() throws {
        let lines = [#"{"name": "full", "role": "full", "line": "GPIO17"}"#,
                     #"{"name": "pad0", "role": "pad", "line": 17}"#, #"{"name": "pad1", "role": "pad", "line": "GPIO22"}"#]
        let diagram = WiringDiagram(board: try rig(chip: "pinctrl-rp1", lines: lines))
        #expect(diagram.connection(atPin: 11)?.name == "full")
        #expect(diagram.unplaced == [.init(name: "pad0", selector: .offset(17), reason: "pin 11 (GPIO17) is already full's")])
    }

    @Test("feedback outputs are drawn at their pins with how to wire them")
    func feedbackOutputs() throws {
        let board = try rig(chip: "pinctrl-rp1", lines: [#"{"name": "full", "role": "full", "line": "GPIO6"}"#] + twoPads,
                            feedback: [#"{"role": "led", "line": "GPIO16"}"#])
        let led = try #require(WiringDiagram(board: board).connection(atPin: 36))
        #expect(led.kind == .output(.led))
        #expect(led.levelSummary == "active-high output")
        #expect(led.wiring.contains("330 Ω"))
    }

    @Test("a button to ground with the Pi's pull-up is wired to the nearest GND; a pad to a TTP223's OUT")
    func wiringByLevel() throws {
        let diagram = WiringDiagram(board: try shippedBoard("raspberry-pi-5"))
        let full = try #require(diagram.connection(atPin: 31))
        #expect(full.levelSummary == "active-low, pull-up")
        #expect(full.wiring == "a switch, its other side to GND (pin 30)")
        #expect(full.warning == nil)
        let pad = try #require(diagram.connection(atPin: 11))
        #expect(pad.levelSummary == "active-high, pull-down")
        #expect(pad.wiring.hasPrefix("a TTP223 module's OUT"))
        #expect(pad.purpose == "touch pad 1 of 6")
    }

    @Test("settings no wiring can satisfy are warned of", arguments: [
        (#"{"name": "full", "role": "full", "line": "GPIO6", "activeLow": true, "bias": "pull-down"}"#, "active-low with a pull-down"),
        (#"{"name": "full", "role": "full", "line": "GPIO6", "activeLow": false, "bias": "pull-up"}"#, "active-high with a pull-up"),
        (#"{"name": "full", "role": "full", "line": "GPIO3", "activeLow": false, "bias": "pull-down"}"#, "fixed 1.8 kΩ pull-up"),
    ])
    func warnings(line: String, warning: String) throws {
        let diagram = WiringDiagram(board: try rig(chip: "pinctrl-rp1", lines: [line] + twoPads))
        #expect(diagram.connections.first?.warning?.contains(warning) == true)
        #expect(diagram.text.contains("warnings:\n  full (pin "))
    }

    @Test("a touch module's output on an I2C pin is not warned of: it drives the line past the fixed pull-up")
    func touchModuleOnI2CPin() throws {
        let lines = [#"{"name": "full", "role": "full", "line": "GPIO6", "activeLow": true, "bias": "pull-up"}"#,
                     #"{"name": "pad0", "role": "pad", "line": "GPIO3", "bias": "pull-down"}"#, #"{"name": "pad1", "role": "pad", "line": "GPIO22"}"#]
        let diagram = WiringDiagram(board: try rig(chip: "pinctrl-rp1", lines: lines))
        #expect(diagram.connection(atPin: 5)?.warning == nil)
        #expect(!diagram.text.contains("warnings:"))
    }

    @Test("the terminal drawing marks a line at its pin, in its column")
    func textDrawing() throws {
        let text = WiringDiagram(board: try shippedBoard("raspberry-pi-5")).text
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.contains("     pad0 ▸  GPIO17 11 ● ○ 12 GPIO18"))
        #expect(lines.contains("     pad1 ▸  GPIO22 15 ● ● 16 GPIO23  ◂ pad2"))
        #expect(lines.contains("                3V3  1 ○ ○ 2  5V"))
        #expect(lines.contains("  pin 31 GPIO6   full       full press        active-low, pull-up     a switch, its other side to GND (pin 30)"))
    }

    @Test("the picture escapes what XML would read as markup")
    func escaping() {
        #expect(WiringDiagram.escaped(#"a<b & "c" 'd'>"#) == "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;")
    }

    /// The documentation's pictures are made by this code: a change to a board or to the drawing
    /// without making them again would leave the guide showing a rig that is not the board.
    @Test("the pictures in Docs/wiring are what 'shutter wiring' draws now",
          arguments: ["raspberry-pi-4", "raspberry-pi-5", "raspberry-pi-zero-2w"])
    func committedPictures(name: String) throws {
        let drawn = WiringDiagram(board: try shippedBoard(name)).svg
        let committed = try String(contentsOf: repositoryRoot.appendingPathComponent("Docs/wiring/\(name).svg"), encoding: .utf8)
        #expect(committed == drawn, "make it again: swift run shutter wiring Boards/\(name).json --svg Docs/wiring/\(name).svg")
    }
}

@Suite("Monitor's lines")
struct MonitorTextTests {
    /// Testing the wiring line by line, a person touches a pad and must see which pin it reached.
    @Test("each edge names its line, what happened and, on a Pi's header, its GPIO and pin")
    func edgesOnThePi() throws {
        let board = try shippedBoard("raspberry-pi-5")
        let origin = Instant(rawValue: 5_000_000_000)
        let text = MonitorText(board: board, origin: origin)
        let pad0 = try #require(board.line(named: "pad0")), full = try #require(board.line(named: "full"))
        #expect(text.edge(Edge(line: pad0, active: true, time: origin + .milliseconds(1204))) == "    1.204 s  pad0       touched    GPIO17, pin 11")
        #expect(text.edge(Edge(line: pad0, active: false, time: origin + .milliseconds(1391))) == "    1.391 s  pad0       untouched  GPIO17, pin 11")
        #expect(text.edge(Edge(line: full, active: true, time: origin + .seconds(12.5))) == "     12.5 s  full       pressed    GPIO6, pin 31")
        #expect(text.edge(Edge(line: full, active: false, time: origin + .seconds(12.75))) == "    12.75 s  full       released   GPIO6, pin 31")
    }

    @Test("off a header, an edge names the line as the board does")
    func edgesOffTheHeader() throws {
        let board = try shippedBoard("gpio-sim")
        let text = MonitorText(board: board, origin: Instant(rawValue: 0))
        let half = try #require(board.line(named: "half"))
        #expect(text.edge(Edge(line: half, active: true, time: Instant(rawValue: 2_000_000))) == "    0.002 s  half       pressed    line half")
    }
}

@Suite("The wiring guide's examples")
struct WiringGuideTests {
    /// The guide pastes what the commands print; a change to either must show in the other.
    @Test("Docs/wiring.md shows what 'shutter wiring' prints for the Pi 5 board")
    func wiringOutput() throws {
        let block = try #require(DocBlocks.blocks(in: "Docs/wiring.md", info: "")
            .first { $0.text.hasPrefix("$ shutter wiring Boards/raspberry-pi-5.json\n") })
        let printed = WiringDiagram(board: try shippedBoard("raspberry-pi-5")).text
        #expect(block.text.dropFirst("$ shutter wiring Boards/raspberry-pi-5.json\n".count) + "\n" == printed)
    }

    @Test("Docs/wiring.md's monitor lines are what monitor prints for those edges")
    func monitorOutput() throws {
        let block = try #require(DocBlocks.blocks(in: "Docs/wiring.md", info: "").first { $0.text.contains("pad0       touched") })
        let board = try shippedBoard("raspberry-pi-5")
        let text = MonitorText(board: board, origin: Instant(rawValue: 0))
        let pad0 = try #require(board.line(named: "pad0"))
        let expected = [text.edge(Edge(line: pad0, active: true, time: .seconds(2.304))),
                        text.edge(Edge(line: pad0, active: false, time: .seconds(2.517)))]
        #expect(block.text.split(separator: "\n").map(String.init) == expected)
    }
}
