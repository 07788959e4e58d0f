import CGPIODBackend
import ShutterCore

#if canImport(Glibc)
import Glibc
import ShutterSystem
#endif

/// The version of libgpiod shutter was built against and the one it runs with.
public enum LibGPIOD {
    /// The major version of the header the backend was compiled against (1 or 2).
    ///
    /// The corresponding C function is `shutter_gpiod_header_major`.
    public static var headerMajor: Int { Int(shutter_gpiod_header_major()) }

    /// The version of the shared library loaded now ("1.6.3", "2.2.1").
    ///
    /// The corresponding C function is `gpiod_version_string` (1.6) or `gpiod_api_version` (2.x).
    public static var runtimeVersion: String { String(cString: shutter_gpiod_runtime_version()) }

    /// "built against libgpiod 2.x, running 2.2.1".
    public static var summary: String { "built against libgpiod \(headerMajor).x, running \(runtimeVersion)" }
}

/// A GPIO chip opened through libgpiod.
public final class GPIODChip: GPIOChip {
    /// The chip as the system lists it.
    public let summary: ChipSummary
    private(set) var handle: OpaquePointer?

    /// Opens the chip a board names: by path, kernel name or label.
    ///
    /// - Throws: ``GPIOError/chipNotFound(_:available:)`` listing the chips that exist.
    public convenience init(_ selector: ChipSelector) throws {
        switch selector {
        case .simulator:
            preconditionFailure("the simulator chip is MockChip, not a libgpiod chip")
        case .path(let path):
            try self.init(path: path, selector: selector)
        case .name(let name):
            try self.init(path: "/dev/\(name)", selector: selector)
        case .label(let label):
            let (chips, unopened) = GPIODChip.survey()
            guard let match = chips.first(where: { $0.label == label }) ?? chips.first(where: { $0.name == label }) else {
                // A chip we may not open could be the one: say why it cannot be looked at.
                if let (path, error) = unopened.first(where: { $0.error == .permissionDenied || $0.error == .notPermitted }) {
                    throw GPIOError.cannotOpenChip(path: path, error)
                }
                throw GPIOError.chipNotFound(selector, available: chips)
            }
            try self.init(path: match.path, selector: selector)
        }
    }

    private init(path: String, selector: ChipSelector) throws {
        guard let handle = shutter_gpiod_chip_open(path) else {
            let error = Errno.current
            if error == .noSuchFile || error == Errno(rawValue: ENOTTY) || error == Errno(rawValue: ENODEV) {
                throw GPIOError.chipNotFound(selector, available: GPIODChip.list())
            }
            throw GPIOError.cannotOpenChip(path: path, error)
        }
        self.handle = handle
        summary = ChipSummary(path: path, name: String(cString: shutter_gpiod_chip_name(handle)),
                              label: String(cString: shutter_gpiod_chip_label(handle)),
                              lineCount: Int(shutter_gpiod_chip_num_lines(handle)))
    }

    deinit {
        if let handle { shutter_gpiod_chip_close(handle) }
    }

    /// Every GPIO chip on the system, in /dev order; chips that cannot be opened are left out.
    public static func list() -> [ChipSummary] { survey().chips }

