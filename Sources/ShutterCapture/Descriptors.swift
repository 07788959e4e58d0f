#if canImport(Glibc)
import Glibc
#endif
import CShutterSystem
import ShutterSystem

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
