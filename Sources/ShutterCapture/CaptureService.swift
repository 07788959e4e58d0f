import Dispatch
import ShutterCore

/// Opens the camera a board names; the service calls it again to reopen a camera that went away.
public typealias CameraFactory = (CameraSettings) throws(CaptureError) -> any Camera

/// Takes stills for the event loop: keeps the camera streaming into a zero-shutter-lag ring,
/// picks the frame nearest each press, and encodes and writes it on a background queue.
///
/// Use from one thread (the event loop). Poll every descriptor of ``pollDescriptors`` for
/// readable (re-read the list after each call: the camera's descriptor comes and goes with the
/// camera) and call ``handleReadable()`` when any is; call ``capture(pressedAt:now:)`` on a full press.
///
/// Nothing here waits on the camera. Its slow work (reopening a lost camera, which enumerates
/// devices; `VIDIOC_REQBUFS`, mmap and `VIDIOC_STREAMON`, or libcamera's start; stopping and
/// closing) runs on one serial lifecycle queue, and the result comes back through the wake pipe.
/// While any such job is queued the camera belongs to that queue: the loop reads no frames from
/// it and sets no controls on it (control changes wait in order until it is back), so a
/// ``Camera`` is still used by one thread at a time. Frames are still dequeued on the loop (see
/// ``pumpFrames()``). Only the first open, in ``init``, happens on the caller's thread, before any
/// loop runs, so the daemon knows the camera's controls before it serves gestures.
public final class CaptureService {
    public let board: Board
    private let settings: CameraSettings
    private let factory: CameraFactory
    private let writer: PhotoWriter
    private let template: FileNameTemplate
    private let clock: any MonotonicClock
    private var camera: (any Camera)?
    /// The frames behind the stamps the state machine holds (the ring is the machine's; this is its bytes).
    private var ring = HeldFrames()
    /// The frames of one read, kept from read to read: `readFrames(into:)` appends to it, so
    /// streaming does not allocate an array for every wake-up (at 30 fps, one per frame).
    private var frameBatch: [Frame] = []
    /// The decisions: which frame each press gets, the stall watchdog, when to stream.
    private var machine: CaptureStateMachine
    private var events: [CaptureEvent] = []
    private var sequence = 0
    private var inFlight = 0
    private var zoomFactor = 1.0
    /// The photo effect the board's effect picker chose.
    private var effect = PhotoEffect.none
    private var hardwareZoom: CameraControl?
    /// The libcamera camera's `ScalerCrop` maximum, when zoom goes through the ISP.
    private var scalerCropMaximum: PixelRect?
    /// The autofocus cycle of the next shot (libcamera cameras with autofocus only).
    private var autofocus: AutofocusSequence
    /// Presses waiting for the lens to lock (not yet handed to the state machine).
    private var focusWaiting: [Instant] = []
    /// How focus ended for presses handed to the state machine, by press time.
    private var focusOfPress: [Instant: FocusOutcome] = [:]
    private let wake: WakePipe
    private let finished = Locked<[CaptureEvent]>([])
    private let encodeQueue = DispatchQueue(label: "shutter.capture.encode", qos: .userInitiated)
    /// The encode queue's JPEG encoder, kept from photo to photo with its buffers.
    private let encoder = EncodeQueueEncoder()
    private let group = DispatchGroup()
    private var retryTimer: (any DispatchSourceTimer)?
    /// While the retry timer runs: libcamera adding a camera wakes the loop, and the search runs at once.
    private var cameraArrivals: LibcameraArrivals?
    private var isShutDown = false
    /// Opens, starts, stops and closes the camera, one job at a time, off the event loop.
    private let lifecycleQueue = DispatchQueue(label: "shutter.capture.lifecycle", qos: .userInitiated)
    /// What the lifecycle queue finished, in order, for the loop to collect.
    private let lifecycleResults = Locked<[LifecycleResult]>([])
    /// Lifecycle jobs queued whose results the loop has not collected yet; the camera is the queue's while any is.
    private var lifecycleJobs = 0
    /// An open is on the lifecycle queue.
    private var isOpening = false
    /// The first failure of a start, restart or stop since the camera left the loop: acted on once it is back.
    private var lifecycleFailure: CaptureError?
    /// The warm-up frames of the last start asked for, skipped once it has started.
    private var startWarmup = 0
    /// Work on the camera asked for while it was away (control changes, an autofocus trigger), in order.
    private var whenCameraIsBack: [() -> Void] = []

    /// The most photos waiting to be encoded or written; a longer burst fails fast instead of growing memory.
    public static let maximumInFlight = 8
    /// How often a missing camera is looked for again.
    public static let retryInterval = Nanoseconds.seconds(1)

    private var watchdogTimer: (any DispatchSourceTimer)?
    /// How often the watchdog wakes the loop to look for a stalled stream.
    static let watchdogTick = Nanoseconds.milliseconds(250)

    /// How long the stream may go without a frame before it counts as stalled: five frame
    /// intervals, and never less than a second.
    public var stallLimit: Nanoseconds { machine.stallLimit }

