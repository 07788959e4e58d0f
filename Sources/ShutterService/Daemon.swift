#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShutterCapture
import ShutterCore
import ShutterGPIO
import ShutterSystem

/// How the service was asked to run: its board file, its state, and what it prints.
public struct ServiceOptions: Sendable {
    /// The board file, for messages and for reloading on SIGHUP.
    public var boardPath: String?
    /// Where control values are kept; nil = the default place (``ControlState``).
    public var statePath: String?
    /// Whether control values are loaded and saved at all (`--no-state`).
    public var keepsState = true
    /// Whether the simulator chip's edges are read from standard input.
    public var readsSimulatorInput = true
    /// Whether event lines go to standard output.
    public var printsEvents = true
    /// Setup mode (`--explain`): why each decision was made, one line each on standard error.
    public var explains = false

    public init() {}
}

/// What the daemon has counted since it started, for `status`.
public struct ServiceCounters: Hashable, Sendable {
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
public final class Daemon: ServicePort {
    public let loop: EventLoop
    public private(set) var board: Board
    public let options: ServiceOptions
    public let chip: any GPIOChip
    public private(set) var watcher: any EdgeWatcher
    public private(set) var capture: CameraDirector
    /// The live view's previews (for the HTTP server): one feed for the daemon's life, handed to
    /// every capture service a reload makes, so viewers keep watching across a camera change.
    public var preview: PreviewFeed { capture.service.preview }
    public var liveView: LiveView { LiveView(feed: preview) }
    public private(set) var interpreter: GestureDriver
    let state: ControlState?
    public private(set) var counters = ServiceCounters()
    /// The newest photo on disk.
    public private(set) var lastPhotoPath: String?
    /// The shots in flight, from the decision to take each to the photo or failure that answers it.
    var shots = ShotDesk()
    /// When the daemon started, on the loop's clock.
    public let startedAt: Instant
    /// Whether capture is enabled through the API (`disable capture` turns it off).
    public private(set) var captureEnabled = true
    /// Receive every event, its line exactly as standard output gets it (API subscribers, hooks).
    private var eventObservers: [(ServiceEvent) -> Void] = []
    private(set) var simulator: SimulatorInput?
    /// The rig's transport (the MQTT node), when the board has a rig.
    public var rigParticipant: (any RigParticipant)?
    /// The transports, in the order they were attached: the API, HTTP, MQTT.
    private(set) var transports: [any ServiceTransport] = []
    /// Whether a transport keeps the daemon serving after the simulator's input has ended.
    public private(set) var servesUntilStopped = false
    /// The `capture` request being carried out (``execute(_:)``): what the shot its press makes
    /// in ``handle(_:)`` carries, and that shot once made, for the reply.
    var remoteCapture: RemoteCapture?
    /// The LED and buzzer, when the board has them.
    private var feedback: FeedbackOutput?
    /// The board's hooks, when it has any.
    public private(set) var hooks: HookRunner?
    /// Runners of a board replaced by SIGHUP, until their last hook is reaped.
    private var retiredHooks: [HookRunner] = []
    /// Capture services a reload replaced, until their camera is closed and their last photo reported.
    private var retiredCaptures: [CaptureService] = []
    /// A reload changed the camera: the controls it cannot serve are disabled once it has opened.
    private var cameraLimitsPending = false
    /// Whether the camera a reload asked for is still being opened (the status says `opening`).
    var isOpeningReloadedCamera: Bool { cameraLimitsPending && capture.service.isOpeningCamera }
    /// Opens the camera for the capture services the daemon makes (tests give a fake); nil = the board's.
    private let cameraFactory: CameraFactory?
    /// systemd's notification socket, when run as a `Type=notify` service.
    public var notifier: SystemdNotifier?
    /// When the loop next owes systemd a `WATCHDOG=1`.
    private var watchdogDue: Instant?
    /// The loop's bell for the capture services: rung when their work off the loop finished; its
    /// handler collects what they have.
    private let cameraBell: LoopBell

