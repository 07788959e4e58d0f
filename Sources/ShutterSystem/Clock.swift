#if canImport(Glibc)
import Glibc
#endif
import ShutterCore

/// Reads CLOCK_MONOTONIC, the clock of V4L2 frame timestamps and GPIO edges.
///
/// The corresponding C function is `clock_gettime`.
public func monotonicNow() -> Instant {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Instant(rawValue: Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec))
}

/// The process's CLOCK_MONOTONIC as a ``MonotonicClock``.
public final class SystemMonotonicClock: MonotonicClock {
    public init() {}
    public var now: Instant { monotonicNow() }
}


/// The CPU time the calling thread has used: what a preview costs, whatever else the machine runs.
///
/// The corresponding C function is `clock_gettime` (`CLOCK_THREAD_CPUTIME_ID`).
public func threadCPUTime() -> Nanoseconds {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return Nanoseconds(rawValue: Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec))
}

/// `clock_gettime(clock)` in nanoseconds.
public func clockNanoseconds(_ clock: clockid_t) -> Int64 {
    var time = timespec()
    clock_gettime(clock, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}
