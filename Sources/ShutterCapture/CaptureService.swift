import Dispatch
import ShutterCore
import ShutterSystem

/// Opens the camera a board names; the service calls it again to reopen a camera that went away.
public typealias CameraFactory = (CameraSettings) throws(CaptureError) -> any Camera

/// A ``CameraFactory`` that also says how it chose the camera (nil: it was not chosen by
/// ``CaptureService/chooseCamera(_:)``).
typealias ChoosingFactory = (CameraSettings) throws(CaptureError) -> (camera: any Camera, choice: CameraChoice?)

/// Takes stills for the event loop: keeps the camera streaming into a zero-shutter-lag ring,
/// picks the frame nearest each press, and encodes and writes it on a background queue.
///
/// Use from one thread (the event loop). Poll every descriptor of ``pollDescriptors`` for
/// readable (re-read the list after each call: the camera's descriptor comes and goes with the
/// camera) and call ``handleReadable()`` when any is, and when the bell given rings (its work
/// threads ring it); call ``capture(_:now:)`` with the shot of a full press.
///
/// Three parts: the ``CameraSession`` (the camera's lifecycle off the loop, the state machine
/// that gives each press its frame, the ring), the camera's ``CameraControlAdapter`` (zoom,
/// exposure bias, focus, and its ``CameraAutofocus`` a press may wait for), and the photo jobs
/// (``PhotoJob``: encode, EXIF, write) on a background queue. Nothing here waits on the camera;
/// control changes asked for while the session has the camera on its lifecycle queue wait in
/// order until it is back. Only the first open, in ``init``, happens on the caller's thread,
/// before any loop runs, so the daemon knows the camera's controls before it serves gestures.
public final class CaptureService {
    public let board: Board
    private let settings: CameraSettings
    private let writer: PhotoWriter
    private let template: FileNameTemplate
    private let clock: any MonotonicClock
    /// The camera's life: open, lost and found again, started and stopped; its frames and the presses they serve.
    private let session: CameraSession
    private var events: [CaptureEvent] = []
    private var sequence = 0
    private var inFlight = 0
    private var zoomFactor = 1.0
    /// The photo effect the board's effect picker chose.
    private var effect = PhotoEffect.none
    /// How the open camera serves zoom, exposure bias and focus; made anew for each camera adopted.
    private var controlAdapter: (any CameraControlAdapter)?
    /// Who drives a lens that focuses itself: the board's autofocus, or a slider a person moved.
    private var manualFocus: ManualFocus
    /// The focus slider's last value and range, given to a reopened camera while the slider drives the lens.
    private var lensSlider: (value: Double, range: ClosedRange<Double>)?
    /// A focus slider's value set while no camera was open: the camera found decides what it does.
    private var lensSliderAwaitingCamera: (value: Double, range: ClosedRange<Double>, control: String, startingValue: Bool)?
    /// How far the newest exposure-bias change has come in the frames, and the presses waiting
    /// for it; made anew for each camera adopted.
    private var exposureSettling: ExposureSettling
    /// Rung when work off the loop finished (a photo, a camera job) or events wait.
    private let wake: LoopBell
    /// The mailbox of a service run without an event loop (a command's own poll): its
    /// descriptor is polled with the camera's. `nil` when the loop's bell was given.
    private let ownMailbox: LoopMailbox?
    private let finished = Locked<[CaptureEvent]>([])
    /// Where photos are encoded and written, one after another: batch work at the loop's nice
    /// value, so that waking it for a press's photo never takes the CPU from the loop or from
    /// an API subscriber reading that press's `capture began` (``BatchWorker``). Not a Dispatch
    /// queue of a higher QoS either: on Linux libdispatch runs a `.userInitiated` queue's worker
    /// at nice -2 where it may, above the loop, and each photo's encode (some 50 ms of CPU in the
    /// VM) then outranked the loop. Nothing shutter runs may outrank the loop.
    private let encodeWorker = BatchWorker(name: "shutter-encode")
    /// The scheduling policy of the thread photos are encoded on (SCHED_BATCH is 3); nil until
    /// the first photo starts it. For tests.
    var encodeThreadPolicy: Int32? { encodeWorker.threadPolicy }
    /// The encode worker's JPEG encoder, kept from photo to photo with its buffers.
    private let encoder = EncodeWorkerEncoder()
    private let group = DispatchGroup()
    /// Makes the live view's previews from the ring's frames while someone watches.
    private let previewProducer: PreviewProducer
    /// How the camera the factory opened last was chosen, until ``cameraChoice`` takes it.
    private let openedChoice: Locked<CameraChoice?>