    /// Requests the board's lines, opens the camera (or starts looking for it), loads the saved
    /// control values and sets up the loop; ``run()`` starts it.
    ///
    /// - Parameters:
    ///   - chip: the chip to use; nil opens the one the board names (the mock chip for `simulator`).
    ///   - captureService: the camera side; nil makes one for the board.
    ///   - cameraFactory: opens the camera for the capture services the daemon makes, now and on
    ///     reload; nil opens the one the board names.
    ///   - clock: the loop's clock (a virtual one in tests).
    /// - Throws: ``CommandFailure`` naming the line, camera directory or state file that failed.
    public init(board: Board, options: ServiceOptions = ServiceOptions(), chip: (any GPIOChip)? = nil,
                captureService: CaptureService? = nil, cameraFactory: CameraFactory? = nil,
                clock: (any MonotonicClock)? = nil) throws {
        self.options = options
        self.cameraFactory = cameraFactory
        let chip = try chip ?? openChip(for: board)
        self.chip = chip
        do {
            watcher = try chip.watch(board.lines, consumer: "shutter")
        } catch let error as GPIOError {
            throw CommandFailure(error.description)
        }
        loop = try EventLoop(clock: clock ?? SystemMonotonicClock())
        // Rung by the capture services' work threads; held before a decision, as the camera's
        // descriptor is: its handler reads the camera.
        let bellOwner = BellOwner()
        cameraBell = loop.mailbox.makeBell(heldBeforeDecisions: true) { bellOwner.daemon?.cameraReadable() }
        feedback = try FeedbackOutput(board: board, chip: chip)
        startedAt = loop.clock.now
        // The camera opens now (or keeps being looked for in the background); the controls it
        // cannot serve are disabled before the recognizer sees the board.
        if let captureService {
            capture = CameraDirector(service: captureService)
        } else {
            do throws(CaptureError) {
                capture = CameraDirector(service: try CaptureService(board: board, factory: cameraFactory, clock: loop.clock, wake: cameraBell))
            } catch {
                throw CommandFailure(error.description)
            }
        }
        let (board, notes) = CameraDirector.boardWithCameraLimits(board, service: capture.service)
        for note in notes { Log.notice("shutter: \(note)") }
        self.board = board
        state = options.keepsState ? try ControlState(board: board, path: options.statePath) : nil
        interpreter = GestureDriver(board: board, watcher: watcher, initialValues: state?.load())
        wireInterpreter()
        // Bring the camera to the values the controls start from (saved, or the board's).
        for (id, value) in interpreter.machine.controlValues.sorted(by: { $0.key < $1.key }) {
            capture.service.apply(controlID: id, value: value, startingValue: true)
        }
        interpreter.setCaptureAvailable(capture.available, at: loop.clock.now)
        // Held before a decision (the loop's holdAhead): a camera's driver may keep the poll
        // waiting for as long as it takes to make a frame.
        loop.watch(descriptors: { [unowned self] list in
            capture.service.appendPollDescriptors(to: &list)
            for retired in retiredCaptures { retired.appendPollDescriptors(to: &list) }
        }, heldBeforeDecisions: true) { [unowned self] in
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
            // Asked twice per wake-up: combined pairwise, not through arrays, so it allocates nothing.
            var earliest = Instant.earliest(interpreter.nextDeadline, simulator?.nextEdgeTime)
            earliest = Instant.earliest(earliest, watchdogDue)
            earliest = Instant.earliest(earliest, hooks?.nextDeadline)
            earliest = Instant.earliest(earliest, feedback?.nextDeadline)
            for runner in retiredHooks { earliest = Instant.earliest(earliest, runner.nextDeadline) }
            for transport in transports { earliest = Instant.earliest(earliest, transport.nextDeadline) }
            return earliest
        }
        loop.awaitedDeadline = { [unowned self] in interpreter.awaitedDeadline }
        loop.deadlineReached = { [unowned self] now in
            simulator?.deliver(upTo: now)
            try pump(now: now)
            feedback?.update(now: now)
            petWatchdog(now: now)
            hooks?.advance(to: now)
            for runner in retiredHooks { runner.advance(to: now) }
            // Last: the gestures and photos of this wake-up go first, clients' requests after.
            for transport in transports { transport.advance(to: now) }
        }
        if !board.hooks.isEmpty {
            hooks = HookRunner(settings: board.hooks, loop: loop)
        }
        loop.signalReceived = { [unowned self] signal in
            switch signal {
            case SIGCHLD:
                hooks?.reap(now: loop.clock.now)
                for runner in retiredHooks { runner.reap(now: loop.clock.now) }
                retiredHooks.removeAll { $0.runningCount == 0 && $0.queuedCount == 0 }
            case SIGHUP: reload()
            default: loop.stop()
            }
        }
        loop.standardOutputClosed = { [unowned self] in
            if !servesUntilStopped {
                Log.notice("standard output was closed (its reader went away): nobody hears the events; stopping")
                loop.stop()
            } else {
                Log.warning("standard output was closed (its reader went away): events go on to the API's subscribers")
            }
        }
        loop.afterWake = { [unowned self] in
            // The decision at the recognizer's next deadline is worked out ahead, while the loop
            // has time (at the deadline it wakes to code that went cold while it slept).
            interpreter.prepareNextDecision()
            // A simulator run with no API, HTTP or MQTT asked for ends once its input has ended,
            // nothing is scheduled and every photo is saved. With one the daemon keeps serving until SIGTERM.
            if !servesUntilStopped, let simulator, simulator.ended, simulator.nextEdgeTime == nil, interpreter.nextDeadline == nil,
               capture.service.pendingCount == 0, capture.service.inFlightCount == 0, retiredCaptures.isEmpty {
                loop.stop()
            }
        }
        bellOwner.daemon = self
    }

