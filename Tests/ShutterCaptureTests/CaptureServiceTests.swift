import Foundation
import Testing
import ShutterCore
@testable import ShutterCapture
import ShutterTestSupport
@testable import ShutterSystem

private func ms(_ value: Double) -> Instant { Instant(rawValue: Int64(value * 1_000_000)) }

/// The simulator board with its output in `directory` and `camera` tweaks.
func simulatorBoard(directory: String, _ tweak: (inout CameraSettings) -> Void = { _ in }) throws -> Board {
    var board = try Board.load(path: packageRoot + "/Boards/simulator.json")
    board.output.directory = directory
    board.camera.width = 64
    board.camera.height = 48
    tweak(&board.camera)
    return board
}

/// A service on a synthetic camera whose frames the test emits by hand, on a virtual clock.
final class Harness {
    let directory = temporaryDirectory()
    let clock = VirtualClock(start: ms(1000))
    var cameras: [SyntheticCamera] = []
    var unplugged = false
    var service: CaptureService!

    init(frameInterval: Nanoseconds? = nil, _ tweak: (inout CameraSettings) -> Void = { _ in }) throws {
        let board = try simulatorBoard(directory: directory, tweak)
        service = try CaptureService(board: board, factory: { [unowned self] (settings: CameraSettings) throws(CaptureError) -> any Camera in
            if self.unplugged { throw CaptureError.noDevice(requested: "synthetic", available: []) }
            let camera = try SyntheticCamera(width: settings.width!, height: settings.height!, frameInterval: frameInterval)
            self.cameras.append(camera)
            return camera
        }, clock: clock)
    }

    var camera: SyntheticCamera { cameras.last! }

    /// Lets the lifecycle queue finish opening, starting or stopping the camera, and collects what that raised.
    @discardableResult
    func settle() -> [CaptureEvent] { service.settle() }

    /// Frames at these times (ms), once the camera has settled, then the service takes them in.
    @discardableResult
    func frames(_ times: Double...) -> [CaptureEvent] {
        let settled = settle()
        for time in times { camera.emit(at: ms(time)) }
        return settled + service.handleReadable()
    }

    /// Waits for the background queues, then collects their events.
    func finish() -> [CaptureEvent] {
        let settled = settle()
        service.waitForWrites()
        return settled + service.handleReadable()
    }

