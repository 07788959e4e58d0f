import Foundation
import Testing
import ShutterCapture
import ShutterCore
@testable import ShutterDaemon

/// The synthetic cameras a rig opens, frames only from `emit(at:)`: a test decides when frames come.
private final class ManualCameras: @unchecked Sendable {
    private let lock = NSLock()
    private var made: [SyntheticCamera] = []  // guarded by lock: opened on the lifecycle queue
    var last: SyntheticCamera? { lock.withLock { made.last } }

    func open(_ settings: CameraSettings) throws(CaptureError) -> any Camera {
        let camera = try SyntheticCamera(width: settings.width ?? 640, height: settings.height ?? 480, frameInterval: nil)
        lock.withLock { made.append(camera) }
        return camera
    }
}

@Suite(.serialized) struct ShutdownTests {
    /// A rig whose camera streams and has held frames, and a full click whose press is newer than
    /// all of them: with no nominal interval its frame is the next one, so the press waits.
    private func rigWithAWaitingPress() throws -> (TestRig, SyntheticCamera) {
        let cameras = ManualCameras()
        let rig = try TestRig(cameraFactory: cameras.open)
        try rig.waitFor { rig.daemon.capture.service.isStreaming }
        let camera = try #require(cameras.last)
        for step in 0..<8 { camera.emit(at: rig.chip.clock.now + .milliseconds(Double(step))) }  // past the warm-up frames
        try rig.waitFor { rig.daemon.capture.service.newestFrameAt != nil }
        rig.chip.clock.advance(by: .milliseconds(100))
        // A full click, without `click()`'s half second after: the stream's 1 s stall limit is on
        // this virtual clock too.
        for (line, active) in [("half", true), ("full", true), ("full", false), ("half", false)] {
            rig.chip.set(rig.line(line), active: active, at: rig.chip.clock.now)
            rig.advance(by: .milliseconds(50))
        }
        #expect(rig.names.contains("capture"))
        #expect(rig.daemon.capture.service.pendingCount == 1)
        return (rig, camera)
    }

    @Test func aPressWaitingForItsFrameAtTheStopStillGetsItsPhoto() throws {
        let (rig, camera) = try rigWithAWaitingPress()
        // The frame has come when SIGTERM arrives, and the loop has not read it yet: the stop
        // must not leave it unread (a frame from another thread during the stop is the same case,
        // but its timing on a loaded machine is not the test's to know).
        camera.emit(at: rig.chip.clock.now)
        rig.close()
        #expect(rig.names.contains("photo"))
        #expect(!rig.names.contains("captureFailed"), "\(rig.lines.map(\.line))")
    }

    @Test func aPressStillWaitingWhenTheStopEndsIsReportedNotDropped() throws {
        let (rig, _) = try rigWithAWaitingPress()
        rig.close()  // no frame comes: the stream's stall limit (1 s) passes
        #expect(!rig.names.contains("photo"))
        let failed = try #require(rig.lines.first { $0.name == "captureFailed" }?.line)
        #expect(failed.contains("\"pressedAt\""))
        #expect(failed.contains("\"kind\": \"notReady\""))
        #expect(failed.contains("shutter stopped before a frame for the press came"))
    }
}
