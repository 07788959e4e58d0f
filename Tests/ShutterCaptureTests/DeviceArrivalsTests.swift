import Foundation
import Testing
import ShutterCore
@testable import ShutterCapture

@Suite struct DeviceArrivalTests {
    private static func settings(_ device: String?, _ backend: CameraBackend) -> CameraSettings {
        var settings = CameraSettings()
        settings.device = device
        settings.backend = backend
        return settings
    }

    @Test(arguments: [
        ("/dev/video0", CameraBackend.v4l2, DeviceArrival?.some(.node(path: "/dev/video0"))),
        ("/dev/video0", .auto, .node(path: "/dev/video0")),
        ("/dev/v4l/by-id/usb-X-video-index0", .auto, .node(path: "/dev/v4l/by-id/usb-X-video-index0")),
        ("//dev//video0", .v4l2, .node(path: "/dev/video0")),
        ("/dev/v4l/../video0", .v4l2, nil),
        (nil, .v4l2, .videoNodes),
        (nil, .auto, .videoNodes),
        ("HD Pro Webcam C920", .auto, .videoNodes),
        (nil, .libcamera, nil),
        ("/base/soc/i2c0mux/i2c@1/imx708@1a", .libcamera, nil),
        ("synthetic", .auto, nil),
    ] as [(String?, CameraBackend, DeviceArrival?)])
    func whatIsWatched(device: String?, backend: CameraBackend, expected: DeviceArrival?) {
        #expect(DeviceArrival(settings: Self.settings(device, backend)) == expected)
    }

    @Test func theNearestExistingDirectoryIsWatched() {
        let byID = DeviceArrival.node(path: "/dev/v4l/by-id/usb-X-video-index0")
        #expect(byID.directoryToWatch(exists: { _ in true }) == "/dev/v4l/by-id")
        #expect(byID.directoryToWatch(exists: { $0 == "/dev" }) == "/dev")
        #expect(byID.directoryToWatch(exists: { ["/dev", "/dev/v4l"].contains($0) }) == "/dev/v4l")
        #expect(byID.directoryToWatch(exists: { _ in false }) == "/")
        #expect(DeviceArrival.node(path: "/video0").directoryToWatch(exists: { _ in true }) == "/")
        #expect(DeviceArrival.videoNodes.directoryToWatch(exists: { _ in true }) == "/dev")
    }

    private static func event(_ name: String, _ events: InotifyEvents = .created) -> InotifyEvent {
        InotifyEvent(watch: InotifyWatch(rawValue: 1), events: events, name: name)
    }

    @Test(arguments: [
        ("/dev/v4l/by-id", event("usb-X-video-index0"), DeviceArrival.Relevance.search),
        ("/dev/v4l/by-id", event("usb-X-video-index0", .movedIn), .search),
        ("/dev/v4l/by-id", event("usb-X-video-index0", .attributesChanged), .search),
        ("/dev/v4l/by-id", event("usb-Y-video-index0"), .none),
        ("/dev/v4l/by-id", event(""), .none),
        ("/dev/v4l/by-id", event("", [.removedSelf]), .rewatch),
        ("/dev/v4l/by-id", event("", [.ignored]), .rewatch),
        ("/dev", event("v4l"), .rewatch),
        ("/dev", event("video0"), .none),
        ("/dev/v4l", event("by-id"), .rewatch),
        ("/dev/v4l", event("by-path"), .none),
        ("/dev/v4l", event("by-id2"), .none),
        ("/", event("dev"), .rewatch),
        ("/dev", event("", .overflow), .search),
    ])
    func whatAnEventMeansForANode(directory: String, event: InotifyEvent, expected: DeviceArrival.Relevance) {
        #expect(DeviceArrival.node(path: "/dev/v4l/by-id/usb-X-video-index0").relevance(of: event, in: directory) == expected)
    }

    @Test(arguments: [
        ("video0", DeviceArrival.Relevance.search),
        ("video12", .search),
        ("videox", .none),
        ("v4l", .none),
        ("media0", .none),
    ])
    func whatAnEventMeansForTheFirstCamera(name: String, expected: DeviceArrival.Relevance) {
        #expect(DeviceArrival.videoNodes.relevance(of: Self.event(name), in: "/dev") == expected)
        #expect(DeviceArrival.videoNodes.relevance(of: Self.event(name, .attributesChanged), in: "/dev") == expected)
    }

    @Test func aRealDirectoryReportsTheNodeItsWatchWaitsFor() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let inotify = try Inotify()
        let watch = try inotify.addWatch(directory, for: [.created, .movedIn, .attributesChanged])
        close(open(directory + "/video0", O_CREAT | O_WRONLY | O_CLOEXEC, 0o600))
        var events: [InotifyEvent] = []
        try inotify.readEvents { events.append($0) }
        #expect(events.first == InotifyEvent(watch: watch, events: .created, name: "video0"))
        #expect(throws: CaptureError.self) { try inotify.addWatch(directory + "/absent", for: .created) }
    }
}
