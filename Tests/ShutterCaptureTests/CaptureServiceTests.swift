import Foundation
import Testing
import ShutterCore
@testable import ShutterCapture

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

    init(_ tweak: (inout CameraSettings) -> Void = { _ in }) throws {
        let board = try simulatorBoard(directory: directory, tweak)
        service = try CaptureService(board: board, factory: { [unowned self] (settings: CameraSettings) throws(CaptureError) -> any Camera in
            if self.unplugged { throw CaptureError.noDevice(requested: "synthetic", available: []) }
            let camera = try SyntheticCamera(width: settings.width!, height: settings.height!, frameInterval: nil)
            self.cameras.append(camera)
            return camera
        }, clock: clock)
    }

    var camera: SyntheticCamera { cameras.last! }

    /// Frames at these times (ms), then the service takes them in.
    @discardableResult
    func frames(_ times: Double...) -> [CaptureEvent] {
        for time in times { camera.emit(at: ms(time)) }
        return service.handleReadable()
    }

    /// Waits for the background queue, then collects its events.
    func finish() -> [CaptureEvent] {
        service.waitForWrites()
        return service.handleReadable()
    }

    deinit {
        service.shutdown()
        try? FileManager.default.removeItem(atPath: directory)
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
        let events = harness.service.handleReadable()
        #expect(events.count == 1)
        #expect(events.first?.json.description.hasPrefix(#"{"event": "cameraReady""#) == true)
        #expect(harness.service.isReady)
        #expect(harness.service.pollDescriptors.count == 2)
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
        #expect(json.contains(#""pressedAt": 1.04, "frameAt": 1.033, "offsetMs": -7, "width": 64, "height": 48, "bytes": "#))
        // The frame interval at the press: the frames on either side of it, 1033 and 1066.
        #expect(json.hasSuffix(#""focus": "none", "bracketMs": 33}"#))
    }

    @Test("the photo event gives bracketMs only when the ring held frames on both sides of the press", arguments: [
        (Nanoseconds?.some(.milliseconds(66.5)), #", "bracketMs": 66.5}"#), (nil, #""focus": "none"}"#),
    ])
    func photoEventBracket(bracket: Nanoseconds?, ending: String) {
        let photo = Photo(at: ms(2000), path: "/tmp/IMG_0001.jpg", pressedAt: ms(1040), frameAt: ms(1033), width: 64, height: 48,
                          bytes: 1000, frameSequence: 1, bracket: bracket, encodeTime: .zero, writeTime: .zero)
        #expect(CaptureEvent.photo(photo).json.description.hasSuffix(ending))
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

    @Test func aStalledStreamFailsWaitingPressesAndRestarts() throws {
        let harness = try Harness()
        harness.frames(1000)
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
        #expect(harness.camera.isStreaming)  // restarted
        // The restarted stream serves the next press.
        harness.frames(2200)
        harness.service.capture(pressedAt: ms(2210), now: ms(2211))
        harness.frames(2233)
        #expect(harness.finish().compactMap(\.photo).first?.frameAt == ms(2200))
        // A stall with nobody waiting is reported once, not at every restart.
        harness.clock.advance(by: .seconds(2))
        #expect(harness.service.handleReadable().compactMap(\.failure).map(\.error.kind) == ["stalled"])
        harness.clock.advance(by: .seconds(2))
        #expect(harness.service.handleReadable().compactMap(\.failure).isEmpty)
    }

    @Test func aBurstNamesEveryPhotoApart() throws {
        let harness = try Harness()
        harness.frames(1000, 1033, 1066, 1100)
        for press in [1001.0, 1034, 1067, 1099] { harness.service.capture(pressedAt: ms(press), now: ms(1101)) }
        let photos = harness.finish().compactMap(\.photo)
        #expect(photos.map(\.frameSequence) == [0, 1, 2, 3])
        #expect(Set(photos.map(\.path)).count == 4)
        #expect(listing(harness.directory).count == 5)  // four photos and latest.jpg
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
        #expect(harness.service.pollDescriptors.count == 1)
        harness.service.capture(pressedAt: ms(1020), now: ms(1021))
        let notReady = harness.service.handleReadable().compactMap(\.failure)
        #expect(notReady.map(\.error.kind) == ["notReady"])
        // Still unplugged: the first retry reports the new reason once, later ones stay quiet.
        harness.service.retryCameraNow()
        #expect(harness.service.handleReadable().compactMap(\.failure).map(\.error.kind) == ["noDevice"])
        harness.service.retryCameraNow()
        #expect(harness.service.handleReadable().isEmpty)
        // Plugged back in: the next retry (the timer's, once a second; here by hand) reopens it.
        harness.unplugged = false
        harness.service.retryCameraNow()
        let reopened = harness.service.handleReadable().contains { if case .cameraReady = $0 { true } else { false } }
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
        _ = FileManager.default.createFile(atPath: harness.directory, contents: Data())
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
        harness.service.handleReadable()
        #expect(!harness.camera.isStreaming)
        harness.service.capture(pressedAt: ms(1000), now: ms(1001))
        #expect(harness.camera.isStreaming)
        harness.frames(1010, 1043)
        #expect(harness.service.pendingCount == 1)
        harness.frames(1076)
        let photo = try #require(harness.finish().compactMap(\.photo).first)
        #expect(photo.frameAt == ms(1076))
        #expect(!harness.camera.isStreaming)  // stopped again once nothing waits
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

    @Test func removesLeftoversAtStart() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = FileManager.default.createFile(atPath: directory + "/.shutter-tmp-2147483646-2.jpg", contents: Data([1, 2]))
        let service = try CaptureService(board: try simulatorBoard(directory: directory))
        defer { service.shutdown() }
        #expect(listing(directory).isEmpty)
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
