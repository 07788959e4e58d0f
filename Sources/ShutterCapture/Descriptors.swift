#if canImport(Glibc)
import Glibc
#endif
import CShutterSystem
import ShutterSystem

/// A non-blocking, close-on-exec pipe used as a wake-up: a writer thread writes a byte, the event
/// loop polls the read end and drains it.
final class WakePipe: @unchecked Sendable {
    // Unchecked: the descriptors are immutable after init; `signal` and `drain` are plain syscalls.
    let readEnd: CInt
    let writeEnd: CInt

    /// The corresponding C function is `pipe`.
    init() throws(CaptureError) {
        var fds: [CInt] = [-1, -1]
        try nothingOrErrno { pipe(&fds) }.mapError { CaptureError.system("pipe", $0, "wake-up pipe") }.get()
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
        _ = valueOrErrno { write(writeEnd, &byte, 1) }
    }

    /// Empties the pipe so that poll stops reporting it.
    func drain() {
        // On the stack: the loop drains on every wake-up, and a heap buffer would be an allocation each time.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 256) { buffer in
            while case .success(let count) = valueOrErrno({ read(readEnd, buffer.baseAddress, buffer.count) }), count > 0 {}
        }
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }
}

/// A descriptor that is readable when a device's is, and whose poll leaves the device's driver
/// alone until the driver has signalled: an epoll instance watching the device alone.
///
/// The event loop polls every descriptor it watches each time it wakes, and a V4L2 driver's poll
/// takes its queue's lock (`vb2_fop_poll`, videobuf2-v4l2.c), which a driver may hold while it
/// makes a frame (vivid: `dev->mutex` around each frame's fill, vivid-kthread-cap.c): a loop
/// woken by a press's edge waited up to milliseconds there before it read the edge. Polling this
/// instead asks the device only after its driver woke it (a buffer done, an error), and once more
/// after the frames are read, when the device is found idle and leaves the ready list
/// (fs/eventpoll.c, `ep_eventpoll_poll`).
final class DriverReadiness {
    /// Poll this for input in the device's place.
    let descriptor: CInt

    /// Watches `device` (which must stay open as long as this).
    /// The corresponding C functions are `epoll_create1` and `epoll_ctl`.
    init(watching device: CInt, path: String) throws(CaptureError) {
        let instance = CShutterSystem_epollWatching(device)
        guard instance >= 0 else { throw CaptureError.system(call: "epoll_ctl", errno: errno, context: path) }
        descriptor = instance
    }

    deinit { close(descriptor) }
}
