import CShutterSystem
import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import ShutterSystem

/// What a ``CameraSession`` leaves to the capture service that owns it: what to make of a camera
/// it adopts, of a frame a press is given, and of a camera it loses.
protocol CameraSessionDelegate: AnyObject {
    /// `camera` is the session's now, not streaming yet (or streaming already, when it was handed
    /// in so): set it up (its controls) and say it is ready.
    func session(adopted camera: any Camera)
    /// The state machine gave `shot` the frame `frame`: take its photo.
    func session(save frame: Frame, shot: Shot)
    /// `frame` went into the ring.
    func session(kept frame: Frame)
    /// An event for the loop (a failure of a press, of the stream, of an open).
    func session(report event: CaptureEvent)
    /// The camera is going (lost, or the service is being replaced): the shots the owner holds
    /// back from the state machine (waiting for the lens), to be failed with the rest.
    func sessionReleasesCamera() -> [Shot]
}

/// One camera's life for a capture service: opening it off the loop (and looking for it again
/// while it is missing), the hand-off from the service it replaces, handing it between the loop
/// and the lifecycle queue, starting and stopping its stream as the ``CaptureStateMachine``
/// decides, the stall watchdog, and the ring of frames it fills.
///
/// Nothing here waits on the camera. Its slow work (reopening a lost camera, which enumerates
/// devices; `VIDIOC_REQBUFS`, mmap and `VIDIOC_STREAMON`, or libcamera's start; stopping and
/// closing) runs on one serial lifecycle queue, and the result comes back by the owner's bell.
/// While any such job is queued the camera belongs to that queue: the loop reads no frames from
/// it and sets no controls on it (work for it waits in order, ``whenCameraIsBack(_:)``), so a
/// ``Camera`` is still used by one thread at a time. Frames are dequeued on the loop
/// (``pumpFrames()``). Its timers (the search for a missing camera, the stall watchdog) are one
/// timer descriptor the loop polls with the camera's (``timerDescriptor``), on CLOCK_MONOTONIC,
/// the clock a camera delivers by, not on the loop's clock, which may be a test's virtual one:
/// a stream's silence is a matter of how long the device has had to deliver. Used from the
/// event loop only.
final class CameraSession {
    private let settings: CameraSettings
    private let factory: CameraFactory
    private let clock: any MonotonicClock
    /// The owner's bell: the lifecycle queue and libcamera's hot-plug ring it for the loop.
    private let wake: LoopBell
    weak var delegate: (any CameraSessionDelegate)?
    private(set) var camera: (any Camera)?
    /// The decisions: which frame each press gets, the stall watchdog, when to stream.
    private(set) var machine: CaptureStateMachine
    /// The frames behind the stamps the state machine holds (the ring is the machine's; this is its bytes).
    private(set) var ring = HeldFrames()
    /// The frames of one read, kept from read to read: `readFrames(into:)` appends to it, so
    /// streaming does not allocate an array for every wake-up (at 30 fps, one per frame).
    private var frameBatch: [Frame] = []
    /// Frames taken into the ring since start (warm-up frames not counted).
    private(set) var framesReceived = 0

    /// Opens, starts, stops and closes the camera, one job at a time, off the event loop; at the
    /// default QoS, no higher than the loop's thread (see `CaptureService`'s encode worker).
    private let lifecycleQueue = DispatchQueue(label: "shutter.capture.lifecycle", qos: .default)
    /// What the lifecycle queue finished, in order, for the loop to collect.
    private let lifecycleResults = Locked<[LifecycleResult]>([])
    /// Lifecycle jobs queued whose results the loop has not collected yet; the camera is the queue's while any is.
    private var lifecycleJobs = 0
    /// An open is on the lifecycle queue.
    private(set) var isOpening = false
    /// The first failure of a start, restart or stop since the camera left the loop: acted on once it is back.
    private var lifecycleFailure: CaptureError?
    /// The warm-up frames of the last start asked for, skipped once it has started.
    private var startWarmup = 0
    /// Work on the camera asked for while it was away (control changes, an autofocus trigger), in order.
    private var cameraIsBackWork: [() -> Void] = []
    /// Why the camera could not be opened (or was lost) last; `nil` once it is open.
    private(set) var lastOpenError: CaptureError?

