#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterCapture
import ShutterCore
import ShutterGPIO

/// Reads simulated edges from standard input for the simulator board, line by line,
/// and drives the mock chip with them at their time after start.
final class SimulatorInput {
    private let board: Board
    private let chip: MockChip
    private let origin: Instant
    private var buffer: [UInt8] = []
    private var lineNumber = 0
    private var lastTime: Instant
    /// Edges read but not yet due, oldest first.
    private(set) var scheduled: [Edge] = []
    private(set) var ended = false

    init(board: Board, chip: MockChip, origin: Instant) {
        self.board = board
        self.chip = chip
        self.origin = origin
        lastTime = origin
    }

    /// Reads what standard input has; parse errors are reported and the line skipped.
    func readAvailable() {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = read(STDIN_FILENO, &chunk, chunk.count)
        if count <= 0 {
            if count == 0 || (errno != EAGAIN && errno != EINTR) { ended = true }
            if ended, !buffer.isEmpty { parse(line: buffer); buffer.removeAll() }
            return
        }
        buffer.append(contentsOf: chunk.prefix(count))
        while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
            parse(line: Array(buffer[..<newline]))
            buffer.removeFirst(newline + 1)
        }
    }

    private func parse(line: [UInt8]) {
        lineNumber += 1
        let text = String(decoding: line, as: UTF8.self)
        do {
            let trace = try Trace.parse(text, board: board, source: "<stdin>")
            for edge in trace.edges {
                var due = Edge(line: edge.line, active: edge.active, time: origin + Nanoseconds(rawValue: edge.time.rawValue))
                if due.time < lastTime {
                    Console.error("shutter: <stdin>:\(lineNumber): time goes backwards; edge taken now")
                    due.time = lastTime
                }
                lastTime = due.time
                scheduled.append(due)
            }
        } catch {
            Console.error("shutter: <stdin>:\(lineNumber): \(error.message) (line ignored)")
        }
    }

    /// The time the next simulated edge is due.
    var nextEdgeTime: Instant? { scheduled.first?.time }

    /// Drives every edge due by `now` into the mock chip.
    func deliver(upTo now: Instant) {
        chip.clock.advance(to: max(chip.clock.now, now))
        var delivered = 0
        for edge in scheduled where edge.time <= now {
            chip.set(edge.line, active: edge.active, at: edge.time)
            delivered += 1
        }
        scheduled.removeFirst(delivered)
    }
}

// MARK: - run