    /// - Parameters:
    ///   - board: the rig; its `camera` and `output` sections are used.
    ///   - camera: an already open camera; `nil` opens one with `factory`.
    ///   - factory: opens (and reopens) the camera; the default handles `synthetic` and V4L2 devices.
    ///   - clock: "now" for events raised on the event loop.
    ///   - updatesLatest: repoint `latest.jpg` in the output directory after each photo.
    ///   - opensCamera: open the camera now, on the caller's thread; `false` leaves it to
    ///     ``openCamera(after:)``, off the caller's thread (a reload on a running loop).
    /// - Throws: ``CaptureError`` only when the output directory cannot be made. A missing camera is
    ///   not an error here: the service reports `captureFailed` and keeps looking for it.
    public init(board: Board, camera: (any Camera)? = nil, factory: CameraFactory? = nil,
                clock: any MonotonicClock = SystemMonotonicClock(), updatesLatest: Bool = true,
                opensCamera: Bool = true) throws(CaptureError) {
        self.board = board
        self.settings = board.camera
        if let factory {
            self.factory = factory
        } else {
            self.factory = { (settings: CameraSettings) throws(CaptureError) -> any Camera in
                try CaptureService.openCamera(settings)
            }
        }
        self.clock = clock
        self.writer = try PhotoWriter(directory: board.output.directory, updatesLatest: updatesLatest)
        self.template = FileNameTemplate(board.output.template)
        // {seq} continues after the photos already there, so names keep sorting across restarts.
        self.sequence = template.highestSequence(among: writer.names())
        self.autofocus = AutofocusSequence(timeout: .milliseconds(Double(board.camera.focusTimeoutMs)))
        self.machine = CaptureStateMachine(ringCapacity: board.camera.ringFrames, keepStreaming: board.camera.keepStreaming,
                                           maximumInFlight: Self.maximumInFlight,
                                           startTimeout: .milliseconds(Double(board.camera.startTimeoutMs)))
        self.wake = try WakePipe()
        writer.removeLeftovers()
        if let camera {
            adopt(camera)
        } else if opensCamera {
            openNow()
        }
    }

    /// Opens the camera on the lifecycle queue, once `previous` (the service this one replaces,
    /// already ``retire()``d) has closed its camera: the same device cannot be opened twice.
    /// `cameraReady` (or `captureFailed`, and the search for the camera) follows from
    /// ``handleReadable()``; presses until then fail as not ready.
    public func openCamera(after previous: CaptureService? = nil) {
        guard camera == nil, !isOpening, !isShutDown, !isRetired else { return }
        openInBackground(after: previous)
    }

    /// Whether a camera open is on the lifecycle queue (``openCamera(after:)`` or the search for a lost camera).
    public var isOpeningCamera: Bool { isOpening }

    /// Whether ``retire()`` was called: the service takes no more photos.
    public private(set) var isRetired = false

    /// Whether a retired service has nothing left to report: its photos are written and its camera closed.
    public var isFinished: Bool { isRetired && inFlight == 0 && lifecycleJobs == 0 }

    /// Stops taking photos without waiting, for a service being replaced (a reload that changes
    /// the camera): presses still waiting for a frame fail, the camera closes on the lifecycle
    /// queue, and photos already taken are still reported by ``handleReadable()`` until
    /// ``isFinished``; ``shutdown()`` then has nothing left to wait for.
    public func retire() {
        guard !isShutDown, !isRetired else { return }
        isRetired = true
        stopTimers()
        whenCameraIsBack.removeAll()
        for press in machine.streamStopped() + focusWaiting {
            fail(pressedAt: press, .notReady(reason: "the camera is being replaced"))
        }
        focusWaiting.removeAll()
        focusOfPress.removeAll()
        ring.removeAll()
        if let camera { onLifecycleQueue(camera) { $0.close(); return nil } }
        camera = nil
        wake.signal()
    }

    private func stopTimers() {
        retryTimer?.cancel()
        retryTimer = nil
        cameraArrivals = nil
        watchdogTimer?.cancel()
        watchdogTimer = nil
    }

    /// Opens the camera `settings` names, as ``chooseCamera(settings:libcameraCameras:v4l2Devices:)``
    /// decides: the synthetic camera only for `synthetic`, otherwise a libcamera or V4L2 camera.
    public static func openCamera(_ settings: CameraSettings) throws(CaptureError) -> any Camera {
        try openCamera(settings, choice: chooseCamera(settings))
    }

    /// The camera `settings` names among the cameras there are now (libcamera is asked only when
    /// its answer matters: not for a `/dev/` path or `backend` `v4l2`).
    public static func chooseCamera(_ settings: CameraSettings) throws(CaptureError) -> CameraChoice {
        if settings.device == "synthetic" { return CameraChoice(.synthetic) }
        let asksLibcamera = settings.backend == .libcamera ? settings.device == nil || settings.device == "libcamera"
            : settings.backend == .auto && !(settings.device ?? "").hasPrefix("/dev/")
        let listed = asksLibcamera ? (try? libcameraCameras()) ?? [] : []
        return try ShutterCapture.chooseCamera(settings: settings, libcameraCameras: listed,
                                               v4l2Devices: { V4L2Device.captureDevicePaths() })
    }

    /// Opens the camera `choice` found for `settings`.
    public static func openCamera(_ settings: CameraSettings, choice: CameraChoice) throws(CaptureError) -> any Camera {
        var settings = settings
        switch choice.source {
        case .synthetic:
            return try SyntheticCamera(width: settings.width ?? 1280, height: settings.height ?? 720)
        case .libcamera(let name):
            settings.device = name
            return try LibcameraCamera(settings: settings)
        case .v4l2(let name):
            settings.device = name
            do throws(CaptureError) {
                return try V4L2Camera(settings: settings)
            } catch .noDevice(let requested, let available, _) where settings.backend == .auto && !name.hasPrefix("/") {
                // libcamera was asked first and had no such camera either: say both were looked in.
                throw CaptureError.noDevice(requested: requested, available: available, backend: .auto)
            }
        }
    }

