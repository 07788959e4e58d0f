import Foundation
import Testing
import ShutterCore
@testable import ShutterCapture

private func ms(_ value: Double) -> Instant { Instant(rawValue: Int64(value * 1_000_000)) }

@Suite("libcamera decisions")
struct LibcameraDecisionTests {
    static let sensor = PixelRect(x: 16, y: 8, width: 4608, height: 2592)

    @Test("ScalerCrop for a zoom factor: centred, 1/factor of the sensor, even", arguments: [
        (1.0, PixelRect(x: 16, y: 8, width: 4608, height: 2592)),
        (2.0, PixelRect(x: 16 + 1152, y: 8 + 648, width: 2304, height: 1296)),
        (4.0, PixelRect(x: 16 + 1728, y: 8 + 972, width: 1152, height: 648)),
        (3.0, PixelRect(x: 16 + 1536, y: 8 + 864, width: 1536, height: 864)),
        (0.5, PixelRect(x: 16, y: 8, width: 4608, height: 2592)),
        (.nan, PixelRect(x: 16, y: 8, width: 4608, height: 2592)),
    ])
    func scalerCropTable(factor: Double, expected: PixelRect) {
        #expect(scalerCrop(forZoom: factor, unzoomed: Self.sensor) == expected)
    }

    @Test func scalerCropKeepsTheAspectRatioAtOddFactors() {
        let crop = scalerCrop(forZoom: 2.7, unzoomed: Self.sensor)
        #expect(crop.width % 2 == 0 && crop.height % 2 == 0 && crop.x % 2 == 0 && crop.y % 2 == 0)
        #expect(abs(Double(crop.width) / Double(crop.height) - 4608.0 / 2592.0) < 0.01)
        #expect(crop.x - Self.sensor.x == (Self.sensor.width - crop.width) / 2 & ~1)
    }

    @Test("the crop a camera that states none takes unzoomed: the still's aspect, centred, as the Raspberry Pi's", arguments: [
        (1024, 768, PixelRect(x: 16 + 576, y: 8, width: 3456, height: 2592)),
        (1920, 1080, PixelRect(x: 16, y: 8, width: 4608, height: 2592)),
        (1000, 1000, PixelRect(x: 16 + 1008, y: 8, width: 2592, height: 2592)),
        (4608, 1296, PixelRect(x: 16, y: 8 + 648, width: 4608, height: 1296)),
        (0, 0, PixelRect(x: 16, y: 8, width: 4608, height: 2592)),
    ])
    func fittedCropTable(width: Int, height: Int, expected: PixelRect) {
        #expect(scalerCropFitted(maximum: Self.sensor, width: width, height: height) == expected)
    }

    @Test func theBackendSeesItsOwnLocksWithoutProcLocks() throws {
        // A camera's acquire locks its media devices (lockf); the unplug check tells them by
        // these locks, which systemd's ProcSubset=pid would hide in /proc/locks.
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fd = open(directory + "/media0", O_RDWR | O_CREAT, 0o600)
        try #require(fd >= 0)
        defer { close(fd) }
        #expect(try libcameraLockHolder(fd) == 0, "no lock yet")
        #expect(lockf(fd, F_TLOCK, 0) == 0)
        #expect(try libcameraLockHolder(fd) == getpid(), "this process's own lock")
    }

    @Test("ExposureValue is the bias in EV, clamped; 0 is plain auto exposure", arguments: [
        (0.0, 0.0), (1.0, 1.0), (-2.5, -2.5), (12.0, 8.0), (-9.0, -8.0), (.infinity, 0.0),
    ])
    func exposureTable(bias: Double, expected: Double) {
        #expect(exposureValue(forBias: bias, range: -8...8) == expected)
    }

    @Test("LensPosition: the slider's range onto the lens's", arguments: [
        (0.0, 0.0), (10.0, 15.0), (5.0, 7.5), (-1.0, 0.0), (11.0, 15.0),
    ])
    func lensTable(value: Double, expected: Double) {
        #expect(lensPosition(for: value, in: 0...10, lens: 0...15) == expected)
    }

    @Test("which backend opens the camera", arguments: [
        (CameraBackend.auto, "imx708", true, CameraBackend.libcamera),
        (.auto, "IMX708", true, .libcamera),
        (.auto, "/base/soc/i2c0mux/i2c@1/imx708@1a", true, .libcamera),
        (.auto, "libcamera", true, .libcamera),
        (.auto, "libcamera", false, .v4l2),
        (.auto, "HD Pro Webcam C920", true, .v4l2),
        (.auto, "/dev/video0", true, .v4l2),
        (.auto, "imx708", false, .v4l2),
        (.v4l2, "imx708", true, .v4l2),
        (.libcamera, "imx708", false, .libcamera),
    ])
    func backendTable(backend: CameraBackend, device: String, listed: Bool, expected: CameraBackend) {
        var settings = CameraSettings()
        settings.backend = backend
        settings.device = device
        let cameras = listed ? [LibcameraEntry(id: "/base/soc/i2c0mux/i2c@1/imx708@1a", model: "imx708")] : []
        #expect(chooseBackend(settings: settings, libcameraCameras: cameras) == expected)
    }

