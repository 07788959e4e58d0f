/// What one pin of the Raspberry Pi's 40-pin header carries.
public enum HeaderPinFunction: Hashable, Sendable {
    /// 3.3 V supply (pins 1 and 17): what a touch module's VCC and a pull-up go to.
    case power3V3
    /// 5 V supply (pins 2 and 4): never wired to a GPIO, whose inputs take 3.3 V at most.
    case power5V
    /// Ground: what a button to ground and a module's GND go to.
    case ground
    /// A GPIO line, by its Broadcom (BCM) number: GPIO17 is `.gpio(17)`.
    case gpio(Int)

    /// The name printed on the header's maps: `3V3`, `5V`, `GND`, `GPIO17`.
    public var name: String {
        switch self {
        case .power3V3: "3V3"
        case .power5V: "5V"
        case .ground: "GND"
        case .gpio(let number): "GPIO\(number)"
        }
    }
}

/// The 40-pin header of every Raspberry Pi since the B+ (Pi 2, 3, 4, 5, Zero, Zero 2 W).
///
/// Physical pins are numbered 1 to 40: odd pins in the row nearer the board's middle, pin 1
/// (square pad) at the end away from the USB ports, pin 2 beside it at the board's edge.
public enum RaspberryPiHeader {
    /// The number of pins.
    public static let pinCount = 40

    /// Each pin's function, index 0 for pin 1.
    ///
    /// From the Raspberry Pi documentation's pinout, "GPIO and the 40-pin header"
    /// (https://www.raspberrypi.com/documentation/computers/raspberry-pi.html#gpio), the same on
    /// every model with the header; `pinout` on Raspberry Pi OS prints it too.
    private static let functions: [HeaderPinFunction] = [
        .power3V3, .power5V,    // 1, 2
        .gpio(2), .power5V,     // 3, 4
        .gpio(3), .ground,      // 5, 6
        .gpio(4), .gpio(14),    // 7, 8
        .ground, .gpio(15),     // 9, 10
        .gpio(17), .gpio(18),   // 11, 12
        .gpio(27), .ground,     // 13, 14
        .gpio(22), .gpio(23),   // 15, 16
        .power3V3, .gpio(24),   // 17, 18
        .gpio(10), .ground,     // 19, 20
        .gpio(9), .gpio(25),    // 21, 22
        .gpio(11), .gpio(8),    // 23, 24
        .ground, .gpio(7),      // 25, 26
        .gpio(0), .gpio(1),     // 27, 28
        .gpio(5), .ground,      // 29, 30
        .gpio(6), .gpio(12),    // 31, 32
        .gpio(13), .ground,     // 33, 34
        .gpio(19), .gpio(16),   // 35, 36
        .gpio(26), .gpio(20),   // 37, 38
        .ground, .gpio(21),     // 39, 40
    ]

    /// The function of physical pin `pin` (1–40); nil for any other number.
    public static func function(ofPin pin: Int) -> HeaderPinFunction? {
        (1...pinCount).contains(pin) ? functions[pin - 1] : nil
    }

    /// The physical pin of GPIO `number`; nil when the header does not carry it (GPIO28 and up).
    public static func pin(ofGPIO number: Int) -> Int? {
        functions.firstIndex(of: .gpio(number)).map { $0 + 1 }
    }

    /// The pins carrying `function`, in order: `pins(carrying: .ground)` is 6, 9, 14, 20, 25, 30, 34, 39.
    public static func pins(carrying function: HeaderPinFunction) -> [Int] {
        functions.indices.filter { functions[$0] == function }.map { $0 + 1 }
    }

    /// What else a GPIO on the header is commonly used for, to say why a rig keeps it free:
    /// the buses HATs and add-on boards take.
    public static func otherUse(ofGPIO number: Int) -> String? {
        switch number {
        case 0, 1: "HAT ID EEPROM"
        case 2, 3: "I2C, with a fixed 1.8 kΩ pull-up"
        case 7...11: "SPI"
        case 14, 15: "UART"
        case 18...21: "I2S"
        default: nil
        }
    }

    /// The GPIO chips whose lines are the header's, by label, with the boards that have them: on
    /// these chips a line's offset is its GPIO number and the device tree names it `GPIOn`.
    public static let chipLabels: [(label: String, boards: String)] = [
        ("pinctrl-rp1", "Raspberry Pi 5"),
        ("pinctrl-bcm2711", "Raspberry Pi 4 and 400"),
        ("pinctrl-bcm2835", "Raspberry Pi 2, 3, Zero and Zero 2 W"),
    ]
}