    /// The descriptors to poll for readable: the completion pipe, and the camera while it streams
    /// (and is not away on the lifecycle queue).
    public var pollDescriptors: [CInt] {
        var fds = [wake.readEnd]
        if let camera = cameraOnLoop, let fd = camera.pollDescriptor { fds.append(fd) }
        return fds
    }

    /// Appends ``pollDescriptors`` to `list` without making an array: the event loop asks before
    /// every wait, and keeps the list between wake-ups.
    public func appendPollDescriptors(to list: inout [CInt]) {
        list.append(wake.readEnd)
        if let camera = cameraOnLoop, let fd = camera.pollDescriptor { list.append(fd) }
    }

    /// Whether a press now would be served by the open camera (at once, or once it has started).
    public var isReady: Bool { camera != nil && !isShutDown && !isRetired }

    /// The open camera, if any. While ``isCameraBusy`` only its fixed description (`info`,
    /// `format`, `controls`) may be read: the lifecycle queue is using it.
    public var currentCamera: (any Camera)? { camera }

    /// Whether the camera is being opened, started, stopped or closed on the lifecycle queue.
    public var isCameraBusy: Bool { lifecycleJobs > 0 }

    /// Whether the camera streams (its start has finished, no stop is asked for).
    public var isStreaming: Bool { camera != nil && machine.isStreaming }

    /// The camera, when the loop holds it (no lifecycle job queued).
    private var cameraOnLoop: (any Camera)? { lifecycleJobs == 0 ? camera : nil }

    /// Frames taken into the ring since start (warm-up frames not counted).
    public private(set) var framesReceived = 0

    /// The frames the ring holds now, oldest first (for tests).
    var ringFrames: [Frame] { ring.frames }

    /// The newest frame's timestamp.
    public var newestFrameAt: Instant? { ring.frames.last?.timestamp }

    /// Presses waiting for a frame.
    public var pendingCount: Int { machine.waitingCount + focusWaiting.count }

    /// Photos being encoded or written.
    public var inFlightCount: Int { inFlight }

    /// Dequeues ready frames into the ring, serves waiting presses, reopens a lost camera when due,
    /// and collects finished photos. Never blocks.
    @discardableResult
    public func handleReadable() -> [CaptureEvent] {
        wake.drain()
        let done = finished.withLock { list in
            defer { list.removeAll() }
            return list
        }
        inFlight -= done.count  // every background result is one photo's end
        collectLifecycleResults()
        collectExposureAnswers()
        if cameraArrivals?.take() == true { retryDue.withLock { $0 = true } }
        if camera == nil, !isShutDown, !isRetired, !isOpening, retryDue.withLock({ due in defer { due = false }; return due }) {
            openInBackground()
        }
        pumpFrames()
        perform(machine.tick(now: clock.now))
        defer { events.removeAll() }
        return events + done
    }

    private let retryDue = Locked<Bool>(false)

    /// Makes the next ``handleReadable()`` look for a lost camera now, as the retry timer would.
    func retryCameraNow() {
        retryDue.withLock { $0 = true }
        wake.signal()
    }

    /// Takes the photo for a press at `pressedAt` (the kernel's edge timestamp): the held frame
    /// whose exposure covers the press, or the next frame when the press is newer than that.
    /// Encoding and writing happen on a background queue; the result comes from ``handleReadable()``.
    public func capture(pressedAt: Instant, now: Instant) {
        guard !isShutDown else { return }
        guard camera != nil else {
            let reason = isRetired ? "the camera is being replaced"
                : isOpening && lastOpenError == nil ? "the camera is being opened" : lastOpenError?.description ?? "no camera"
            fail(pressedAt: pressedAt, .notReady(reason: reason))
            return
        }
        if cameraOnLoop != nil, machine.isStreaming {
            pumpFrames()
            guard self.camera != nil else {
                fail(pressedAt: pressedAt, .notReady(reason: lastOpenError?.description ?? "no camera"))
                return
            }
        }
        if focusMode == .onPrepare {
            // No light press before: focus now; the photo waits for the lens (see AutofocusSequence).
            startAutofocus()
            if autofocus.isScanning {
                focusWaiting.append(pressedAt)
                if !machine.isStreaming { perform(machine.prepare(at: clock.now)) }
                if !events.isEmpty { wake.signal() }
                return
            }
            focusOfPress[pressedAt] = autofocus.outcome
        }
        perform(machine.press(at: pressedAt, now: clock.now, inFlight: inFlight))
        if !events.isEmpty { wake.signal() }
    }

    /// How the open camera focuses: the board's `camera.autofocus` on a camera that focuses itself
    /// (a libcamera camera with AfMode/AfTrigger), `nil` on any other.
    private var focusMode: AutofocusMode? { (camera as? LibcameraCamera)?.hasAutofocus == true ? settings.autofocus : nil }

    /// Starts an autofocus cycle (`onPrepare` only), unless one runs or has locked.
    private func startAutofocus() {
        guard focusMode == .onPrepare, let camera = camera as? LibcameraCamera, autofocus.trigger(at: clock.now) else { return }
        onCamera { [unowned self] in
            guard self.camera === camera else { return }  // lost meanwhile: the reopened camera focuses on its next press
            do throws(CaptureError) {
                try camera.triggerAutofocus()
            } catch {
                autofocus.reset()
                events.append(.captureFailed(CaptureFailure(at: clock.now, pressedAt: nil, error: error)))
                wake.signal()
            }
        }
    }