    private func watchLines() {
        for descriptor in watcher.pollDescriptors {
            loop.watch(descriptor) { [unowned self] in try pump() }
        }
    }

    /// A new recognizer for ``board`` on ``watcher`` (after a reload), its controls starting from the
    /// old one's values; what that changed for the controls (a value clamped by a narrower range, a
    /// control disabled, another current control) is emitted, so `status` never changes unannounced.
    private func replaceInterpreter(at now: Instant) {
        let previous = interpreter.machine.controlsSnapshot
        interpreter = GestureDriver(board: board, watcher: watcher, initialValues: interpreter.machine.controlValues)
        wireInterpreter()
        interpreter.perform { machine, events in machine.reportChanges(since: previous, at: now, into: &events) }
    }

    private func wireInterpreter() {
        loop.wakeAhead = board.gestures.wakeAhead
        loop.holdAhead = board.gestures.holdCamera
        interpreter.emitPublished = { [unowned self] event, published in handle(event, published: published) }
        if options.explains {
            interpreter.explain = { [unowned self] explanation in
                Log.info("why \(JSONLine.number((explanation.time - startedAt).milliseconds / 1000, decimals: 3)) s  \(explanation.line)")
            }
        }
        interpreter.reportLostEdges = { [unowned self] count, time in
            counters.lostEdges += count
            publish(ServiceEvent(.edgesLost(count: count, resynchronised: interpreter.resynchronised, at: time)))
        }
    }

    /// Reads the lines and lets the state machines catch up to now.
    public func pump(now: Instant? = nil) throws {
        try interpreter.pump(now: now ?? loop.clock.now)
    }

    /// Adds a transport; its clients hear every event from now on.
    ///
    /// - Parameter keepsRunning: whether the daemon serves it until SIGINT/SIGTERM once the
    ///   simulator's input has ended (a socket, HTTP or MQTT asked for), rather than stopping
    ///   (a development run's per-user socket, there whether asked for or not).
    public func attach(_ transport: any ServiceTransport, keepsRunning: Bool = true) {
        transports.append(transport)
        if keepsRunning { servesUntilStopped = true }
    }

    public func announce(_ event: RigEvent) {
        publish(ServiceEvent(.rig(event)))
    }

    public func takeRigShot(_ rigShot: RigShot, pressedAt: Instant, fileName: String, maxAge: Nanoseconds) -> String? {
        let now = loop.clock.now
        // The rig gets one photo of each node per instant: a rig shot of this one in flight answers it.
        if let reason = shots.refusal(ofRigShotAt: pressedAt) ?? rigShotRefusal(pressedAt: pressedAt, now: now, maxAge: maxAge) {
            return reason
        }
        let shot = shots.shot(pressedAt: pressedAt, rigShot: rigShot, fileName: fileName, digest: true)
        announce(.shot(rigShot, pressedAt: pressedAt, at: now))
        capture.take(shot, now: now)
        return nil
    }

    /// Registers a receiver of every event, its line as standard output prints it.
    public func observeEvents(_ observer: @escaping (ServiceEvent) -> Void) {
        eventObservers.append(observer)
    }

