/// Where a board's lines go on the Raspberry Pi's 40-pin header, and what each is wired to.
///
/// Made from the board alone, so a rig builder can draw their own board: the lines (inputs and
/// the feedback outputs) whose chip and name or offset place them on a header pin are
/// ``connections``; a line the header does not carry (a gpio-sim line, the mock chip's, GPIO28 and
/// up, a misspelt name) is in ``unplaced`` with the reason, never drawn at a guessed pin.
/// ``text`` and ``svg`` draw it.
public struct WiringDiagram: Sendable {
    /// How the board's chip relates to the header.
    public enum HeaderChip: Hashable, Sendable {
        /// A chip a Raspberry Pi's header lines are on, found by its label: offsets are GPIO numbers.
        case raspberryPi(label: String, boards: String)
        /// A chip named by its kernel name or path (`gpiochip0`): lines named `GPIOn` are taken
        /// to be the header's; offsets are not, as the same number names another chip elsewhere.
        case assumed(ChipSelector)
        /// A chip that is not a Raspberry Pi's header (the mock chip, gpio-sim, another label).
        case none(reason: String)

        /// Whether the chip is (or is taken to be) a header's: a line it cannot place is a mistake
        /// in the board, where on another chip no line is expected on the header.
        public var isHeader: Bool {
            if case .none = self { return false }
            return true
        }
    }

    /// One board line on a header pin.
    public struct Connection: Hashable, Sendable {
        /// What the line does on the rig.
        public enum Kind: Hashable, Sendable {
            case input(LineRole)
            case output(FeedbackRole)
        }

        /// The board's name for the line (`pad0`).
        public var name: String
        public var kind: Kind
        /// The line's Broadcom number: 17 for GPIO17.
        public var gpio: Int
        /// The physical header pin, 1–40.
        public var pin: Int
        public var activeLow: Bool
        /// The pull resistor asked of the Pi; nil for an output.
        public var bias: Bias?
        /// What people call it: "half press", "touch pad 1 of 6", "status LED".
        public var purpose: String
        /// What to connect to the pin, and where its other end goes.
        public var wiring: String
        /// A setting that cannot work with the wiring it implies (a pull-down with active-low).
        public var warning: String?
    }

    /// A board line that is not drawn, and why.
    public struct UnplacedLine: Hashable, Sendable {
        /// The board's name for the line.
        public var name: String
        /// How the board file names it on the chip (`GPIO40`, `offset 3`, `pad0`).
        public var selector: LineSelector
        public var reason: String
    }

    /// The board's name.
    public var boardName: String
    public var chip: ChipSelector
    public var headerChip: HeaderChip
    /// The lines on header pins, in board order (inputs, then feedback outputs).
    public var connections: [Connection]
    /// The lines not on the header, in board order.
    public var unplaced: [UnplacedLine]

    /// Places `board`'s input and feedback lines on the header.
    public init(board: Board) {
        boardName = board.name
        chip = board.chip
        headerChip = Self.headerChip(of: board.chip)
        connections = []
        unplaced = []
        let pads = board.pads
        for line in board.lines {
            let purpose: String = switch line.role {
            case .half: "half press"
            case .full: "full press"
            case .secondary: "secondary button"
            case .pad: "touch pad \((pads.firstIndex { board[$0].name == line.name } ?? 0) + 1) of \(pads.count)"
            }
            place(name: line.name, selector: line.selector) { gpio, pin in
                let (wiring, warning) = Self.inputWiring(role: line.role, activeLow: line.activeLow, bias: line.bias, gpio: gpio, pin: pin)
                return Connection(name: line.name, kind: .input(line.role), gpio: gpio, pin: pin, activeLow: line.activeLow,
                                  bias: line.bias, purpose: purpose, wiring: wiring, warning: warning)
            }
        }
        for line in board.feedback {
            place(name: line.name, selector: line.selector) { gpio, pin in
                Connection(name: line.name, kind: .output(line.role), gpio: gpio, pin: pin, activeLow: line.activeLow,
                           bias: nil, purpose: line.role == .led ? "status LED" : "buzzer",
                           wiring: Self.outputWiring(role: line.role, activeLow: line.activeLow), warning: nil)
            }
        }
    }

    /// The connection at physical pin `pin`, if a board line is there.
    public func connection(atPin pin: Int) -> Connection? {
        connections.first { $0.pin == pin }
    }

    /// The connection of the board's input line `line`, if it is on the header.
    public func connection(of line: BoardLine) -> Connection? {
        connections.first { $0.name == line.name && $0.kind == .input(line.role) }
    }

    private mutating func place(name: String, selector: LineSelector, making make: (_ gpio: Int, _ pin: Int) -> Connection) {
        switch Self.gpioNumber(of: selector, on: headerChip) {
        case .failure(let reason):
            unplaced.append(UnplacedLine(name: name, selector: selector, reason: reason.message))
        case .success(let gpio):
            guard let pin = RaspberryPiHeader.pin(ofGPIO: gpio) else {
                unplaced.append(UnplacedLine(name: name, selector: selector,
                                             reason: "GPIO\(gpio) is not on the 40-pin header, which carries GPIO0 to GPIO27"))
                return
            }
            if let taken = self.connection(atPin: pin) {
                unplaced.append(UnplacedLine(name: name, selector: selector,
                                             reason: "pin \(pin) (GPIO\(gpio)) is already \(taken.name)'s"))
                return
            }
            connections.append(make(gpio, pin))
        }
    }

    /// Why a line has no GPIO number, as an error so that `Result` can carry it.
    private struct NotOnHeader: Error {
        var message: String
    }