    /// How the open camera was chosen (``chooseCamera(_:)``), from the moment `cameraReady` is
    /// reported for it; nil while none is open, and for a camera handed in or opened by a given
    /// factory. The daemon warns from it when V4L2's camera was taken because libcamera could not be loaded.
    public private(set) var cameraChoice: CameraChoice?

    /// The most photos waiting to be encoded or written; a longer burst fails fast instead of growing memory.
    public static let maximumInFlight = 8
    /// How often a missing camera is looked for again.
    public static var retryInterval: Nanoseconds { CameraSession.retryInterval }

    /// How long the stream may go without a frame before it counts as stalled: five frame
    /// intervals, and never less than a second.
    public var stallLimit: Nanoseconds { session.machine.stallLimit }
    /// Whether the camera's stall watchdog ticks (tests).
    var watchdogIsTicking: Bool { session.watchdogIsTicking }

    /// - Parameters:
    ///   - board: the rig; its `camera` and `output` sections are used.
    ///   - camera: an already open camera; `nil` opens one with `factory`.
    ///   - factory: opens (and reopens) the camera; the default handles `synthetic` and V4L2 devices.
    ///   - clock: "now" for events raised on the event loop.
    ///   - updatesLatest: repoint `latest.jpg` in the output directory after each photo.
    ///   - opensCamera: open the camera now, on the caller's thread; `false` leaves it to
    ///     ``openCamera(after:)``, off the caller's thread (a reload on a running loop).
    ///   - preview: where the live view's previews go (the daemon's one feed, kept across
    ///     reloads); `nil` makes one for this service.
    ///   - wake: the bell of the loop the service runs on (made with `heldBeforeDecisions`: its
    ///     handler reads the camera); its handler calls ``handleReadable()``. `nil`: the service
    ///     has a mailbox of its own, whose descriptor is among ``pollDescriptors``.
    /// - Throws: ``CaptureError`` only when the output directory cannot be made. A missing camera is
    ///   not an error here: the service reports `captureFailed` and keeps looking for it.
    public convenience init(board: Board, camera: (any Camera)? = nil, factory: CameraFactory? = nil,
                            clock: any MonotonicClock = SystemMonotonicClock(), updatesLatest: Bool = true,
                            opensCamera: Bool = true, preview: PreviewFeed? = nil, wake: LoopBell? = nil) throws(CaptureError) {
        let opens: ChoosingFactory
        if let factory {
            opens = { (settings: CameraSettings) throws(CaptureError) -> (camera: any Camera, choice: CameraChoice?) in
                (try factory(settings), nil)
            }
        } else {
            opens = { (settings: CameraSettings) throws(CaptureError) -> (camera: any Camera, choice: CameraChoice?) in
                try CaptureService.chooseAndOpenCamera(settings)
            }
        }
        try self.init(board: board, camera: camera, opens: opens, clock: clock, updatesLatest: updatesLatest,
                      opensCamera: opensCamera, preview: preview, wake: wake)
    }

    /// The service with `opens` as its factory: the choice it returns with each camera is kept
    /// as ``cameraChoice`` once the camera is adopted (tests give a choice without a device).
    init(board: Board, camera: (any Camera)? = nil, opens: @escaping ChoosingFactory,
         clock: any MonotonicClock = SystemMonotonicClock(), updatesLatest: Bool = true,
         opensCamera: Bool = true, preview: PreviewFeed? = nil, wake: LoopBell? = nil) throws(CaptureError) {
        self.board = board
        let feed = preview ?? PreviewFeed()
        previewProducer = PreviewProducer(feed: feed, settings: board.preview)
        self.settings = board.camera
        manualFocus = ManualFocus(boardMode: board.camera.autofocus, endsOn: board.camera.manualFocusEnds)
        self.clock = clock
        self.writer = try PhotoWriter(directory: board.output.directory, updatesLatest: updatesLatest)
        self.template = FileNameTemplate(board.output.template)
        // {seq} continues after the photos already there, so names keep sorting across restarts.
        self.sequence = template.highestSequence(among: writer.names())
        if let wake {
            ownMailbox = nil
            self.wake = wake
        } else {
            guard let mailbox = try? LoopMailbox() else {
                throw CaptureError.system("eventfd", Errno.current, "the capture service's wake-up")
            }
            ownMailbox = mailbox
            self.wake = mailbox.makeBell {}
        }
        let wake = self.wake
        // The factory runs on the lifecycle queue; its choice waits here until the loop adopts the camera.
        let chosen = Locked<CameraChoice?>(nil)
        openedChoice = chosen
        let factory = { (settings: CameraSettings) throws(CaptureError) -> any Camera in
            let opened = try opens(settings)
            chosen.withLock { $0 = opened.choice }
            return opened.camera
        }
        self.session = try CameraSession(settings: board.camera, factory: factory, clock: clock, wake: wake, maximumInFlight: Self.maximumInFlight)
        exposureSettling = ExposureSettling(timeout: .milliseconds(Double(board.camera.exposureSettleMs)))
        writer.removeLeftovers()
        session.delegate = self
        if let camera {
            session.adopt(camera)
        } else if opensCamera {
            session.openNow()
        }
    }