    /// Sends one event to every observer and to standard output.
    func publish(_ event: ServiceEvent) {
        // The observers first: the API's subscribers are written here and now, while standard
        // output's line is handed to its writer's thread, and waking that thread (a futex, then
        // a thread that wants a CPU) delayed the subscribers' line on a two-core board.
        for observer in eventObservers { observer(event) }
        // Hooks hear each event after the transports' clients: starting a hook's process
        // (posix_spawn) takes the loop far longer than writing a line to every subscriber.
        hooks?.handle(event, now: loop.clock.now)
        if options.printsEvents { Console.out(event.line) }
        // A subscriber woken by its line waits on the loop's CPU for the rest of the wake-up
        // otherwise (the press handed to the camera, the timer rearmed).
        var wokeAReader = false
        for transport in transports where transport.takeEventLineWritten() { wokeAReader = true }
        if wokeAReader { loop.yieldToWokenReader() }
    }

    /// - Parameter published: the event's published form when the driver made it ahead of time.
    private func handle(_ event: ShutterEvent, published: ServiceEvent? = nil) {
        // A remote capture begins too, but it is no press.
        if case .capture(.began, let action, _, _, _, _, _) = event, action != .remote { counters.presses += 1 }
        publish(published ?? ServiceEvent(.gesture(event)))
        // The press for `captureOn: began`, the release for `ended`, the scheduled instant of a burst shot.
        switch event {
        case .capture, .burst:
            if let instant = event.photoInstant { capture.take(shot(of: event, at: instant), now: event.time) }
        default:
            break
        }
        capture.handle(event, currentControl: interpreter.machine.controlsSnapshot.current)
        feedback?.handle(event, now: loop.clock.now)
        // Save when an adjustment is over, not on every coalesced value of a swipe.
        if event.endsAnAdjustment {
            saveState()
        }
    }

    /// The shot of the photo `event` decides at `instant`. A press that takes a photo starts a
    /// shot for the whole rig, and a remote capture does when asked with "rig": true: originated
    /// here, before the capture service sees the press, so the rig hears of it first.
    private func shot(of event: ShutterEvent, at instant: Instant) -> Shot {
        var request: JSONValue?
        var startsRigShot = false
        // The first capture a `capture` request makes is the one its reply and its id follow.
        var answersRemoteCapture = false
        if case .capture(_, let action, _, _, _, _, _) = event {
            if action != .remote {
                startsRigShot = true
            } else if let asked = remoteCapture, asked.shot == nil {
                request = asked.request
                startsRigShot = asked.rig
                answersRemoteCapture = true
            }
        }
        let shot: Shot
        if let rigParticipant, startsRigShot {
            let rigShot = rigParticipant.originate(pressedAt: instant)
            shot = shots.shot(pressedAt: instant, request: request, rigShot: rigShot, fileName: rigParticipant.fileName(of: rigShot), digest: true)
        } else {
            shot = shots.shot(pressedAt: instant, request: request)
        }
        if answersRemoteCapture { remoteCapture?.shot = shot }
        return shot
    }

    func saveState() {
        state?.save(interpreter.machine.controlValues)
    }

    fileprivate func cameraReadable() {
        if !retiredCaptures.isEmpty {
            for retired in retiredCaptures {
                for event in retired.handleReadable() { report(event) }
            }
            retiredCaptures.removeAll { retired in
                guard retired.isFinished else { return false }
                retired.shutdown()  // nothing left to wait for: returns at once
                return true
            }
        }
        let (events, changed) = capture.readable()
        for event in events {
            if case .cameraReady(_, let info, _, _, _) = event { warnOfLibcameraFallback(camera: info) }
            report(event)
            if case .cameraReady = event, cameraLimitsPending { applyCameraLimits() }
        }
        if changed { updateCaptureAvailable() }
    }

    /// Warns that the camera just opened is V4L2's because libcamera's backend could not be
    /// loaded: a Pi camera module would then go unused while a webcam takes photos, and only
    /// `shutter check` said why. Once for each camera opened (each `cameraReady`), not for the
    /// failed opens before it: the retries run every second, and each new failure is already
    /// reported once as `captureFailed`.
    private func warnOfLibcameraFallback(camera info: CameraInfo) {
        guard let unavailable = capture.service.cameraChoice?.libcameraUnavailable else { return }
        Log.warning("shutter: camera \(info.path) opened through V4L2: libcamera was not asked, its backend cannot be loaded: \(unavailable)")
    }