    private static func headerChip(of chip: ChipSelector) -> HeaderChip {
        switch chip {
        case .simulator:
            return .none(reason: "shutter's mock chip has no pins: its lines are driven by keys, traces and the demo")
        case .label(let label):
            if let known = RaspberryPiHeader.chipLabels.first(where: { $0.label == label }) {
                return .raspberryPi(label: known.label, boards: known.boards)
            }
            let labels = RaspberryPiHeader.chipLabels.map { "'\($0.label)'" }.joined(separator: ", ")
            return .none(reason: "\(chip) is not a Raspberry Pi's header chip (\(labels))")
        case .name, .path:
            return .assumed(chip)
        }
    }

    private static func gpioNumber(of selector: LineSelector, on headerChip: HeaderChip) -> Result<Int, NotOnHeader> {
        switch (headerChip, selector) {
        case (.none(let reason), _):
            return .failure(NotOnHeader(message: reason))
        case (.raspberryPi, .offset(let offset)):
            return .success(Int(offset))
        case (.assumed(let chip), .offset(let offset)):
            return .failure(NotOnHeader(message: "offset \(offset) on \(chip): which pin an offset is depends on the chip; "
                + "name the line (GPIO\(offset)) or the chip by its label (pinctrl-rp1 on a Pi 5)"))
        case (_, .name(let name)):
            if let number = parseGPIOName(name) { return .success(number) }
            var message = "'\(name)' is not a header line's name (GPIO0 to GPIO27, as the device tree names them)"
            if let number = parseGPIOName(name.uppercased().replacing("O", with: "0").replacing("GPI0", with: "GPIO")) {
                message += "; did you mean 'GPIO\(number)'?"
            }
            return .failure(NotOnHeader(message: message))
        }
    }

    /// The number in a device-tree line name `GPIOn` (`GPIO17` → 17); nil for any other name.
    static func parseGPIOName(_ name: String) -> Int? {
        guard name.hasPrefix("GPIO") else { return nil }
        let digits = name.dropFirst(4)
        guard (1...2).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }),
              digits.first != "0" || digits.count == 1 else { return nil }
        return Int(digits)
    }

    /// What an input's settings ask to be wired to its pin, and the settings no wiring can satisfy.
    private static func inputWiring(role: LineRole, activeLow: Bool, bias: Bias, gpio: Int, pin: Int) -> (String, String?) {
        let isPad = role == .pad
        // The nearest pin of each supply, so a builder keeps the button's wires short.
        let ground = "GND (pin \(nearestPin(carrying: .ground, to: pin) ?? 6))"
        let supply = "3V3 (pin \(nearestPin(carrying: .power3V3, to: pin) ?? 1))"
        // A touch module's push-pull output overrides the I2C pins' fixed pull-up; a switch cannot.
        if (gpio == 2 || gpio == 3) && !activeLow && !isPad {
            return ("a switch to \(supply)",
                    "GPIO\(gpio) has a fixed 1.8 kΩ pull-up (I2C): it reads high, active, while nothing drives it; use it for a button to GND (activeLow, pull-up) or choose another GPIO")
        }
        switch (activeLow, bias) {
        case (true, .pullUp):
            return (isPad ? "a touch module's OUT, set to active-low output" : "a switch, its other side to \(ground)", nil)
        case (false, .pullDown):
            return (isPad ? "a TTP223 module's OUT (its VCC to 3V3, GND to GND)" : "a switch, its other side to \(supply)", nil)
        case (true, .pullDown):
            return ("a device that drives the line high while idle",
                    "active-low with a pull-down: the line reads low, active, while nothing drives it; a switch to GND wants bias pull-up")
        case (true, _):
            return (isPad ? "a touch module's OUT, set to active-low output"
                    : "a switch to \(ground) and a 10 kΩ resistor from the pin to 3V3 (bias \(bias.rawValue): the Pi pulls nothing)", nil)
        case (false, .pullUp):
            return ("a device that drives the line low while idle",
                    "active-high with a pull-up: the line reads high, active, while nothing drives it; a switch to GND wants activeLow true")
        case (false, _):
            return (isPad ? "a TTP223 module's OUT (its VCC to 3V3, GND to GND)"
                    : "a switch to \(supply) and a 10 kΩ resistor from the pin to GND (bias \(bias.rawValue): the Pi pulls nothing)", nil)
        }
    }

    /// What an output's setting asks to be wired to its pin.
    private static func outputWiring(role: FeedbackRole, activeLow: Bool) -> String {
        switch (role, activeLow) {
        case (.led, false): "a 330 Ω resistor and an LED to GND (the LED's long leg towards the pin)"
        case (.led, true): "an LED and a 330 Ω resistor from 3V3 (the LED's short leg towards the pin)"
        case (.buzzer, false): "an active buzzer module's signal input (its VCC to 3V3 or 5V, GND to GND)"
        case (.buzzer, true): "an active-low buzzer module's signal input (its VCC to 3V3 or 5V, GND to GND)"
        }
    }

    /// The pin carrying `function` nearest `pin` along the header (the lower pin number on a tie):
    /// the ground a button's other side goes to. Nil when no pin carries it.
    public static func nearestPin(carrying function: HeaderPinFunction, to pin: Int) -> Int? {
        let row = (pin - 1) / 2
        return RaspberryPiHeader.pins(carrying: function).min { a, b in
            let da = abs((a - 1) / 2 - row), db = abs((b - 1) / 2 - row)
            return da != db ? da < db : a < b
        }
    }
}