    /// When to look for the camera next (CLOCK_MONOTONIC), once a second, while nothing better
    /// says when it may be back: after a loss, after a failure other than its absence, or without
    /// ``deviceArrivals``.
    private var retryAt: Instant? { didSet { armTimer() } }
    /// While the camera is missing: libcamera adding a camera wakes the loop, and the search runs at once.
    private var cameraArrivals: LibcameraArrivals?
    /// While a V4L2 camera is missing: its node (or `/dev/videoN`) appearing wakes the loop, and the search runs at once.
    private var deviceArrivals: DeviceArrivals?
    /// The retry's time came (or a watch said the camera may be there): look on the next ``reopenIfDue()``.
    private var retryDue = false
    /// When the stall watchdog looks next (CLOCK_MONOTONIC), while the camera streams or is starting.
    private var watchdogAt: Instant? { didSet { armTimer() } }
    /// Readable at the earlier of ``retryAt`` and ``watchdogAt``: a timerfd, set to the instant.
    let timerDescriptor: CInt
    /// The instant ``timerDescriptor`` is set to.
    private var timerArmedAt: Instant?

    /// How often a camera is looked for again when no watch says when it is back.
    static let retryInterval = Nanoseconds.seconds(1)
    /// How often the watchdog looks for a stalled stream.
    static let watchdogTick = Nanoseconds.milliseconds(250)

    /// Whether ``shutdown(cameraWait:)`` was called.
    private(set) var isShutDown = false
    /// Whether ``retire()`` was called.
    private(set) var isRetired = false

    /// - Parameters:
    ///   - settings: the board's camera section.
    ///   - factory: opens (and reopens) the camera.
    ///   - clock: "now" for the state machine and the events.
    ///   - wake: the owner's bell, rung when the lifecycle queue finished a job or a camera was added.
    ///   - maximumInFlight: the most photos being saved before a press fails.
    init(settings: CameraSettings, factory: @escaping CameraFactory, clock: any MonotonicClock, wake: LoopBell, maximumInFlight: Int) throws(CaptureError) {
        timerDescriptor = CShutterSystem_deadlineTimerCreate()
        guard timerDescriptor >= 0 else { throw CaptureError.system("timerfd_create", Errno.current, "the camera's watchdog") }
        self.settings = settings
        self.factory = factory
        self.clock = clock
        self.wake = wake
        machine = CaptureStateMachine(ringCapacity: settings.ringFrames, keepStreaming: settings.keepStreaming,
                                      maximumInFlight: maximumInFlight, startTimeout: .milliseconds(Double(settings.startTimeoutMs)))
    }

    /// The camera, when the loop holds it (no lifecycle job queued).
    var cameraOnLoop: (any Camera)? { lifecycleJobs == 0 ? camera : nil }

    /// Whether the camera is being opened, started, stopped or closed on the lifecycle queue.
    var isCameraBusy: Bool { lifecycleJobs > 0 }

    /// Runs `work` on the camera once the lifecycle queue gives it back, after the work asked before.
    func whenCameraIsBack(_ work: @escaping () -> Void) {
        cameraIsBackWork.append(work)
    }

    /// Runs `work` on the camera now, or once the lifecycle queue gives the camera back.
    func onCamera(_ work: @escaping () -> Void) {
        if lifecycleJobs == 0 { work() } else { cameraIsBackWork.append(work) }
    }

    // MARK: - Opening

    /// Takes `camera` (open already, or just opened) for the session: the state machine starts it
    /// when the board keeps it streaming.
    func adopt(_ camera: any Camera) {
        self.camera = camera
        ring.removeAll()
        // The ring holds `ringFrames`, fewer when they would pass `ringMiB` at this frame size.
        machine.ringCapacity = ringCapacity(of: camera, settings: settings)
        delegate?.session(adopted: camera)
        machine.frameInterval = camera.frameInterval
        if camera.isStreaming {
            machine.streamStarted(at: clock.now, warmupFrames: 0)
            startWatchdog()
        } else {
            perform(machine.cameraOpened(at: clock.now), warmupFrames: 0)
        }
        wake.ring()
    }

    /// The first open, on the caller's thread (the owner's `init`, before any loop runs).
    func openNow() {
        do throws(CaptureError) {
            let camera = try factory(settings)
            lastOpenError = nil
            adopt(camera)
        } catch {
            openFailed(error)
        }
    }

