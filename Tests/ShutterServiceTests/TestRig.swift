import Foundation
import Testing
import ShutterCapture
import ShutterCore
@testable import ShutterNode
@testable import ShutterService

/// The synthetic cameras a rig opens, frames only from `emit(at:)`: a test decides when frames come.
final class ManualCameras: @unchecked Sendable {
    private let lock = NSLock()
    private var made: [SyntheticCamera] = []  // guarded by lock: opened on the lifecycle queue
    var last: SyntheticCamera? { lock.withLock { made.last } }

    func open(_ settings: CameraSettings) throws(CaptureError) -> any Camera {
        let camera = try SyntheticCamera(width: settings.width ?? 640, height: settings.height ?? 480, frameInterval: nil)
        lock.withLock { made.append(camera) }
        return camera
    }

    /// Waits until `rig`'s camera streams, then gives it frames past the warm-up ones and waits
    /// until the daemon has read them; returns the camera, and 100 ms have passed since.
    func streamingWithFrames(in rig: TestRig) throws -> SyntheticCamera {
        try rig.waitFor { rig.daemon.capture.service.isStreaming }
        let camera = try #require(last)
        for step in 0..<8 { camera.emit(at: rig.chip.clock.now + .milliseconds(Double(step))) }
        try rig.waitFor { rig.daemon.capture.service.newestFrameAt != nil }
        rig.chip.clock.advance(by: .milliseconds(100))
        return camera
    }
}

/// The simulator board on the mock chip and the synthetic camera, with a temporary photo
/// directory, driven on the chip's virtual clock: the daemon's loop is turned by hand.
final class TestRig {
    let directory: String
    let chip: MockChip
    let node: Node
    var daemon: Daemon { node.service }
    let board: Board
    /// Every event line the daemon published, in order.
    private(set) var lines: [(name: String, line: String)] = []
    var names: [String] { lines.map(\.name) }

    var socketPath: String { directory + "/api.sock" }

    /// - Parameter captureService: makes the daemon's capture service for the board, on the
    ///   rig's clock; nil lets the daemon make it (with `cameraFactory`).
    init(boardJSON: String = TestRig.simulatorBoard, options: NodeOptions = NodeOptions(), api: Bool = false,
         cameraFactory: CameraFactory? = nil, captureService: ((Board, VirtualClock) throws -> CaptureService)? = nil,
         edit: (inout Board) -> Void = { _ in }) throws {
        // Short: a socket path must fit in 107 bytes.
        directory = "/tmp/sdt-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let json = boardJSON.replacingOccurrences(of: "PHOTOS", with: directory + "/photos")
        var board = try Board.decode(Data(json.utf8), file: "test-board.json")
        edit(&board)
        self.board = board
        chip = MockChip(clock: VirtualClock(start: .seconds(100)))
        var options = options
        options.readsSimulatorInput = false
        options.printsEvents = false
        if api { options.socketPath = directory + "/api.sock" }
        if options.keepsState, options.statePath == nil { options.statePath = directory + "/state.json" }
        // Never the user's state directory: a test's token stays in the test's.
        if options.httpTokenPath == nil { options.httpTokenPath = directory + "/http-token" }
        node = try Node(board: board, options: options, chip: chip, captureService: captureService?(board, chip.clock),
                        cameraFactory: cameraFactory, clock: chip.clock)
        daemon.observeEvents { [unowned self] event in lines.append((event.name, event.line)) }
    }

