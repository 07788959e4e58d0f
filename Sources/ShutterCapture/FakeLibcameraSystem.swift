#if canImport(Glibc)
import Glibc
#endif
import CLibcameraLoader
import ShutterCore

/// A fake libcamera system for tests, in place of libcamera's own cameras while it lives: the
/// cameras ``LibcameraCamera/init(settings:)`` and ``libcameraCameras()`` find are the ones
/// plugged in here, behind a fake camera manager that behaves as libcamera's does for hot-plug
/// and counts what a test checks of the managers. One at a time in a process.
///
/// The corresponding C functions are `shutter_lc_fake_system_install` and `shutter_lc_fake_system_remove`.
public final class FakeLibcameraSystem {
    /// What the fake system saw of camera managers since it was installed.
    public struct Stats: Hashable, Sendable {
        /// Camera managers made.
        public var managersCreated: Int
        /// Distinct threads that ran camera manager calls (create, start, list, get, acquire, release, stop, destroy).
        public var managerThreads: Int
        /// Cameras a manager was asked to register twice (libcamera aborts the process on it).
        public var duplicateIDs: Int
        /// Cameras registered, at a manager's start or hot-plugged.
        public var camerasAdded: Int
    }

    /// Installs the fake system. Throws while a libcamera camera is open.
    public init() throws(CaptureError) {
        try loadLibcamera()
        let result = shutter_lc_fake_system_install()
        guard result == 0 else { throw CaptureError.system(call: "shutter_lc_fake_system_install", errno: -result, context: "fake libcamera") }
    }

    deinit { shutter_lc_fake_system_remove() }

    /// Plugs in a fake camera with libcamera id `id` (model `fake`). The corresponding C function is `shutter_lc_fake_system_plug`.
    public func plug(_ id: String, _ script: FakeLibcameraScript = FakeLibcameraScript()) {
        var config = script.config
        precondition(shutter_lc_fake_system_plug(id, &config) == 0, "fake camera \(id) is plugged in already")
    }

    /// Unplugs the fake camera `id`; with `noticed` false the manager keeps it registered, a stale
    /// camera (libcamera's vimc pipeline). The corresponding C function is `shutter_lc_fake_system_unplug`.
    public func unplug(_ id: String, noticed: Bool) {
        precondition(shutter_lc_fake_system_unplug(id, noticed ? 1 : 0) == 0, "fake camera \(id) is not plugged in")
    }

    /// The corresponding C function is `shutter_lc_fake_system_stats`.
    public var stats: Stats {
        var raw = shutter_lc_manager_stats()
        shutter_lc_fake_system_stats(&raw)
        return Stats(managersCreated: Int(raw.managers_created), managerThreads: Int(raw.manager_threads),
                     duplicateIDs: Int(raw.duplicate_ids), camerasAdded: Int(raw.cameras_added))
    }
}

/// A rectangle in pixels (libcamera's `Rectangle`).
public struct PixelRect: Hashable, Sendable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var description: String { "(\(x), \(y))/\(width)x\(height)" }
}

/// Which clock libcamera's frame times are on, and their conversion to CLOCK_MONOTONIC.
///
/// `controls::SensorTimestamp` is the time the sensor exposed the frame's first line, taken
/// by the pipeline handlers from the V4L2 buffer of the sensor's receiver (unicam, CFE, vimc),
/// and `FrameMetadata::timestamp` is that buffer's V4L2 timestamp; videobuf2 stamps both with
/// `ktime_get_ns()`, i.e. CLOCK_MONOTONIC, the clock of GPIO edge timestamps. libcamera's own
/// documentation only promises "nanoseconds", so shutter checks: a stamp that is zero, in the
/// future of the completion, or more than ``maximumAge`` older than it cannot be CLOCK_MONOTONIC
/// for a frame just completed, and the completion time (CLOCK_MONOTONIC) is used instead.
public enum LibcameraTimestamp {
    /// How much older than its completion a frame may be (requests queue a few frames deep).
    public static let maximumAge = Nanoseconds.seconds(2)

    /// The frame's CLOCK_MONOTONIC instant from the sensor timestamp, else the buffer's, else the completion time.
    public static func monotonic(sensor: Int64, buffer: Int64, completedAt: Instant) -> Instant {
        // Two calls rather than a loop over `[sensor, buffer]`: this runs for every frame, and an
        // array literal may be a heap allocation.
        plausible(sensor, completedAt: completedAt) ?? plausible(buffer, completedAt: completedAt) ?? completedAt
    }

    /// `stamp` as an instant, when it can be CLOCK_MONOTONIC for a frame completed at `completedAt`.
    private static func plausible(_ stamp: Int64, completedAt: Instant) -> Instant? {
        guard stamp > 0 else { return nil }
        let time = Instant(rawValue: stamp)
        return time <= completedAt && completedAt - time <= maximumAge ? time : nil
    }
}