    private func report(_ event: CaptureEvent) {
        // The photo or failure carries its shot: it is answered, and what it carries says whom to tell.
        if let shot = event.shot { _ = shots.answer(shot.id) }
        let rigShot = event.shot?.rigShot
        if case .captureFailed(let failure) = event, failure.error.missesTheShot {
            // Only a rig's shot fails so, and the rig reports it missed, as a shot refused on
            // arrival; this camera did not fail.
            tellRig(rigShot, of: event)
            return
        }
        switch event {
        case .photo(let photo):
            counters.photos += 1
            lastPhotoPath = photo.path
            notifier?.notify(SystemdNotifier.status(statusSummary))
            feedback?.handle(.photo, now: loop.clock.now)
        case .captureFailed:
            counters.failures += 1
            notifier?.notify(SystemdNotifier.status(statusSummary))
            feedback?.handle(.failure, now: loop.clock.now)
        case .cameraReady, .focusMode:
            break
        }
        // The remote capture this photo answers, for the client that asked for it.
        let request = event.shot?.request
        publish(ServiceEvent(.capture(event, request: request), shot: rigParticipant == nil ? nil : rigShot?.id))
        // The rig hears of it after this node's own clients: this answer may complete the shot,
        // and a client waiting for `shotComplete` has this node's photo event by then.
        tellRig(rigShot, of: event)
    }

    /// Tells the rig what came of this node's part in `rigShot`.
    private func tellRig(_ rigShot: RigShot?, of event: CaptureEvent) {
        if let rigShot, let rigParticipant, let outcome = ShotOutcome(event) { rigParticipant.answered(rigShot, with: outcome) }
    }

    /// Tells the state machines whether a photo can be taken: the camera is ready and capture is enabled.
    func updateCaptureAvailable() {
        interpreter.setCaptureAvailable(capture.available && captureEnabled, at: loop.clock.now)
    }

    /// Turns capture on or off for presses and remote captures alike; `captureEnabled` says so
    /// when it changed, before a press it cancels.
    func setCaptureEnabled(_ enabled: Bool) {
        guard enabled != captureEnabled else { return }
        captureEnabled = enabled
        handle(.captureEnabled(enabled: enabled, at: loop.clock.now))
        updateCaptureAvailable()
    }

    /// One line for systemd's `STATUS=` (shown by `systemctl status`).
    public var statusSummary: String {
        let camera = cameraState
        return "board \(board.name); camera \(board.camera.deviceDescription) \(camera.name); \(counters.photos) photos"
            + (counters.failures > 0 ? ", \(counters.failures) failed" : "")
            + transports.compactMap(\.statusLinePart).joined()
    }

    /// Tells systemd the daemon is ready: the lines are requested and the camera is open or known absent.
    public func notifyReady() {
        guard let notifier else { return }
        notifier.notify("READY=1\n" + SystemdNotifier.status(statusSummary))
        if let interval = notifier.watchdogInterval { watchdogDue = loop.clock.now + interval }
    }

    /// Sends `WATCHDOG=1` when due. It comes from the loop's own deadline, so a hung loop stops it
    /// and systemd restarts the service.
    func petWatchdog(now: Instant) {
        guard let notifier, let interval = notifier.watchdogInterval, let due = watchdogDue, now >= due else { return }
        notifier.notify("WATCHDOG=1")
        watchdogDue = now + interval
    }

    /// Runs the loop until SIGINT/SIGTERM (or the simulator's input is over), then ends cleanly.
    ///
    /// - Parameter started: runs once the daemon is ready and has said so, before the loop starts
    ///   (the node says there where live view is).
    public func run(started: () -> Void = {}) throws {
        notifyReady()
        Log.info("shutter: running board \(board.name) on \(board.chip) (\(LibGPIOD.summary))"
            + (simulator != nil ? "; simulated edges are read from standard input" : ""))
        started()
        try loop.run()
        finish()
    }

