import Foundation
import Testing
import ShutterCore
@testable import ShutterCapture

private func control(_ id: UInt32, _ name: String, _ range: ClosedRange<Int32>, kind: CameraControl.Kind = .integer,
                     default value: Int32 = 0) -> CameraControl {
    CameraControl(id: id, name: name, kind: kind, minimum: range.lowerBound, maximum: range.upperBound, step: 1,
                  defaultValue: value, isWritable: true)
}

@Suite("V4L2ControlAdapter")
struct V4L2ControlAdapterTests {
    @Test func aCameraWithoutControlsZoomsDigitallyAndCannotBiasExposure() {
        let adapter = V4L2ControlAdapter(controls: [control(0x0098_0900, "Brightness", 0...255)])
        #expect(adapter.zoom == .digital)
        guard case .unavailable(let reason) = adapter.exposureBias else { Issue.record("expected unavailable"); return }
        #expect(reason.contains("V4L2_CID_AUTO_EXPOSURE_BIAS"))
        #expect(adapter.exposureValue(forEV: 1) == nil)
        #expect(adapter.summary.contains { $0.hasPrefix("exposure bias: disabled") })
    }

    @Test func usesTheCameraZoomAndBiasControls() throws {
        let zoom = control(ControlID.zoomAbsolute, "Zoom, Absolute", 100...500)
        let bias = control(ControlID.autoExposureBias, "Auto Exposure, Bias", -4000...4000)
        let adapter = V4L2ControlAdapter(controls: [zoom, bias])
        #expect(adapter.zoom == .camera(zoom))
        let (chosen, value) = try #require(adapter.exposureValue(forEV: -1.5))
        #expect(chosen == bias && value == -1500)
    }

    @Test func fallsBackToManualExposureScaledByTwoToTheEV() throws {
        var auto = control(ControlID.exposureAuto, "Auto Exposure", 0...3, kind: .menu, default: 3)
        auto.menu = [(1, "Manual Mode"), (3, "Aperture Priority Mode")]
        let absolute = control(ControlID.exposureAbsolute, "Exposure Time, Absolute", 3...2047, default: 250)
        let adapter = V4L2ControlAdapter(controls: [auto, absolute])
        #expect(adapter.exposureBias == .manualExposure(absolute: absolute, auto: auto))
        #expect(try #require(adapter.exposureValue(forEV: 1)).value == 500)
        #expect(try #require(adapter.exposureValue(forEV: -2)).value == 63)  // 62.5, rounded
        #expect(try #require(adapter.exposureValue(forEV: 4)).value == 2047)  // clamped
    }

    @Test func aBoundCustomControlIsReportedAndAMissingOneIsDisabled() throws {
        let harness = try Harness { $0.bindings = ["filter": "Saturation"] }
        let report = harness.service.controlReport()
        #expect(report.map(\.id) == ["zoom", "exposure", "filter"])
        #expect(report[0].enabled && report[0].how.hasPrefix("digital zoom"))
        #expect(report[1].enabled && report[1].how == "camera control 'Auto Exposure, Bias'")
        #expect(!report[2].enabled && report[2].how.contains("no control 'Saturation'"))
    }
}

@Suite("CameraCommands.checkCamera")
struct CheckCameraTests {
    @Test func saysWhichCameraAndHowEachControlIsServed() throws {
        let board = try simulatorBoard(directory: "/tmp/unused")
        let lines = try CameraCommands.checkCamera(board: board)
        #expect(lines == [
            "camera: synthetic (shutter synthetic camera) 64x48 YUYV at 30 fps",
            "ring: 4 frames of 6 KiB (24 KiB; ringFrames 4)",
            "control zoom: digital zoom (centred crop, saved at the frame size)",
            "control exposure: camera control 'Auto Exposure, Bias'",
            "control filter: photo effect per item (none, mono, vivid, warm), applied to the saved photo before encoding",
        ])
    }

    @Test func aMissingCameraIsAnError() throws {
        var board = try simulatorBoard(directory: "/tmp/unused")
        board.camera.device = "/dev/video-shutter-test-none"
        #expect(throws: CaptureError.self) { try CameraCommands.checkCamera(board: board) }
    }
}

@Suite("CameraCommands.ringReport")
struct RingReportTests {
    @Test func saysWhenRingMiBHoldsFewerThanRingFrames() throws {
        let camera = try SyntheticCamera(width: 1920, height: 1080)
        var settings = CameraSettings()
        settings.ringFrames = 8
        settings.ringMiB = 10
        #expect(CameraCommands.ringReport(settings: settings, camera: camera)
            == "ring: 2 frames of 4 MiB (7.9 MiB; ringFrames 8, ringMiB 10): ringMiB holds fewer than ringFrames at this size")
    }
}
