#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterCapture
import ShutterCore
import ShutterGPIO

/// How `shutter run` was asked to run the daemon.
public struct DaemonOptions: Sendable {
    /// The board file, for messages and for reloading on SIGHUP.
    public var boardPath: String?
    /// Where control values are kept; nil = the default place (``ControlState``).
    public var statePath: String?
    /// Whether control values are loaded and saved at all (`--no-state`).
    public var keepsState = true
    /// The API socket (`--socket`, or the board's `api.socket`); nil = no API.
    public var socketPath: String?
    /// Whether the simulator chip's edges are read from standard input.
    public var readsSimulatorInput = true
    /// Whether event lines go to standard output.
    public var printsEvents = true

    public init() {}
}

/// What the daemon has counted since it started, for `status`.
public struct DaemonCounters: Hashable, Sendable {
    public var presses = 0
    public var photos = 0
    public var failures = 0
    public var lostEdges = 0
}

/// The service a rig runs all day: the lines, the state machines, the camera, the API, one loop.
///
/// Everything happens on the loop's thread; nothing in a handler blocks (photos and the state file
/// are written on background queues that report back through descriptors). Tests build one with
/// the mock chip, the synthetic camera and a virtual clock, and turn the loop with
/// ``EventLoop/runOnce(timeoutMilliseconds:)``.
public final class Daemon {
    public let loop: EventLoop
    public private(set) var board: Board
    public let options: DaemonOptions
    public let chip: any GPIOChip
    public private(set) var watcher: any EdgeWatcher
    public let capture: CaptureBridge
    public private(set) var interpreter: Interpreter
    let state: ControlState?
    public private(set) var counters = DaemonCounters()
    /// The newest photo on disk.
    public private(set) var lastPhotoPath: String?
    /// When the daemon started, on the loop's clock.
    public let startedAt: Instant
    /// Whether capture is enabled through the API (`disable capture` turns it off).
    public private(set) var captureEnabled = true
    /// Receives every event line, exactly as standard output gets it (API subscribers, hooks).
    private var lineObservers: [(_ name: String, _ line: String) -> Void] = []
    private(set) var simulator: SimulatorInput?
    /// The local API, when a socket was asked for.
    public private(set) var api: APIServer?

    /// Requests the board's lines, opens the camera (or starts looking for it), loads the saved
    /// control values and sets up the loop; ``run()`` starts it.
    ///
    /// - Parameters:
    ///   - chip: the chip to use; nil opens the one the board names (the mock chip for `simulator`).
    ///   - captureService: the camera side; nil makes one for the board.
    ///   - clock: the loop's clock (a virtual one in tests).
    /// - Throws: ``CommandFailure`` naming the line, camera directory or state file that failed.
    public init(board: Board, options: DaemonOptions = DaemonOptions(), chip: (any GPIOChip)? = nil,
                captureService: CaptureService? = nil, clock: (any MonotonicClock)? = nil) throws {
        self.options = options
        let chip = try chip ?? openChip(for: board)
        self.chip = chip
        do {
            watcher = try chip.watch(board.lines, consumer: "shutter")
        } catch let error as GPIOError {
            throw CommandFailure(error.description)
        }
        loop = try EventLoop(clock: clock ?? SystemMonotonicClock())
        startedAt = loop.clock.now
        // The camera opens now (or keeps being looked for in the background); the controls it
        // cannot serve are disabled before the recognizer sees the board.
        if let captureService {
            capture = CaptureBridge(service: captureService)
        } else {
            do throws(CaptureError) {
                capture = CaptureBridge(service: try CaptureService(board: board, clock: loop.clock))
            } catch {
                throw CommandFailure(error.description)
            }
        }
        let (board, notes) = CaptureBridge.boardWithCameraLimits(board, service: capture.service)
        for note in notes { Log.notice("shutter: \(note)") }
        self.board = board
        state = options.keepsState ? try ControlState(board: board, path: options.statePath) : nil
        interpreter = Interpreter(board: board, watcher: watcher, initialValues: state?.load())
        wireInterpreter()
        // Bring the camera to the values the controls start from (saved, or the board's).
        for (id, value) in interpreter.machine.controlValues.sorted(by: { $0.key < $1.key }) {
            capture.service.apply(controlID: id, value: value)
        }
        interpreter.setCaptureAvailable(capture.available, at: loop.clock.now)
        loop.watch(descriptors: { [unowned self] in capture.service.pollDescriptors }) { [unowned self] in
            cameraReadable()
        }
        if let mock = chip as? MockChip, options.readsSimulatorInput {
            mock.clock.advance(to: loop.clock.now)
            let input = SimulatorInput(board: board, chip: mock, origin: loop.clock.now)
            simulator = input
            _ = fcntl(STDIN_FILENO, F_SETFL, fcntl(STDIN_FILENO, F_GETFL) | O_NONBLOCK)
            loop.watch(STDIN_FILENO) { [unowned self] in
                input.readAvailable()
                if input.ended { loop.unwatch(STDIN_FILENO) }
                input.deliver(upTo: loop.clock.now)
                try pump()
            }
        }
        watchLines()
        loop.nextDeadline = { [unowned self] in
            [interpreter.nextDeadline, simulator?.nextEdgeTime].compactMap { $0 }.min()
        }
        loop.deadlineReached = { [unowned self] now in
            simulator?.deliver(upTo: now)
            try pump(now: now)
        }
        if let path = options.socketPath ?? board.api.socket {
            do throws(APIServer.Failure) {
                api = try APIServer(path: path, daemon: self)
            } catch {
                throw CommandFailure(error.description)
            }
        }
        if let simulator, api == nil {
            // The simulator's input has ended, nothing is scheduled and every photo is saved: the run is
            // over. With an API socket the daemon keeps serving until SIGTERM.
            loop.afterWake = { [unowned self] in
                if simulator.ended, simulator.nextEdgeTime == nil, interpreter.nextDeadline == nil,
                   capture.service.pendingCount == 0, capture.service.inFlightCount == 0 {
                    loop.stop()
                }
            }
        }
    }