    /// Runs `work` on the camera now, or once the lifecycle queue gives the camera back.
    private func onCamera(_ work: @escaping () -> Void) {
        if lifecycleJobs == 0 { work() } else { whenCameraIsBack.append(work) }
    }

    /// Feeds `frame`'s AfState to the autofocus sequence and serves the presses waiting on focus.
    private func serveFocusWaiting(with frame: Frame) {
        guard let libcamera = camera as? LibcameraCamera else { return }
        let report = libcamera.focusReport(ofFrame: frame.sequence)
        autofocus.frame(report?.state, at: frame.timestamp, answersTrigger: report?.answersTrigger ?? false)
        guard !focusWaiting.isEmpty, case .take(let outcome) = autofocus.decide(frameAt: frame.timestamp, now: clock.now) else { return }
        let presses = focusWaiting
        focusWaiting.removeAll()
        for pressedAt in presses { submit(frame, pressedAt: pressedAt, focus: outcome) }
    }

    /// Starts the camera ahead of a press (light press), when the board stops it between shots.
    public func prepare() {
        guard camera != nil else { return }
        startAutofocus()
        perform(machine.prepare(at: clock.now))
    }

    /// Carries out what the state machine decided; a start skips `warmupFrames` (default: the board's).
    private func perform(_ actions: [CaptureStateMachine.Action], warmupFrames: Int? = nil) {
        for action in actions {
            switch action {
            case .save(let number, let pressedAt):
                if let frame = ring.frames.last(where: { $0.sequence == number }) { submit(frame, pressedAt: pressedAt) }
            case .fail(let pressedAt, let failure):
                let error: CaptureError = switch failure {
                case .backlog(let limit): .notReady(reason: "\(limit) photos are still being saved")
                case .stalled(let silence): .stalled(device: camera?.info.path ?? settings.deviceDescription, seconds: Double(silence.rawValue) / 1e9)
                case .startOverdue(let waited):
                    .startTimedOut(device: camera?.info.path ?? settings.deviceDescription, seconds: Double(waited.rawValue) / 1e9)
                }
                events.append(.captureFailed(CaptureFailure(at: clock.now, pressedAt: pressedAt, error: error)))
                wake.signal()
            case .startStream:
                if let camera { startStream(camera, warmupFrames: warmupFrames ?? settings.warmupFrames, restart: false) }
                startWatchdog()  // ticks the start timeout too
            case .restartStream:
                if let camera { startStream(camera, warmupFrames: 0, restart: true) }
                startWatchdog()
            case .stopStream:
                ring.removeAll()
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
            wake.signal()
        }
    }

    /// Takes what the lifecycle queue finished: adopts a camera it opened (or reports why not), and
    /// once the camera is back on the loop acts on how its starts and stops went.
    private func collectLifecycleResults() {
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
                retryTimer?.cancel()
                retryTimer = nil
                cameraArrivals = nil
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
            lost(failure, pressedAt: nil)
            return
        }
        perform(machine.settled(streaming: camera.isStreaming, at: clock.now, warmupFrames: startWarmup))
        if machine.isStreaming { startWatchdog() }
        // Control changes asked for while the camera was away, in order (each may send it away again).
        while lifecycleJobs == 0, self.camera != nil, !whenCameraIsBack.isEmpty {
            whenCameraIsBack.removeFirst()()
        }
    }

    /// How the open camera serves zoom, exposure bias and focus.
    public var controlPlan: ControlPlan { ControlPlan(controls: camera?.controls ?? []) }

    /// Applies a board control's new value: `systemZoom` → ``setZoom(_:)``, `systemExposureBias` →
    /// ``setExposureBias(_:)``, others → the V4L2 control the board's `camera.bindings` names.
    /// Controls the camera cannot serve are ignored (``controlReport()`` says why). Never blocks:
    /// V4L2 controls are set on a background queue.
    public func apply(controlID: String, value: ControlValue) {
        guard lifecycleJobs == 0 else {
            whenCameraIsBack.append { [unowned self] in apply(controlID: controlID, value: value) }
            return
        }
        guard let spec = board.controls.first(where: { $0.id == controlID }) else { return }
        let number: Double = switch value {
        case .number(let number): number
        case .index(let index): Double(index)
        }
        switch spec.kind {
        case .systemZoom: setZoom(number)
        case .systemExposureBias: setExposureBias(number)
        case .lensPosition(let values): setLensPosition(number, range: values.bounds)
        case .slider(let values): setBound(controlID: controlID, value: number, range: values.bounds)
        case .picker(let count, _):
            // A binding to a camera control takes the picker over (as `controlReport` says); else its effects apply.
            if settings.bindings[controlID] == nil, let effects = spec.effects, case .index(let index) = value, effects.indices.contains(index) {
                effect = effects[index]
            }
            setBound(controlID: controlID, value: number, range: 0...Double(max(count - 1, 1)))
        }
    }

