import Foundation
import Testing
import ShutterCapture
import ShutterCore
@testable import ShutterService

@Suite struct DaemonTests {
    /// From a press's edge to its decision the loop leaves the camera alone (the board's
    /// `holdCameraMs`): a camera's poll may wait for its driver to finish a frame. A frame that
    /// comes meanwhile is read once the press is decided, and is still the press's to choose from.
    @Test func aFrameThatComesWhileAPressIsDecidedIsReadAfterTheDecision() throws {
        let cameras = ManualCameras()
        let rig = try TestRig(cameraFactory: cameras.open)
        defer { rig.close() }
        let camera = try cameras.streamingWithFrames(in: rig)
        rig.chip.set(rig.line("half"), active: true, at: rig.chip.clock.now)
        try rig.advance(by: .milliseconds(40))
        let before = rig.daemon.capture.service.newestFrameAt
        rig.chip.set(rig.line("full"), active: true, at: rig.chip.clock.now)
        try rig.turn()  // the edge is read: its decision, 5 ms on, is awaited
        try rig.advance(by: .milliseconds(2))
        let frame = rig.chip.clock.now
        camera.emit(at: frame)
        for _ in 0..<2 { try rig.advance(by: .milliseconds(1)) }
        #expect(!rig.names.contains("capture"))
        #expect(rig.daemon.capture.service.newestFrameAt == before, "the frame was read before the decision")
        try rig.advance(by: .milliseconds(1))  // the window's end
        #expect(rig.names.filter { $0 != "cameraReady" } == ["capture"])
        try rig.turn()
        #expect(rig.daemon.capture.service.newestFrameAt == frame)
        rig.chip.set(rig.line("full"), active: false, at: rig.chip.clock.now)
        rig.chip.set(rig.line("half"), active: false, at: rig.chip.clock.now)
        try rig.turn()
        try rig.advance(by: .milliseconds(5))  // the release's decision: its hold ends
        try rig.waitFor { rig.names.contains("photo") }
    }

    /// With `holdCameraMs` 0 the camera is read throughout.
    @Test func withNoHoldAFrameIsReadWhileAPressIsDecided() throws {
        let cameras = ManualCameras()
        let rig = try TestRig(cameraFactory: cameras.open, edit: { $0.gestures.holdCamera = .zero })
        defer { rig.close() }
        let camera = try cameras.streamingWithFrames(in: rig)
        rig.chip.set(rig.line("full"), active: true, at: rig.chip.clock.now)
        try rig.turn()
        try rig.advance(by: .milliseconds(2))
        let frame = rig.chip.clock.now
        camera.emit(at: frame)
        try rig.advance(by: .milliseconds(1))
        #expect(!rig.names.contains("capture"))
        #expect(rig.daemon.capture.service.newestFrameAt == frame)
    }

    @Test func fullClickOnTheMockChipTakesAPhoto() throws {
        let rig = try TestRig()
        defer { rig.close() }
        try rig.click()
        try rig.waitFor { rig.names.contains("photo") }
        // A second photo of the same click would come after the first: the rig runs on a while
        // (a second on its clock, and long enough in real time for another encode) before counting.
        let limit = Date().addingTimeInterval(1)
        while Date() < limit {
            try rig.advance(by: .milliseconds(50))
            try rig.daemon.loop.runOnce(timeoutMilliseconds: 20)
        }
        #expect(rig.names.filter { $0 != "cameraReady" } == ["capture", "capture", "photo"])
        #expect(rig.daemon.counters.photos == 1)
        #expect(rig.daemon.counters.presses == 1)
        let path = try #require(rig.daemon.lastPhotoPath)
        #expect(FileManager.default.fileExists(atPath: path))
        // latest.jpg names the newest photo; it is not one of its own.
        let photos = try FileManager.default.contentsOfDirectory(atPath: rig.directory + "/photos")
            .filter { $0.hasSuffix(".jpg") && $0 != "latest.jpg" }
        #expect(photos.count == 1, "\(photos)")
    }
}