    /// Opens the camera on the lifecycle queue, once `previous` (the session of the service this
    /// one replaces, already retired) has closed its camera: the same device cannot be opened twice.
    func open(after previous: CameraSession?) {
        guard camera == nil, !isOpening, !isShutDown, !isRetired else { return }
        openInBackground(after: previous)
    }

    /// Looks for the camera on the lifecycle queue (after the close of the old one, and of
    /// `previous`'s camera); the result comes back through ``collectLifecycleResults()``.
    private func openInBackground(after previous: CameraSession? = nil) {
        isOpening = true
        lifecycleJobs += 1
        let factory = HandedFactory(factory), settings = self.settings, results = lifecycleResults, wake = self.wake
        let previousQueue = previous?.lifecycleQueue
        lifecycleQueue.async {
            // The replaced service queued its close before this was queued: wait for it here, off the loop.
            previousQueue?.sync {}
            let result: LifecycleResult
            do throws(CaptureError) {
                result = .opened(HandedCamera(try factory.open(settings)))
            } catch {
                result = .openFailed(error)
            }
            results.withLock { $0.append(result) }
            wake.ring()
        }
    }

    private func openFailed(_ error: CaptureError) {
        if lastOpenError != error {  // report each new reason once, not every retry
            delegate?.session(report: .captureFailed(CaptureFailure(at: clock.now, shot: nil, error: error)))
            wake.ring()
        }
        lastOpenError = error
        waitForCamera(absent: error.saysCameraAbsent, justLost: false)
    }

    /// Arranges the next search for the camera. A V4L2 camera that is not there is looked for
    /// when its node (or a video node) appears, and only then: an idle daemon waiting for a
    /// webcam wakes for nothing. The timer stays for what no directory event announces: a camera
    /// lost while streaming (its first search, paced: a camera that opens and then fails at
    /// once would otherwise be reopened in a tight loop), one that is there but could not be
    /// opened (busy in another process, not permitted yet: udev's `IN_ATTRIB` may come before
    /// the search that would have seen it), libcamera's cameras without a hot-plug signal, and
    /// inotify failing.
    private func waitForCamera(absent: Bool, justLost: Bool) {
        guard !isShutDown, !isRetired else { return }
        if cameraArrivals == nil { cameraArrivals = LibcameraArrivals(watching: settings, waking: wake) }
        // After a failed search the node may have come before the watch: look then. After a loss it may still be going.
        if deviceArrivals == nil {
            deviceArrivals = DeviceArrivals(watching: settings, searchIfPresent: !justLost)
            if deviceArrivals != nil { wake.ring() }  // its first take() may say the camera is there already
        }
        if absent, !justLost, deviceArrivals?.isWatching == true {
            stopRetryTimer()
        } else {
            startRetryTimer()
        }
    }

    private func startRetryTimer() {
        guard retryAt == nil else { return }
        retryAt = monotonicNow() + Self.retryInterval
    }

    private func stopRetryTimer() {
        retryAt = nil
    }

    /// Reads the timer descriptor, and sets the timers that are due going again (a due retry
    /// makes the next ``reopenIfDue()`` look; the watchdog's look is the owner's ``tick()``).
    ///
    /// The corresponding C function is `read` (of the timerfd).
    func readTimer() {
        // Asked at every frame: the clock, not the descriptor, says whether anything is due.
        let now = monotonicNow()
        guard let armed = timerArmedAt, now >= armed else { return }
        var expirations: UInt64 = 0
        _ = read(timerDescriptor, &expirations, MemoryLayout<UInt64>.size)
        if let at = retryAt, now >= at {
            retryDue = true
            retryAt = now + Self.retryInterval
        }
        if let at = watchdogAt, now >= at { watchdogAt = now + Self.watchdogTick }
    }

    /// Sets the timer descriptor to the earlier of the two timers, when that changed.
    ///
    /// The corresponding C function is `timerfd_settime`.
    private func armTimer() {
        let next = Instant.earliest(retryAt, watchdogAt)
        guard next != timerArmedAt else { return }
        timerArmedAt = next
        _ = CShutterSystem_deadlineTimerSet(timerDescriptor, next == nil ? 0 : 1, next?.rawValue ?? 0)
    }

    deinit { close(timerDescriptor) }

    /// The watch on the camera's V4L2 node while it is missing: poll it with the camera's.
    var arrivalDescriptor: CInt? { deviceArrivals?.descriptor }