    /// Sets the zoom factor (1 = none): the camera's zoom control when it has one, else a centred crop.
    public func setZoom(_ factor: Double) {
        guard lifecycleJobs == 0 else {
            whenCameraIsBack.append { [unowned self] in setZoom(factor) }
            return
        }
        zoomFactor = max(1, factor)
        if let maximum = scalerCropMaximum, let camera = camera as? LibcameraCamera {
            do throws(CaptureError) {
                try camera.setScalerCrop(scalerCrop(forZoom: zoomFactor, maximum: maximum))
            } catch {
                events.append(.captureFailed(CaptureFailure(at: clock.now, pressedAt: nil, error: error)))
                wake.signal()
            }
            return
        }
        guard let control = hardwareZoom else { return }
        let range = board.controls.compactMap { spec -> ClosedRange<Double>? in
            if case .systemZoom(let values) = spec.kind { return values.bounds }
            return nil
        }.first ?? 1...8
        set(control, control.mapped(zoomFactor, from: range))
    }

    /// Sets the exposure bias in EV through the camera's bias control, or its manual exposure time.
    ///
    /// 0 EV is the camera's plain auto exposure. A bias control works on top of auto exposure. A
    /// camera with only a manual exposure time gets the time auto exposure metered, read just
    /// before switching to manual, times 2^EV; back at 0 EV it meters itself again.
    public func setExposureBias(_ ev: Double) {
        guard lifecycleJobs == 0 else {
            whenCameraIsBack.append { [unowned self] in setExposureBias(ev) }
            return
        }
        exposureBias = ev
        if let camera = camera as? LibcameraCamera {
            guard case .exposureValue(let range) = LibcameraControlPlan(camera: camera).exposureBias else { return }
            do throws(CaptureError) {
                try camera.setExposureValue(exposureValue(forBias: ev, range: range))
            } catch {
                events.append(.captureFailed(CaptureFailure(at: clock.now, pressedAt: nil, error: error)))
                wake.signal()
            }
            return
        }
        let plan = controlPlan
        switch plan.exposureBias {
        case .camera:
            guard let (control, value) = plan.exposureValue(forEV: ev) else { return }
            set(control, value)
        case .manualExposure(let absolute, let auto):
            if ev == 0 {
                if let auto, manualExposureSet { set(auto, ControlPlan.autoExposureMode(auto)) }
                manualExposureSet = false
                exposureRead = nil  // a read still out is answered into nothing
                meteredExposure = nil
                return
            }
            if !manualExposureSet {
                // Auto exposure's choice is read first, off the loop; the bias applies once it is back.
                if exposureRead != nil {
                    exposureRead?.bias = ev
                } else if let camera {
                    readMeteredExposure(absolute, of: camera, bias: ev)
                }
                return
            }
            guard let (control, value) = plan.exposureValue(forEV: ev, metered: meteredExposure) else { return }
            set(control, value)
        case .unavailable:
            return
        }
    }

    /// Drives the lens by hand (`LensPosition`, autofocus off) from a `lensPosition` slider at `value` in `range`.
    public func setLensPosition(_ value: Double, range: ClosedRange<Double>) {
        guard lifecycleJobs == 0 else {
            whenCameraIsBack.append { [unowned self] in setLensPosition(value, range: range) }
            return
        }
        guard let camera = camera as? LibcameraCamera else { return }
        let lens: ClosedRange<Double>
        switch LibcameraControlPlan(camera: camera).focus {
        case .autofocus(let range), .manual(let range): lens = range
        case .unavailable: return
        }
        autofocus.reset()
        do throws(CaptureError) {
            try camera.setLensPosition(ShutterCapture.lensPosition(for: value, in: range, lens: lens))
        } catch {
            events.append(.captureFailed(CaptureFailure(at: clock.now, pressedAt: nil, error: error)))
            wake.signal()
        }
    }

    /// Whether this service switched the camera to manual exposure (for a bias on a camera without a bias control).
    private var manualExposureSet = false
    /// The exposure time auto exposure had chosen when the bias took over.
    private var meteredExposure: Int32?
    /// The last exposure bias asked for, re-applied to a reopened camera.
    private var exposureBias: Double?
    /// The read of the metered exposure the loop waits for: its number, and the bias to apply once it is back.
    private var exposureRead: (number: Int, bias: Double)?
    /// How many exposure reads were asked for; numbers an answer, so a late one (for a bias given
    /// up, or for a camera since closed) is ignored.
    private var exposureReadsAsked = 0
    /// Answers to exposure reads, from the camera's control thread, for the loop to collect.
    private let exposureAnswers = Locked<[(number: Int, value: Int32?)]>([])

    /// Asks `camera` for the exposure time auto exposure chose; ``collectExposureAnswers()`` switches
    /// to manual exposure with `bias` once it is back. A USB camera answers over a control
    /// transfer, which must not hold up the loop.
    private func readMeteredExposure(_ absolute: CameraControl, of camera: any Camera, bias: Double) {
        exposureReadsAsked += 1
        let number = exposureReadsAsked, answers = exposureAnswers, wake = self.wake
        exposureRead = (number, bias)
        camera.readControl(absolute.id) { value in
            answers.withLock { $0.append((number, value)) }
            wake.signal()
        }
    }

