extension WiringDiagram {
    /// What the header chip means for the drawing, in one line under its title.
    var chipNote: String {
        switch headerChip {
        case .raspberryPi(let label, let boards):
            "chip labelled '\(label)' (\(boards)): a line's offset is its GPIO number"
        case .assumed(let chip):
            "\(chip): lines named GPIOn are taken to be the header's (a Raspberry Pi's chip is best named by its label)"
        case .none(let reason):
            reason
        }
    }

    /// The lines not on the header with why: one note each, or all in one when the chip is the
    /// reason (its note under the title says why).
    var unplacedNotes: [String] {
        if headerChip.isHeader || unplaced.isEmpty {
            return unplaced.map { "\($0.name) (\($0.selector)): \($0.reason)" }
        }
        return [unplaced.map(\.name).joined(separator: ", ")]
    }

    /// The notes that hold for every rig, printed under the drawing.
    static let supplyNotes = [
        "Touch modules take VCC from 3V3 (pin 1 or 17), never 5V: their output must stay within the Pi's 3.3 V.",
        "A GPIO input takes 0 to 3.3 V only; 5V (pins 2 and 4) on a GPIO pin damages the Pi.",
    ]

    /// The header as two columns of pins for a terminal, the board's lines marked (●) and named,
    /// then a table of what to wire to each, the lines not on the header and the warnings.
    public var text: String {
        var out = "\(boardName) on the Raspberry Pi's 40-pin header\n\(chipNote)\n\n"
        let leftWidth = connections.filter { $0.pin % 2 == 1 }.map { $0.name.count + 2 }.max() ?? 0
        for row in 0..<(RaspberryPiHeader.pinCount / 2) {
            let left = 2 * row + 1, right = left + 1
            let leftName = RaspberryPiHeader.function(ofPin: left)!.name
            let rightName = RaspberryPiHeader.function(ofPin: right)!.name
            let leftLine = connection(atPin: left), rightLine = connection(atPin: right)
            var line = Self.leftPadded(leftLine.map { "\($0.name) ▸" } ?? "", to: leftWidth)
            line += "  " + Self.leftPadded(leftName, to: 6) + " " + Self.leftPadded("\(left)", to: 2)
            line += " " + (leftLine == nil ? "○" : "●") + " " + (rightLine == nil ? "○" : "●") + " "
            line += Self.rightPadded("\(right)", to: 2) + " " + Self.rightPadded(rightName, to: 6)
            if let rightLine { line += "  ◂ \(rightLine.name)" }
            out += Self.trimmingTrailingSpaces(line) + "\n"
        }
        if connections.isEmpty {
            out += "\nno line of this board is on the header\n"
        } else {
            out += "\nwire (pin 1 is the one with the square pad; odd pins are the row away from the board's edge):\n"
            let nameWidth = connections.map(\.name.count).max() ?? 0
            let purposeWidth = connections.map(\.purpose.count).max() ?? 0
            for connection in connections.sorted(by: { $0.pin < $1.pin }) {
                var row = "  pin " + Self.rightPadded("\(connection.pin)", to: 3) + Self.rightPadded("GPIO\(connection.gpio)", to: 8)
                row += Self.rightPadded(connection.name, to: nameWidth + 2) + Self.rightPadded(connection.purpose, to: purposeWidth + 2)
                row += Self.rightPadded(connection.levelSummary, to: 24) + connection.wiring
                out += row + "\n"
            }
        }
        if !unplaced.isEmpty {
            out += "\nnot on the header:\n"
            for note in unplacedNotes { out += "  \(note)\n" }
        }
        let warnings = connections.compactMap { connection in connection.warning.map { "\(connection.name) (pin \(connection.pin)): \($0)" } }
        if !warnings.isEmpty {
            out += "\nwarnings:\n"
            for warning in warnings { out += "  \(warning)\n" }
        }
        if !connections.isEmpty {
            out += "\n" + Self.supplyNotes.joined(separator: "\n") + "\n"
        }
        return out
    }