    /// The camera is back: no more looking for it.
    private func stopWaiting() {
        stopRetryTimer()
        cameraArrivals = nil
        deviceArrivals = nil
    }

    /// Looks for a lost camera when the retry timer, a watch (or ``retryNow()``) said it is time.
    func reopenIfDue() {
        if cameraArrivals?.take() == true { retryDue = true }
        if deviceArrivals?.take() == true { retryDue = true }
        if camera == nil, !isShutDown, !isRetired, !isOpening, retryDue {
            retryDue = false
            openInBackground()
        }
    }

    /// Makes the next ``reopenIfDue()`` look for a lost camera now, as the retry timer would.
    func retryNow() {
        retryDue = true
        wake.ring()
    }

    // MARK: - Losing and closing

    /// The camera failed: fail waiting shots, close it and look for it again.
    func lost(_ error: CaptureError, shot: Shot?) {
        let now = clock.now
        let waiting = machine.streamStopped() + (delegate?.sessionReleasesCamera() ?? [])
        if let shot {
            report(CaptureFailure(at: now, shot: shot, error: error))
        } else if waiting.isEmpty {
            report(CaptureFailure(at: now, shot: nil, error: error))
        }
        for press in waiting {
            report(CaptureFailure(at: now, shot: press, error: error))
        }
        ring.removeAll()
        // Work for the camera still waiting stays queued: it reaches the reopened camera once it has settled.
        if let camera { onLifecycleQueue(camera) { $0.close(); return nil } }
        camera = nil
        lastOpenError = error
        waitForCamera(absent: error.saysCameraAbsent, justLost: true)
        wake.ring()
    }

    private func report(_ failure: CaptureFailure) {
        delegate?.session(report: .captureFailed(failure))
    }

    /// Stops without waiting, for a service being replaced: returns the shots still waiting for
    /// a frame (the owner's held shots with them), and closes the camera on the lifecycle queue.
    func retire() -> [Shot] {
        guard !isShutDown, !isRetired else { return [] }
        isRetired = true
        stopTimers()
        cameraIsBackWork.removeAll()
        let waiting = machine.streamStopped() + (delegate?.sessionReleasesCamera() ?? [])
        ring.removeAll()
        if let camera { onLifecycleQueue(camera) { $0.close(); return nil } }
        camera = nil
        return waiting
    }

    private func stopTimers() {
        stopWaiting()
        stopWatchdog()
    }

    private func stopWatchdog() {
        watchdogAt = nil
    }

    /// Whether the stall watchdog ticks (tests: a stopped camera must not wake the loop).
    var watchdogIsTicking: Bool { watchdogAt != nil }

    /// Closes the camera and waits for the lifecycle queue (an open or start in progress), at most
    /// `cameraWait` (`nil`: as long as it takes); returns whether the camera was closed.
    func shutdown(cameraWait: Nanoseconds?) -> Bool {
        isShutDown = true
        stopTimers()
        cameraIsBackWork.removeAll()
        if let camera {
            // After the jobs queued before: a start in progress finishes, then the camera closes.
            let handed = HandedCamera(camera)
            lifecycleQueue.async { handed.camera.close() }
        }
        camera = nil
        if let cameraWait {
            let drained = DispatchSemaphore(value: 0)
            lifecycleQueue.async { drained.signal() }
            guard drained.wait(timeout: .now() + .nanoseconds(Int(cameraWait.rawValue))) == .success else { return false }
        } else {
            lifecycleQueue.sync {}
        }
        // A camera an open in progress found, never adopted: close it too.
        let late = lifecycleResults.withLock { list in
            defer { list.removeAll() }
            return list
        }
        for case .opened(let handed) in late { handed.camera.close() }
        lifecycleJobs = 0
        return true
    }

    /// Blocks until the camera jobs queued so far are done; the next ``collectLifecycleResults()`` takes their results.
    func waitForCamera() {
        lifecycleQueue.sync {}
    }

    // MARK: - The stream

    /// A press of `shot`, given to the state machine (`inFlight` photos are being saved).
    func press(_ shot: Shot, inFlight: Int) {
        perform(machine.press(shot, now: clock.now, inFlight: inFlight))
    }

    /// Starts the camera ahead of a press, when the board stops it between shots.
    func prepare() {
        perform(machine.prepare(at: clock.now))
    }

