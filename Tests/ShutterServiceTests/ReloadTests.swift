import Foundation
import Testing
import ShutterCapture
import ShutterCore
@testable import ShutterNode
@testable import ShutterService
import ShutterTestSupport

/// The cameras a test's daemon opens: the first at once, every later one only when the test lets
/// it (or after 5 s), as a USB webcam's enumeration and open can take seconds.
final class GatedCameras: @unchecked Sendable {
    // Unchecked: the factory runs on a capture service's lifecycle queue; every field is under `lock`.
    private let lock = NSLock()
    private let gate = DispatchSemaphore(value: 0)
    private var _opensFinished = 0
    private var _live = 0
    private var _liveAtLastOpen = 0
    /// Later cameras have no controls (a camera that cannot serve the exposure bias).
    let laterCamerasHaveNoControls: Bool

    init(laterCamerasHaveNoControls: Bool = false) { self.laterCamerasHaveNoControls = laterCamerasHaveNoControls }

    var opensFinished: Int { lock.withLock { _opensFinished } }
    /// How many cameras were open, not yet closed, when the last one was opened.
    var liveAtLastOpen: Int { lock.withLock { _liveAtLastOpen } }

    /// Lets the opens held back go on.
    func release() { gate.signal() }

    func open(_ settings: CameraSettings) throws(CaptureError) -> any Camera {
        let first = lock.withLock { _opensFinished == 0 }
        if !first { _ = gate.wait(timeout: .now() + 5) }
        let camera = TrackedCamera(try SyntheticCamera(width: 320, height: 240), hidesControls: !first && laterCamerasHaveNoControls) { [self] in
            lock.withLock { _live -= 1 }
        }
        lock.withLock {
            _liveAtLastOpen = _live
            _live += 1
            _opensFinished += 1
        }
        return camera
    }
}

/// A synthetic camera that says when it is closed, and may hide its controls.
final class TrackedCamera: ForwardingCamera, @unchecked Sendable {
    let hidesControls: Bool
    private var onClose: (() -> Void)?

    init(_ inner: SyntheticCamera, hidesControls: Bool, onClose: @escaping () -> Void) {
        self.hidesControls = hidesControls
        self.onClose = onClose
        super.init(inner)
    }

    override var controls: [CameraControl] { hidesControls ? [] : inner.controls }

    override func close() {
        inner.close()
        onClose?()
        onClose = nil
    }
}

@Suite(.serialized) struct ReloadTests {
    /// A rig whose board is read from a file, so SIGHUP's reload has something to read.
    func rig(cameraFactory: CameraFactory? = nil) throws -> (TestRig, String) {
        var options = NodeOptions()
        let file = "/tmp/sdt-board-\(UUID().uuidString.prefix(8)).json"
        options.boardPath = file
        let rig = try TestRig(options: options, cameraFactory: cameraFactory)
        try write(TestRig.simulatorBoard.replacingOccurrences(of: "PHOTOS", with: rig.directory + "/photos"), to: file)
        return (rig, file)
    }

    func write(_ text: String, to file: String) throws {
        try text.write(toFile: file, atomically: true, encoding: .utf8)
    }

    @Test func aValidBoardAppliesAndControlsKeepTheirValues() throws {
        let (rig, file) = try rig()
        defer { rig.close(); try? FileManager.default.removeItem(atPath: file) }
        _ = rig.daemon.execute(APIRequest(id: nil, command: .set(control: "zoom", to: .value(3))))
        let service = ObjectIdentifier(rig.daemon.capture.service)
        let text = try String(contentsOfFile: file, encoding: .utf8)
        // A gesture timing and a control's label change; the camera and the lines do not.
        try write(text.replacingOccurrences(of: "\"tapMaxMs\": 180", with: "\"tapMaxMs\": 150")
                      .replacingOccurrences(of: "\"label\": \"Zoom\"", with: "\"label\": \"Magnify\""), to: file)
        rig.daemon.reload()
        #expect(rig.daemon.board.gestures.tapMaximum == .milliseconds(150))
        #expect(rig.daemon.board.controls[0].label == "Magnify")
        #expect(rig.daemon.interpreter.machine.controlValues["zoom"] == .number(3))
        // Same camera settings: the camera was not reopened.
        #expect(ObjectIdentifier(rig.daemon.capture.service) == service)
        try rig.click()
        try rig.waitFor { rig.names.contains("photo") }
    }

    @Test func changedCameraSettingsReopenTheCamera() throws {
        let (rig, file) = try rig()
        defer { rig.close(); try? FileManager.default.removeItem(atPath: file) }
        let service = ObjectIdentifier(rig.daemon.capture.service)
        let text = try String(contentsOfFile: file, encoding: .utf8)
        try write(text.replacingOccurrences(of: "\"quality\": 80", with: "\"quality\": 70"), to: file)
        rig.daemon.reload()
        #expect(rig.daemon.board.camera.quality == 70)
        #expect(ObjectIdentifier(rig.daemon.capture.service) != service)
        try rig.waitFor { rig.daemon.capture.service.isReady }
        try rig.click()
        try rig.waitFor { rig.names.contains("photo") }
    }

