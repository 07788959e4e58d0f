#if canImport(Glibc)
import Glibc
#endif
import ShutterCore

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

/// The session `shutter run` plays on the simulator board when standard input is empty and no
/// terminal: every gesture once, so a first run shows what the rig does.
public enum DemoSession {
    /// Each gesture, with the pause before it (milliseconds): room for the recognizer's windows.
    public static let steps: [(gesture: SimulatedGesture, pauseMs: Double)] = [
        (.lightPress, 300),        // the controls appear: zoom
        (.swipeRight, 500),        // zoom in
        (.doubleLightPress, 600),  // the chooser opens
        (.slideRight, 500),        // highlight the next control: exposure
        (.lightPress, 500),        // select it
        (.swipeLeft, 600),         // adjust it
        (.doubleLightPress, 600),  // the chooser again
        (.slideRight, 500),        // highlight the filter
        (.lightPress, 500),        // select it
        (.swipeRight, 600),        // pick a filter
        (.fullClick, 600),         // a photo
        (.burst, 1_000),           // hold: a burst
    ]

    /// Queues the whole session on `player`, and stops the loop once it is played, every
    /// deadline has run and every photo is on disk.
    public static func play(on player: GesturePlayer, daemon: Daemon) {
        for step in steps { player.play(step.gesture, after: .milliseconds(step.pauseMs)) }
        let loop = daemon.loop
        let afterWake = loop.afterWake
        loop.afterWake = { [unowned daemon, unowned player] in
            try afterWake()
            if player.isIdle, daemon.interpreter.nextDeadline == nil,
               daemon.capture.service.pendingCount == 0, daemon.capture.service.inFlightCount == 0 {
                loop.stop()
            }
        }
    }
}

/// What standard input is, for `shutter run` on the simulator board.
public enum SimulatorInputKind: Equatable, Sendable {
    /// A terminal: keys drive the lines.
    case terminal
    /// Already at its end (`</dev/null`, an empty file, a closed empty pipe): play the demo.
    case empty
    /// Anything else (a pipe, a file): a trace, read as it comes.
    case trace

    /// Looks at standard input without consuming it.
    ///
    /// The corresponding C functions are `isatty`, `fstat`, `ioctl(FIONREAD)` and `poll`.
    public static func of(_ descriptor: CInt = STDIN_FILENO) -> SimulatorInputKind {
        if isatty(descriptor) == 1 { return .terminal }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return .empty }   // closed: nothing to read
        var waiting: CInt = 0
        if ioctl(descriptor, UInt(FIONREAD), &waiting) == 0 {
            if waiting > 0 { return .trace }
            if (info.st_mode & S_IFMT) == S_IFREG { return .empty }
            // A pipe with nothing in it: at its end only when the writer is gone.
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&entry, 1, 0)
            return entry.revents & Int16(POLLHUP) != 0 ? .empty : .trace
        }
        // /dev/null answers no FIONREAD; a read of it is at its end at once.
        if (info.st_mode & S_IFMT) == S_IFCHR {
            var null = stat()
            if stat("/dev/null", &null) == 0, null.st_rdev == info.st_rdev { return .empty }
        }
        return .trace
    }
}