    /// Stops a camera the board does not keep streaming.
    func standby() {
        perform(machine.standby())
    }

    /// Lets the state machine look at the time: a stalled stream, a start overdue.
    func tick() {
        perform(machine.tick(now: clock.now))
    }

    /// Carries out what the state machine decided; a start skips `warmupFrames` (default: the board's).
    private func perform(_ actions: [CaptureStateMachine.Action], warmupFrames: Int? = nil) {
        for action in actions {
            switch action {
            case .save(let number, let shot):
                if let frame = ring.frames.last(where: { $0.sequence == number }) { delegate?.session(save: frame, shot: shot) }
            case .fail(let shot, let failure):
                let error: CaptureError = switch failure {
                case .backlog(let limit): .notReady(reason: "\(limit) photos are still being saved")
                case .stalled(let silence): .stalled(device: camera?.info.path ?? settings.deviceDescription, seconds: Double(silence.rawValue) / 1e9)
                case .startOverdue(let waited):
                    .startTimedOut(device: camera?.info.path ?? settings.deviceDescription, seconds: Double(waited.rawValue) / 1e9)
                case .instantNotHeld(let after): .instantNotHeld(oldestHeldAfter: after)
                case .rigShotBacklog(let limit): .rigShotBacklog(limit: limit)
                }
                report(CaptureFailure(at: clock.now, shot: shot, error: error))
                wake.ring()
            case .startStream:
                if let camera { startStream(camera, warmupFrames: warmupFrames ?? settings.warmupFrames, restart: false) }
                startWatchdog()  // ticks the start timeout too
            case .restartStream:
                if let camera { startStream(camera, warmupFrames: 0, restart: true) }
                startWatchdog()
            case .stopStream:
                ring.removeAll()
                // A stopped stream cannot stall: without this the tick woke the loop four times a
                // second while a low-power rig waited between shots.
                stopWatchdog()
                if let camera { onLifecycleQueue(camera) { $0.stop(); return nil } }
            }
        }
    }

    /// Starts `camera` streaming (stopping it first for a restart) on the lifecycle queue, with an
    /// empty ring. Once it has, ``collectLifecycleResults()`` tells the state machine; a failure
    /// fails the presses waiting (or is reported for the stream) and the camera is looked for again.
    private func startStream(_ camera: any Camera, warmupFrames: Int, restart: Bool) {
        ring.removeAll()
        startWarmup = warmupFrames
        onLifecycleQueue(camera) { camera in
            if restart { camera.stop() }
            do throws(CaptureError) {
                try camera.start()
                return nil
            } catch {
                return error
            }
        }
    }

    /// Hands `camera` to the lifecycle queue for `job` (its error, or `nil`); the loop leaves it
    /// alone until the result is collected.
    private func onLifecycleQueue(_ camera: any Camera, _ job: @escaping @Sendable (any Camera) -> CaptureError?) {
        lifecycleJobs += 1
        let handed = HandedCamera(camera), results = lifecycleResults, wake = self.wake
        lifecycleQueue.async {
            let failure = job(handed.camera)
            results.withLock { $0.append(.done(failure)) }
            wake.ring()
        }
    }

    /// Takes what the lifecycle queue finished: adopts a camera it opened (or reports why not), and
    /// once the camera is back on the loop acts on how its starts and stops went.
    func collectLifecycleResults() {
        let results = lifecycleResults.withLock { list in
            defer { list.removeAll() }
            return list
        }
        guard !results.isEmpty else { return }
        lifecycleJobs -= results.count
        for result in results {
            switch result {
            case .opened(let handed) where isRetired:
                // Opened while the service was being replaced: nobody will use it.
                isOpening = false
                onLifecycleQueue(handed.camera) { $0.close(); return nil }
            case .openFailed where isRetired:
                isOpening = false
            case .opened(let handed):
                isOpening = false
                lastOpenError = nil
                stopWaiting()
                adopt(handed.camera)
            case .openFailed(let error):
                isOpening = false
                openFailed(error)
            case .done(let failure):
                if lifecycleFailure == nil { lifecycleFailure = failure }
            }
        }
        guard lifecycleJobs == 0, let camera, !isShutDown else { return }
        if let failure = lifecycleFailure {
            lifecycleFailure = nil
            lost(failure, shot: nil)
            return
        }
        perform(machine.settled(streaming: camera.isStreaming, at: clock.now, warmupFrames: startWarmup))
        if machine.isStreaming { startWatchdog() }
        // Work asked for while the camera was away, in order (each may send it away again).
        while lifecycleJobs == 0, self.camera != nil, !cameraIsBackWork.isEmpty {
            cameraIsBackWork.removeFirst()()
        }
    }