func runDaemon(_ arguments: ParsedArguments) throws -> Int32 {
    let boardPath = arguments.value("--board")!
    var board = try loadBoard(boardPath)
    let (chip, watcher) = try watchLines(of: board, consumer: "shutter")
    defer { watcher.close() }
    let loop = try EventLoop()
    // The camera opens now (or keeps being looked for in the background); the controls it
    // cannot serve are disabled before the recognizer sees the board.
    let capture: CaptureBridge
    do {
        capture = CaptureBridge(service: try CaptureService(board: board))
    } catch {
        throw CommandFailure(error.description)
    }
    defer { capture.service.shutdown() }
    let notes: [String]
    (board, notes) = CaptureBridge.boardWithCameraLimits(board, service: capture.service)
    for note in notes { Console.error("shutter: \(note)") }
    let state = try arguments.has("--no-state") ? nil : ControlState(board: board, path: arguments.value("--state"))
    let interpreter = Interpreter(board: board, watcher: watcher, initialValues: state?.load())
    interpreter.emit = { [unowned interpreter] event in
        Console.out(event.json.description)
        capture.handle(event)
        // Save when an adjustment is over, not on every coalesced value of a swipe.
        if ["controlsAdjusting", "controlSelected", "controlsInactive"].contains(event.name) {
            state?.save(interpreter.machine.controlValues)
        }
    }
    interpreter.reportLostEdges = { [unowned interpreter] count, time in
        var line = JSONLine(event: "edgesLost", at: time)
        line.add("count", count)
        line.add("resynchronised", interpreter.resynchronised)
        Console.out(line.description)
    }
    // Bring the camera to the values the controls start from (saved, or the board's).
    for (id, value) in interpreter.machine.controlValues.sorted(by: { $0.key < $1.key }) {
        capture.service.apply(controlID: id, value: value)
    }
    interpreter.setCaptureAvailable(capture.available, at: loop.clock.now)
    loop.watch(descriptors: { capture.service.pollDescriptors }) {
        let (events, changed) = capture.readable()
        for event in events { Console.out(event.json.description) }
        if changed { interpreter.setCaptureAvailable(capture.available, at: loop.clock.now) }
    }
    var simulator: SimulatorInput?
    if let mock = chip as? MockChip {
        mock.clock.advance(to: loop.clock.now)
        let input = SimulatorInput(board: board, chip: mock, origin: loop.clock.now)
        simulator = input
        _ = fcntl(STDIN_FILENO, F_SETFL, fcntl(STDIN_FILENO, F_GETFL) | O_NONBLOCK)
        loop.watch(STDIN_FILENO) {
            input.readAvailable()
            if input.ended { loop.unwatch(STDIN_FILENO) }
            input.deliver(upTo: loop.clock.now)
            try interpreter.pump(now: loop.clock.now)
        }
    }
    for descriptor in watcher.pollDescriptors {
        loop.watch(descriptor) { try interpreter.pump(now: loop.clock.now) }
    }
    loop.nextDeadline = { [simulator] in [interpreter.nextDeadline, simulator?.nextEdgeTime].compactMap { $0 }.min() }
    loop.deadlineReached = { [simulator] now in
        simulator?.deliver(upTo: now)
        try interpreter.pump(now: now)
    }
    if let simulator {
        // The simulator's input has ended, nothing is scheduled and every photo is saved: the run is over.
        loop.afterWake = {
            if simulator.ended, simulator.nextEdgeTime == nil, interpreter.nextDeadline == nil,
               capture.service.pendingCount == 0, capture.service.inFlightCount == 0 {
                loop.stop()
            }
        }
    }
    Console.error("shutter: running board \(board.name) on \(board.chip) (\(LibGPIOD.summary))"
        + (simulator != nil ? "; simulated edges are read from standard input" : ""))
    try loop.run()
    interpreter.finish(at: loop.clock.now)
    state?.save(interpreter.machine.controlValues)
    state?.waitUntilSaved()
    // Photos already taken are finished before exit: a photo is written completely or not at all.
    capture.service.waitForWrites()
    for event in capture.service.handleReadable() { Console.out(event.json.description) }
    return ExitStatus.success
}

/// Where the daemon keeps control values between runs, saved off the event loop.
final class ControlState: @unchecked Sendable {
    // Unchecked: `lastSaved` is only touched on `queue`.
    let path: String
    private let queue = DispatchQueue(label: "shutter.control-state")
    private var lastSaved: [String: ControlValue]?

    init(board: Board, path: String?) throws {
        if let path {
            self.path = path
        } else {
            let environment = ProcessInfo.processInfo.environment
            let directory = environment["STATE_DIRECTORY"].flatMap { $0.split(separator: ":").first.map(String.init) }
                ?? (environment["XDG_STATE_HOME"] ?? (NSHomeDirectory() + "/.local/state")) + "/shutter"
            self.path = directory + "/\(board.name).controls.json"
        }
        let directory = (self.path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw CommandFailure("cannot create the state directory \(directory): \(error.localizedDescription) (use --state FILE or --no-state)")
            }
        }
    }

    /// The saved values; none when the file is missing or damaged (the board's initial values apply).
    func load() -> [String: ControlValue] {
        let values = ControlStateFile.load(path: path)
        queue.sync { lastSaved = values }
        return values
    }

    /// Saves `values` in the background when they changed; a failure is reported, never fatal.
    func save(_ values: [String: ControlValue]) {
        queue.async { [self] in
            guard values != lastSaved else { return }
            do {
                try ControlStateFile.save(values, path: path)
                lastSaved = values
            } catch {
                Console.error("shutter: cannot save control values to \(path): \(error.localizedDescription)")
            }
        }
    }

    func waitUntilSaved() { queue.sync {} }
}