    @Test("frame times: SensorTimestamp on CLOCK_MONOTONIC, else the buffer's, else the completion", arguments: [
        (Int64(9_990_000_000), Int64(9_995_000_000), Int64(9_990_000_000)),  // sensor time
        (0, 9_995_000_000, 9_995_000_000),                                   // no SensorTimestamp: the buffer's
        (0, 0, 10_000_000_000),                                              // neither: completion
        (11_000_000_000, 0, 10_000_000_000),                                 // in the future: another clock
        (1_000_000, 0, 10_000_000_000),                                      // far older: another clock
        (1_764_000_000_000_000_000, 1_764_000_000_000_000_000, 10_000_000_000), // wall-clock nanoseconds
    ])
    func timestampTable(sensor: Int64, buffer: Int64, expected: Int64) {
        let time = LibcameraTimestamp.monotonic(sensor: sensor, buffer: buffer, completedAt: Instant(rawValue: 10_000_000_000))
        #expect(time == Instant(rawValue: expected))
    }

    @Test("libcamera formats as the V4L2 formats with the same bytes", arguments: [
        ("RG24", "BGR3"), ("BG24", "RGB3"), ("NV12", "NV12"), ("YU12", "YU12"), ("YUYV", "YUYV"),
    ])
    func formatTable(drm: String, v4l2: String) {
        #expect(LibcameraFormat.v4l2(fromDRM: PixelFormat(fourcc: drm)!) == PixelFormat(fourcc: v4l2)!)
    }

    @Test("board pixel format names to DRM fourccs", arguments: [
        ("RGB888", "RG24"), ("BGR888", "BG24"), ("YUV420", "YU12"), ("NV12", "NV12"), ("MJPEG", "MJPG"), ("BGR3", "RG24"),
    ])
    func formatNames(name: String, drm: String) {
        #expect(LibcameraFormat.drm(named: name) == PixelFormat(fourcc: drm)!)
    }
}

@Suite("AutofocusSequence")
struct AutofocusSequenceTests {
    /// A frame: its start, its AfState, whether its request answers the trigger, the time it is
    /// taken in, and the decision for a waiting press.
    typealias Step = (frameAt: Double, state: AfState?, answers: Bool, now: Double, expected: AutofocusSequence.Decision)

    /// Trigger at 1000 ms with a 500 ms timeout, then frames; each frame's decision for a waiting press.
    @Test("a waiting press: locked, failed, or timed out", arguments: [
        ("locks on the third frame", [
            (1033.0, AfState.scanning, true, 1034.0, AutofocusSequence.Decision.wait),
            (1066, .scanning, true, 1067, .wait),
            (1100, .focused, true, 1101, .take(.locked)),
        ]),
        ("fails", [
            (1033.0, AfState.scanning, true, 1034.0, AutofocusSequence.Decision.wait),
            (1066, .failed, true, 1067, .take(.failed)),
        ]),
        ("times out 500 ms after the first frame that answers the trigger", [
            (1400.0, AfState.scanning, true, 1401.0, AutofocusSequence.Decision.wait),
            (1866, .scanning, true, 1899, .wait),
            (1900, .scanning, true, 1901, .take(.timeout)),
        ]),
        ("the requests queued before the trigger report the last cycle's Focused: not counted", [
            (1033.0, AfState.focused, false, 1034.0, AutofocusSequence.Decision.wait),
            (1066, .focused, false, 1067, .wait),
            (1100, .scanning, true, 1101, .wait),
            (1133, .focused, true, 1134, .take(.locked)),
        ]),
        ("time behind the requests queued earlier is not the lens's", [
            (1600.0, AfState.focused, false, 1601.0, AutofocusSequence.Decision.wait),
            (1633, .scanning, true, 1634, .wait),
            (1700, .focused, true, 1701, .take(.locked)),
        ]),
        ("no AfState reported: the deadline decides", [
            (1100.0, nil, true, 1101.0, AutofocusSequence.Decision.wait),
            (1600, nil, true, 1601, .take(.timeout)),
        ]),
    ] as [(String, [Step])])
    func waitingPress(what: String, steps: [Step]) {
        var sequence = AutofocusSequence(timeout: .milliseconds(500))
        let sent1000 = sequence.trigger(at: ms(1000))
        #expect(sent1000)
        for step in steps {
            sequence.frame(step.state, at: ms(step.frameAt), answersTrigger: step.answers)
            #expect(sequence.decide(frameAt: ms(step.frameAt), now: ms(step.now)) == step.expected, "\(what) at \(step.frameAt)")
        }
    }

    @Test func aSecondTriggerWhileWaitingScanningOrLockedSendsNothing() {
        var sequence = AutofocusSequence(timeout: .milliseconds(500))
        let sent1000 = sequence.trigger(at: ms(1000))
        #expect(sent1000)
        let sent1050 = sequence.trigger(at: ms(1050))
        #expect(!sent1050, "requested, not yet answered")
        #expect(sequence.deadline == nil, "no deadline until the trigger reaches the camera")
        sequence.frame(.scanning, at: ms(1066), answersTrigger: true)
        #expect(sequence.deadline == ms(1566))
        let sent1100 = sequence.trigger(at: ms(1100))
        #expect(!sent1100)
        sequence.frame(.focused, at: ms(1133), answersTrigger: true)
        #expect(sequence.outcome == .locked)
        #expect(sequence.focusedSince == ms(1133))
        let sent1200 = sequence.trigger(at: ms(1200))
        #expect(!sent1200)
        sequence.reset()
        #expect(sequence.outcome == .none)
        let sent1300 = sequence.trigger(at: ms(1300))
        #expect(sent1300)
    }