    /// Opens the camera on the lifecycle queue, once `previous` (the service this one replaces,
    /// already ``retire()``d) has closed its camera: the same device cannot be opened twice.
    /// `cameraReady` (or `captureFailed`, and the search for the camera) follows from
    /// ``handleReadable()``; presses until then fail as not ready.
    public func openCamera(after previous: CaptureService? = nil) {
        session.open(after: previous?.session)
    }

    /// The live view's previews: made from the ring's newest frames while anyone watches
    /// (``PreviewFeed/startWatching()``), at the board's `preview` width, quality and rate.
    public var preview: PreviewFeed { previewProducer.feed }

    /// The `preview` section previews are made with; a reload that keeps the camera sets the new one.
    public var previewSettings: PreviewSettings {
        get { previewProducer.settings }
        set { previewProducer.settings = newValue }
    }

    /// Blocks until the previews being made are published. For tests and the benchmark.
    public func waitForPreviews() {
        previewProducer.waitForPreviews()
    }

    /// The preview queue itself, for tests that hold it back.
    var previewQueue: DispatchQueue { previewProducer.queue }

    /// Whether a camera open is on the lifecycle queue (``openCamera(after:)`` or the search for a lost camera).
    public var isOpeningCamera: Bool { session.isOpening }

    /// Whether ``retire()`` was called: the service takes no more photos.
    public var isRetired: Bool { session.isRetired }

    /// Whether a retired service has nothing left to report: its photos are written and its camera closed.
    public var isFinished: Bool { isRetired && inFlight == 0 && !session.isCameraBusy }

    /// Stops taking photos without waiting, for a service being replaced (a reload that changes
    /// the camera) or a daemon stopping: presses still waiting for a frame fail (`notReady` with
    /// `reason`: reported, never dropped), the camera closes on the lifecycle queue, and photos
    /// already taken are still reported by ``handleReadable()`` until ``isFinished``;
    /// ``shutdown()`` then has nothing left to wait for.
    public func retire(reason: String = "the camera is being replaced") {
        guard !session.isShutDown, !isRetired else { return }
        for shot in session.retire() {
            fail(shot, .notReady(reason: reason))
        }
        wake.ring()
    }

    /// The camera `settings` names among the cameras there are now (libcamera is asked only when
    /// its answer matters: not for a `/dev/` path or `backend` `v4l2`, so only then is its
    /// backend loaded).
    ///
    /// When libcamera cannot be loaded (``loadLibcamera()``), a board that only looks at it first
    /// (no camera named, or a name V4L2 may know) takes V4L2's camera, the reason saying why; a
    /// board that names libcamera (`backend` or `device` `libcamera`) fails with
    /// ``CaptureError/libcameraUnavailable(reason:)``, as does one that names no camera when V4L2
    /// has none either.
    public static func chooseCamera(_ settings: CameraSettings) throws(CaptureError) -> CameraChoice {
        try chooseCamera(settings, listingLibcamera: { () throws(CaptureError) -> [LibcameraEntry] in try libcameraCameras() },
                         v4l2Devices: { V4L2Device.captureDevicePaths() })
    }

