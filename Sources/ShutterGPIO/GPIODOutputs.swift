import CGPIODBackend
import ShutterCore

extension GPIODChip: OutputChip {
    /// Requests the board's feedback lines as outputs, each inactive at first.
    ///
    /// Each line is its own request, so one that cannot be had is named in the error.
    /// The corresponding C function is `gpiod_chip_request_lines` (2.x) or
    /// `gpiod_line_request_output_flags` (1.6).
    public func drive(_ lines: [FeedbackLine], consumer: String) throws -> any OutputDriver {
        var requests: [OpaquePointer] = []
        var failure: GPIOError?
        for line in lines {
            let board = BoardLine(name: line.name, role: .full, selector: line.selector)
            let offset: UInt32
            do {
                offset = try self.offset(of: board)
            } catch let error as GPIOError {
                failure = error
                break
            }
            if let info = lineInfo(offset: offset), info.used {
                failure = .lineBusy(board: line.name, line.selector, chip: chipDescription, consumer: info.consumer)
                break
            }
            guard let request = shutter_gpiod_request_output(handle, consumer, offset, line.activeLow ? 1 : 0, 0) else {
                failure = .requestFailed(line: line.name, chip: chipDescription, .current)
                break
            }
            requests.append(request)
        }
        if let failure {
            for request in requests { shutter_gpiod_request_release(request) }
            throw failure
        }
        return GPIODOutputDriver(requests: requests, names: lines.map(\.name), chip: self)
    }
}

/// Output lines requested through libgpiod, one request a line.
final class GPIODOutputDriver: OutputDriver {
    private var requests: [OpaquePointer]
    private let names: [String]
    /// Held so the chip outlives its lines: closing a 1.6 chip releases them.
    private let owner: GPIODChip

    init(requests: [OpaquePointer], names: [String], chip: GPIODChip) {
        self.requests = requests
        self.names = names
        owner = chip
    }

    deinit { close() }

    /// The corresponding C function is `gpiod_line_request_set_value` (2.x) or `gpiod_line_set_value` (1.6).
    func set(_ index: Int, active: Bool) throws {
        guard requests.indices.contains(index) else { return }
        guard shutter_gpiod_request_set_value(requests[index], active ? 1 : 0) == 0 else {
            throw GPIOError.writeFailed(line: names[index], chip: owner.chipDescription, .current)
        }
    }

    /// The corresponding C function is `gpiod_line_request_release` (2.x) or `gpiod_line_release` (1.6).
    func close() {
        for request in requests { shutter_gpiod_request_release(request) }
        requests.removeAll()
    }
}
