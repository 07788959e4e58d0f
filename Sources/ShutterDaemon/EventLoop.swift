#if canImport(Glibc)
import Glibc
#endif
import CShutterSystem
import ShutterCapture
import ShutterGPIO
import ShutterCore

/// One poll() loop for everything: line descriptors, the camera, stdin, sockets, signals and one deadline.
///
/// Handlers run on the loop's thread and must not block; slow work goes to a
/// queue that reports back through a descriptor.
public final class EventLoop {
    /// What a descriptor is watched for, and who is told.
    private struct Watch {
        var events: Int16
        var handler: (Int16) throws -> Void
    }

    private var watches: [CInt: Watch] = [:]
    /// Sources whose descriptors change over time (a camera that comes and goes).
    private var dynamicSources: [(descriptors: () -> [CInt], handler: () throws -> Void)] = []
    private let signalDescriptor: CInt
    private var stopped = false
    /// The loop's clock: the system's CLOCK_MONOTONIC in the daemon, a virtual clock in tests.
    public let clock: any MonotonicClock

    /// The next instant the loop must wake at, if any; asked before every wait.
    public var nextDeadline: () -> Instant? = { nil }
    /// Called when the deadline has passed, with the current time.
    public var deadlineReached: (Instant) throws -> Void = { _ in }
    /// Called after every wake-up, once its inputs are handled.
    public var afterWake: () throws -> Void = {}
    /// Called for SIGINT, SIGTERM, SIGHUP and SIGCHLD; the default stops the loop on SIGINT and SIGTERM.
    public var signalReceived: (CInt) -> Void

    /// The signals the loop receives through its descriptor.
    public static let handledSignals: [CInt] = [SIGINT, SIGTERM, SIGHUP, SIGCHLD]

    /// Blocks the handled signals and receives them through a descriptor, so a
    /// signal is handled between inputs, never in the middle of one. SIGPIPE is
    /// ignored: a client that hangs up is seen as a failed write, not a dead daemon.
    ///
    /// The corresponding C function is `signalfd`.
    public init(clock: any MonotonicClock = SystemMonotonicClock()) throws {
        self.clock = clock
        var signals = sigset_t()
        sigemptyset(&signals)
        for signal in Self.handledSignals { sigaddset(&signals, signal) }
        sigprocmask(SIG_BLOCK, &signals, nil)
        signal(SIGPIPE, SIG_IGN)
        signalDescriptor = signalfd(-1, &signals, CShutterSystem_SFD_CLOEXEC | CShutterSystem_SFD_NONBLOCK)
        guard signalDescriptor >= 0 else {
            throw CommandFailure("cannot receive signals: signalfd failed, errno \(errno)")
        }
        signalReceived = { _ in }
        signalReceived = { [unowned self] signal in
            if signal == SIGINT || signal == SIGTERM { self.stop() }
        }
    }

    deinit { close(signalDescriptor) }

    /// Calls `handler` whenever `descriptor` is readable.
    public func watch(_ descriptor: CInt, handler: @escaping () throws -> Void) {
        watches[descriptor] = Watch(events: Int16(POLLIN)) { _ in try handler() }
    }

    /// Calls `handler` with the returned events whenever `descriptor` has any of `events`
    /// (POLLIN, POLLOUT; errors and hang-ups are always reported).
    public func watch(_ descriptor: CInt, events: Int16, handler: @escaping (Int16) throws -> Void) {
        watches[descriptor] = Watch(events: events, handler: handler)
    }

    /// Changes what `descriptor` is watched for (a socket with output waiting wants POLLOUT too).
    public func setEvents(_ events: Int16, for descriptor: CInt) {
        watches[descriptor]?.events = events
    }

    /// Calls `handler` whenever any of the descriptors `descriptors()` returns, asked anew
    /// before every wait, is readable.
    public func watch(descriptors: @escaping () -> [CInt], handler: @escaping () throws -> Void) {
        dynamicSources.append((descriptors, handler))
    }

    public func unwatch(_ descriptor: CInt) {
        watches[descriptor] = nil
    }

    /// How many descriptors are watched (not counting dynamic sources and the signal descriptor).
    public var watchCount: Int { watches.count }

    /// Makes ``run()`` return after the current handler.
    public func stop() { stopped = true }

    /// Runs until ``stop()``.
    public func run() throws {
        stopped = false
        while !stopped {
            try runOnce(timeoutMilliseconds: nil)
        }
    }

    /// Waits once for input, a signal or the deadline and handles what came.
    ///
    /// - Parameter timeoutMilliseconds: the longest wait; nil waits for the next deadline or input
    ///   (tests on a virtual clock pass 0 and advance the clock themselves).
    ///
    /// The corresponding C function is `poll`.
    public func runOnce(timeoutMilliseconds: Int32?) throws {
        var descriptors = [pollfd(fd: signalDescriptor, events: Int16(POLLIN), revents: 0)]
        for (descriptor, watch) in watches.sorted(by: { $0.key < $1.key }) {
            descriptors.append(pollfd(fd: descriptor, events: watch.events, revents: 0))
        }
        var dynamicRanges: [Range<Int>] = []
        for source in dynamicSources {
            let start = descriptors.count
            for descriptor in source.descriptors() {
                descriptors.append(pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0))
            }
            dynamicRanges.append(start..<descriptors.count)
        }
        var timeout: Int32 = -1
        if let deadline = nextDeadline() {
            let remaining = deadline.rawValue - clock.now.rawValue
            // Round up: waking a little late is harmless, waking early just loops.
            timeout = remaining <= 0 ? 0 : Int32(clamping: (remaining + 999_999) / 1_000_000)
        }
        if let limit = timeoutMilliseconds { timeout = timeout < 0 ? limit : min(timeout, limit) }
        let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
        if ready < 0 {
            if errno == EINTR { return }
            throw CommandFailure("poll failed: \(Errno.current)")
        }
        if descriptors[0].revents != 0 {
            var info = signalfd_siginfo()
            while read(signalDescriptor, &info, MemoryLayout<signalfd_siginfo>.size) == MemoryLayout<signalfd_siginfo>.size {
                signalReceived(CInt(info.ssi_signo))
            }
        }
        let fixedEnd = dynamicRanges.first?.lowerBound ?? descriptors.count
        for entry in descriptors[1..<fixedEnd] where entry.revents != 0 {
            // A handler may have closed and unwatched another descriptor in this round.
            try watches[entry.fd]?.handler(entry.revents)
        }
        for (source, range) in zip(dynamicSources, dynamicRanges) where descriptors[range].contains(where: { $0.revents != 0 }) {
            try source.handler()
        }
        if let deadline = nextDeadline() {
            let now = clock.now
            if deadline <= now { try deadlineReached(now) }
        }
        try afterWake()
    }
}