    /// ``chooseCamera(_:)`` with libcamera's list and V4L2's devices from `listingLibcamera` and
    /// `v4l2Devices` (tests: a backend that cannot be loaded, a webcam, on a machine without them).
    static func chooseCamera(_ settings: CameraSettings, listingLibcamera: () throws(CaptureError) -> [LibcameraEntry],
                             v4l2Devices: () -> [String]) throws(CaptureError) -> CameraChoice {
        if settings.device == "synthetic" { return CameraChoice(.synthetic) }
        let asksLibcamera = settings.backend == .libcamera ? settings.device == nil || settings.device == "libcamera"
            : settings.backend == .auto && !(settings.device ?? "").hasPrefix("/dev/")
        var listed: [LibcameraEntry] = []
        var unavailable: String?
        if asksLibcamera {
            do throws(CaptureError) {
                listed = try listingLibcamera()
            } catch .libcameraUnavailable(let reason) {
                if settings.backend == .libcamera || settings.device == "libcamera" { throw .libcameraUnavailable(reason: reason) }
                unavailable = reason
            } catch {}
        }
        var choice: CameraChoice
        do throws(CaptureError) {
            choice = try ShutterCapture.chooseCamera(settings: settings, libcameraCameras: listed, v4l2Devices: v4l2Devices)
        } catch .noDevice(nil, _, .auto) where unavailable != nil {
            // Not "libcamera lists no cameras": it was never asked.
            throw .libcameraUnavailable(reason: unavailable! + "; and no V4L2 capture device exists")
        }
        if let unavailable, case .v4l2(let name) = choice.source {
            choice.reason = (choice.reason ?? "V4L2 device \(name)") + "; libcamera was not asked: cannot load its backend: \(unavailable)"
            choice.libcameraUnavailable = unavailable
        }
        return choice
    }

