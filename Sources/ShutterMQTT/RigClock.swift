#if canImport(Glibc)
import Glibc
#endif
import CShutterSystem
import ShutterCore
import ShutterService
import ShutterSystem

/// The rig's shared clock, CLOCK_REALTIME, against the loop's monotonic clock.
///
/// Shots travel between nodes as realtime nanoseconds (the clock NTP or chrony keeps alike on
/// every node); each node turns them into its own monotonic instants to choose a frame, and
/// its frame times back into realtime to report them.
struct RealtimeMapping: Hashable, Sendable {
    /// Realtime minus monotonic, in nanoseconds.
    var offset: Int64

    /// Samples both clocks back to back a few times and keeps the tightest pair: the monotonic
    /// reads on either side of the realtime one closest together, so a preemption between them
    /// does not skew the mapping. The corresponding C function is `clock_gettime`.
    static func sample(monotonic: () -> Instant = { Instant(rawValue: clockNanoseconds(CLOCK_MONOTONIC)) }) -> RealtimeMapping {
        var best: (width: Int64, offset: Int64) = (.max, 0)
        for _ in 0..<5 {
            let before = monotonic().rawValue
            let real = clockNanoseconds(CLOCK_REALTIME)
            let after = monotonic().rawValue
            let width = after - before
            if width < best.width { best = (width, real - (before + width / 2)) }
        }
        return RealtimeMapping(offset: best.offset)
    }

    func realtime(of instant: Instant) -> Int64 { instant.rawValue &+ offset }

    func instant(ofRealtime nanoseconds: Int64) -> Instant { Instant(rawValue: nanoseconds &- offset) }

    /// Whether the kernel's clock is synchronised, and its estimated error (adjtimex's `esterror`)
    /// when it is known. The corresponding C function is `adjtimex`.
    static func discipline() -> (synchronized: Bool, estimatedError: Nanoseconds?) {
        var microseconds = 0
        let synchronized = CShutterSystem_clockDiscipline(&microseconds) != 0
        return (synchronized, microseconds >= 0 ? .milliseconds(Double(microseconds) / 1000) : nil)
    }
}
