import Foundation
import Testing
import ShutterCapture
import ShutterCore
@testable import ShutterNode
@testable import ShutterService

@Suite("The daemon's preview feed")
struct DaemonPreviewTests {
    /// A rig whose board file `reload` reads again, with a `preview` section.
    func rig() throws -> (TestRig, String) {
        var options = NodeOptions()
        let file = "/tmp/sdt-board-\(UUID().uuidString.prefix(8)).json"
        options.boardPath = file
        let rig = try TestRig(options: options)
        let text = TestRig.simulatorBoard.replacingOccurrences(of: "PHOTOS", with: rig.directory + "/photos")
            .replacingOccurrences(of: "\"name\": \"test\",", with: "\"name\": \"test\", \"preview\": {\"width\": 160, \"fps\": 30},")
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return (rig, file)
    }

    @Test func viewersKeepWatchingAcrossAReloadThatReplacesTheCamera() throws {
        let (rig, file) = try rig()
        defer { rig.close(); try? FileManager.default.removeItem(atPath: file) }
        let feed = rig.daemon.preview
        #expect(!feed.isWatched)
        feed.startWatching()
        try rig.waitFor { feed.latest() != nil }
        let first = try #require(feed.latest())
        // The board the rig started with has no preview section: the default 640, no wider than the 320x240 frame.
        #expect(first.width == 320 && first.height == 240)

        // The preview section alone changes: the same service makes previews at the new width.
        let service = ObjectIdentifier(rig.daemon.capture.service)
        rig.daemon.reload()
        #expect(ObjectIdentifier(rig.daemon.capture.service) == service)
        try rig.waitFor { (feed.latest()?.width ?? 0) == 160 }

        // The camera changes: a new service, the same feed, its viewer still counted.
        let text = try String(contentsOfFile: file, encoding: .utf8)
        try text.replacingOccurrences(of: "\"quality\": 80", with: "\"quality\": 70").write(toFile: file, atomically: true, encoding: .utf8)
        rig.daemon.reload()
        #expect(ObjectIdentifier(rig.daemon.capture.service) != service)
        #expect(rig.daemon.preview === feed)
        #expect(feed.watcherCount == 1)
        let before = try #require(feed.latest()).number
        try rig.waitFor { (feed.latest()?.number ?? 0) > before + 2 }
        #expect(feed.latest()?.width == 160)
        // And a photo is still taken while watched.
        try rig.click()
        try rig.waitFor { rig.names.contains("photo") }
        feed.stopWatching()
    }
}
