#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import ShutterService
import ShutterSystem

/// Plays ``SimulatedGesture``s on the simulator's mock chip at the loop's times: the keys of the
/// interactive simulator and the built-in demo session use it.
///
/// Gestures queue: each starts once the one before is over (plus a pause), so a key pressed
/// twice quickly gives two gestures, never one merged one. It hooks into the daemon's loop by
/// wrapping its deadline closures, so nothing in the daemon needs to know it is there.
public final class GesturePlayer {
    private unowned let daemon: Daemon
    private let chip: MockChip
    private var scheduled: [Edge] = []
    /// When the last queued gesture is over.
    private var queueEnd: Instant

    /// Nil unless the daemon runs on the mock chip.
    public init?(daemon: Daemon) {
        guard let chip = daemon.chip as? MockChip else { return nil }
        self.daemon = daemon
        self.chip = chip
        queueEnd = daemon.loop.clock.now
        chip.clock.advance(to: max(chip.clock.now, daemon.loop.clock.now))
        let loop = daemon.loop
        let nextDeadline = loop.nextDeadline
        loop.nextDeadline = { [unowned self] in [nextDeadline(), scheduled.first?.time].compactMap { $0 }.min() }
        let deadlineReached = loop.deadlineReached
        loop.deadlineReached = { [unowned self] now in
            deliver(upTo: now)
            try deadlineReached(now)
        }
    }

    /// Whether every queued gesture has been played.
    public var isIdle: Bool { scheduled.isEmpty }

    /// Queues `gesture` to start `delay` after the previous one ends (or after now, if later).
    public func play(_ gesture: SimulatedGesture, after delay: Nanoseconds = SimulatedGesture.pause) {
        let now = daemon.loop.clock.now
        let start = max(now, queueEnd + delay)
        let edges = gesture.edges(on: daemon.board, from: start)
        scheduled.append(contentsOf: edges)
        queueEnd = edges.last?.time ?? start
    }

    /// Drives every edge due by `now` into the mock chip and lets the daemon read them.
    func deliver(upTo now: Instant) {
        if chip.deliver(&scheduled, upTo: now) > 0 { try? daemon.pump(now: now) }
    }
}