    /// The chips that could be opened, and the device nodes that could not, with why.
    static func survey() -> (chips: [ChipSummary], unopened: [(path: String, error: Errno)]) {
        var unopened: [(path: String, error: Errno)] = []
        guard let directory = opendir("/dev") else { return ([], []) }
        defer { closedir(directory) }
        var paths: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasPrefix("gpiochip") { paths.append("/dev/" + name) }
        }
        paths.sort { $0.count != $1.count ? $0.count < $1.count : $0 < $1 }
        let chips = paths.compactMap { path -> ChipSummary? in
            guard let handle = shutter_gpiod_chip_open(path) else {
                unopened.append((path, .current))
                return nil
            }
            defer { shutter_gpiod_chip_close(handle) }
            return ChipSummary(path: path, name: String(cString: shutter_gpiod_chip_name(handle)),
                               label: String(cString: shutter_gpiod_chip_label(handle)),
                               lineCount: Int(shutter_gpiod_chip_num_lines(handle)))
        }
        return (chips, unopened)
    }

    /// What the kernel says of the line at `offset`.
    ///
    /// The corresponding C function is `gpiod_chip_get_line_info` (2.x) or `gpiod_chip_get_line` (1.6).
    public func lineInfo(offset: UInt32) -> (name: String, consumer: String, used: Bool)? {
        var info = shutter_gpiod_line_info()
        guard shutter_gpiod_chip_line_info(handle, offset, &info) == 0 else { return nil }
        let name = withUnsafeBytes(of: info.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let consumer = withUnsafeBytes(of: info.consumer) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return (name, consumer, info.used != 0)
    }

    /// The offset of the line a board names.
    ///
    /// - Throws: ``GPIOError/lineNotFound(board:_:chip:lineCount:available:)`` listing the chip's line names.
    public func offset(of line: BoardLine) throws -> UInt32 {
        switch line.selector {
        case .offset(let offset):
            guard offset < UInt32(summary.lineCount) else { throw lineNotFound(line) }
            return offset
        case .name(let name):
            let offset = shutter_gpiod_chip_find_line(handle, name)
            guard offset >= 0 else { throw lineNotFound(line) }
            return UInt32(offset)
        }
    }

    private func lineNotFound(_ line: BoardLine) -> GPIOError {
        let names = (0..<UInt32(summary.lineCount)).map { lineInfo(offset: $0)?.name ?? "" }
        return .lineNotFound(board: line.name, line.selector, chip: chipDescription, lineCount: summary.lineCount, available: names)
    }

    /// "gpiochip0 'rig-sim'", as errors name the chip.
    var chipDescription: String { "\(summary.name) '\(summary.label)'" }

    /// Requests `lines` for both-edge events.
    ///
    /// Debounce is asked of the kernel where the library can (2.x), only for the lines
    /// ``Swift/Array/kernelDebounces`` allows (pads on a rig with `half`): a kernel-debounced edge is
    /// stamped late, and a press instant must be its first edge. The watcher reports those lines in
    /// ``EdgeWatcher/kernelDebouncedLines``; the rest are debounced in software.
    /// The corresponding C function is `gpiod_chip_request_lines` (2.x) or
    /// `gpiod_line_request_both_edges_events_flags` (1.6).
    public func watch(_ lines: [BoardLine], consumer: String) throws -> any EdgeWatcher {
        var configs: [shutter_gpiod_input_config] = []
        let kernelDebounces = lines.kernelDebounces
        for (line, kernelDebounce) in zip(lines, kernelDebounces) {
            let offset = try offset(of: line)
            let bias: Int32 = switch line.bias {
            case .asIs: Int32(SHUTTER_GPIOD_BIAS_AS_IS)
            case .disabled: Int32(SHUTTER_GPIOD_BIAS_DISABLED)
            case .pullUp: Int32(SHUTTER_GPIOD_BIAS_PULL_UP)
            case .pullDown: Int32(SHUTTER_GPIOD_BIAS_PULL_DOWN)
            }
            configs.append(shutter_gpiod_input_config(
                offset: offset, active_low: line.activeLow ? 1 : 0, bias: bias,
                debounce_us: UInt32(clamping: kernelDebounce.rawValue / 1_000)))
        }
        // Name the busy line before asking: a request of many lines fails as a whole
        // with EBUSY, and the user needs to know which one, and who holds it.
        for (line, config) in zip(lines, configs) {
            if let info = lineInfo(offset: config.offset), info.used {
                throw GPIOError.lineBusy(board: line.name, line.selector, chip: chipDescription, consumer: info.consumer)
            }
        }
        var failedIndex: Int32 = -1
        guard let request = shutter_gpiod_request_inputs(handle, consumer, configs, configs.count, &failedIndex) else {
            let error = Errno.current
            let line = failedIndex >= 0 ? lines[Int(failedIndex)] : nil
            if error == .busy {
                for (candidate, config) in zip(lines, configs) {
                    if let info = lineInfo(offset: config.offset), info.used {
                        throw GPIOError.lineBusy(board: candidate.name, candidate.selector, chip: chipDescription, consumer: info.consumer)
                    }
                }
            }
            throw GPIOError.requestFailed(line: line?.name, chip: chipDescription, error)
        }
        return try GPIODWatcher(request: request, lineCount: lines.count, chip: self)
    }
}