    deinit {
        service.shutdown()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

extension CaptureService {
    /// Lets the lifecycle queue finish opening, starting or stopping the camera, and collects what that raised.
    @discardableResult
    func settle() -> [CaptureEvent] {
        var events: [CaptureEvent] = []
        repeat {
            waitForCamera()
            events += handleReadable()
        } while isCameraBusy
        return events
    }
}

extension CaptureEvent {
    var photo: Photo? { if case .photo(let photo) = self { photo } else { nil } }
    var failure: CaptureFailure? { if case .captureFailed(let failure) = self { failure } else { nil } }
}

@Suite("CaptureService")
struct CaptureServiceTests {
    @Test func reportsTheCameraAndPollsItsDescriptor() throws {
        let harness = try Harness()
        let events = harness.settle()
        #expect(events.count == 1)
        #expect(events.first?.json.description.hasPrefix(#"{"event": "cameraReady""#) == true)
        #expect(harness.service.isReady)
        #expect(harness.service.pollDescriptors.count == 3)  // its mailbox, its timer and the camera
    }

    @Test func takesTheFrameNearestThePress() throws {
        let harness = try Harness()
        harness.frames(1000, 1033, 1066, 1100)
        harness.service.capture(pressedAt: ms(1040), now: ms(1101))
        let events = harness.finish()
        let photo = try #require(events.compactMap(\.photo).first)
        #expect(photo.frameAt == ms(1033))
        #expect(photo.offset == .milliseconds(-7))
        #expect(photo.frameSequence == 1)
        #expect(photo.width == 64 && photo.height == 48)
        #expect(FileManager.default.fileExists(atPath: photo.path))
        let jpeg = try #require(FileManager.default.contents(atPath: photo.path))
        #expect(photo.bytes == jpeg.count)
        #expect(try JPEGDecoder().size(of: [UInt8](jpeg)) == (64, 48) ? true : false)
        let json = events.first!.json.description
        #expect(json.hasPrefix(#"{"event": "photo", "t": "#))
        #expect(json.contains(#""pressedAt": 1.04, "frameAt": 1.033, "frameAtIs": "exposureStart", "offsetMs": -7, "width": 64, "height": 48, "bytes": "#))
        // The frame interval at the press: the frames on either side of it, 1033 and 1066.
        #expect(json.hasSuffix(#""focus": "none", "bracketMs": 33}"#))
    }

    @Test("the photo event gives bracketMs only when the ring held frames on both sides of the press", arguments: [
        (Nanoseconds?.some(.milliseconds(66.5)), #", "bracketMs": 66.5}"#), (nil, #""focus": "none"}"#),
    ])
    func photoEventBracket(bracket: Nanoseconds?, ending: String) {
        let photo = Photo(at: ms(2000), path: "/tmp/IMG_0001.jpg", shot: Shot(pressedAt: ms(1040)), frameAt: ms(1033), width: 64, height: 48,
                          bytes: 1000, frameSequence: 1, bracket: bracket, encodeTime: .zero, writeTime: .zero)
        #expect(CaptureEvent.photo(photo).json.description.hasSuffix(ending))
    }

    /// A photo is encoded and written on the service's batch worker (``BatchWorker``), not on
    /// a thread that would take the CPU from the API's subscribers as the press is told to them.
    @Test func aPhotoIsEncodedAsBatchWork() throws {
        let harness = try Harness()
        #expect(harness.service.encodeThreadPolicy == nil)  // no photo yet, no thread
        harness.frames(1000, 1033, 1066)
        harness.service.capture(pressedAt: ms(1040), now: ms(1067))
        #expect(harness.finish().compactMap(\.photo).count == 1)
        #expect(harness.service.encodeThreadPolicy == 3)  // SCHED_BATCH
    }

    @Test func aPressNewerThanEveryFrameTakesTheFrameWhoseExposureCoversIt() throws {
        let harness = try Harness()
        harness.frames(1000, 1033)
        harness.service.capture(pressedAt: ms(1040), now: ms(1041))
        #expect(harness.service.pendingCount == 1)  // the interval is unknown: is 1033 still exposing?
        harness.frames(1066, 1100)  // a later-stamped frame shows that 1033's exposure covered the press
        #expect(harness.service.pendingCount == 0)
        let photo = try #require(harness.finish().compactMap(\.photo).first)
        #expect(photo.frameAt == ms(1033))
        #expect(photo.offset == .milliseconds(-7))
    }

    @Test func aPhotoTakenBeforeTheNextFrameCarriesTheIntervalItsChoiceAssumed() throws {
        let harness = try Harness(frameInterval: .milliseconds(33))
        harness.frames(1000, 1033)
        harness.service.capture(pressedAt: ms(1040), now: ms(1041))
        #expect(harness.service.pendingCount == 0)  // 1033 + 33 ms covers 1040: taken without waiting
        let events = harness.finish()
        let photo = try #require(events.compactMap(\.photo).first)
        #expect(photo.frameAt == ms(1033))
        #expect(photo.bracket == nil)  // no frame after the press had arrived
        #expect(photo.frameInterval == .milliseconds(33))
        #expect(events.first { $0.photo != nil }!.json.description.hasSuffix(#""focus": "none", "frameIntervalMs": 33}"#))
    }

    @Test func aBurstNeverSavesOneFrameTwice() throws {
        let harness = try Harness()
        harness.frames(1000, 1033)
        // Three presses inside one frame's exposure: the first takes it, the others the next frames.
        for press in [1034.0, 1035, 1036] { harness.service.capture(pressedAt: ms(press), now: ms(1037)) }
        #expect(harness.service.pendingCount == 3)  // the interval is unknown: wait for the next frame
        var events = harness.frames(1066)
        #expect(harness.service.pendingCount == 1)  // a shot with no new frame waits for the next one
        events += harness.frames(1100)
        let photos = (events + harness.finish()).compactMap(\.photo)
        #expect(photos.map(\.frameSequence).sorted() == [1, 2, 3])
    }

    @Test func aRetiredServiceClosesItsCameraReportsPhotosTakenAndFailsWaitingPresses() throws {
        let harness = try Harness()
        harness.frames(1000)
        harness.service.capture(pressedAt: ms(1010), now: ms(1010))
        harness.frames(1033)  // the press at 1010 takes the frame at 1000
        harness.service.capture(pressedAt: ms(1040), now: ms(1040))  // newer than every frame: waits
        #expect(harness.service.pendingCount == 1)
        harness.service.retire()
        #expect(!harness.service.isReady)
        let events = harness.finish()
        #expect(events.compactMap(\.photo).map(\.pressedAt) == [ms(1010)])
        let failure = try #require(events.compactMap(\.failure).first)
        #expect(failure.pressedAt == ms(1040))
        #expect(failure.error == .notReady(reason: "the camera is being replaced"))
        #expect(harness.service.isFinished)
        #expect(!harness.camera.isStreaming)  // closed
        // It looks for no camera and takes no photo after.
        harness.service.capture(pressedAt: ms(1100), now: ms(1100))
        #expect(harness.service.handleReadable().compactMap(\.failure).map(\.error.kind) == ["notReady"])
        #expect(harness.cameras.count == 1)
    }

    @Test func aPressWaitingOnAStartThatHangsFailsAfterTheStartTimeout() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let board = try simulatorBoard(directory: directory) { $0.startTimeoutMs = 1000 }
        let clock = VirtualClock(start: ms(1000))
        let gate = DispatchSemaphore(value: 0)
        let camera = try SlowLifecycleCamera(startDelay: .zero, startGate: gate)
        let service = try CaptureService(board: board, camera: camera, clock: clock)  // the start is asked for now
        defer {
            gate.signal()
            service.shutdown()
        }
        service.capture(pressedAt: ms(1200), now: ms(1200))
        clock.advance(by: .milliseconds(999))
        #expect(service.handleReadable().compactMap(\.failure).isEmpty)
        clock.advance(by: .milliseconds(1))
        let failure = try #require(service.handleReadable().compactMap(\.failure).first)
        #expect(failure.pressedAt == ms(1200))
        #expect(failure.error.kind == "stalled")
        #expect(failure.error.description.contains("has not started streaming after 1 s"))
        #expect(service.pendingCount == 0)
        #expect(service.isCameraBusy)  // the start is still the lifecycle queue's
        // Once the start finishes, the stream serves presses again.
        gate.signal()
        service.settle()
        #expect(service.isStreaming)
    }

    @Test func shutdownGivesUpOnACameraStartThatHangs() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let gate = DispatchSemaphore(value: 0)
        defer { gate.signal() }  // lets the hung start end after the test
        let camera = try SlowLifecycleCamera(startDelay: .zero, startGate: gate)
        let service = try CaptureService(board: try simulatorBoard(directory: directory), camera: camera,
                                         clock: VirtualClock(start: ms(1000)))  // the start is asked for now
        #expect(service.shutdown(cameraWait: .milliseconds(200)) == false)
        #expect(!service.isReady)
    }

    @Test func aStalledStreamFailsWaitingPressesAndRestarts() throws {
        let harness = try Harness()
        // Two frames: with one, a camera of unknown rate still has its start-up grace.
        harness.frames(967, 1000)
        harness.service.capture(pressedAt: ms(1100), now: ms(1100))
        #expect(harness.service.pendingCount == 1)
        harness.clock.advance(by: .milliseconds(900))
        #expect(harness.service.handleReadable().isEmpty)  // under a second: still waiting
        harness.clock.advance(by: .milliseconds(200))
        let failures = harness.service.handleReadable().compactMap(\.failure)
        #expect(failures.map(\.error.kind) == ["stalled"])
        #expect(failures.first?.pressedAt == ms(1100))
        #expect(CaptureEvent.captureFailed(failures[0]).json.description.contains(#""kind": "stalled""#))
        #expect(harness.service.pendingCount == 0)
        harness.settle()  // the restart runs on the lifecycle queue
        #expect(harness.camera.isStreaming)  // restarted
        // The restarted stream serves the next press.
        harness.frames(2200)
        harness.service.capture(pressedAt: ms(2210), now: ms(2211))
        harness.frames(2233)
        #expect(harness.finish().compactMap(\.photo).first?.frameAt == ms(2200))
        // A stall with nobody waiting is reported once, not at every restart.
        harness.clock.advance(by: .seconds(2))
        #expect(harness.service.handleReadable().compactMap(\.failure).map(\.error.kind) == ["stalled"])
        harness.settle()
        harness.clock.advance(by: .seconds(2))
        #expect(harness.settle().compactMap(\.failure).isEmpty)
    }

    @Test func aBurstNamesEveryPhotoApart() throws {
        let harness = try Harness()
        harness.frames(1000, 1033, 1066, 1100)
        for press in [1001.0, 1034, 1067, 1099] { harness.service.capture(pressedAt: ms(press), now: ms(1101)) }
        let photos = harness.finish().compactMap(\.photo)
        #expect(photos.map(\.frameSequence) == [0, 1, 2, 3])
        #expect(Set(photos.map(\.path)).count == 4)
        #expect(try listing(harness.directory).count == 5)  // four photos and latest.jpg
    }

    @Test func backlogIsBounded() throws {
        let harness = try Harness()
        harness.frames(1000)
        for index in 0..<(CaptureService.maximumInFlight + 2) {
            harness.service.capture(pressedAt: ms(1001 + Double(index)), now: ms(1001))
        }
        // Each press takes its own frame (a burst never saves one twice): eight frames for eight presses.
        let events = harness.frames(1033, 1066, 1100, 1133, 1166, 1200, 1233, 1266) + harness.finish()
        #expect(events.compactMap(\.photo).count == CaptureService.maximumInFlight)
        #expect(events.compactMap(\.failure).count == 2)
    }

    @Test func aVanishedCameraFailsWaitingPressesAndIsReopened() throws {
        let harness = try Harness()
        harness.frames(1000)
        harness.service.capture(pressedAt: ms(1010), now: ms(1011))
        harness.unplugged = true
        harness.camera.failNextRead(with: .deviceVanished(device: "synthetic"))
        let events = harness.service.handleReadable()
        let failure = try #require(events.compactMap(\.failure).first)
        #expect(failure.pressedAt == ms(1010))
        #expect(failure.error.kind == "deviceVanished")
        #expect(!harness.service.isReady)
        #expect(harness.service.pollDescriptors.count == 2)  // no camera: its mailbox and its timer
        harness.service.capture(pressedAt: ms(1020), now: ms(1021))
        let notReady = harness.service.handleReadable().compactMap(\.failure)
        #expect(notReady.map(\.error.kind) == ["notReady"])
        // Still unplugged: the first retry reports the new reason once, later ones stay quiet.
        harness.service.retryCameraNow()
        #expect(harness.settle().compactMap(\.failure).map(\.error.kind) == ["noDevice"])
        harness.service.retryCameraNow()
        #expect(harness.settle().isEmpty)
        // Plugged back in: the next retry (the timer's, once a second; here by hand) reopens it.
        harness.unplugged = false
        harness.service.retryCameraNow()
        let reopened = harness.settle().contains { if case .cameraReady = $0 { true } else { false } }
        #expect(reopened)
        #expect(harness.service.isReady)
        #expect(harness.cameras.count == 2)
        harness.frames(2000)
        harness.service.capture(pressedAt: ms(1990), now: ms(2001))
        #expect(harness.finish().compactMap(\.photo).first?.frameAt == ms(2000))
    }

    @Test func aFailedWriteIsReportedAndTheNextPressWorks() throws {
        let harness = try Harness()
        harness.frames(1000)
        // Make the output directory unwritable by replacing it with a file.
        try FileManager.default.removeItem(atPath: harness.directory)
        try makeFile(harness.directory, Data())
        harness.service.capture(pressedAt: ms(1000), now: ms(1001))
        let failure = try #require(harness.finish().compactMap(\.failure).first)
        #expect(failure.pressedAt == ms(1000))
        #expect(failure.error.kind == "systemError")
        #expect(failure.error.errno == ENOTDIR)
        let json = CaptureEvent.captureFailed(failure).json.description
        #expect(json.contains(#""kind": "systemError", "errno": 20"#))
        try FileManager.default.removeItem(atPath: harness.directory)
        try FileManager.default.createDirectory(atPath: harness.directory, withIntermediateDirectories: true)
        harness.frames(1033)
        harness.service.capture(pressedAt: ms(1033), now: ms(1034))
        #expect(harness.finish().compactMap(\.photo).count == 1)
    }

    @Test func lowPowerStartsOnThePressAndSkipsWarmUpFrames() throws {
        let harness = try Harness { $0.keepStreaming = false; $0.warmupFrames = 2 }
        harness.settle()
        #expect(!harness.camera.isStreaming)
        harness.service.capture(pressedAt: ms(1000), now: ms(1001))
        harness.settle()  // the start runs on the lifecycle queue
        #expect(harness.camera.isStreaming)
        harness.frames(1010, 1043)
        #expect(harness.service.pendingCount == 1)
        harness.frames(1076)
        let photo = try #require(harness.finish().compactMap(\.photo).first)
        #expect(photo.frameAt == ms(1076))
        #expect(!harness.camera.isStreaming)  // stopped again once nothing waits
    }

    @Test func lowPowerStopsTheStallWatchdogWithTheStream() throws {
        let harness = try Harness { $0.keepStreaming = false; $0.warmupFrames = 0 }
        harness.settle()
        #expect(!harness.service.watchdogIsTicking)
        harness.service.capture(pressedAt: ms(1000), now: ms(1001))
        harness.settle()
        #expect(harness.service.watchdogIsTicking)  // a start that never delivers is noticed
        harness.frames(1010, 1043)
        _ = harness.finish()
        #expect(!harness.camera.isStreaming)
        // Idle between shots: nothing may wake the loop (it ticked four times a second).
        #expect(!harness.service.watchdogIsTicking)
    }

    @Test func prepareStartsTheCameraAheadOfThePress() throws {
        let harness = try Harness { $0.keepStreaming = false; $0.warmupFrames = 1 }
        harness.service.prepare()
        harness.frames(1000, 1033, 1066)
        #expect(harness.camera.isStreaming)
        harness.service.capture(pressedAt: ms(1040), now: ms(1067))
        #expect(harness.finish().compactMap(\.photo).first?.frameAt == ms(1033))
        harness.service.prepare()
        harness.service.standby()
        harness.settle()
        #expect(!harness.camera.isStreaming)
    }

    @Test func digitalZoomCanSaveTheCropAtItsOwnSize() throws {
        let harness = try Harness { $0.digitalZoom = .crop }
        harness.frames(1000)
        harness.service.setZoom(2)
        #expect(harness.service.digitalZoomCrop == CropRect(x: 16, y: 12, width: 32, height: 24))
        harness.service.capture(pressedAt: ms(1000), now: ms(1001))
        let photo = try #require(harness.finish().compactMap(\.photo).first)
        #expect(photo.width == 32 && photo.height == 24)
    }

    @Test func digitalZoomScalesBackToTheFrameSizeByDefault() throws {
        let harness = try Harness()
        harness.frames(1000)
        harness.service.setZoom(2)
        harness.service.capture(pressedAt: ms(1000), now: ms(1001))
        let photo = try #require(harness.finish().compactMap(\.photo).first)
        #expect(photo.width == 64 && photo.height == 48)
    }

    /// A dead writer's temporary file in the output directory is gone once the service started;
    /// the directory itself is still there (listed, not merely absent), and the leftover was there before.
    @Test func removesLeftoversAtStart() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let leftover = ".shutter-tmp-2147483646-2.jpg"  // a pid above any pid_max: its writer is dead
        try makeFile(directory + "/" + leftover, Data([1, 2]))
        #expect(try listing(directory) == [leftover])
        let service = try CaptureService(board: try simulatorBoard(directory: directory))
        defer { service.shutdown() }
        #expect(try listing(directory).isEmpty)
    }