    @Test func theWaitIsCountedInFramesWithTheTimeAsACeiling() {
        // 14 fps: 71 ms a frame; five frames at most, or 2 s.
        var sequence = AutofocusSequence(timeoutFrames: 5, timeout: .milliseconds(2000))
        _ = sequence.trigger(at: ms(1000))
        for index in 0..<4 {
            let at = ms(1100 + Double(index) * 71)
            sequence.frame(.scanning, at: at, answersTrigger: true)
            #expect(sequence.decide(frameAt: at, now: at) == .wait, "frame \(index + 1) of 5")
        }
        sequence.frame(.scanning, at: ms(1384), answersTrigger: true)
        #expect(sequence.framesWaited == 5)
        #expect(sequence.decide(frameAt: ms(1384), now: ms(1384)) == .take(.timeout))
        // At a slow rate the ceiling decides first.
        var slow = AutofocusSequence(timeoutFrames: 30, timeout: .milliseconds(500))
        _ = slow.trigger(at: ms(1000))
        slow.frame(.scanning, at: ms(1100), answersTrigger: true)
        slow.frame(.scanning, at: ms(1600), answersTrigger: true)
        #expect(slow.decide(frameAt: ms(1600), now: ms(1600)) == .take(.timeout))
        #expect(slow.framesWaited == 2)
    }

    @Test func framesBeforeTheTriggerAreNotCounted() {
        var sequence = AutofocusSequence(timeoutFrames: 3, timeout: .milliseconds(2000))
        _ = sequence.trigger(at: ms(1000))
        for index in 0..<5 { sequence.frame(.focused, at: ms(1033 + Double(index) * 33), answersTrigger: false) }
        #expect(sequence.framesWaited == nil)
        sequence.frame(.scanning, at: ms(1200), answersTrigger: true)
        sequence.frame(.focused, at: ms(1233), answersTrigger: true)
        #expect(sequence.framesWaited == 2)
        #expect(sequence.decide(frameAt: ms(1233), now: ms(1234)) == .take(.locked))
    }

    @Test func afterAFailureTheNextPrepareTriesAgain() {
        var sequence = AutofocusSequence(timeout: .milliseconds(500))
        _ = sequence.trigger(at: ms(1000))
        sequence.frame(.failed, at: ms(1033), answersTrigger: true)
        #expect(sequence.outcome == .failed)
        let sent1100 = sequence.trigger(at: ms(1100))
        #expect(sent1100)
    }

    @Test("continuous autofocus: the frame's own AfState is the photo's focus", arguments: [
        (AfState?.some(.focused), FocusOutcome.locked), (.scanning, .scanning), (.failed, .failed), (.idle, .none), (nil, .none),
    ])
    func continuousOutcome(state: AfState?, expected: FocusOutcome) {
        #expect(FocusOutcome(continuous: state) == expected)
    }
}

/// A capture service on the fake libcamera camera (behind the real C interface), on a virtual clock.
final class LibcameraHarness {
    let directory = temporaryDirectory()
    let clock = VirtualClock(start: ms(1000))
    var camera: LibcameraCamera!
    var service: CaptureService!

    /// - Parameter focusSlider: adds a `lensPosition` slider `focus` over 0...10 (initial 0) to the board.
    init(_ script: FakeLibcameraScript = FakeLibcameraScript(), focusSlider: Bool = false,
         _ tweak: (inout CameraSettings) -> Void = { _ in }) throws {
        var board = try simulatorBoard(directory: directory) {
            $0.backend = .libcamera
            $0.device = "fake"
            tweak(&$0)
        }
        if focusSlider {
            board.controls.append(ControlSpec(id: "focus", label: "Focus", kind: .lensPosition(.range(0...10, step: nil)), initial: .number(0)))
        }
        service = try CaptureService(board: board, factory: { [unowned self] (settings: CameraSettings) throws(CaptureError) -> any Camera in
            let camera = try LibcameraCamera(fake: script, settings: settings)
            self.camera = camera
            return camera
        }, clock: clock)
        _ = service.settle()
    }

    /// Frames every 33 ms from `start` until `done` holds or `limit` frames, the clock following them.
    @discardableResult
    func frames(from start: Double, until done: () -> Bool, limit: Int = 30) -> [CaptureEvent] {
        var events: [CaptureEvent] = []
        for index in 0..<limit {
            events += frames(start + Double(index) * 33)
            if done() { break }
        }
        return events
    }

    /// Frames at these times (ms), the clock following them, then the service takes them in.
    @discardableResult
    func frames(_ times: Double...) -> [CaptureEvent] {
        var events: [CaptureEvent] = []
        for time in times {
            if clock.now < ms(time) { clock.advance(to: ms(time)) }
            #expect(camera.deliverFakeFrame(at: ms(time)), "a request was queued for the frame at \(time)")
            events += service.handleReadable()
        }
        return events
    }

    /// A `lensPosition` slider over 0...10 set to `value` on a second service over this camera,
    /// with enough frames for the requests queued at start to go first. The caller shuts the
    /// service down once it has looked at the camera (shutting down closes it).
    func slideLensPosition(to value: Double) throws -> CaptureService {
        var board = service.board
        board.controls.append(ControlSpec(id: "focus", label: "Focus", kind: .lensPosition(.range(0...10, step: nil)), initial: .number(0)))
        let focusing = try CaptureService(board: board, camera: camera, clock: clock, updatesLatest: false)
        focusing.apply(controlID: "focus", value: .number(value))
        for index in 0...camera.requestCount {
            camera.deliverFakeFrame(at: ms(1000 + Double(index) * 33))
            _ = focusing.handleReadable()
        }
        return focusing
    }