    @Test func aCameraChangeOpensTheNewCameraOffTheLoopAfterTheOldOneCloses() throws {
        let cameras = GatedCameras()
        let (rig, file) = try rig(cameraFactory: cameras.open)
        defer { rig.close(); try? FileManager.default.removeItem(atPath: file) }
        try rig.waitFor { rig.names.contains("cameraReady") }
        let text = try String(contentsOfFile: file, encoding: .utf8)
        try write(text.replacingOccurrences(of: "\"quality\": 80", with: "\"quality\": 70"), to: file)
        rig.daemon.reload()
        // The reload is back while the new camera's open is still held: it did not wait for it.
        #expect(cameras.opensFinished == 1)
        #expect(rig.daemon.board.camera.quality == 70)
        #expect(!rig.daemon.capture.service.isReady)
        #expect(rig.daemon.cameraState.name == "opening")
        // The loop goes on meanwhile: a press is seen, and cancelled as the camera is not ready.
        try rig.click()
        #expect(rig.lines.contains { $0.name == "capture" && $0.line.contains("cancelled") })
        cameras.release()
        try rig.waitFor { rig.daemon.capture.service.isReady }
        #expect(cameras.opensFinished == 2)
        #expect(cameras.liveAtLastOpen == 0)  // the old camera had closed first
        #expect(rig.daemon.cameraState.name != "opening")
        try rig.click()
        try rig.waitFor { rig.names.contains("photo") }
    }

    @Test func aControlTheNewCameraCannotServeIsDisabledOnceItHasOpened() throws {
        let cameras = GatedCameras(laterCamerasHaveNoControls: true)
        let (rig, file) = try rig(cameraFactory: cameras.open)
        defer { rig.close(); try? FileManager.default.removeItem(atPath: file) }
        let exposure = { rig.daemon.board.controls.first { $0.id == "exposure" }?.enabled }
        #expect(exposure() == true)  // the synthetic camera has an exposure bias control
        let text = try String(contentsOfFile: file, encoding: .utf8)
        try write(text.replacingOccurrences(of: "\"quality\": 80", with: "\"quality\": 70"), to: file)
        _ = rig.daemon.execute(APIRequest(id: nil, command: .set(control: "zoom", to: .value(3))))
        rig.daemon.reload()
        cameras.release()
        try rig.waitFor { rig.daemon.capture.service.isReady }
        #expect(exposure() == false)
        // Said as `disable` would say it: status never changes unannounced.
        #expect(rig.lines.contains { $0.name == "controlEnabled" && $0.line.contains("\"control\": \"exposure\", \"enabled\": false") })
        #expect(rig.daemon.interpreter.machine.controlValues["zoom"] == .number(3))
    }

    @Test(arguments: ["{ not json", "{\"name\": \"x\"}", ""])
    func anInvalidBoardIsRefusedAndTheOldOneKeepsRunning(broken: String) throws {
        let (rig, file) = try rig()
        defer { rig.close(); try? FileManager.default.removeItem(atPath: file) }
        try write(broken, to: file)
        rig.daemon.reload()
        #expect(rig.daemon.board.name == "test")
        try rig.click()
        try rig.waitFor { rig.names.contains("photo") }
    }

    /// `{"cmd":"reload"}` (what `shutter reload`, the unit's ExecReload, sends) answers with the
    /// outcome: the board's name when it applied, the board's error when it was refused, so
    /// `systemctl reload` can fail on a bad edit instead of reporting success.
    @Test func theReloadCommandRepliesWithTheOutcome() throws {
        let (rig, file) = try rig()
        defer { rig.close(); try? FileManager.default.removeItem(atPath: file) }
        let good = try String(contentsOfFile: file, encoding: .utf8)
        try write(good.replacingOccurrences(of: "\"name\": \"test\"", with: "\"name\": \"test-2\""), to: file)
        let applied = rig.daemon.execute(APIRequest(id: .number(1, text: "1"), command: .reload))
        #expect(applied == .reloaded(file: file, board: "test-2"), "\(applied)")
        #expect(rig.daemon.board.name == "test-2")
        try write("{\"name\": \"x\"}", to: file)
        let refused = try #require(rig.daemon.execute(APIRequest(id: nil, command: .reload)).refusal)
        #expect(refused.kind == .invalidBoard && refused.message.contains(file), "\(refused)")
        #expect(rig.daemon.board.name == "test-2")
    }

    @Test func theReloadCommandWithoutABoardFileIsRefused() throws {
        let rig = try TestRig()
        defer { rig.close() }
        let refusal = try #require(rig.daemon.execute(APIRequest(id: nil, command: .reload)).refusal)
        #expect(refusal.kind == .unavailable && refusal.message.contains("no board file"), "\(refusal)")
    }
}
