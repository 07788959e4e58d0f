import Foundation
import Testing
import ShutterCore
@testable import ShutterDaemon

@Suite(.serialized) struct ReloadTests {
    /// A rig whose board is read from a file, so SIGHUP's reload has something to read.
    func rig() throws -> (TestRig, String) {
        var options = DaemonOptions()
        let file = "/tmp/sdt-board-\(UUID().uuidString.prefix(8)).json"
        options.boardPath = file
        let rig = try TestRig(options: options)
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
        rig.click()
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
        rig.click()
        try rig.waitFor { rig.names.contains("photo") }
    }

    @Test(arguments: ["{ not json", "{\"name\": \"x\"}", ""])
    func anInvalidBoardIsRefusedAndTheOldOneKeepsRunning(broken: String) throws {
        let (rig, file) = try rig()
        defer { rig.close(); try? FileManager.default.removeItem(atPath: file) }
        try write(broken, to: file)
        rig.daemon.reload()
        #expect(rig.daemon.board.name == "test")
        rig.click()
        try rig.waitFor { rig.names.contains("photo") }
    }
}
