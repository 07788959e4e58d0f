import Foundation
import Testing
@testable import ShutterCore

private func boardWithCamera(_ camera: String, controls: String = "[]") -> String {
    """
    {"name": "test", "chip": "simulator",
     "lines": [{"name": "full", "role": "full"}, {"name": "pad0", "role": "pad"}, {"name": "pad1", "role": "pad"}],
     "controls": \(controls),
     "camera": \(camera)}
    """
}

@Suite("Board camera backend fields")
struct CameraBackendSettingsTests {
    @Test func defaultsAreAutoNoViewfinderAndAFullPDAFCycleOfFocus() throws {
        let board = try Board.decode(Data(boardWithCamera("{}").utf8), file: "rig.json")
        #expect(board.camera.backend == .auto)
        #expect(board.camera.viewfinder == nil)
        #expect(board.camera.focusTimeoutFrames == 30, "imx708's 20 PDAF frames after af.cpp's 5 skipped ones, and a margin")
        #expect(board.camera.focusTimeoutMs == 3000)
        #expect(board.camera.manualFocusEnds == .prepare)
        #expect(board.camera.startTimeoutMs == 10_000)
    }

    @Test func readsTheFocusWaitAndWhatEndsManualFocus() throws {
        let text = boardWithCamera(#"{"focusTimeoutFrames": 40, "manualFocusEnds": "doubleLightPress"}"#)
        let board = try Board.decode(Data(text.utf8), file: "rig.json")
        #expect(board.camera.focusTimeoutFrames == 40)
        #expect(board.camera.manualFocusEnds == .doubleLightPress)
    }

    @Test func readsTheStartTimeout() throws {
        let board = try Board.decode(Data(boardWithCamera(#"{"startTimeoutMs": 3000}"#).utf8), file: "rig.json")
        #expect(board.camera.startTimeoutMs == 3000)
    }

    @Test func readsTheExposureSettleBoundAndTheCMABudget() throws {
        let defaults = try Board.decode(Data(boardWithCamera("{}").utf8), file: "rig.json")
        #expect(defaults.camera.exposureSettleMs == 1500 && defaults.camera.cmaMiB == nil)
        let board = try Board.decode(Data(boardWithCamera(#"{"exposureSettleMs": 0, "cmaMiB": 96}"#).utf8), file: "rig.json")
        #expect(board.camera.exposureSettleMs == 0)
        #expect(board.camera.cmaMiB == 96)
    }

    @Test func readsALibcameraCamera() throws {
        let text = boardWithCamera(#"{"backend": "libcamera", "device": "imx708", "width": 4608, "height": 2592, "viewfinder": {"width": 1536, "height": 864}, "pixelFormat": "YUV420", "focusTimeoutMs": 800}"#,
                                   controls: #"[{"id": "focus", "kind": "lensPosition", "range": [0, 10]}]"#)
        let board = try Board.decode(Data(text.utf8), file: "rig.json")
        #expect(board.camera.backend == .libcamera)
        #expect(board.camera.device == "imx708")
        #expect(board.camera.viewfinder == FrameDimensions(width: 1536, height: 864))
        #expect(board.camera.pixelFormat == "YUV420")
        #expect(board.camera.focusTimeoutMs == 800)
        #expect(board.controls.first?.kind == .lensPosition(.range(0...10, step: nil)))
        #expect(board.controls.first?.initial == .number(0))
    }

    static let refusals: [(String, String, String, String)] = [
        ("unknown backend", boardWithCamera(#"{"backend": "v4l"}"#), "camera.backend", "'libcamera', 'v4l2', 'auto'"),
        ("focus timeout negative", boardWithCamera(#"{"focusTimeoutMs": -1}"#), "camera.focusTimeoutMs", "outside 0...10000"),
        ("focus wait of no frame", boardWithCamera(#"{"focusTimeoutFrames": 0}"#), "camera.focusTimeoutFrames", "outside 1...600"),
        ("unknown end of manual focus", boardWithCamera(#"{"manualFocusEnds": "lightPress"}"#), "camera.manualFocusEnds",
         "'lightPress' is not one of 'prepare', 'doubleLightPress'"),
        ("exposure settle bound too long", boardWithCamera(#"{"exposureSettleMs": 20000}"#), "camera.exposureSettleMs", "outside 0...10000"),
        ("CMA budget too small", boardWithCamera(#"{"cmaMiB": 8}"#), "camera.cmaMiB", "outside 16...4096"),
        ("start timeout too short", boardWithCamera(#"{"startTimeoutMs": 500}"#), "camera.startTimeoutMs", "outside 1000...600000"),
        ("viewfinder without height", boardWithCamera(#"{"viewfinder": {"width": 640}}"#), "camera.viewfinder.height", "missing"),
        ("viewfinder too small", boardWithCamera(#"{"viewfinder": {"width": 8, "height": 8}}"#), "camera.viewfinder.width", "outside 16...16384"),
        ("viewfinder with V4L2", boardWithCamera(#"{"backend": "v4l2", "viewfinder": {"width": 640, "height": 480}}"#), "camera.viewfinder", "libcamera backend"),
        ("viewfinder larger than the still", boardWithCamera(#"{"width": 640, "height": 480, "viewfinder": {"width": 1280, "height": 720}}"#), "camera.viewfinder", "larger than the still size"),
        ("libcamera name with V4L2", boardWithCamera(#"{"backend": "v4l2", "pixelFormat": "YUV420"}"#), "camera.pixelFormat", "four-character code"),
        ("unknown libcamera format", boardWithCamera(#"{"backend": "libcamera", "pixelFormat": "RGB565X"}"#), "camera.pixelFormat", "nor a libcamera format"),
    ]

    @Test("a bad camera field is refused naming the field", arguments: refusals)
    func refusal(what: String, text: String, path: String, words: String) {
        do {
            _ = try Board.decode(Data(text.utf8), file: "rig.json")
            Issue.record("\(what): accepted")
        } catch {
            #expect(error.path == path, "\(what): \(error)")
            #expect(error.description.contains(words), "\(what): \(error)")
        }
    }
}