    @Test func theSyntheticCameraRunsOnItsOwnClock() throws {
        // The one test on real time: the timer-driven synthetic camera, as `Boards/simulator.json` uses it.
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let service = try CaptureService(board: try simulatorBoard(directory: directory))
        defer { service.shutdown() }
        var photo: Photo?
        let pressedAt = monotonicNow()
        service.capture(pressedAt: pressedAt, now: pressedAt)
        let deadline = monotonicNow() + .seconds(5)
        while photo == nil, monotonicNow() < deadline {
            var fds = service.pollDescriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            _ = poll(&fds, nfds_t(fds.count), 100)
            photo = service.handleReadable().compactMap(\.photo).first
        }
        let taken = try #require(photo)
        #expect(taken.frameAt >= pressedAt)
        #expect(taken.offset < .milliseconds(200))
    }
}

/// A synthetic camera (frames by hand) whose `start` takes `startDelay`, or hangs until `startGate`
/// is signalled, recording its lifecycle calls.
final class SlowLifecycleCamera: ForwardingCamera, @unchecked Sendable {
    // `calls` is locked: the start, stop and close run on the service's lifecycle queue.
    let startDelay: Nanoseconds
    let startGate: DispatchSemaphore?
    let calls = Locked<[String]>([])

    init(startDelay: Nanoseconds, startGate: DispatchSemaphore? = nil) throws {
        self.startDelay = startDelay
        self.startGate = startGate
        super.init(try SyntheticCamera(width: 64, height: 48, frameInterval: nil))
    }