    /// Ends input (a press in progress is cancelled), saves the control values, and waits for the
    /// photos already taken: a photo is written completely or not at all.
    public func finish() {
        // The unit's TimeoutStopSec= fits a stop that waits for no camera; this one may wait up
        // to `stopBound`, so systemd is told, and the bound follows the running board.
        notifier?.notify("STOPPING=1\nEXTEND_TIMEOUT_USEC=\(stopBound.rawValue / 1_000)")
        // Work other threads posted and the loop has not run is refused (a submitted request is
        // answered "stopping"), and so is any posted from now on.
        loop.mailbox.close()
        interpreter.finish(at: loop.clock.now)
        saveState()
        state?.waitUntilSaved()
        for service in retiredCaptures + [capture.service] {
            serveWaitingPresses(of: service)
            service.retire(reason: "shutter stopped before a frame for the press came")
            service.waitForWrites()
            for event in service.handleReadable() { report(event) }
            // A camera whose start hangs in the driver is waited for as long as a start may take, not until systemd kills the daemon.
            let startTimeout = Nanoseconds.milliseconds(Double(service.board.camera.startTimeoutMs))
            if !service.shutdown(cameraWait: startTimeout) {
                Log.warning("shutter: the camera \(service.board.camera.deviceDescription) was still starting or stopping after "
                    + "\(service.board.camera.startTimeoutMs) ms (camera.startTimeoutMs); exiting without closing it")
            }
        }
        retiredCaptures.removeAll()
        hooks?.stopAll()
        for runner in retiredHooks { runner.stopAll() }
        // The transports hold this service: dropping them here ends that cycle.
        for transport in transports { transport.close() }
        transports.removeAll()
        rigParticipant = nil
        feedback?.close()
        feedback = nil
        watcher.close()
    }

    /// The longest `finish()` may take: for each camera, serving the presses that wait (its stall
    /// limit) and its start or stop (`camera.startTimeoutMs`); the hooks' 2 s grace (running and
    /// retired ones); 5 s for photos being written and the state file.
    var stopBound: Nanoseconds {
        var bound = Nanoseconds.seconds(5) + .seconds(2) * Int64(1 + retiredHooks.count)
        for service in retiredCaptures + [capture.service] {
            bound = bound + service.stallLimit + .milliseconds(Double(service.board.camera.startTimeoutMs))
        }
        return bound
    }

    /// Presses made before the stop still get their frames: the camera is read, as the loop
    /// would, until no press waits, for at most the stream's stall limit (a frame later than that
    /// would not have come anyway). Timed on the system's monotonic clock: the loop's may be a test's.
    private func serveWaitingPresses(of service: CaptureService) {
        let clock = SystemMonotonicClock()
        let deadline = clock.now + service.stallLimit
        while service.pendingCount > 0, service.isReady {
            let left = deadline - clock.now
            guard left > .zero else { break }
            var descriptors = service.pollDescriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            _ = poll(&descriptors, nfds_t(descriptors.count), CInt(min(left.milliseconds.rounded(.up), 50)))
            for event in service.handleReadable() { report(event) }
        }
    }
}

extension Daemon {
    /// What a reload came to: the board applied, or why it was refused (the old board runs on).
    public enum ReloadOutcome: Hashable, Sendable {
        case reloaded(path: String, board: String)
        case refused(String)
    }

    /// SIGHUP or the API's `reload`: reads the board file again. A valid board applies; an invalid
    /// one is refused with its error logged and the running board keeps going.
    ///
    /// - Parameter trigger: what asked, for the log line (`SIGHUP`, `reload request`).
    /// - Returns: the outcome, which the API's `reload` (and so `shutter reload`, the unit's
    ///   ExecReload) replies with: a signal cannot tell `systemctl reload` that the board was refused.
    @discardableResult
    public func reload(trigger: String = "SIGHUP") -> ReloadOutcome {
        guard let path = options.boardPath else {
            let message = "no board file to reload (the board was not read from a file)"
            Log.warning("shutter: \(trigger): \(message)")
            return .refused(message)
        }
        do {
            let next = try Board.load(path: path)
            try apply(next)
            Log.notice("shutter: \(trigger): reloaded \(path) (board \(next.name))")
            return .reloaded(path: path, board: next.name)
        } catch {
            Log.error("shutter: \(trigger): \(error); keeping the running board \(board.name)")
            return .refused("\(error); keeping the running board \(board.name)")
        }
    }