    /// Takes the metered exposure read for the bias still wanted: auto exposure off, then the
    /// metered time scaled by the bias asked for last.
    private func collectExposureAnswers() {
        let answers = exposureAnswers.withLock { list in
            defer { list.removeAll() }
            return list
        }
        guard let read = exposureRead, let answer = answers.last(where: { $0.number == read.number }) else { return }
        onCamera { [unowned self] in
            // Given up, or asked again, while the camera was away: nothing to do, or a newer bias to apply.
            guard let current = exposureRead, current.number == answer.number else { return }
            exposureRead = nil
            guard case .manualExposure(_, let auto) = controlPlan.exposureBias else { return }
            meteredExposure = answer.value
            if let auto { set(auto, 1) }  // V4L2_EXPOSURE_MANUAL
            manualExposureSet = true
            setExposureBias(current.bias)
        }
    }

    /// Sets the camera control a custom board control is bound to, its range mapped onto the control's.
    private func setBound(controlID: String, value: Double, range: ClosedRange<Double>) {
        guard let name = settings.bindings[controlID], let control = boundControl(name) else { return }
        set(control, control.mapped(value, from: range))
    }

    private func boundControl(_ name: String) -> CameraControl? {
        let controls = camera?.controls ?? []
        return controls.first { $0.name == name } ?? controls.first { $0.name.lowercased() == name.lowercased() }
    }

    private func set(_ control: CameraControl, _ value: Int32) {
        guard let camera else { return }
        do throws(CaptureError) {
            try camera.setControl(control.id, to: value)
        } catch {
            events.append(.captureFailed(CaptureFailure(at: clock.now, pressedAt: nil, error: error)))
            wake.signal()
        }
    }

    /// For each board control: whether the camera serves it, and how or why not (for `shutter check`).
    public func controlReport() -> [(id: String, enabled: Bool, how: String)] {
        if let camera = camera as? LibcameraCamera {
            return LibcameraControlPlan(camera: camera).report(board: board, controls: camera.libcameraControls)
        }
        return Self.controlReport(board: board, controls: camera?.controls ?? [])
    }