    /// Frames every 33 ms after `start` until one reports Focused (or 2 s): that frame's time and sequence.
    func framesUntilFocused(after start: Double) -> (time: Double, sequence: UInt32) {
        var time = start, sequence: UInt32 = 0
        while camera.focusState(ofFrame: sequence) != .focused, time < 2000 {
            time += 33
            sequence += 1
            frames(time)
        }
        return (time, sequence)
    }

    func finish() -> [CaptureEvent] {
        service.waitForWrites()
        return service.handleReadable()
    }

    deinit {
        service.shutdown()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

@Suite("LibcameraCamera on the fake camera")
struct LibcameraCameraTests {
    @Test func streamsNV12FramesWithTheirSensorTimestamps() throws {
        let camera = try LibcameraCamera(fake: FakeLibcameraScript())
        #expect(camera.format == FrameFormat(width: 64, height: 48, pixelFormat: .nv12, bytesPerLine: 64))
        #expect(camera.info.driver == "libcamera")
        try camera.start()
        #expect(camera.pollDescriptor != nil)
        let count = camera.requestCount
        for index in 0..<count { #expect(camera.deliverFakeFrame(at: ms(1000 + Double(index) * 33), fill: UInt8(index))) }
        // Every request filled: no further frame until shutter hands one back.
        #expect(!camera.deliverFakeFrame(at: ms(2000)))
        var frames: [Frame]? = try camera.readFrames()
        #expect(frames?.count == count)
        #expect(frames?.prefix(4).map(\.timestamp) == [ms(1000), ms(1033), ms(1066), ms(1099)])
        #expect(frames?.map(\.sequence) == (0..<UInt32(count)).map { $0 })
        let nv12Bytes = 64 * 48 * 3 / 2  // a constant: Swift 6.0 gives up type-checking it inside #expect
        #expect(frames?[2].bytes.count == nv12Bytes)
        #expect(frames?[2].bytes.allSatisfy { $0 == 2 } == true)
        // Handed back: the requests cycle.
        frames = nil
        #expect(try camera.readFrames().isEmpty)
        #expect(camera.deliverFakeFrame(at: ms(2000)))
        #expect(try camera.readFrames().map(\.sequence) == [UInt32(count)])
        camera.close()
    }

    @Test func listsTheControlsWithTheirRanges() throws {
        let camera = try LibcameraCamera(fake: FakeLibcameraScript())
        let names = Set(camera.libcameraControls.map(\.name))
        #expect(names.isSuperset(of: ["ScalerCrop", "ExposureValue", "AfMode", "AfTrigger", "LensPosition"]))
        #expect(camera.control(.exposureValue)?.minimum == -8)
        #expect(camera.control(.lensPosition)?.maximum == 15)
        #expect(camera.scalerCropMaximum == PixelRect(x: 0, y: 0, width: 64, height: 48))
        #expect(camera.hasAutofocus)
        let adapter = LibcameraControlAdapter(camera: camera)
        #expect(adapter.zoom == .scalerCrop(maximum: PixelRect(x: 0, y: 0, width: 64, height: 48)))
        #expect(adapter.exposureBias == .exposureValue(-8...8))
        #expect(adapter.focus == .autofocus(lens: 0...15))
        let listing = CameraCommands.describe(camera)
        #expect(listing.contains("ExposureValue [float] -8...8 default 0"))
        #expect(listing.contains("zoom: ScalerCrop within (0, 0)/64x48"))
    }

    @Test func aCameraWithoutTheControlsSaysWhy() throws {
        var script = FakeLibcameraScript()
        script.hasScalerCrop = false
        script.hasExposureValue = false
        script.hasAutofocus = false
        let camera = try LibcameraCamera(fake: script)
        let adapter = LibcameraControlAdapter(camera: camera)
        #expect(adapter.zoom == .digital)
        #expect(adapter.exposureBias == .unavailable(reason: "the camera has no ExposureValue control"))
        #expect(!adapter.hasAutofocus)
        var board = try simulatorBoard(directory: "/tmp")
        board.controls.append(ControlSpec(id: "focus", label: "Focus", kind: .lensPosition(.range(0...1, step: nil)), initial: .number(0)))
        let report = adapter.report(board: board)
        #expect(report.first { $0.id == "exposure" }?.enabled == false)
        #expect(report.first { $0.id == "focus" }?.how.contains("fixed focus") == true)
        #expect(report.first { $0.id == "zoom" }?.how.contains("no ScalerCrop") == true)
    }

    @Test func refusesAFormatTheCameraLacks() {
        var settings = CameraSettings()
        settings.pixelFormat = "RGB888"
        #expect(throws: CaptureError.self) { try LibcameraCamera(fake: FakeLibcameraScript(), settings: settings) }
    }
}

@Suite("CaptureService on a libcamera camera")
struct LibcameraServiceTests {
    @Test func zoomGoesToScalerCropAndThePhotoKeepsItsSize() throws {
        var script = FakeLibcameraScript()
        script.hasAutofocus = false  // the press takes the ring's frame at once
        let harness = try LibcameraHarness(script)
        harness.service.apply(controlID: "zoom", value: .number(2))
        // Controls ride on the next request queued: the ones queued at start go first.
        let queuedAtStart = harness.camera.requestCount
        for index in 0..<queuedAtStart { harness.frames(1000 + Double(index) * 33) }
        #expect(harness.camera.fakeAppliedScalerCrop == nil)
        let applied = 1000 + Double(queuedAtStart) * 33
        harness.frames(applied)
        #expect(harness.camera.fakeAppliedScalerCrop == PixelRect(x: 16, y: 12, width: 32, height: 24))
        #expect(harness.service.digitalZoomCrop == nil)
        harness.service.capture(pressedAt: ms(applied - 13), now: ms(applied + 1))
        let photo = try #require(harness.finish().compactMap(\.photo).first)
        #expect(photo.width == 64 && photo.height == 48)
        #expect(photo.frameAt == ms(applied - 33))  // the frame whose exposure covers the press
    }

    @Test func exposureBiasGoesToExposureValue() throws {
        let harness = try LibcameraHarness()
        harness.service.apply(controlID: "exposure", value: .number(1.5))
        // Within the requests queued at start and one more.
        let limit = harness.camera.requestCount + 1
        harness.frames(from: 1000, until: { harness.camera.fakeApplied(.exposureValue) == 1.5 }, limit: limit)
        #expect(harness.camera.fakeApplied(.exposureValue) == 1.5)
        harness.service.apply(controlID: "exposure", value: .number(0))
        harness.frames(from: 2000, until: { harness.camera.fakeApplied(.exposureValue) == 0 }, limit: limit)
        #expect(harness.camera.fakeApplied(.exposureValue) == 0)
    }

    @Test func prepareFocusesAndThePhotoSaysLocked() throws {
        var script = FakeLibcameraScript()
        script.autofocusScanFrames = 2
        let harness = try LibcameraHarness(script) { $0.autofocus = .onPrepare }
        harness.frames(1000)
        harness.service.prepare()
        // The trigger rides on the next request queued (after those queued at start), then two
        // Scanning frames, then Focused.
        let (time, sequence) = harness.framesUntilFocused(after: 1000)
        #expect(harness.camera.fakeAutofocusTriggers == 1)
        #expect(harness.camera.fakeApplied(.afMode) == 1)
        #expect(harness.camera.focusState(ofFrame: sequence - 2) == .scanning)
        harness.frames(time + 33)
        harness.service.capture(pressedAt: ms(time + 25), now: ms(time + 34))
        let events = harness.finish()
        let photo = try #require(events.compactMap(\.photo).first)
        #expect(photo.focus == .locked)
        #expect(photo.frameAt == ms(time))  // focused, and its exposure covers the press
        #expect(events.first!.json.description.contains(#""focus": "locked""#))
    }

    @Test func aPressWithoutPrepareWaitsForTheLens() throws {
        var script = FakeLibcameraScript()
        script.autofocusScanFrames = 3
        let harness = try LibcameraHarness(script) { $0.autofocus = .onPrepare }
        harness.frames(1000, 1033)
        harness.service.capture(pressedAt: ms(1040), now: ms(1041))
        #expect(harness.service.pendingCount == 1)
        // The trigger rides on a request queued after the press; scanning frames do not serve the press.
        let events = harness.frames(from: 1066, until: { harness.service.pendingCount == 0 })
        let photo = try #require((events + harness.finish()).compactMap(\.photo).first)
        #expect(photo.focus == .locked)
        // The requests queued before it, then the trigger's frame and three more Scanning ones.
        #expect(photo.frameAt > ms(1066 + 6 * 33))
        #expect(photo.frameAt - ms(1040) < .milliseconds(500))
        #expect(harness.camera.fakeAutofocusTriggers == 1)
    }

    @Test func aLensThatNeverLocksTimesOut() throws {
        var script = FakeLibcameraScript()
        script.autofocusOutcome = .scanning
        let harness = try LibcameraHarness(script) {
            $0.autofocus = .onPrepare
            $0.focusTimeoutMs = 200
        }
        harness.frames(1000)
        harness.service.prepare()
        harness.frames(1033)
        harness.service.capture(pressedAt: ms(1040), now: ms(1041))
        // The requests queued before the trigger, then the trigger's own frame: the deadline is 200 ms after it.
        var time = 1033.0
        while harness.camera.fakeAutofocusTriggers == 0, time < 2000 {
            time += 33
            harness.frames(time)
        }
        let trigger = time
        while time + 33 < trigger + 200 {
            time += 33
            harness.frames(time)
        }
        #expect(harness.service.pendingCount == 1, "still waiting at \(time), before \(trigger) + 200")
        harness.frames(trigger + 200)
        let photo = try #require(harness.finish().compactMap(\.photo).first)
        #expect(photo.focus == .timeout)
        #expect(photo.frameAt == ms(trigger + 200))
    }

    @Test func aFailedCycleTakesThePhotoAtOnce() throws {
        var script = FakeLibcameraScript()
        script.autofocusOutcome = .failed
        script.autofocusScanFrames = 1
        let harness = try LibcameraHarness(script) { $0.autofocus = .onPrepare }
        harness.frames(1000)
        harness.service.prepare()
        harness.service.capture(pressedAt: ms(1001), now: ms(1001))
        let events = harness.frames(from: 1033, until: { harness.service.pendingCount == 0 })
        let photo = try #require((events + harness.finish()).compactMap(\.photo).first)
        #expect(photo.focus == .failed)
        #expect(photo.frameAt < ms(1500))  // before the 500 ms deadline
    }

    @Test func aFixedFocusCameraTakesTheRingFrameWithFocusNone() throws {
        var script = FakeLibcameraScript()
        script.hasAutofocus = false
        let harness = try LibcameraHarness(script)
        harness.frames(1000, 1033, 1066)
        harness.service.prepare()
        harness.service.capture(pressedAt: ms(1040), now: ms(1067))
        let photo = try #require(harness.finish().compactMap(\.photo).first)
        #expect(photo.focus == .none)
        #expect(photo.frameAt == ms(1033))
        #expect(harness.camera.fakeAutofocusTriggers == 0)
    }

    @Test func aLensPositionSliderFocusesByHand() throws {
        let harness = try LibcameraHarness()
        let service = try harness.slideLensPosition(to: 5)
        defer { service.shutdown() }
        #expect(harness.camera.fakeApplied(.afMode) == 0)
        #expect(harness.camera.fakeApplied(.lensPosition) == 7.5)
    }

    @Test func encodesTheFakeCamerasYUV420AndRGB888() throws {
        for format in [PixelFormat(fourcc: "YU12")!, LibcameraFormat.rgb888, LibcameraFormat.bgr888] {
            var script = FakeLibcameraScript()
            script.format = format
            script.hasAutofocus = false
            let harness = try LibcameraHarness(script)
            harness.frames(1000, 1033)
            harness.service.capture(pressedAt: ms(1033), now: ms(1034))
            let photo = try #require(harness.finish().compactMap(\.photo).first, "\(format)")
            let jpeg = try #require(FileManager.default.contents(atPath: photo.path))
            let image = try JPEGDecoder().decode([UInt8](jpeg))
            #expect(image.width == 64 && image.height == 48, "\(format)")
        }
    }
}

@Suite("JPEG straight from YUV planes")
struct YUVPlaneEncodingTests {
    /// A 64x48 frame in four coloured quadrants: red, blue / green, white (BT.601 YUV).
    static func quadrants(_ pixelFormat: PixelFormat) -> Frame {
        let width = 64, height = 48
        let colours: [(UInt8, UInt8, UInt8)] = [(81, 90, 240), (41, 240, 110), (145, 54, 34), (235, 128, 128)]
        func colour(_ x: Int, _ y: Int) -> (UInt8, UInt8, UInt8) { colours[(y >= height / 2 ? 2 : 0) + (x >= width / 2 ? 1 : 0)] }
        let format = FrameFormat(width: width, height: height, pixelFormat: pixelFormat)
        var bytes = [UInt8](repeating: 0, count: format.frameBytes!)
        for y in 0..<height { for x in 0..<width { bytes[y * width + x] = colour(x, y).0 } }
        let chroma = width * height
        for y in 0..<(height / 2) {
            for x in 0..<(width / 2) {
                let (_, u, v) = colour(x * 2, y * 2)
                if pixelFormat == .nv12 {
                    bytes[chroma + y * width + x * 2] = u
                    bytes[chroma + y * width + x * 2 + 1] = v
                } else {
                    bytes[chroma + y * (width / 2) + x] = u
                    bytes[chroma + (width / 2) * (height / 2) + y * (width / 2) + x] = v
                }
            }
        }
        return Frame(timestamp: .zero, sequence: 0, format: format, bytes: bytes)
    }

    @Test("a crop's offset moves luma and chroma alike", arguments: [PixelFormat.nv12, .yuv420])
    func cropsTheRightQuadrant(format: PixelFormat) throws {
        let frame = Self.quadrants(format)
        let cases: [(CropRect, (Bool, Bool, Bool))] = [
            (CropRect(x: 0, y: 0, width: 32, height: 24), (true, false, false)),    // red
            (CropRect(x: 32, y: 0, width: 32, height: 24), (false, false, true)),   // blue
            (CropRect(x: 0, y: 24, width: 32, height: 24), (false, true, false)),   // green
            (CropRect(x: 32, y: 24, width: 32, height: 24), (true, true, true)),    // white
        ]
        for (crop, expected) in cases {
            let image = try JPEGDecoder().decode(try JPEGEncoder().encode(frame, crop: crop, quality: 95))
            #expect(image.width == 32 && image.height == 24)
            let p = image.pixel(x: 16, y: 12)
            #expect((p.r > 128, p.g > 128, p.b > 128) == expected, "\(format) \(crop): \(p)")
        }
    }
}

@Suite("libcamera control report")
struct LibcameraControlReportTests {
    @Test func theServiceReportsLibcameraControlsInLibcameraTerms() throws {
        var script = FakeLibcameraScript()
        script.hasExposureValue = false
        let harness = try LibcameraHarness(script)
        let report = harness.service.controlReport()
        let exposure = try #require(report.first { $0.id == "exposure" })
        #expect(!exposure.enabled)
        #expect(exposure.how == "disabled: the camera has no ExposureValue control")
        #expect(report.first { $0.id == "zoom" }?.how.hasPrefix("ScalerCrop within") == true)
    }
}

@Suite("libcamera frame rate and viewfinder")
struct LibcameraRateAndViewfinderTests {
    @Test("the board's fps becomes FrameDurationLimits (both limits), within the camera's range", arguments: [
        (10.0, Int64(100_000)), (30.0, 33_333), (100.0, 33_333), (0.5, 1_000_000), (0.1, 1_000_000),
    ])
    func fpsBecomesFrameDurationLimits(fps: Double, microseconds: Int64) throws {
        var settings = CameraSettings()
        settings.fps = fps
        let camera = try LibcameraCamera(fake: FakeLibcameraScript(), settings: settings)
        #expect(camera.frameInterval == Nanoseconds(rawValue: microseconds * 1000))
        #expect(camera.fakeApplied(.frameDurationLimits) == nil, "applied when the camera starts, not before")
        try camera.start()
        #expect(camera.fakeApplied(.frameDurationLimits) == Double(Float(microseconds)))
        camera.close()
    }

    @Test func withoutFpsTheCameraKeepsItsOwnRate() throws {
        let camera = try LibcameraCamera(fake: FakeLibcameraScript())
        try camera.start()
        #expect(camera.fakeApplied(.frameDurationLimits) == nil && camera.frameInterval == nil)
    }

    @Test func aCameraWithoutFrameDurationLimitsRefusesABoardRate() {
        var script = FakeLibcameraScript()
        script.frameDurationLimits = nil
        var settings = CameraSettings()
        settings.fps = 15
        #expect { try LibcameraCamera(fake: script, settings: settings) } throws: { error in
            "\(error)".contains("FrameDurationLimits") && (error as? CaptureError)?.kind == "unsupportedSize"
        }
    }

    @Test func cameraReadySaysTheRateAndTheViewfinder() throws {
        var script = FakeLibcameraScript()
        script.hasAutofocus = false
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let board = try simulatorBoard(directory: directory) {
            $0.backend = .libcamera
            $0.device = "fake"
            $0.fps = 20
            $0.viewfinder = FrameDimensions(width: 32, height: 24)
        }
        var camera: LibcameraCamera?
        let service = try CaptureService(board: board, factory: { (settings: CameraSettings) throws(CaptureError) -> any Camera in
            let opened = try LibcameraCamera(fake: script, settings: settings)
            camera = opened
            return opened
        })
        defer { service.shutdown() }
        let ready = try #require(service.settle().first { if case .cameraReady = $0 { true } else { false } })
        let line = ready.json.description
        #expect(line.contains(#""fps": 20"#) && line.contains(#""viewfinderWidth": 32"#) && line.contains(#""viewfinderHeight": 24"#), "\(line)")
        #expect(camera?.viewfinder == FrameDimensions(width: 32, height: 24))
        #expect(camera?.fakeApplied(.frameDurationLimits) == 50_000)
    }

    @Test func noViewfinderUnlessTheBoardAsks() throws {
        let camera = try LibcameraCamera(fake: FakeLibcameraScript())
        #expect(camera.viewfinder == nil)
    }
}

@Suite("LibcameraCamera: the requests' buffers are the ring")
struct LibcameraRingTests {
    /// A started fake camera holding `ringFrames` frames in its ring.
    func streaming(_ script: FakeLibcameraScript = FakeLibcameraScript(), ringFrames: Int = 4,
                   ringMiB: Int? = nil) throws -> LibcameraCamera {
        var settings = CameraSettings()
        settings.ringFrames = ringFrames
        settings.ringMiB = ringMiB
        let camera = try LibcameraCamera(fake: script, settings: settings)
        try camera.start()
        return camera
    }

    /// Delivers frames until the fake has no request queued; how many it delivered.
    func deliverAll(_ camera: LibcameraCamera, from start: Double, fill: UInt8 = 0x80, limit: Int = 64) -> Int {
        var count = 0
        while count < limit, camera.deliverFakeFrame(at: ms(start + Double(count) * 33), fill: fill) { count += 1 }
        return count
    }

    @Test func asManyRequestsAsTheRingPlusSpares() throws {
        let camera = try streaming(ringFrames: 3)
        #expect(camera.ringCapacity == 3)
        #expect(camera.requestCount == 3 + LibcameraCamera.spareRequests)
        #expect(deliverAll(camera, from: 1000) == camera.requestCount)
        camera.close()
    }

    @Test func ringMiBBoundsTheRequests() throws {
        var script = FakeLibcameraScript()
        script.width = 1024
        script.height = 768  // 1,179,648 bytes a frame: 3 MiB holds two of the board's eight
        let camera = try streaming(script, ringFrames: 8, ringMiB: 3)
        #expect(camera.bytesPerFrame == 1024 * 768 * 3 / 2)
        #expect(camera.ringCapacity == 2)
        #expect(camera.requestCount == 2 + LibcameraCamera.spareRequests)
        camera.close()
        #expect { try streaming(script, ringFrames: 8, ringMiB: 2) } throws: { error in
            (error as? CaptureError)?.kind == "ringTooSmall" && "\(error)".contains("ringMiB 2 holds fewer than 2 frames of 1.1 MiB")
        }
    }

    @Test func framesAreLentNotCopied() throws {
        let camera = try streaming()
        #expect(camera.deliverFakeFrame(at: ms(1000), fill: 7))
        let frames = try camera.readFrames()
        #expect(frames.count == 1)
        #expect(frames[0].buffer.isLent)
        #expect(frames[0].byteCount == 64 * 48 * 3 / 2)
        #expect(frames[0].bytes.allSatisfy { $0 == 7 })
        camera.close()
    }

    @Test func everyFrameIsLentAndTheCameraSaysWhenItNeedsRequestsBack() throws {
        let camera = try streaming(ringFrames: 4)
        let total = camera.requestCount
        #expect(deliverAll(camera, from: 1000, fill: 1) == total)
        var held: [Frame]? = try camera.readFrames()
        // Every frame is lent, none copied on the loop, though no request is left queued...
        #expect(held?.count == total && held?.allSatisfy { $0.buffer.isLent } == true)
        #expect(camera.framesCopied == 0)
        // ...and the camera says how many it needs back to keep two queued.
        #expect(camera.buffersWanted == LibcameraCamera.minimumQueued)
        #expect(deliverAll(camera, from: 2000, fill: 2) == 0, "a held request is not refilled")
        // The lent frames still read what they were filled with.
        #expect(held?.allSatisfy { $0.bytes.allSatisfy { $0 == 1 } } == true)
        // Two dropped (the ring's oldest) and given back at once: two are filled again.
        held?.removeFirst(2)
        try camera.returnUnusedBuffers()
        #expect(camera.buffersWanted == 0)
        #expect(deliverAll(camera, from: 3000, fill: 3) == 2)
        held = nil
        try camera.returnUnusedBuffers()
        #expect(deliverAll(camera, from: 4000) == total - 2)
        camera.close()
    }

    @Test func stopAndStartKeepHeldRequestsHeld() throws {
        let camera = try streaming(ringFrames: 4)
        let total = camera.requestCount
        #expect(deliverAll(camera, from: 1000) == total)
        var held: [Frame]? = Array(try camera.readFrames().prefix(total - 2))
        #expect(held?.count == total - 2)
        camera.stop()
        try camera.start()
        #expect(deliverAll(camera, from: 2000) == 2, "only the requests no frame holds")
        _ = try camera.readFrames()
        held = nil
        _ = try camera.readFrames()
        #expect(deliverAll(camera, from: 3000) == total)
        camera.close()
    }

    @Test func aFrameOutlivesTheCameraThatLentIt() throws {
        let camera = try streaming()
        #expect(camera.deliverFakeFrame(at: ms(1000), fill: 0x5a))
        let frame = try #require(try camera.readFrames().first)
        #expect(frame.buffer.isLent)
        camera.close()
        // Another camera streaming meanwhile (it would reuse freed memory).
        let other = try streaming()
        _ = deliverAll(other, from: 2000, fill: 0xa5)
        _ = try other.readFrames()
        #expect(frame.bytes.count == 64 * 48 * 3 / 2)
        #expect(frame.bytes.allSatisfy { $0 == 0x5a })
        // And encodes as a photo.
        let image = try JPEGDecoder().decode(try JPEGEncoder().encode(frame, quality: 90))
        #expect(image.width == 64 && image.height == 48)
        other.close()
    }

    @Test("which plane layouts are lent: the bytes from the first plane that hold the frame, or nil (copied)", arguments: [
        // format, planes libcamera gives (offset from the first, length), lendable length
        (FrameFormat(width: 64, height: 48, pixelFormat: .nv12), [(0, 3072), (3072, 1536)], Int?.some(4608)),
        (FrameFormat(width: 64, height: 48, pixelFormat: .nv12), [(0, 3072), (7168, 1536)], nil),          // chroma apart
        (FrameFormat(width: 64, height: 48, pixelFormat: .nv12), [(0, 3072), (3072, 1024)], nil),          // chroma short
        (FrameFormat(width: 64, height: 48, pixelFormat: .nv12), [(0, 4608)], 4608),                       // one plane, all of it
        (FrameFormat(width: 64, height: 48, pixelFormat: .nv12), [(0, 3072)], nil),                        // one plane, luma only
        (FrameFormat(width: 64, height: 48, pixelFormat: .yuv420), [(0, 3072), (3072, 768), (3840, 768)], 4608),
        (FrameFormat(width: 64, height: 48, pixelFormat: .yuv420), [(0, 3072), (3840, 768), (3072, 768)], nil), // V before U
        (FrameFormat(width: 64, height: 48, pixelFormat: .bgr24, bytesPerLine: 256), [(0, 12288)], 12288),  // padded rows
        (FrameFormat(width: 64, height: 48, pixelFormat: .mjpeg), [(0, 65536)], 65536),                    // compressed
    ])
    func layoutTable(format: FrameFormat, given: [(Int, Int)], expected: Int?) {
        let planes = given.map { (offset: $0.0, bytes: $0.1) }
        #expect(LibcameraCamera.contiguousLength(given: planes, layout: LibcameraCamera.planeLayout(of: format)) == expected)
    }

    /// Planes apart in one buffer, or each in a buffer of its own (a multi-planar V4L2 format).
    @Test(arguments: [false, true])
    func planesNotLaidOutAsTheFormatSaysAreLentAsPlanesAndJoinedForThePhoto(inBuffersOfTheirOwn: Bool) throws {
        var script = FakeLibcameraScript()
        if inBuffersOfTheirOwn { script.separatePlanes = true } else { script.planeGap = 4096 }  // the chroma plane is not right after the luma plane
        let camera = try streaming(script)
        #expect(camera.lendsRequests)
        #expect(camera.deliverFakeFrame(at: ms(1000), fill: 9))
        let frame = try #require(try camera.readFrames().first)
        #expect(frame.buffer.isLent && frame.buffer.isPlanar, "no copy on the loop")
        #expect(frame.byteCount == 64 * 48 * 3 / 2)
        let joined = try frame.resolved()
        #expect(!joined.buffer.isPlanar && joined.bytes.count == 64 * 48 * 3 / 2)
        #expect(joined.bytes.allSatisfy { $0 == 9 })
        let image = try JPEGDecoder().decode(try JPEGEncoder().encode(frame, quality: 90))
        #expect(image.width == 64 && image.height == 48)
        camera.close()
    }
}
