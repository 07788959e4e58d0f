import Foundation
import Testing
import ShutterCore
@testable import ShutterCapture

private func ms(_ value: Double) -> Instant { Instant(rawValue: Int64(value * 1_000_000)) }

/// Whether `fds` has a readable descriptor now (poll without waiting).
private func anyReadable(_ fds: [CInt]) -> Bool {
    var entries = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
    return poll(&entries, nfds_t(entries.count), 0) > 0
}

/// The camera manager behind the libcamera backend, on the fake libcamera system: which thread
/// runs it, how many there are while the camera is missing, and hot-plug. One suite, serialized:
/// the fake system stands in for libcamera in the whole process.
@Suite("libcamera's camera manager", .serialized)
struct LibcameraManagerTests {
    /// A service on the board's first libcamera camera, opened through the real open path
    /// (`CaptureService.openCamera`: list, choose, open), with none plugged in yet.
    private static func service(directory: String) throws -> CaptureService {
        let board = try simulatorBoard(directory: directory) {
            $0.backend = .libcamera
            $0.device = "libcamera"
        }
        return try CaptureService(board: board, clock: VirtualClock(start: ms(1000)))
    }

    @Test func oneManagerOnOneThreadWhileTheCameraIsMissingAndItIsTakenAsItAppears() throws {
        let system = try FakeLibcameraSystem()
        defer { withExtendedLifetime(system) {} }  // removed last, once every camera is closed
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let service = try Self.service(directory: directory)  // the first open, on this thread: no camera
        defer { service.shutdown() }
        #expect(!service.isReady)
        for _ in 0..<5 {  // retries while the camera is missing, each on the lifecycle queue
            service.retryCameraNow()
            service.settle()
        }
        #expect(!service.isReady)
        #expect(system.stats.managersCreated == 1, "one camera manager for every retry")
        #expect(system.stats.managerThreads == 1, "every manager call on one thread")
        // The camera appears: its cameraAdded wakes the service at once, not at the next retry.
        _ = service.handleReadable()
        system.plug("fake/hot-plugged")
        #expect(anyReadable(service.pollDescriptors), "the hot-plug wakes the loop")
        service.settle()
        #expect(service.isReady)
        #expect(service.currentCamera?.info.path == "fake/hot-plugged")
        let stats = system.stats
        #expect(stats.managersCreated == 1)
        #expect(stats.managerThreads == 1)
        #expect(stats.camerasAdded == 1)
    }

    /// Plugs in camera `id` and opens it; unplugs it (`noticed` by libcamera or not) and closes
    /// it; runs `whileGone`; then plugs it in and opens (and closes) it again.
    private static func unplugAndReplug(_ system: FakeLibcameraSystem, _ id: String, noticed: Bool,
                                        whileGone: (CameraSettings) -> Void = { _ in }) throws {
        system.plug(id)
        var settings = CameraSettings()
        settings.backend = .libcamera
        settings.device = id
        let camera = try LibcameraCamera(settings: settings)
        system.unplug(id, noticed: noticed)
        camera.close()
        whileGone(settings)
        system.plug(id)
        try LibcameraCamera(settings: settings).close()
    }

    @Test func aCameraGoneUnnoticedGetsOneFreshManagerOnceClosedAndComesBackWithoutADuplicate() throws {
        let system = try FakeLibcameraSystem()
        defer { withExtendedLifetime(system) {} }  // removed last, once every camera is closed
        // Unbound as vimc is: libcamera keeps listing the camera (no cameraRemoved).
        try Self.unplugAndReplug(system, "fake/vimc", noticed: false) { settings in
            #expect(system.stats.managersCreated == 2, "the manager that kept the stale camera is replaced once")
            for _ in 0..<3 { #expect(throws: CaptureError.self) { try LibcameraCamera(settings: settings) } }
        }
        // Bound again: registered by the fresh manager, no duplicate id (libcamera would abort).
        let stats = system.stats
        #expect(stats.duplicateIDs == 0)
        #expect(stats.managersCreated == 2)
        #expect(stats.managerThreads == 1)
    }

    @Test func aCameraWhoseRemovalLibcameraSawKeepsTheManager() throws {
        let system = try FakeLibcameraSystem()
        defer { withExtendedLifetime(system) {} }  // removed last, once every camera is closed
        try Self.unplugAndReplug(system, "fake/usb", noticed: true)  // as a USB camera's: cameraRemoved
        let stats = system.stats
        #expect(stats.managersCreated == 1)
        #expect(stats.duplicateIDs == 0)
        #expect(stats.camerasAdded == 2)
    }
}
