import Foundation
import Testing
@testable import ShutterCapture
import ShutterCore
@testable import ShutterService
import ShutterTestSupport
@testable import ShutterSystem

/// A webcam at `/dev/video7`, as V4L2 would open it: the synthetic camera under a V4L2 name.
private final class WebcamStandIn: ForwardingCamera, @unchecked Sendable {
    override var info: CameraInfo { CameraInfo(path: "/dev/video7", card: "Webcam", driver: "uvcvideo", bus: "usb-1") }
}

/// `shutter run` warns when the camera it opened is V4L2's because the libcamera backend
/// (`libshutter-libcamera.so`) could not be loaded: `shutter check` says so in its reason, and
/// the daemon used to say nothing. This machine has no V4L2 device, so the service is given the
/// choice ``CaptureService/chooseCamera(_:)`` makes then, and a stand-in for the webcam it opens.
@Suite(.serialized) struct LibcameraFallbackTests {
    static let unavailable = "/nonexistent/libshutter-libcamera.so: cannot open shared object file: No such file or directory"

    /// Two failed opens (the device busy: the retries that run every second), then a camera;
    /// then the camera is lost and opened again. One warning for each camera opened, none for the
    /// failures.
    @Test func aV4L2FallbackIsWarnedOfOncePerOpenNotPerRetry() throws {
        let warnings = Locked<[String]>([])
        Console.divertErrors { line in
            // Other suites run meanwhile: only this warning counts.
            if line.contains(Self.unavailable) { warnings.withLock { $0.append(line) } }
        }
        defer { Console.divertErrors(nil) }
        let attempts = Locked<Int>(0)
        let choice = CameraChoice(.v4l2("/dev/video7"), reason: "the first V4L2 capture device, /dev/video7",
                                  libcameraUnavailable: Self.unavailable)
        let opens = { (_: CameraSettings) throws(CaptureError) -> (camera: any Camera, choice: CameraChoice?) in
            let attempt = attempts.withLock { count in
                count += 1
                return count
            }
            if attempt <= 2 { throw CaptureError.deviceBusy(device: "/dev/video7") }
            return (WebcamStandIn(try SyntheticCamera(width: 64, height: 48)), choice)
        }
        let rig = try TestRig(captureService: { board, clock in try CaptureService(board: board, opens: opens, clock: clock) })
        defer { rig.close() }
        let service = rig.daemon.capture.service

        try rig.waitFor { rig.names.contains("captureFailed") }
        service.retryCameraNow()
        try rig.waitFor { attempts.withLock { $0 } >= 2 && !service.isOpeningCamera }
        #expect(warnings.withLock { $0 }.isEmpty, "warned before a camera was open: \(warnings.withLock { $0 })")
        service.retryCameraNow()
        try rig.waitFor { rig.names.contains("cameraReady") }
        for _ in 0..<5 { try rig.turn() }
        var said = warnings.withLock { $0 }
        #expect(said.count == 1, "\(said)")
        #expect(said.first?.contains("shutter: camera /dev/video7 opened through V4L2: libcamera was not asked") == true, "\(said)")

        // Lost while streaming, and opened again: warned again, for the camera opened anew.
        let camera = try #require(service.currentCamera as? WebcamStandIn)
        try rig.waitFor { service.isStreaming }
        camera.inner.failNextRead(with: .deviceVanished(device: "/dev/video7"))
        try rig.waitFor { !service.isReady }
        service.retryCameraNow()
        try rig.waitFor { rig.names.filter { $0 == "cameraReady" }.count == 2 }
        said = warnings.withLock { $0 }
        #expect(said.count == 2, "\(said)")
        #expect(attempts.withLock { $0 } == 4)
    }

    /// A camera the board named outright, or libcamera's: nothing to warn of.
    @Test func aCameraChosenWithLibcameraAskedIsNotWarnedOf() throws {
        let warnings = Locked<[String]>([])
        Console.divertErrors { line in
            if line.contains("libcamera was not asked") { warnings.withLock { $0.append(line) } }
        }
        defer { Console.divertErrors(nil) }
        let opens = { (_: CameraSettings) throws(CaptureError) -> (camera: any Camera, choice: CameraChoice?) in
            (WebcamStandIn(try SyntheticCamera(width: 64, height: 48)), CameraChoice(.v4l2("/dev/video7")))
        }
        let rig = try TestRig(captureService: { board, clock in try CaptureService(board: board, opens: opens, clock: clock) })
        defer { rig.close() }
        try rig.waitFor { rig.names.contains("cameraReady") }
        #expect(warnings.withLock { $0 }.isEmpty)
    }
}
