#if canImport(Glibc)
import Glibc
#endif
import CV4L2
import Testing
import ShutterCore
@testable import ShutterCapture

@Suite("V4L2Device")
struct V4L2DeviceTests {
    /// A node that opens and answers `VIDIOC_QUERYCAP` but only outputs video (as a vivid output
    /// or a metadata node does) is refused, and its descriptor is closed exactly once: a second
    /// close would close whatever file another thread opened under the same number meanwhile.
    @Test func nonCaptureNodeIsClosedOnce() throws {
        let closes = Locked<[CInt]>([])
        let calls = V4L2DeviceCalls(
            queryCapability: { _, _ in
                var capability = v4l2_capability()
                capability.capabilities = CV4L2_CAP_VIDEO_OUTPUT | CV4L2_CAP_STREAMING
                return capability
            },
            close: { fd in
                let first = closes.withLock { list in
                    list.append(fd)
                    return list.count == 1
                }
                if first {
                    // The number is freed and at once reused by "another thread's" file: dup2
                    // closes `fd` and opens /dev/null under the same number in one step.
                    let other = open("/dev/null", O_RDONLY | O_CLOEXEC)
                    _ = dup2(other, fd)
                    _ = close(other)
                } else {
                    _ = close(fd)
                }
            })
        do {
            _ = try V4L2Device(path: "/dev/null", calls: calls)
            Issue.record("a node without video capture was accepted")
        } catch {
            guard case .notACaptureDevice(let device, _) = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(device == "/dev/null")
        }
        let closed = closes.withLock { $0 }
        let reused = closed.first ?? -1
        #expect(closed.count == 1, "descriptor closed \(closed.count) times: \(closed)")
        // The other file under the reused number is still open.
        #expect(reused >= 0 && fcntl(reused, F_GETFD) != -1, "another file's descriptor was closed by the failed open")
        if reused >= 0 { _ = close(reused) }
    }
}
