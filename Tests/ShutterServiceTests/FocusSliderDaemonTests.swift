import Foundation
import Testing
import ShutterCapture
import ShutterCore
@testable import ShutterService

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

/// A board with a focus slider on a camera that focuses itself: at start-up, and when gestures give the lens back.
@Suite("Daemon: a focus slider on a camera that focuses itself")
struct FocusSliderDaemonTests {
    /// The rig with a `lensPosition` slider (initial 0, the bottom of its range) and `autofocus`.
    private func rig(_ autofocus: AutofocusMode, ends: ManualFocusEnd = .prepare, cameras: FakeCameraModule) throws -> TestRig {
        try TestRig(cameraFactory: cameras.open, edit: { board in
            board.camera.device = "fake"
            board.camera.backend = .libcamera
            board.camera.autofocus = autofocus
            board.camera.manualFocusEnds = ends
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

    /// The `focusMode` lines published so far.
    private func focusModeLines(_ rig: TestRig) -> [String] {
        rig.lines.filter { $0.name == "focusMode" }.map(\.line)
    }

    /// Lets `milliseconds` pass with a frame every 33 ms (a camera without frames for a second is stalled).
    private func stream(_ rig: TestRig, camera: LibcameraCamera, for milliseconds: Int) throws {
        for _ in 0..<(milliseconds / 33) {
            try rig.advance(by: .milliseconds(33))
            camera.deliverFakeFrame(at: rig.chip.clock.now)
            try rig.turn()
        }
    }

    /// A light press on `half` lasting 99 ms, then 99 ms released.
    private func lightPress(_ rig: TestRig, camera: LibcameraCamera) throws {
        rig.chip.set(rig.line("half"), active: true, at: rig.chip.clock.now)
        try stream(rig, camera: camera, for: 99)
        rig.chip.set(rig.line("half"), active: false, at: rig.chip.clock.now)
        try stream(rig, camera: camera, for: 99)
    }

    @Test func aDoubleLightPressOnTheFocusSliderGivesTheLensBack() throws {
        let cameras = FakeCameraModule()
        let rig = try rig(.continuous, ends: .doubleLightPress, cameras: cameras)
        defer { rig.close() }
        try rig.waitFor { rig.daemon.capture.service.isStreaming }
        let camera = try #require(cameras.camera)
        #expect(rig.daemon.execute(APIRequest(id: nil, command: .set(control: "focus", to: .value(5)))).refusal == nil)
        try deliverFrames(rig, camera: camera)
        #expect(camera.fakeApplied(.afMode) == 0, "the slider took the lens")
        let taken = focusModeLines(rig)
        #expect(taken.count == 1 && taken.first?.contains(#""until": "doubleLightPress""#) == true, "\(taken)")
        // On another control the double light press only opens the chooser.
        #expect(rig.daemon.execute(APIRequest(id: nil, command: .select(control: "zoom"))) == .done)
        try lightPress(rig, camera: camera)
        try lightPress(rig, camera: camera)
        try stream(rig, camera: camera, for: 500)
        #expect(rig.names.contains("doubleLightPress"))
        #expect(focusModeLines(rig).count == 1)
        #expect(rig.daemon.execute(APIRequest(id: nil, command: .select(control: "focus"))) == .done)
        try lightPress(rig, camera: camera)
        try lightPress(rig, camera: camera)
        try stream(rig, camera: camera, for: 500)
        #expect(camera.fakeApplied(.afMode) == 2, "continuous autofocus again")
        #expect(!rig.names.contains("captureFailed"), "\(rig.lines.filter { $0.name == "captureFailed" }.map(\.line))")
        let given = focusModeLines(rig)
        #expect(given.count == 2 && given.last?.contains(#""mode": "continuous""#) == true, "\(given)")
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