    /// ``controlReport()`` for a camera with `controls`, without a service.
    public static func controlReport(board: Board, controls: [CameraControl]) -> [(id: String, enabled: Bool, how: String)] {
        let plan = ControlPlan(controls: controls)
        let settings = board.camera
        func bound(_ name: String) -> CameraControl? {
            controls.first { $0.name == name } ?? controls.first { $0.name.lowercased() == name.lowercased() }
        }
        return board.controls.map { spec in
            switch spec.kind {
            case .systemZoom:
                switch plan.zoom {
                case .camera(let control): return (spec.id, true, "camera zoom '\(control.name)'")
                case .digital: return (spec.id, true, "digital zoom (centred crop, saved at the \(settings.digitalZoom == .crop ? "crop's size" : "frame size"))")
                }
            case .lensPosition:
                return (spec.id, false, "disabled: manual focus needs a libcamera camera with LensPosition (V4L2 focus is not mapped)")
            case .systemExposureBias:
                switch plan.exposureBias {
                case .camera(let control): return (spec.id, true, "camera control '\(control.name)'")
                case .manualExposure(let absolute, _): return (spec.id, true, "manual exposure '\(absolute.name)' scaled by 2^EV")
                case .unavailable(let reason): return (spec.id, false, "disabled: \(reason)")
                }
            case .slider, .picker:
                if let effects = spec.effects, settings.bindings[spec.id] == nil { return (spec.id, true, photoEffectReport(effects)) }
                guard let name = settings.bindings[spec.id] else { return (spec.id, true, "not bound to a camera control (the event loop handles it)") }
                guard let control = bound(name) else {
                    let names = controls.map(\.name).joined(separator: ", ")
                    return (spec.id, false, "disabled: the camera has no control '\(name)' (it has: \(names))")
                }
                return (spec.id, true, "camera control '\(control.name)' \(control.minimum)...\(control.maximum)")
            }
        }
    }

    /// The crop digital zoom takes now, or `nil` when the camera zooms itself or there is no zoom.
    public var digitalZoomCrop: CropRect? {
        guard hardwareZoom == nil, scalerCropMaximum == nil, zoomFactor > 1, let format = camera?.format else { return nil }
        return CropRect.digitalZoom(width: format.width, height: format.height, factor: zoomFactor)
    }

    /// What the next photo's pixels go through before encoding: digital zoom's crop (scaled back
    /// or not) and the chosen effect.
    public var photoProcessing: PhotoProcessing {
        PhotoProcessing(crop: digitalZoomCrop, scaleToFrame: settings.digitalZoom == .scale, effect: effect)
    }

    /// Closes the camera and waits for the lifecycle queue (an open or start in progress) and
    /// for photos being written; no event is reported afterwards, and nothing uses a camera after.
    ///
    /// - Parameter cameraWait: how long to wait for the lifecycle queue; `nil` waits as long as it
    ///   takes. A start or open that hangs in the driver would otherwise hold the caller (the
    ///   daemon on SIGTERM) until it is killed.
    /// - Returns: whether the camera was closed: `false` when the lifecycle queue was still busy
    ///   after `cameraWait` (photos are still waited for; the process should exit, which closes
    ///   the device).
    @discardableResult
    public func shutdown(cameraWait: Nanoseconds? = nil) -> Bool {
        guard !isShutDown else { return true }
        isShutDown = true
        stopTimers()
        whenCameraIsBack.removeAll()
        if let camera {
            // After the jobs queued before: a start in progress finishes, then the camera closes.
            let handed = HandedCamera(camera)
            lifecycleQueue.async { handed.camera.close() }
        }
        camera = nil
        if let cameraWait {
            let drained = DispatchSemaphore(value: 0)
            lifecycleQueue.async { drained.signal() }
            guard drained.wait(timeout: .now() + .nanoseconds(Int(cameraWait.rawValue))) == .success else {
                group.wait()
                return false
            }
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
        group.wait()
        return true
    }

    /// Blocks until every photo handed to the background queue is on disk or failed. For commands and tests.
    public func waitForWrites() {
        group.wait()
    }

    /// Blocks until the camera jobs queued so far (open, start, stop, close) are done; the next
    /// ``handleReadable()`` takes their results. For commands and tests.
    public func waitForCamera() {
        lifecycleQueue.sync {}
    }

    deinit { shutdown() }

    // MARK: - Internals

    private var lastOpenError: CaptureError?

    private func adopt(_ camera: any Camera) {
        self.camera = camera
        if let camera = camera as? LibcameraCamera {
            hardwareZoom = nil
            if case .scalerCrop(let maximum) = LibcameraControlPlan(camera: camera).zoom { scalerCropMaximum = maximum } else { scalerCropMaximum = nil }
        } else {
            hardwareZoom = camera.controls.first { $0.id == ControlID.zoomAbsolute && $0.isWritable }
            scalerCropMaximum = nil
        }
        autofocus.reset()
        ring.removeAll()
        // The ring holds `ringFrames`, fewer when they would pass `ringMiB` at this frame size.
        machine.ringCapacity = ringCapacity(of: camera, settings: settings)
        manualExposureSet = false
        meteredExposure = nil
        exposureRead = nil
        events.append(.cameraReady(at: clock.now, info: camera.info, format: camera.format, frameInterval: camera.frameInterval,
                                   viewfinder: (camera as? LibcameraCamera)?.viewfinder))
        // The board's focus mode, from the camera's first frame (a stopped camera gets it at start).
        if let libcamera = camera as? LibcameraCamera, let mode = focusMode {
            do throws(CaptureError) {
                switch mode {
                case .continuous: try libcamera.focusContinuously()
                case .manual: try libcamera.focusManually()
                case .onPrepare: break  // each cycle sets AfModeAuto with its trigger
                }
            } catch {
                events.append(.captureFailed(CaptureFailure(at: clock.now, pressedAt: nil, error: error)))
            }
        }
        // A reopened camera starts from its defaults: give it the zoom and exposure set before.
        if hardwareZoom != nil || scalerCropMaximum != nil, zoomFactor > 1 { setZoom(zoomFactor) }
        if let exposureBias { setExposureBias(exposureBias) }
        machine.frameInterval = camera.frameInterval
        if camera.isStreaming {
            machine.streamStarted(at: clock.now, warmupFrames: 0)
            startWatchdog()
        } else {
            perform(machine.cameraOpened(at: clock.now), warmupFrames: 0)
        }
        wake.signal()
    }

    /// The first open, on the caller's thread (``init``, before any loop runs).
    private func openNow() {
        do throws(CaptureError) {
            let camera = try factory(settings)
            lastOpenError = nil
            adopt(camera)
        } catch {
            openFailed(error)
        }
    }

    /// Looks for the camera on the lifecycle queue (after the close of the old one, and of
    /// `previous`'s camera); the result comes back through ``collectLifecycleResults()``.
    private func openInBackground(after previous: CaptureService? = nil) {
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
            wake.signal()
        }
    }

    private func openFailed(_ error: CaptureError) {
        if lastOpenError != error {  // report each new reason once, not every retry
            events.append(.captureFailed(CaptureFailure(at: clock.now, pressedAt: nil, error: error)))
            wake.signal()
        }
        lastOpenError = error
        scheduleRetry()
    }

    private func scheduleRetry() {
        guard retryTimer == nil, !isShutDown, !isRetired else { return }
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "shutter.capture.retry"))
        let interval = Int(Self.retryInterval.rawValue)
        timer.schedule(deadline: .now() + .nanoseconds(interval), repeating: .nanoseconds(interval))
        let wake = self.wake, due = self.retryDue
        timer.setEventHandler {
            due.withLock { $0 = true }
            wake.signal()
        }
        timer.resume()
        retryTimer = timer
        cameraArrivals = LibcameraArrivals(watching: settings, waking: wake)
    }

    /// The camera failed: fail waiting presses, close it and look for it again.
    private func lost(_ error: CaptureError, pressedAt: Instant?) {
        let now = clock.now
        let waiting = machine.streamStopped() + focusWaiting
        focusWaiting.removeAll()
        focusOfPress.removeAll()
        autofocus.reset()
        if let pressedAt {
            events.append(.captureFailed(CaptureFailure(at: now, pressedAt: pressedAt, error: error)))
        } else if waiting.isEmpty {
            events.append(.captureFailed(CaptureFailure(at: now, pressedAt: nil, error: error)))
        }
        for press in waiting {
            events.append(.captureFailed(CaptureFailure(at: now, pressedAt: press, error: error)))
        }
        ring.removeAll()
        // Control changes still waiting stay queued: they reach the reopened camera once it has settled.
        if let camera { onLifecycleQueue(camera) { $0.close(); return nil } }
        camera = nil
        lastOpenError = error
        scheduleRetry()
        wake.signal()
    }

    private func fail(pressedAt: Instant, _ error: CaptureError) {
        events.append(.captureFailed(CaptureFailure(at: clock.now, pressedAt: pressedAt, error: error)))
        wake.signal()
    }

    /// Dequeues the frames that are ready. This stays on the loop: the camera's `readFrames` polls
    /// its descriptor first and dequeues only buffers already filled (`VIDIOC_DQBUF` on a ready
    /// buffer does not wait; libv4lconvert's conversion happens on the encode queue, for the one
    /// frame a photo takes), and the frames must meet the presses here anyway. Moving it to a
    /// thread would add a hand-off and a lock per frame for no shorter wait.
    private func pumpFrames() {
        guard let camera = cameraOnLoop, machine.isStreaming, camera.isStreaming else { return }
        // Emptied before the read (it appends) and after the loop: between wake-ups the batch
        // must not hold frames, whose driver buffers would stay out of the camera's queue.
        frameBatch.removeAll(keepingCapacity: true)
        do throws(CaptureError) {
            try camera.readFrames(into: &frameBatch)
        } catch {
            lost(error, pressedAt: nil)
            return
        }
        // A camera without a board rate measures its interval from its frames (libcamera): the
        // frame choice and the stall limit follow it.
        if machine.frameInterval != camera.frameInterval { machine.frameInterval = camera.frameInterval }
        for frame in frameBatch {
            let (keep, actions) = machine.frame(.init(timestamp: frame.timestamp, sequence: frame.sequence), at: clock.now)
            if keep {
                ring.append(frame)
                framesReceived += 1
            }
            perform(actions)  // before the ring follows the machine: a save names a frame it may have let go since (a standby)
            ring.keep(machine.held)  // the oldest, when the machine let it go
            if keep { serveFocusWaiting(with: frame) }
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
            lost(error, pressedAt: nil)
        }
    }

    /// Wakes the loop every ``watchdogTick`` so ``handleReadable()`` can notice a stalled stream.
    private func startWatchdog() {
        guard watchdogTimer == nil, !isShutDown, !isRetired else { return }
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "shutter.capture.watchdog"))
        let tick = Int(Self.watchdogTick.rawValue)
        timer.schedule(deadline: .now() + .nanoseconds(tick), repeating: .nanoseconds(tick), leeway: .milliseconds(50))
        let wake = self.wake
        timer.setEventHandler { wake.signal() }
        timer.resume()
        watchdogTimer = timer
    }

    /// Stops a camera the board does not keep streaming (the light press ended without a shot).
    public func standby() {
        if focusWaiting.isEmpty { autofocus.reset() }
        perform(machine.standby())
    }

    /// Whether photos may claim a date; tests replace it.
    var clockIsSynchronized: () -> Bool = PhotoMetadata.systemClockIsSynchronized

    /// Hands `frame` to the background queue for encoding and writing.
    private func submit(_ frame: Frame, pressedAt: Instant, focus: FocusOutcome? = nil) {
        guard let camera else { return }
        // Continuous autofocus: the frame's own AfState says how it was focused.
        let continuous = focusMode == .continuous ? FocusOutcome(continuous: (camera as? LibcameraCamera)?.focusState(ofFrame: frame.sequence)) : nil
        let focus = focus ?? focusOfPress.removeValue(forKey: pressedAt) ?? continuous ?? .none
        // The shot is taken: the next one focuses again (unless a press still waits on this cycle).
        if focusWaiting.isEmpty, focus != .none { autofocus.reset() }
        sequence += 1
        inFlight += 1
        let now = clock.now
        let wallNow = WallTime.now()
        // The frame's wall time: now on the wall clock, moved back by the frame's age on the monotonic clock.
        let ageMs = max(0, Int((now - frame.timestamp).rawValue / 1_000_000))
        let frameWallMs = wallNow.seconds * 1000 + wallNow.milliseconds - ageMs
        let taken = WallTime(seconds: frameWallMs / 1000, milliseconds: frameWallMs % 1000)
        var metadata = PhotoMetadata(taken: taken, cameraCard: camera.info.card, boardName: board.name,
                                     orientation: settings.orientation, offsetMs: (frame.timestamp - pressedAt).milliseconds,
                                     width: 0, height: 0)
        metadata.cameraMake = camera.info.maker
        metadata.clockSynchronized = clockIsSynchronized()
        metadata.exposure = frame.exposure
        let job = PhotoJob(frame: frame, pressedAt: pressedAt, focus: focus, bracket: ring.bracket(around: pressedAt), processing: photoProcessing,
                           quality: settings.quality, name: template.name(at: taken, sequence: sequence),
                           metadata: metadata)
        let writer = self.writer, finished = self.finished, wake = self.wake, encoder = self.encoder
        // Handed over in a box the block empties: the job (and its frame, which may hold a camera
        // buffer) is let go before the loop is woken, not when the block itself is freed, so the
        // loop gives the buffer back to the camera as it collects the photo.
        let handed = Locked<PhotoJob?>(job)
        encodeQueue.async(group: group) {
            var taken = handed.withLock { box in
                defer { box = nil }
                return box
            }
            guard let event = taken?.run(writer: writer, encoder: encoder) else { return }
            taken = nil
            finished.withLock { $0.append(event) }
            wake.signal()
        }
    }
}

/// A camera handed between the event loop and the lifecycle queue.
///
/// Unchecked: the service hands it to one thread at a time (the queue while a job is queued, the
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

/// What one lifecycle job came to.
enum LifecycleResult: Sendable {
    /// A reopen found the camera.
    case opened(HandedCamera)
    /// A reopen failed.
    case openFailed(CaptureError)
    /// A start, restart, stop or close ended, with its failure if any.
    case done(CaptureError?)
}
