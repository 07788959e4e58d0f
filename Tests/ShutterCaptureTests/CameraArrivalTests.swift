import Foundation
import Testing
import ShutterCore
@testable import ShutterCapture
import ShutterTestSupport
@testable import ShutterSystem

/// A service whose camera is the file at `node` under a fresh directory: the factory "opens" it
/// (a synthetic camera) once the file exists and counts every attempt. The service runs as the
/// daemon's loop runs it: poll its descriptors, handle them when readable. Real time, real
/// inotify: what is measured is whether the kernel's events, and nothing else, wake it.
private final class NodeRig {
    let root = temporaryDirectory()
    let node: String
    let opens = Locked<Int>(0)
    var cameras: [SyntheticCamera] = []
    var service: CaptureService!

    init(node relative: String) throws {
        node = root + "/" + relative
        let node = self.node, opens = self.opens
        let board = try simulatorBoard(directory: root + "/photos") { camera in
            camera.device = node
            camera.backend = .v4l2
        }
        service = try CaptureService(board: board, factory: { [unowned self] (_: CameraSettings) throws(CaptureError) -> any Camera in
            opens.withLock { $0 += 1 }
            guard FileManager.default.fileExists(atPath: node) else { throw CaptureError.noDevice(requested: node, available: []) }
            let camera = try SyntheticCamera(width: 64, height: 48)
            self.cameras.append(camera)
            return camera
        })
    }

    var openAttempts: Int { opens.withLock { $0 } }

    /// Runs the loop for `span`, or until the service has a camera when `untilReady`; returns how long it ran.
    @discardableResult
    func run(for span: Nanoseconds, untilReady: Bool = false) -> Nanoseconds {
        let start = monotonicNow(), end = start + span
        while monotonicNow() < end, !(untilReady && service.isReady) {
            var fds = service.pollDescriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let left = max(1, Int32((end - monotonicNow()).milliseconds))
            if poll(&fds, nfds_t(fds.count), left) > 0 { service.handleReadable() }
        }
        return monotonicNow() - start
    }

    func make(directory relative: String) throws {
        try FileManager.default.createDirectory(atPath: root + "/" + relative, withIntermediateDirectories: true)
    }

    /// Makes the directories the node goes in.
    func makeNodeDirectory() throws {
        try FileManager.default.createDirectory(atPath: DeviceArrival.parent(of: node), withIntermediateDirectories: true)
    }

    /// Makes the node as udev makes a link: under a temporary name, renamed into place (Foundation's atomic write).
    func makeNode() {
        _ = FileManager.default.createFile(atPath: node, contents: nil)
    }

    deinit {
        service.shutdown()
        try? FileManager.default.removeItem(atPath: root)
    }
}

@Suite(.serialized) struct CameraArrivalTests {
    @Test func aMissingNodeIsLookedForOnlyWhenItAppears() throws {
        let rig = try NodeRig(node: "dev/video0")
        try rig.make(directory: "dev")
        #expect(!rig.service.isReady)
        #expect(rig.openAttempts == 1)
        // Today's retry timer looked again every second: 3 more opens in 2.5 s.
        rig.run(for: .seconds(2.5))
        #expect(rig.openAttempts == 1, "looked for a camera whose directory did not change")
        // Something else in the directory is not the camera.
        _ = FileManager.default.createFile(atPath: rig.root + "/dev/audio0", contents: nil)
        rig.run(for: .milliseconds(300))
        #expect(rig.openAttempts == 1)
        rig.makeNode()
        let waited = rig.run(for: .seconds(2), untilReady: true)
        #expect(rig.service.isReady)
        #expect(waited < .milliseconds(500), "found \(waited.milliseconds) ms after the node appeared")
        #expect(rig.openAttempts == 2)
    }

    /// udev makes `/dev/v4l/by-id` (and `/dev/v4l`) with the first camera's link: the watch starts
    /// at the nearest directory there is and follows them down, whether they come one by one
    /// or together with the link.
    @Test(arguments: [false, true]) func aNodeIsFoundWhenItsDirectoriesAppearLater(together: Bool) throws {
        let rig = try NodeRig(node: "dev/v4l/by-id/usb-Camera-video-index0")
        rig.run(for: .seconds(1.2))
        #expect(rig.openAttempts == 1)
        try rig.make(directory: "dev/v4l/by-id")
        if !together {
            rig.run(for: .milliseconds(300))
            #expect(rig.openAttempts == 1, "a directory on the way is not the camera")
        }
        rig.makeNode()
        let waited = rig.run(for: .seconds(2), untilReady: true)
        #expect(rig.service.isReady)
        #expect(waited < .milliseconds(500), "found \(waited.milliseconds) ms after the node appeared")
    }

    /// Unplugged while streaming, and plugged back. udev removes `/dev/v4l/by-id` with the last
    /// camera's link: the watch there goes, and the one on its nearest ancestor takes over.
    @Test(arguments: [("dev/video0", "dev"), ("dev/v4l/by-id/usb-Camera-video-index0", "dev/v4l")])
    func aLostCameraIsFoundWhenItsNodeComesBack(node: String, removed: String) throws {
        let rig = try NodeRig(node: node)
        try rig.makeNodeDirectory()
        rig.makeNode()
        rig.run(for: .seconds(1), untilReady: true)
        #expect(rig.service.isReady)
        rig.service.settle()
        let camera = try #require(rig.cameras.last)
        camera.failNextRead(with: .deviceVanished(device: rig.node))
        try FileManager.default.removeItem(atPath: rig.node)
        if removed != "dev" { try FileManager.default.removeItem(atPath: rig.root + "/" + removed) }
        camera.emit(at: monotonicNow())
        rig.service.handleReadable()
        #expect(!rig.service.isReady)
        let before = rig.openAttempts
        // The first search after a loss comes on the timer; once it finds no node, only the directory wakes the service.
        rig.run(for: .seconds(2.5))
        #expect(rig.openAttempts == before + 1)
        try rig.makeNodeDirectory()
        rig.makeNode()
        let waited = rig.run(for: .seconds(2), untilReady: true)
        #expect(rig.service.isReady)
        #expect(waited < .milliseconds(500), "found \(waited.milliseconds) ms after the node came back")
        #expect(rig.cameras.count == 2)
    }
}
