#if canImport(Glibc)
import Glibc
#endif

/// A non-blocking, close-on-exec pipe used as a wake-up: a writer thread writes a byte, the event
/// loop polls the read end and drains it.
final class WakePipe: @unchecked Sendable {
    // Unchecked: the descriptors are immutable after init; `signal` and `drain` are plain syscalls.
    let readEnd: CInt
    let writeEnd: CInt

    /// The corresponding C function is `pipe`.
    init() throws(CaptureError) {
        var fds: [CInt] = [-1, -1]
        try retryingEINTR("pipe", "wake-up pipe") { pipe(&fds) }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        readEnd = fds[0]
        writeEnd = fds[1]
    }

    /// Makes the read end readable. A full pipe already is, so EAGAIN is fine.
    func signal() {
        var byte: UInt8 = 1
        while write(writeEnd, &byte, 1) < 0, errno == EINTR {}
    }

    /// Empties the pipe so that poll stops reporting it.
    func drain() {
        // On the stack: the loop drains on every wake-up, and a heap buffer would be an allocation each time.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 256) { buffer in
            while true {
                let count = read(readEnd, buffer.baseAddress, buffer.count)
                if count > 0 { continue }
                if count < 0, errno == EINTR { continue }
                return
            }
        }
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }
}
