import Foundation
import Testing
import ShutterCapture
import ShutterCore
@testable import ShutterDaemon

@Suite struct DaemonTests {
    @Test func fullClickOnTheMockChipTakesAPhoto() throws {
        let rig = try TestRig()
        defer { rig.close() }
        try rig.click()
        try rig.waitFor { rig.names.contains("photo") }
        #expect(rig.names.filter { $0 != "cameraReady" } == ["capture", "capture", "photo"])
        #expect(rig.daemon.counters.photos == 1)
        #expect(rig.daemon.counters.presses == 1)
        let path = try #require(rig.daemon.lastPhotoPath)
        #expect(FileManager.default.fileExists(atPath: path))
    }
}
