#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import ShutterCapture

/// The descriptor a V4L2 camera gives the event loop in its device's place: readable when the
/// device is, as the device's own would be. A pipe stands in for the device (a driver's poll
/// cannot be watched from user space; the VM's vivid and UVC tests stream through it).
@Suite("DriverReadiness")
struct DriverReadinessTests {
    @Test func readableExactlyWhileTheDeviceIsAfterItSignalled() throws {
        var ends: [CInt] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { ends.forEach { _ = close($0) } }
        let readiness = try DriverReadiness(watching: ends[0], path: "pipe")
        #expect(!isReadable(readiness.descriptor))
        var byte: UInt8 = 7
        #expect(write(ends[1], &byte, 1) == 1)
        #expect(isReadable(readiness.descriptor))
        #expect(isReadable(readiness.descriptor), "level-triggered: still readable until read")
        #expect(read(ends[0], &byte, 1) == 1)
        #expect(!isReadable(readiness.descriptor), "the frames read, the device is idle again")
        #expect(write(ends[1], &byte, 1) == 1)
        #expect(isReadable(readiness.descriptor), "the next frame")
    }

    /// A device that vanishes or fails (vb2 answers `EPOLLERR`, a USB camera unplugged `EPOLLHUP`)
    /// wakes the loop too, which then learns why from `VIDIOC_DQBUF`.
    @Test func aHangUpWakesTheLoop() throws {
        var ends: [CInt] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { _ = close(ends[0]) }
        let readiness = try DriverReadiness(watching: ends[0], path: "pipe")
        #expect(!isReadable(readiness.descriptor))
        _ = close(ends[1])
        #expect(isReadable(readiness.descriptor))
    }

    /// A descriptor epoll cannot watch (a regular file) is refused with the call, errno and path.
    @Test func aDescriptorEpollCannotWatchIsRefused() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("readiness-\(getpid())").path
        let file = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        #expect(file >= 0)
        defer {
            _ = close(file)
            unlink(path)
        }
        #expect(throws: CaptureError.system(call: "epoll_ctl", errno: EPERM, context: path)) {
            _ = try DriverReadiness(watching: file, path: path)
        }
    }
}