    /// Opens the camera `settings` names, as ``chooseCamera(_:)`` decides (the synthetic camera
    /// only for `synthetic`, otherwise a libcamera or V4L2 camera), with that choice: the default
    /// factory, which keeps the choice for ``cameraChoice``.
    static func chooseAndOpenCamera(_ settings: CameraSettings) throws(CaptureError) -> (camera: any Camera, choice: CameraChoice?) {
        let choice = try chooseCamera(settings)
        return (try openCamera(settings, choice: choice), choice)
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

    /// The descriptors to poll for readable: the camera while it streams (and is not away on the
    /// lifecycle queue), the timer of the stall watchdog and of the search for a missing camera,
    /// the watch on its device node while it is missing, and the service's own mailbox when it
    /// was given no bell.
    public var pollDescriptors: [CInt] {
        var fds: [CInt] = []
        appendPollDescriptors(to: &fds)
        return fds
    }

    /// Appends ``pollDescriptors`` to `list` without making an array: the event loop asks before
    /// every wait, and keeps the list between wake-ups.
    public func appendPollDescriptors(to list: inout [CInt]) {
        if let ownMailbox { list.append(ownMailbox.pollDescriptor) }
        if let camera = session.cameraOnLoop, let fd = camera.pollDescriptor { list.append(fd) }
        list.append(session.timerDescriptor)
        if let fd = session.arrivalDescriptor { list.append(fd) }
    }

    /// Whether a press now would be served by the open camera (at once, or once it has started).
    public var isReady: Bool { session.camera != nil && !session.isShutDown && !isRetired }

    /// The open camera, if any. While ``isCameraBusy`` only its fixed description (`info`,
    /// `format`, `controls`) may be read: the lifecycle queue is using it.
    public var currentCamera: (any Camera)? { session.camera }

    /// Whether the camera is being opened, started, stopped or closed on the lifecycle queue.
    public var isCameraBusy: Bool { session.isCameraBusy }

    /// Whether the camera streams (its start has finished, no stop is asked for).
    public var isStreaming: Bool { session.camera != nil && session.machine.isStreaming }

    /// Frames taken into the ring since start (warm-up frames not counted).
    public var framesReceived: Int { session.framesReceived }

    /// The frames the ring holds now, oldest first (for tests).
    var ringFrames: [Frame] { session.ring.frames }

    /// The newest frame's timestamp.
    public var newestFrameAt: Instant? { session.ring.frames.last?.timestamp }

    /// Presses waiting for a frame.
    public var pendingCount: Int { session.machine.waitingCount + (autofocus?.heldCount ?? 0) + exposureSettling.held.count }

    /// Photos being encoded or written.
    public var inFlightCount: Int { inFlight }

    /// Dequeues ready frames into the ring, serves waiting presses, reopens a lost camera when due,
    /// and collects finished photos. Never blocks.
    @discardableResult
    public func handleReadable() -> [CaptureEvent] {
        ownMailbox?.runWaiting()
        session.readTimer()
        let done = finished.withLock { list in
            defer { list.removeAll() }
            return list
        }
        inFlight -= done.count  // every background result is one photo's end
        session.collectLifecycleResults()
        collectMeteredExposure()
        session.reopenIfDue()
        session.pumpFrames()
        session.tick()
        defer { events.removeAll() }
        return events + done
    }

    /// Makes the next ``handleReadable()`` look for a lost camera now, as the retry timer would.
    func retryCameraNow() {
        session.retryNow()
    }

    /// The earliest frame time the ring still holds, nil when it holds none (the camera is not streaming).
    public var oldestFrameAt: Instant? { session.ring.frames.first?.timestamp }

    /// The frame interval the service assumes (the camera's, or the median it measured); nil when unknown.
    public var frameInterval: Nanoseconds? { session.machine.frameInterval }

    /// Takes the photo of `shot`, of the frame at its `pressedAt` (the kernel's edge timestamp):
    /// the held frame whose exposure covers that instant, or the next frame when the instant is
    /// newer than that. A rig's shot (``Shot/takesSavedFrame``) takes the frame of its instant,
    /// even one saved already for another press; a shot with a ``Shot/fileName`` is saved under
    /// it, not by the board's template. Encoding and writing happen on a background queue; the
    /// photo or failure, carrying `shot`, comes from ``handleReadable()``.
    public func capture(_ shot: Shot, now: Instant) {
        guard !session.isShutDown else { return }
        guard session.camera != nil else {
            let reason = isRetired ? "the camera is being replaced"
                : session.isOpening && session.lastOpenError == nil ? "the camera is being opened" : session.lastOpenError?.description ?? "no camera"
            fail(shot, .notReady(reason: reason))
            return
        }
        if session.cameraOnLoop != nil, session.machine.isStreaming {
            session.pumpFrames()
            guard session.camera != nil else {
                fail(shot, .notReady(reason: session.lastOpenError?.description ?? "no camera"))
                return
            }
        }
        // No light press before (`onPrepare`): focus now; the photo may wait for the lens.
        startAutofocus()
        if autofocus?.holdsPress(shot) == true {
            if !session.machine.isStreaming { session.prepare() }
            if !events.isEmpty { wake.ring() }
            return
        }
        // Made after an exposure-bias change the frames do not show settled yet: wait for one that does.
        if session.machine.isStreaming, exposureSettling.holdsPress(shot, now: clock.now) {
            if !events.isEmpty { wake.ring() }
            return
        }
        session.press(shot, inFlight: inFlight)
        if !events.isEmpty { wake.ring() }
    }

    /// Takes the photo of a press at `pressedAt` as a shot of its own, unnumbered (a command's or
    /// a test's single press): see ``capture(_:now:)``.
    public func capture(pressedAt: Instant, now: Instant) {
        capture(Shot(pressedAt: pressedAt), now: now)
    }

    /// The open camera's own autofocus, when it focuses itself (a libcamera camera with AfMode/AfTrigger).
    private var autofocus: (any CameraAutofocus)? { controlAdapter?.autofocus }

    /// Starts an autofocus cycle (`onPrepare` only), unless one runs or has locked, or a slider
    /// holds the lens; the trigger goes to the camera once it is on the loop.
    private func startAutofocus() {
        guard !manualFocus.isByHand, let controls = controlAdapter, let autofocus = controls.autofocus,
              autofocus.requestCycle(at: clock.now) else { return }
        session.onCamera { [unowned self] in
            guard controlAdapter === controls else { return }  // lost meanwhile: the reopened camera focuses on its next press
            do throws(CaptureError) {
                try autofocus.sendTrigger()
            } catch {
                reportFailure(error)
            }
        }
    }

    /// Serves the presses waiting for the lens or the exposure that `frame` lets go (see
    /// ``CameraAutofocus/frameArrived(_:now:)`` and ``ExposureSettling/frame(_:at:now:)``); a press
    /// the lens lets go still waits for an exposure change made before it.
    private func serveHeldPresses(with frame: Frame) {
        let now = clock.now
        let exposed = exposureSettling.frame(frame.exposure, at: frame.timestamp, now: now)
        if let served = autofocus?.frameArrived(frame, now: now) {
            for shot in served.presses where !exposureSettling.holdsPress(shot, now: now, focus: served.focus) {
                submit(frame, shot: shot, focus: served.focus)
            }
        }
        guard let exposed else { return }
        for press in exposed.presses { submit(frame, shot: press.shot, focus: press.focus, exposure: exposed.outcome) }
    }

    /// Starts the camera ahead of a press, when the board stops it between shots; a half press
    /// (`prepare`) also gives a lens a slider took back to the board's autofocus (with
    /// `manualFocusEnds: prepare`) and, with `onPrepare`, starts a focus cycle.
    ///
    /// - Parameter halfPress: `false` when the controls were shown (a light press): the camera
    ///   starts, but the lens stays with whoever drives it.
    public func prepare(halfPress: Bool = true) {
        guard session.camera != nil else { return }
        if halfPress { driveLens(.halfPress) }
        startAutofocus()
        session.prepare()
    }

    /// A double light press, `currentControl` being current: with `manualFocusEnds:
    /// doubleLightPress` on the focus slider, gives the lens back to the board's autofocus.
    public func doubleLightPress(currentControl: String?) {
        driveLens(.doubleLightPress(currentControl: currentControl))
    }

    /// Applies a board control's new value: `systemZoom` → ``setZoom(_:)``, `systemExposureBias` →
    /// ``setExposureBias(_:)``, `lensPosition` → ``setLensPosition(_:range:control:startingValue:)``,
    /// others → the V4L2 control the board's `camera.bindings` names.
    /// Controls the camera cannot serve are ignored (``controlReport()`` says why). Never blocks:
    /// V4L2 controls are set on a background queue.
    ///
    /// - Parameter startingValue: the value a control starts from (the board's `initial`, or the
    ///   saved one) rather than one a person chose: a focus slider's moves the lens only under
    ///   `autofocus: manual`.
    public func apply(controlID: String, value: ControlValue, startingValue: Bool = false) {
        guard !session.isCameraBusy else {
            session.whenCameraIsBack { [unowned self] in apply(controlID: controlID, value: value, startingValue: startingValue) }
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
        case .lensPosition(let values): setLensPosition(number, range: values.bounds, control: controlID, startingValue: startingValue)
        case .slider(let values): setBound(controlID: controlID, value: number, range: values.bounds)
        case .picker(let count, _):
            // A binding to a camera control takes the picker over (as `controlReport` says); else its effects apply.
            if settings.bindings[controlID] == nil, let effects = spec.effects, case .index(let index) = value, effects.indices.contains(index) {
                effect = effects[index]
            }
            setBound(controlID: controlID, value: number, range: 0...Double(max(count - 1, 1)))
        }
    }

    /// Sets the zoom factor (1 = none): the camera's own zoom (V4L2's zoom control, libcamera's
    /// ScalerCrop) when it has one, else a centred crop of the photo.
    public func setZoom(_ factor: Double) {
        guard !session.isCameraBusy else {
            session.whenCameraIsBack { [unowned self] in setZoom(factor) }
            return
        }
        zoomFactor = max(1, factor)
        let range = board.controls.compactMap { spec -> ClosedRange<Double>? in
            if case .systemZoom(let values) = spec.kind { return values.bounds }
            return nil
        }.first ?? 1...8
        do throws(CaptureError) {
            try controlAdapter?.setZoom(zoomFactor, range: range)
        } catch {
            reportFailure(error)
        }
    }

    /// Sets the exposure bias in EV, as the camera's controls adapter does it (a camera with only
    /// a manual exposure time meters first, off the loop: see ``collectMeteredExposure()``).
    public func setExposureBias(_ ev: Double) {
        guard !session.isCameraBusy else {
            session.whenCameraIsBack { [unowned self] in setExposureBias(ev) }
            return
        }
        exposureBias = ev
        let wake = self.wake
        do throws(CaptureError) {
            try controlAdapter?.setExposureBias(ev, wake: { wake.ring() })
            exposureSettling.biasChanged(to: ev, at: clock.now)
        } catch {
            reportFailure(error)
        }
    }

    /// Drives the lens by hand (`LensPosition`, autofocus off) from the `lensPosition` slider
    /// `control` at `value` in `range`: a person's move takes the lens from the board's autofocus
    /// (and says so, in a `focusMode` event) until the board's `manualFocusEnds`; a starting value
    /// moves it only under `autofocus: manual` (see ``ManualFocus``).
    public func setLensPosition(_ value: Double, range: ClosedRange<Double>, control: String = "focus", startingValue: Bool = false) {
        guard !session.isCameraBusy else {
            session.whenCameraIsBack { [unowned self] in
                setLensPosition(value, range: range, control: control, startingValue: startingValue)
            }
            return
        }
        guard let controls = controlAdapter else {
            // Whether the value moves the lens depends on the camera's autofocus: decided once one is open.
            lensSliderAwaitingCamera = (value, range, control, startingValue)
            return
        }
        // A camera without autofocus: the slider is the only thing that moves its lens.
        guard controls.autofocus != nil else {
            moveLens(to: value, range: range)
            return
        }
        driveLens(startingValue ? .startingValue(control: control) : .moved(control: control), to: (value, range))
    }

    /// Feeds `input` to ``manualFocus`` and performs its action: the lens goes to `slider`'s
    /// value, or back to the board's mode; a change of hands is reported as a `focusMode` event.
    private func driveLens(_ input: ManualFocus.Input, to slider: (value: Double, range: ClosedRange<Double>)? = nil) {
        switch manualFocus.input(input, at: clock.now) {
        case .none:
            break
        case .moveLens:
            if let slider { moveLens(to: slider.value, range: slider.range) }
        case .takeLens(let change):
            events.append(.focusMode(change))
            wake.ring()
            if let slider { moveLens(to: slider.value, range: slider.range) }
        case .giveBack(let change):
            events.append(.focusMode(change))
            wake.ring()
            lensSlider = nil
            do throws(CaptureError) {
                try controlAdapter?.applyFocusMode()
            } catch {
                reportFailure(error)
            }
        }
    }

    /// Puts the lens at the slider's `value` in `range`, and keeps it for a reopened camera.
    private func moveLens(to value: Double, range: ClosedRange<Double>) {
        lensSlider = (value, range)
        do throws(CaptureError) {
            try controlAdapter?.setLensPosition(value, range: range)
        } catch {
            reportFailure(error)
        }
    }

    /// The last exposure bias asked for, re-applied to a reopened camera.
    private var exposureBias: Double?

    /// Hands the metered exposure an exposure bias waited for to the adapter that read it, once
    /// the camera is on the loop (unless that camera has been replaced since).
    private func collectMeteredExposure() {
        guard let controls = controlAdapter, let metered = controls.takeMeteredExposure() else { return }
        session.onCamera { [unowned self] in
            guard controlAdapter === controls else { return }  // reopened meanwhile: the new camera meters afresh
            for error in controls.applyMeteredExposure(metered) { reportFailure(error) }
        }
    }

    /// Sets the camera control a custom board control is bound to, its range mapped onto the control's.
    private func setBound(controlID: String, value: Double, range: ClosedRange<Double>) {
        guard let name = settings.bindings[controlID], let control = boundControl(name) else { return }
        set(control, control.mapped(value, from: range))
    }

    private func boundControl(_ name: String) -> CameraControl? {
        let controls = session.camera?.controls ?? []
        return controls.first { $0.name == name } ?? controls.first { $0.name.lowercased() == name.lowercased() }
    }

    private func set(_ control: CameraControl, _ value: Int32) {
        guard let camera = session.camera else { return }
        do throws(CaptureError) {
            try camera.setControl(control.id, to: value)
        } catch {
            reportFailure(error)
        }
    }

    /// Reports a control the camera refused, as an event of no press.
    private func reportFailure(_ error: CaptureError) {
        events.append(.captureFailed(CaptureFailure(at: clock.now, shot: nil, error: error)))
        wake.ring()
    }

    /// For each board control: whether the camera serves it, and how or why not (for `shutter check`).
    /// Without a camera, as a camera without controls would.
    public func controlReport() -> [ControlReport] {
        (controlAdapter ?? V4L2ControlAdapter(controls: [])).report(board: board)
    }

    /// The crop digital zoom takes now, or `nil` when the camera zooms itself or there is no zoom.
    public var digitalZoomCrop: CropRect? {
        guard controlAdapter?.zoomsDigitally ?? true, zoomFactor > 1, let format = session.camera?.format else { return nil }
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
        guard !session.isShutDown else { return true }
        let closed = session.shutdown(cameraWait: cameraWait)
        controlAdapter = nil
        group.wait()
        previewProducer.waitForPreviews()
        return closed
    }

    /// Blocks until every photo handed to the background queue is on disk or failed. For commands and tests.
    public func waitForWrites() {
        group.wait()
    }

    /// Blocks until the camera jobs queued so far (open, start, stop, close) are done; the next
    /// ``handleReadable()`` takes their results. For commands and tests.
    public func waitForCamera() {
        session.waitForCamera()
    }

    deinit { shutdown() }

    // MARK: - Internals

    private func fail(_ shot: Shot, _ error: CaptureError) {
        events.append(.captureFailed(CaptureFailure(at: clock.now, shot: shot, error: error)))
        wake.ring()
    }

    /// Stops a camera the board does not keep streaming (the light press ended without a shot).
    public func standby() {
        autofocus?.standby()
        session.standby()
    }

    /// Whether photos may claim a date; tests replace it.
    var clockIsSynchronized: () -> Bool = PhotoMetadata.systemClockIsSynchronized

    /// Hands `frame` to the background queue for encoding and writing as the photo of `shot`;
    /// `exposure` is how its exposure stood when the shot waited for it.
    private func submit(_ frame: Frame, shot: Shot, focus: ShotFocus? = nil, exposure: ExposureSettling.Outcome? = nil) {
        guard let camera = session.camera else { return }
        let pressedAt = shot.pressedAt
        let focus = autofocus?.focusOfShot(shot, frame: frame, served: focus) ?? focus ?? ShotFocus(outcome: .none)
        // {seq} counts the photos named by the template only.
        if shot.fileName == nil { sequence += 1 }
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
        let settling = exposure ?? exposureSettling.outcome(ofFrameAt: frame.timestamp, exposure: frame.exposure)
        let job = PhotoJob(frame: frame, shot: shot, focus: focus, exposureSettling: settling,
                           exposureBias: exposureSettling.biasReached(by: frame.exposure), bracket: session.ring.bracket(around: pressedAt),
                           frameInterval: session.machine.frameInterval, processing: photoProcessing,
                           quality: settings.quality, name: shot.fileName ?? template.name(at: taken, sequence: sequence),
                           metadata: metadata)
        let writer = self.writer, finished = self.finished, wake = self.wake, encoder = self.encoder
        // Handed over in a box the block empties: the job (and its frame, which may hold a camera
        // buffer) is let go before the loop is woken, not when the block itself is freed, so the
        // loop gives the buffer back to the camera as it collects the photo.
        let handed = Locked<PhotoJob?>(job)
        encodeWorker.async(group: group) {
            var taken = handed.withLock { box in
                defer { box = nil }
                return box
            }
            guard let event = taken?.run(writer: writer, encoder: encoder) else { return }
            taken = nil
            finished.withLock { $0.append(event) }
            wake.ring()
        }
    }
}

extension CaptureService: CameraSessionDelegate {
    /// Makes the camera's controls adapter, says it is ready, and gives a reopened camera the
    /// focus mode, zoom and exposure bias set before (it starts from its defaults).
    func session(adopted camera: any Camera) {
        let controls = camera.makeControlAdapter(settings: settings)
        controlAdapter = controls
        exposureSettling = ExposureSettling(timeout: exposureSettling.timeout)
        cameraChoice = openedChoice.withLock { choice in
            defer { choice = nil }
            return choice
        }
        events.append(.cameraReady(at: clock.now, info: camera.info, format: camera.format, frameInterval: camera.frameInterval,
                                   viewfinder: camera.viewfinder))
        // The board's focus mode, from the camera's first frame (a stopped camera gets it at
        // start), or the slider's lens position while a slider holds the lens.
        do throws(CaptureError) {
            try controls.applyFocusMode()
            if let lensSlider { try controls.setLensPosition(lensSlider.value, range: lensSlider.range) }
        } catch {
            events.append(.captureFailed(CaptureFailure(at: clock.now, shot: nil, error: error)))
        }
        if let waiting = lensSliderAwaitingCamera {
            lensSliderAwaitingCamera = nil
            setLensPosition(waiting.value, range: waiting.range, control: waiting.control, startingValue: waiting.startingValue)
        }
        if !controls.zoomsDigitally, zoomFactor > 1 { setZoom(zoomFactor) }
        if let exposureBias { setExposureBias(exposureBias) }
    }

    func session(save frame: Frame, shot: Shot) {
        submit(frame, shot: shot)
    }

    func session(kept frame: Frame) {
        serveHeldPresses(with: frame)
        previewProducer.offer(frame, processing: photoProcessing)  // after the presses: a preview never goes before a photo
    }

    func session(report event: CaptureEvent) {
        events.append(event)
    }

    /// The shots waiting for the lens or the exposure; the camera's controls adapter and its choice go with the camera.
    func sessionReleasesCamera() -> [Shot] {
        defer {
            controlAdapter = nil
            cameraChoice = nil
        }
        return (autofocus?.releaseHeld() ?? []) + exposureSettling.releaseHeld()
    }
}