    func close() {
        node.finish()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Moves the virtual clock on and lets the daemon act on what is due.
    ///
    /// - Throws: what the turn threw (see ``turn()``).
    func advance(by span: Nanoseconds) throws {
        chip.clock.advance(by: span)
        try turn()
    }

    /// One turn of the loop without waiting; the mock chip has no descriptor, so its edges are
    /// read here as the simulator's input handler reads them.
    ///
    /// - Throws: what `Daemon.pump()` or `EventLoop.runOnce` threw. Never swallowed: a test
    ///   driven by `click`, `press` or `advance` must fail when the daemon's loop fails, not go on
    ///   with edges that were never read.
    func turn() throws {
        try daemon.pump()
        try daemon.loop.runOnce(timeoutMilliseconds: 0)
    }

    func line(_ name: String) -> LineIndex {
        LineIndex(board.lines.firstIndex { $0.name == name }!)
    }

    /// A full click on the two-stage button: half, full, release both; then 500 ms pass.
    func click() throws {
        chip.set(line("half"), active: true, at: chip.clock.now)
        try advance(by: .milliseconds(40))
        try press("full", for: .milliseconds(60))
        chip.set(line("half"), active: false, at: chip.clock.now)
        for _ in 0..<10 { try advance(by: .milliseconds(50)) }
    }

    /// Presses `name` for `duration`, then lets 500 ms pass.
    func press(_ name: String, for duration: Nanoseconds) throws {
        chip.set(line(name), active: true, at: chip.clock.now)
        try turn()
        try advance(by: duration)
        chip.set(line(name), active: false, at: chip.clock.now)
        try turn()
        for _ in 0..<10 { try advance(by: .milliseconds(50)) }
    }

    /// Turns the loop (waiting for real descriptors, such as the photo writer's, up to 20 ms at a
    /// time) until `condition` holds; fails after 10 s of real time.
    ///
    /// - Throws: ``HeldWhileWaiting`` once the loop holds the camera for a decision: the rig's
    ///   clock stands still while this waits, so the hold would never end.
    func waitFor(_ what: String = #function, _ condition: () -> Bool) throws {
        let limit = Date().addingTimeInterval(10)
        while !condition() {
            guard Date() < limit else { throw TestTimeout(what: what) }
            try daemon.pump()
            try daemon.loop.runOnce(timeoutMilliseconds: 20)
            // Checked on every turn, not only when the wait fails: whether the background work
            // (a photo's encoding) ended within the turns before the hold began depends on the
            // machine's load, and a test that waits through a hold passes or times out by it.
            let now = daemon.loop.clock.now, hold = daemon.loop.holdAhead
            if hold > .zero, let decision = daemon.loop.awaitedDeadline(), now >= decision - hold {
                throw HeldWhileWaiting(what: what, decision: decision, now: now)
            }
        }
    }

    static let simulatorBoard = """
    {
      "name": "test",
      "chip": "simulator",
      "lineDefaults": {"activeLow": false, "bias": "as-is", "debounceMs": 5},
      "lines": [
        {"name": "half", "role": "half"}, {"name": "full", "role": "full"}, {"name": "secondary", "role": "secondary"},
        {"name": "pad0", "role": "pad"}, {"name": "pad1", "role": "pad"}, {"name": "pad2", "role": "pad"},
        {"name": "pad3", "role": "pad"}, {"name": "pad4", "role": "pad"}, {"name": "pad5", "role": "pad"}
      ],
      "gestures": {"glitchFilterMs": 5, "lightPressMaxMs": 350, "doublePressWindowMs": 300, "tapMaxMs": 180},
      "controls": [
        {"id": "zoom", "kind": "systemZoom", "label": "Zoom", "range": [1, 8], "step": 0.5, "initial": 1},
        {"id": "exposure", "kind": "systemExposureBias", "label": "Exposure", "range": [-2, 2], "step": 0.5, "initial": 0},
        {"id": "filter", "kind": "picker", "label": "Filter", "titles": ["None", "Mono", "Vivid", "Warm"], "initial": "None"}
      ],
      "camera": {"device": "synthetic", "width": 320, "height": 240, "quality": 80},
      "output": {"directory": "PHOTOS", "template": "IMG_{seq}.jpg"}
    }
    """
}

struct TestTimeout: Error, CustomStringConvertible {
    var what: String
    var description: String { "timed out waiting: \(what)" }
}

/// A rig's wait asked while the loop holds the camera and the photo writer's pipe for a decision
/// (the board's `holdCameraMs`): on the rig's clock, which only the test moves, the hold lasts for
/// good. Advance the clock past the decision before waiting.
struct HeldWhileWaiting: Error, CustomStringConvertible {
    var what: String
    var decision: Instant
    var now: Instant
    var description: String {
        "\(what): waits in real time while the loop holds the camera for the decision at \(decision) and the rig's clock stands at \(now): advance the clock past the decision first"
    }
}