    /// Dequeues the frames that are ready. This stays on the loop: the camera's `readFrames` polls
    /// its descriptor first and dequeues only buffers already filled (`VIDIOC_DQBUF` on a ready
    /// buffer does not wait; libv4lconvert's conversion happens on the encode worker, for the one
    /// frame a photo takes), and the frames must meet the presses here anyway. Moving it to a
    /// thread would add a hand-off and a lock per frame for no shorter wait.
    func pumpFrames() {
        guard let camera = cameraOnLoop, machine.isStreaming, camera.isStreaming else { return }
        // Emptied before the read (it appends) and after the loop: between wake-ups the batch
        // must not hold frames, whose driver buffers would stay out of the camera's queue.
        frameBatch.removeAll(keepingCapacity: true)
        do throws(CaptureError) {
            try camera.readFrames(into: &frameBatch)
        } catch {
            lost(error, shot: nil)
            return
        }
        // A camera without a board rate measures its interval from its frames (libcamera): the
        // frame choice and the stall limit follow it.
        if machine.frameInterval != camera.frameInterval { machine.frameInterval = camera.frameInterval }
        // Over indices: a debug build's unspecialized iterator allocates for each frame.
        for index in 0..<frameBatch.count {
            let frame = frameBatch[index]
            let (keep, actions) = machine.frame(.init(timestamp: frame.timestamp, sequence: frame.sequence), at: clock.now)
            if keep {
                ring.append(frame)
                framesReceived += 1
            }
            perform(actions)  // before the ring follows the machine: a save names a frame it may have let go since (a standby)
            ring.keep(machine.held)  // the oldest, when the machine let it go
            if keep { delegate?.session(kept: frame) }
            if !machine.isStreaming || lifecycleJobs > 0 { break }  // stopped or restarting: the rest of the batch is stale
        }
        frameBatch.removeAll(keepingCapacity: true)
        guard cameraOnLoop === camera, machine.isStreaming else { return }
        do throws(CaptureError) {
            // Buffers the ring just let go of go back to the camera now, not at the next read.
            try camera.returnUnusedBuffers()
            // Photos hold more of the camera's buffers than its spares: the ring gives back its
            // oldest frames, one at a time (a photo may hold the oldest too, freeing nothing), rather
            // than the camera copying new ones or running dry. At most the ring's size of rounds.
            while camera.buffersWanted > 0, machine.held.count > 1 {
                machine.giveBack(oldest: 1)
                ring.keep(machine.held)
                try camera.returnUnusedBuffers()
            }
        } catch {
            lost(error, shot: nil)
        }
    }

    /// Wakes the loop every ``watchdogTick`` so the state machine can notice a stalled stream.
    private func startWatchdog() {
        guard watchdogAt == nil, !isShutDown, !isRetired else { return }
        watchdogAt = monotonicNow() + Self.watchdogTick
    }
}

/// A camera handed between the event loop and the lifecycle queue.
///
/// Unchecked: the session hands it to one thread at a time (the queue while a job is queued, the
/// loop otherwise); the hand-over goes through the queue and a lock, which order the accesses.
struct HandedCamera: @unchecked Sendable {
    let camera: any Camera
    init(_ camera: any Camera) { self.camera = camera }
}

/// The camera factory, called on the lifecycle queue only (one open at a time).
struct HandedFactory: @unchecked Sendable {
    let open: CameraFactory
    init(_ open: @escaping CameraFactory) { self.open = open }
}

extension CaptureError {
    /// Whether the failure says the camera is not there (no such node, or it went), rather than
    /// that it is there and cannot be used: only the former is worth waiting for a device to appear.
    var saysCameraAbsent: Bool {
        switch self {
        case .noDevice, .deviceVanished: true
        default: false
        }
    }
}

/// What one lifecycle job came to.
enum LifecycleResult: Sendable {
    /// A reopen found the camera.
    case opened(HandedCamera)
    /// A reopen failed.
    case openFailed(CaptureError)
    /// A start, restart, stop or close ended, with its failure if any.
    case done(CaptureError?)
}
