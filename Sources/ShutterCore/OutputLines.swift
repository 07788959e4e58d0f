/// A chip that can drive a board's feedback lines (LED, buzzer) as outputs.
///
/// Two implementations, as for inputs: the libgpiod one in `ShutterGPIO`, and
/// ``MockChip``, which records every level it is given.
public protocol OutputChip: AnyObject {
    /// Requests `lines` as outputs, each starting inactive (LED dark, buzzer silent).
    ///
    /// - Parameters:
    ///   - lines: the board's feedback lines; their order is the index ``OutputDriver/set(_:active:)`` takes.
    ///   - consumer: the name other programs see as the lines' user (`gpioinfo`).
    func drive(_ lines: [FeedbackLine], consumer: String) throws -> any OutputDriver
}

/// Output lines being driven.
public protocol OutputDriver: AnyObject {
    /// Sets line `index` (its position in the request) active or inactive; active-low is applied below.
    func set(_ index: Int, active: Bool) throws

    /// Releases the lines (they keep their last level or float, as the chip does).
    func close()
}

/// One level given to a mock output line.
public struct OutputChange: Hashable, Sendable, CustomStringConvertible {
    /// The line's board name (`led`).
    public var line: String
    public var active: Bool
    /// The mock chip's clock when it was set.
    public var time: Instant

    public init(line: String, active: Bool, time: Instant) {
        self.line = line
        self.active = active
        self.time = time
    }

    public var description: String { "\(line) \(active ? "on" : "off") at \(time.rawValue / 1_000_000) ms" }
}

extension MockChip: OutputChip {
    public func drive(_ lines: [FeedbackLine], consumer: String) throws -> any OutputDriver {
        for line in lines { outputLevels[line.name] = false }
        return MockOutputDriver(names: lines.map(\.name), chip: self)
    }

    /// The level an output line has now; nil when it was never requested.
    public func outputLevel(_ name: String) -> Bool? { outputLevels[name] }

    /// Every change of `name`'s level, oldest first (setting the level it has is no change).
    public func outputChanges(of name: String) -> [OutputChange] { outputHistory.filter { $0.line == name } }
}

/// The driver ``MockChip`` hands out: levels go into the chip's history, stamped with its clock.
final class MockOutputDriver: OutputDriver, @unchecked Sendable {
    private let names: [String]
    private unowned let chip: MockChip
    private var closed = false

    init(names: [String], chip: MockChip) {
        self.names = names
        self.chip = chip
    }

    func set(_ index: Int, active: Bool) throws {
        precondition(!closed, "output set after close()")
        let name = names[index]
        guard chip.outputLevels[name] != active else { return }
        chip.outputLevels[name] = active
        chip.outputHistory.append(OutputChange(line: name, active: active, time: chip.clock.now))
    }

    func close() { closed = true }
}
