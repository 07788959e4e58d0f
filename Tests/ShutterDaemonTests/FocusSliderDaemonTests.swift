import Foundation
import Testing
import ShutterCapture
import ShutterCore
@testable import ShutterDaemon

/// The fake libcamera Camera Module 3 a rig opens, kept for the test to deliver its frames.
private final class FakeCameraModule: @unchecked Sendable {
    private let lock = NSLock()
    private var opened: LibcameraCamera?  // guarded by lock: opened on the lifecycle queue
    var camera: LibcameraCamera? { lock.withLock { opened } }

    func open(_ settings: CameraSettings) throws(CaptureError) -> any Camera {
        var script = FakeLibcameraScript()
        script.raspberryPi = true
        script.width = 320
        script.height = 240
        script.format = .yuv420
        script.frameDurationLimits = 33_333...2_000_000
        let camera = try LibcameraCamera(fake: script, settings: settings)
        lock.withLock { opened = camera }
        return camera
    }
}

/// A board with a focus slider on a camera that focuses itself, as the daemon starts it.
@Suite("Daemon: a focus slider at start-up")
struct FocusSliderDaemonTests {
    /// The rig with a `lensPosition` slider (initial 0, the bottom of its range) and `autofocus`.
    private func rig(_ autofocus: AutofocusMode, cameras: FakeCameraModule) throws -> TestRig {
        try TestRig(cameraFactory: cameras.open, edit: { board in
            board.camera.device = "fake"
            board.camera.backend = .libcamera
            board.camera.autofocus = autofocus
            board.controls.append(ControlSpec(id: "focus", label: "Focus", kind: .lensPosition(.range(0...10, step: nil)), initial: .number(0)))
        })
    }

    /// Delivers frames until the requests queued at start and the ones after have been completed.
    private func deliverFrames(_ rig: TestRig, camera: LibcameraCamera) throws {
        for _ in 0...(camera.requestCount + 2) {
            try rig.advance(by: .milliseconds(33))
            camera.deliverFakeFrame(at: rig.chip.clock.now)
            try rig.turn()
        }
    }

    @Test func continuousAutofocusStaysOnWithAFocusSlider() throws {
        let cameras = FakeCameraModule()
        let rig = try rig(.continuous, cameras: cameras)
        defer { rig.close() }
        try rig.waitFor { rig.daemon.capture.service.isStreaming }
        let camera = try #require(cameras.camera)
        try deliverFrames(rig, camera: camera)
        #expect(camera.fakeApplied(.afMode) == 2, "AfModeContinuous, as the board asks")
        #expect(camera.fakeApplied(.lensPosition) == nil, "the slider's initial value does not move the lens")
    }

    @Test func manualFocusTakesTheSlidersInitialValue() throws {
        let cameras = FakeCameraModule()
        let rig = try rig(.manual, cameras: cameras)
        defer { rig.close() }
        try rig.waitFor { rig.daemon.capture.service.isStreaming }
        let camera = try #require(cameras.camera)
        try deliverFrames(rig, camera: camera)
        #expect(camera.fakeApplied(.afMode) == 0)
        #expect(camera.fakeApplied(.lensPosition) == 0, "the bottom of the slider: the lens's 0 dioptres (infinity)")
    }
}