    /// Applies a new board to the running daemon: the lines are requested again only if they
    /// changed, controls keep their values where ids match, the camera is reopened only if its
    /// settings (or the output) changed, hooks follow the new board.
    ///
    /// A camera change does not wait on the loop: the old service is retired (its photos in
    /// flight are still reported) and the new one opens its camera on its lifecycle queue once
    /// the old camera has closed; the controls the new camera cannot serve are disabled when it
    /// has opened (``applyCameraLimits()``).
    ///
    /// - Throws: ``CommandFailure`` when the new lines or camera directory cannot be had; the old
    ///   lines are requested again then, so the rig keeps working as before.
    public func apply(_ next: Board) throws {
        let now = loop.clock.now
        let linesChanged = next.chip != board.chip || next.lines != board.lines
        let cameraChanged = next.camera != board.camera || next.output != board.output
        let hooksChanged = next.hooks != board.hooks
        let feedbackChanged = next.feedback != board.feedback || next.chip != board.chip
        var newWatcher: (any EdgeWatcher)?
        if linesChanged {
            guard !(chip is MockChip) || next.chip == .simulator else {
                throw CommandFailure("the simulator's lines cannot move to \(next.chip) without a restart")
            }
            for descriptor in watcher.pollDescriptors { loop.unwatch(descriptor) }
            watcher.close()
            do {
                newWatcher = try (next.chip == board.chip ? chip : openChip(for: next)).watch(next.lines, consumer: "shutter")
            } catch {
                // Back to the old lines, so a bad edit never leaves the rig deaf.
                watcher = try chip.watch(board.lines, consumer: "shutter")
                interpreter.finish(at: now)
                replaceInterpreter(at: now)
                watchLines()
                throw CommandFailure("\(error)")
            }
        }
        if cameraChanged {
            let replacement: CaptureService
            do throws(CaptureError) {
                replacement = try CaptureService(board: next, factory: cameraFactory, clock: loop.clock, opensCamera: false,
                                                 preview: capture.service.preview, wake: cameraBell)
            } catch {
                throw CommandFailure(error.description)
            }
            let old = capture.service
            old.retire()
            retiredCaptures.append(old)
            replacement.openCamera(after: old)
            capture = CameraDirector(service: replacement)
        }
        // Whatever was in progress ends as at shutdown, then the new machine starts from the kept values.
        interpreter.finish(at: now)
        if cameraChanged {
            // The new camera's controls are not known until it has opened.
            board = next
            cameraLimitsPending = true
        } else {
            let (limited, notes) = CameraDirector.boardWithCameraLimits(next, service: capture.service)
            for note in notes { Log.notice("shutter: \(note)") }
            board = limited
            capture.service.previewSettings = next.preview  // the camera stays: only how previews are made changes
        }
        if let newWatcher { watcher = newWatcher }
        replaceInterpreter(at: now)
        if linesChanged { watchLines() }
        for (id, value) in interpreter.machine.controlValues.sorted(by: { $0.key < $1.key }) {
            capture.service.apply(controlID: id, value: value, startingValue: true)
        }
        updateCaptureAvailable()
        if hooksChanged {
            // Hooks already running finish under the old settings; new events use the new ones.
            if let old = hooks, old.runningCount > 0 { retiredHooks.append(old) }
            hooks = next.hooks.isEmpty ? nil : HookRunner(settings: next.hooks, loop: loop)
        }
        if feedbackChanged {
            feedback?.close()
            feedback = nil
            do {
                feedback = try FeedbackOutput(board: board, chip: next.chip == .simulator || !linesChanged ? chip : openChip(for: board))
            } catch {
                Log.error("shutter: SIGHUP: \(error); the LED and buzzer stay off")
            }
        }
        saveState()
        notifier?.notify(SystemdNotifier.status(statusSummary))
    }
}

extension Daemon {
    /// Disables the controls the camera a reload opened cannot serve, as at start-up. The
    /// recognizer is rebuilt (keeping the control values) only when one is disabled.
    func applyCameraLimits() {
        cameraLimitsPending = false
        let (limited, notes) = CameraDirector.boardWithCameraLimits(board, service: capture.service)
        guard !notes.isEmpty else { return }
        for note in notes { Log.notice("shutter: \(note)") }
        let now = loop.clock.now
        interpreter.finish(at: now)
        board = limited
        replaceInterpreter(at: now)
        updateCaptureAvailable()
        notifier?.notify(SystemdNotifier.status(statusSummary))
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

extension ShotOutcome {
    /// What `event` says of its shot; nil for an event that answers no shot.
    init?(_ event: CaptureEvent) {
        switch event {
        case .photo(let photo):
            self = .photo(frameAt: photo.frameAt, path: photo.path, bytes: photo.bytes, sha256: photo.sha256)
        case .captureFailed(let failure):
            self = .failed(reason: failure.error.description, missesTheShot: failure.error.missesTheShot, at: failure.at)
        case .cameraReady, .focusMode:
            return nil
        }
    }
}

/// The daemon, for the camera bell's handler, which is made before the daemon is whole.
private final class BellOwner {
    weak var daemon: Daemon?
}