    private func watchLines() {
        for descriptor in watcher.pollDescriptors {
            loop.watch(descriptor) { [unowned self] in try pump() }
        }
    }

    private func wireInterpreter() {
        interpreter.emit = { [unowned self] event in handle(event) }
        interpreter.reportLostEdges = { [unowned self] count, time in
            counters.lostEdges += count
            var line = JSONLine(event: "edgesLost", at: time)
            line.add("count", count)
            publish(name: "edgesLost", line: line.description)
        }
    }

    /// Reads the lines and lets the state machines catch up to now.
    public func pump(now: Instant? = nil) throws {
        try interpreter.pump(now: now ?? loop.clock.now)
    }

    /// Registers a receiver of every event line, as standard output prints it.
    public func observeLines(_ observer: @escaping (_ name: String, _ line: String) -> Void) {
        lineObservers.append(observer)
    }

    /// Sends one event line to standard output and to every observer.
    func publish(name: String, line: String) {
        if options.printsEvents { Console.out(line) }
        for observer in lineObservers { observer(name, line) }
    }

    private func handle(_ event: ShutterEvent) {
        if case .capture(.began, _, _, _, _, _) = event { counters.presses += 1 }
        publish(name: event.name, line: event.json.description)
        capture.handle(event)
        // Save when an adjustment is over, not on every coalesced value of a swipe.
        if ["controlsAdjusting", "controlSelected", "controlsInactive"].contains(event.name) {
            saveState()
        }
    }

    func saveState() {
        state?.save(interpreter.machine.controlValues)
    }

    private func cameraReadable() {
        let (events, changed) = capture.readable()
        for event in events { report(event) }
        if changed { updateCaptureAvailable() }
    }

    private func report(_ event: CaptureEvent) {
        switch event {
        case .photo(let photo):
            counters.photos += 1
            lastPhotoPath = photo.path
        case .captureFailed:
            counters.failures += 1
        case .cameraReady:
            break
        }
        let line = event.json
        publish(name: Self.name(of: event), line: line.description)
    }

    static func name(of event: CaptureEvent) -> String {
        switch event {
        case .photo: "photo"
        case .captureFailed: "captureFailed"
        case .cameraReady: "cameraReady"
        }
    }

    /// Tells the state machines whether a photo can be taken: the camera is ready and capture is enabled.
    func updateCaptureAvailable() {
        interpreter.setCaptureAvailable(capture.available && captureEnabled, at: loop.clock.now)
    }

    /// Turns capture on or off for presses and remote captures alike.
    func setCaptureEnabled(_ enabled: Bool) {
        captureEnabled = enabled
        updateCaptureAvailable()
    }

    /// Runs the loop until SIGINT/SIGTERM (or the simulator's input is over), then ends cleanly.
    public func run() throws {
        Log.info("shutter: running board \(board.name) on \(board.chip) (\(LibGPIOD.summary))"
            + (simulator != nil ? "; simulated edges are read from standard input" : ""))
        try loop.run()
        finish()
    }

    /// Ends input (a press in progress is cancelled), saves the control values, and waits for the
    /// photos already taken: a photo is written completely or not at all.
    public func finish() {
        interpreter.finish(at: loop.clock.now)
        saveState()
        state?.waitUntilSaved()
        capture.service.waitForWrites()
        for event in capture.service.handleReadable() { report(event) }
        capture.service.shutdown()
        api?.close()
        api = nil
        watcher.close()
    }
}

/// Opens the chip a board names: the mock chip for `simulator`, libgpiod otherwise.
public func openChip(for board: Board) throws -> any GPIOChip {
    if board.chip == .simulator { return MockChip() }
    do {
        return try GPIODChip(board.chip)
    } catch let error as GPIOError {
        throw CommandFailure(error.description)
    }
}

/// Requests the board's lines, turning a GPIO error into the command's failure text.
public func watchLines(of board: Board, consumer: String) throws -> (any GPIOChip, any EdgeWatcher) {
    do {
        let chip = try openChip(for: board)
        return (chip, try chip.watch(board.lines, consumer: consumer))
    } catch let error as GPIOError {
        throw CommandFailure(error.description)
    }
}