    /// The header as an SVG picture, the board's lines coloured by kind and named beside their
    /// pins, with a legend and the lines not on the header. Only integers and fixed text go into
    /// it, so the same board always gives the same bytes (the documentation's pictures are
    /// compared with it).
    public var svg: String {
        let width = 1000, rowHeight = 28, top = 116
        let leftColumn = 517, rightColumn = 543
        var footer: [String] = []
        footer += unplacedNotes.map { "not on the header: \($0)" }
        for connection in connections {
            if let warning = connection.warning { footer.append("warning: \(connection.name) (pin \(connection.pin)): \(warning)") }
        }
        if !connections.isEmpty { footer += Self.supplyNotes }
        let legendTop = top + 20 * rowHeight + 16
        let height = legendTop + 40 + footer.count * 20 + 12
        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(width)" height="\(height)" viewBox="0 0 \(width) \(height)" \
            font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="13">

            """
        out += "<title>\(Self.escaped(boardName)) on the Raspberry Pi's 40-pin header</title>\n"
        out += "<rect width=\"\(width)\" height=\"\(height)\" fill=\"#ffffff\"/>\n"
        out += "<text x=\"20\" y=\"34\" font-size=\"20\" font-weight=\"bold\">\(Self.escaped(boardName)) on the Raspberry Pi's 40-pin header</text>\n"
        out += "<text x=\"20\" y=\"58\" fill=\"#555555\">\(Self.escaped(chipNote))</text>\n"
        out += "<text x=\"20\" y=\"78\" fill=\"#555555\">pin 1 has the square pad; odd pins are the row away from the board's edge</text>\n"
        out += "<rect x=\"\(leftColumn - 20)\" y=\"\(top - 20)\" width=\"66\" height=\"\(20 * rowHeight + 12)\" rx=\"6\" fill=\"#1f2a33\"/>\n"
        for row in 0..<(RaspberryPiHeader.pinCount / 2) {
            let y = top + row * rowHeight
            for (pin, x, anchor) in [(2 * row + 1, leftColumn, "end"), (2 * row + 2, rightColumn, "start")] {
                let function = RaspberryPiHeader.function(ofPin: pin)!
                let line = connection(atPin: pin)
                let (fill, textFill) = Self.colours(function: function, connection: line)
                out += "<circle cx=\"\(x)\" cy=\"\(y)\" r=\"11\" fill=\"\(fill)\" stroke=\"#ffffff\" stroke-width=\"1.5\"/>"
                out += "<text x=\"\(x)\" y=\"\(y + 4)\" font-size=\"10\" text-anchor=\"middle\" fill=\"\(textFill)\">\(pin)</text>\n"
                let labelX = anchor == "end" ? x - 34 : x + 34
                let weight = line == nil && function.isGPIO ? "" : " font-weight=\"bold\""
                out += "<text x=\"\(labelX)\" y=\"\(y + 5)\" text-anchor=\"\(anchor)\"\(weight) fill=\"\(function.isGPIO && line == nil ? "#777777" : "#000000")\">\(function.name)</text>\n"
                if let line {
                    let lineStart = anchor == "end" ? labelX - 62 : labelX + 62
                    let lineEnd = anchor == "end" ? lineStart - 26 : lineStart + 26
                    let noteX = anchor == "end" ? lineEnd - 8 : lineEnd + 8
                    out += "<line x1=\"\(lineStart)\" y1=\"\(y)\" x2=\"\(lineEnd)\" y2=\"\(y)\" stroke=\"\(fill)\" stroke-width=\"3\"/>"
                    out += "<text x=\"\(noteX)\" y=\"\(y + 5)\" text-anchor=\"\(anchor)\"><tspan font-weight=\"bold\" fill=\"\(fill)\">\(Self.escaped(line.name))</tspan>"
                    out += " \(Self.escaped(line.purpose)) · \(Self.escaped(line.levelSummary))</text>\n"
                }
            }
        }
        let legend: [(String, String)] = [
            ("#27ae60", "button"), ("#2980b9", "touch pad"), ("#8e44ad", "output (LED, buzzer)"),
            ("#e67e22", "3V3"), ("#c0392b", "5V"), ("#000000", "GND"),
        ]
        var x = 20
        for (colour, label) in legend {
            out += "<circle cx=\"\(x + 8)\" cy=\"\(legendTop + 8)\" r=\"7\" fill=\"\(colour)\"/>"
            out += "<text x=\"\(x + 22)\" y=\"\(legendTop + 13)\">\(Self.escaped(label))</text>\n"
            x += 22 + label.count * 7 + 24
        }
        for (index, note) in footer.enumerated() {
            out += "<text x=\"20\" y=\"\(legendTop + 48 + index * 20)\" fill=\"#333333\">\(Self.escaped(note))</text>\n"
        }
        out += "</svg>\n"
        return out
    }

    /// The colour of a pin's disc and of its number.
    private static func colours(function: HeaderPinFunction, connection: Connection?) -> (String, String) {
        if let connection {
            switch connection.kind {
            case .input(.pad): return ("#2980b9", "#ffffff")
            case .input: return ("#27ae60", "#ffffff")
            case .output: return ("#8e44ad", "#ffffff")
            }
        }
        switch function {
        case .power3V3: return ("#e67e22", "#ffffff")
        case .power5V: return ("#c0392b", "#ffffff")
        case .ground: return ("#000000", "#ffffff")
        case .gpio: return ("#d5dbdf", "#333333")
        }
    }

    /// `text` with XML's five special characters escaped, for board names and reasons in the SVG.
    static func escaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(character)
            }
        }
        return out
    }

    /// `text` after enough spaces to fill `width` characters: a right-aligned column.
    static func leftPadded(_ text: String, to width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }

    /// `text` and enough spaces to fill `width` characters: a left-aligned column.
    static func rightPadded(_ text: String, to width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }

    private static func trimmingTrailingSpaces(_ text: String) -> String {
        var text = text
        while text.last == " " { text.removeLast() }
        return text
    }
}

extension WiringDiagram.Connection {
    /// "active-low, pull-up": the level that means pressed or touched, and the Pi's pull resistor.
    public var levelSummary: String {
        let level = activeLow ? "active-low" : "active-high"
        return bias.map { "\(level), \($0.rawValue)" } ?? "\(level) output"
    }
}

extension HeaderPinFunction {
    var isGPIO: Bool {
        if case .gpio = self { return true }
        return false
    }
}