    override func start() throws(CaptureError) {
        if let startGate {
            startGate.wait()
            startGate.signal()  // open from now on
        }
        sleepFor(startDelay)
        try inner.start()
        calls.withLock { $0.append("start") }
    }
    override func stop() {
        inner.stop()
        calls.withLock { $0.append("stop") }
    }
    override func close() {
        inner.close()
        calls.withLock { $0.append("close") }
    }
}

@Suite("CaptureService: the camera's lifecycle off the event loop")
struct CaptureLifecycleTests {
    @Test func aSlowStartReturnsAtOnceAndAPressMeanwhileTakesTheFirstFrame() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let camera = try SlowLifecycleCamera(startDelay: .milliseconds(300))
        let clock = VirtualClock(start: ms(1000))
        let began = monotonicNow()
        let service = try CaptureService(board: try simulatorBoard(directory: directory), camera: camera, clock: clock)
        defer { service.shutdown() }
        service.capture(pressedAt: ms(1000), now: ms(1000))
        #expect(monotonicNow() - began < .milliseconds(250), "the start ran on the caller's thread")
        #expect(service.isReady)  // open: presses are taken, they wait for the start
        #expect(service.pendingCount == 1)
        #expect(service.pollDescriptors.count == 2)  // the camera is the lifecycle queue's until it has started
        service.settle()
        #expect(camera.calls.withLock { $0 } == ["start"])
        #expect(service.isStreaming)
        camera.inner.emit(at: ms(1310))
        service.handleReadable()
        service.waitForWrites()
        let photo = try #require(service.handleReadable().compactMap(\.photo).first)
        #expect(photo.frameAt == ms(1310))
    }

    @Test func controlsSetWhileTheCameraStartsReachItAfterwardsInOrder() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let camera = try SlowLifecycleCamera(startDelay: .milliseconds(100))
        let service = try CaptureService(board: try simulatorBoard(directory: directory), camera: camera, clock: VirtualClock())
        defer { service.shutdown() }
        service.setExposureBias(1)
        service.setExposureBias(-0.5)
        #expect(camera.inner.exposureBias == 0)  // not while the lifecycle queue has the camera
        service.settle()
        #expect(camera.inner.exposureBias == -500)  // the last one wins, after the start
    }

    @Test func shutdownWaitsForAStartInProgressThenCloses() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let camera = try SlowLifecycleCamera(startDelay: .milliseconds(200))
        let service = try CaptureService(board: try simulatorBoard(directory: directory), camera: camera, clock: VirtualClock())
        service.shutdown()
        // The start finished before the close: nothing touched a closed camera, and nothing is left running.
        #expect(camera.calls.withLock { $0 } == ["start", "stop", "close"] || camera.calls.withLock { $0 } == ["start", "close"])
        #expect(!camera.isStreaming)
        #expect(!service.isReady && !service.isCameraBusy)
    }

    @Test func shutdownDuringAReopenClosesTheCameraItFound() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        final class Made: @unchecked Sendable {
            // Unchecked: the factory runs on the lifecycle queue; read after shutdown waited for it.
            var cameras: [SlowLifecycleCamera] = []
        }
        let made = Made()
        let service = try CaptureService(board: try simulatorBoard(directory: directory), factory: { (_: CameraSettings) throws(CaptureError) -> any Camera in
            if !made.cameras.isEmpty { sleepFor(.milliseconds(200)) }  // a reopen takes its time
            guard let camera = try? SlowLifecycleCamera(startDelay: .zero) else { throw CaptureError.noDevice(requested: "slow", available: []) }
            made.cameras.append(camera)
            return camera
        }, clock: VirtualClock(start: ms(1000)))
        service.settle()
        made.cameras[0].inner.failNextRead(with: .deviceVanished(device: "slow"))
        made.cameras[0].inner.emit(at: ms(1000))
        #expect(service.handleReadable().compactMap(\.failure).map(\.error.kind) == ["deviceVanished"])
        service.retryCameraNow()
        let asked = monotonicNow()
        service.handleReadable()  // the reopen starts on the lifecycle queue
        #expect(monotonicNow() - asked < .milliseconds(150), "the reopen ran on the caller's thread")
        #expect(!service.isReady)
        service.shutdown()
        #expect(made.cameras.count == 2)
        #expect(made.cameras[0].calls.withLock { $0 }.last == "close")
        #expect(made.cameras[1].calls.withLock { $0 } == ["close"])  // found during the shutdown, closed, never started
    }
}