/// Lines requested through libgpiod, read without blocking when poll() says so.
final class GPIODWatcher: EdgeWatcher {
    private var request: OpaquePointer?
    private let lineCount: Int
    /// Held so the chip outlives its lines: closing a 1.6 chip releases them.
    private let owner: GPIODChip
    private var chip: String { owner.chipDescription }
    private var buffer: [shutter_gpiod_edge]
    private var continuity: EdgeContinuity
    let pollDescriptors: [CInt]
    /// A poll set of ``pollDescriptors``, kept between reads (reading allocates nothing).
    private var readiness: [pollfd]
    let kernelDebouncedLines: Set<LineIndex>

    init(request: OpaquePointer, lineCount: Int, chip: GPIODChip) throws {
        self.request = request
        self.lineCount = lineCount
        self.owner = chip
        buffer = Array(repeating: shutter_gpiod_edge(), count: 256)
        continuity = EdgeContinuity(lineCount: lineCount)
        pollDescriptors = (0..<shutter_gpiod_request_fd_count(request)).map { shutter_gpiod_request_fd(request, $0) }
        readiness = pollDescriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        kernelDebouncedLines = Set((0..<lineCount).filter { shutter_gpiod_request_kernel_debounced(request, $0) != 0 }
            .map { LineIndex($0) })
        for (index, level) in try currentLevels().enumerated() {
            continuity.setLevel(level, of: LineIndex(index))
        }
    }

    deinit { close() }

    /// The corresponding C function is `gpiod_line_request_get_values` (2.x) or `gpiod_line_get_value` (1.6).
    func currentLevels() throws -> [Bool] {
        var values = [CInt](repeating: 0, count: lineCount)
        guard shutter_gpiod_request_get_values(request, &values) == 0 else {
            throw GPIOError.readFailed(chip: chip, .current)
        }
        return values.map { $0 != 0 }
    }

    /// The corresponding C function is `gpiod_line_request_read_edge_events` (2.x) or
    /// `gpiod_line_event_read_fd_multiple` (1.6).
    func readEdges(into edges: inout [Edge]) throws -> Int {
        var lost = 0
        let start = edges.count
        // 1.6 has a descriptor a line: one poll() finds the few with edges waiting, rather than a
        // read() on each: nine system calls for the simulator board's lines, on every wake-up
        // with an edge and again at each deadline (a press's decision waited for all of them).
        let asksFirst = pollDescriptors.count > 1
        if asksFirst {
            switch valueOrErrno({ readiness.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), 0) } }) {
            case .success(0): return 0
            case .success: break
            case .failure: for index in readiness.indices { readiness[index].revents = Int16(POLLIN) }  // poll failed: read them all
            }
        }
        for fdIndex in pollDescriptors.indices {
            // Also on an error or hang-up (revents other than POLLIN): the read reports it.
            if asksFirst, readiness[fdIndex].revents == 0 { continue }
            while true {
                let count = buffer.withUnsafeMutableBufferPointer {
                    shutter_gpiod_request_read_edges(request, fdIndex, $0.baseAddress, $0.count)
                }
                guard count >= 0 else { throw GPIOError.readFailed(chip: chip, .current) }
                for raw in buffer.prefix(Int(count)) {
                    let edge = Edge(line: LineIndex(Int(raw.index)), active: raw.rising != 0,
                                    time: Instant(rawValue: Int64(bitPattern: raw.timestamp_ns)))
                    let verdict = continuity.check(edge, globalSequence: UInt64(raw.global_seqno))
                    lost += verdict.lost
                    if verdict.deliver { edges.append(edge) }
                }
                if Int(count) < buffer.count { break }
            }
        }
        // 1.6 reads one descriptor a line; merge them into one time order.
        if pollDescriptors.count > 1, edges.count - start > 1 {
            edges[start...].sort { $0.time < $1.time }
        }
        return lost
    }

    /// The corresponding C function is `gpiod_line_request_release` (2.x) or `gpiod_line_release` (1.6).
    func close() {
        if let request { shutter_gpiod_request_release(request) }
        request = nil
    }
}
