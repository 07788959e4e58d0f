#if canImport(Glibc)
import Glibc
#endif
import CShutterSystem
import ShutterCapture
import ShutterGPIO
import ShutterCore

/// One poll() loop for everything: line descriptors, the camera, stdin, signals and one deadline.
///
/// Handlers run on the loop's thread and must not block; slow work goes to a
/// queue that reports back through a descriptor.
final class EventLoop {
    private var handlers: [CInt: () throws -> Void] = [:]
    /// Sources whose descriptors change over time (a camera that comes and goes).
    private var dynamicSources: [(descriptors: () -> [CInt], handler: () throws -> Void)] = []
    private let signalDescriptor: CInt
    private var stopped = false
    let clock = SystemMonotonicClock()

    /// The next instant the loop must wake at, if any; asked before every wait.
    var nextDeadline: () -> Instant? = { nil }
    /// Called when the deadline has passed, with the current time.
    var deadlineReached: (Instant) throws -> Void = { _ in }
    /// Called after every wake-up, once its inputs are handled.
    var afterWake: () throws -> Void = {}
    /// Called for SIGINT and SIGTERM; the default stops the loop.
    var signalReceived: (CInt) -> Void

    /// Blocks SIGINT and SIGTERM and receives them through a descriptor, so a
    /// signal is handled between inputs, never in the middle of one.
    ///
    /// The corresponding C function is `signalfd`.
    init() throws {
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGINT)
        sigaddset(&signals, SIGTERM)
        sigprocmask(SIG_BLOCK, &signals, nil)
        signalDescriptor = signalfd(-1, &signals, CShutterSystem_SFD_CLOEXEC | CShutterSystem_SFD_NONBLOCK)
        guard signalDescriptor >= 0 else {
            throw CommandFailure("cannot receive signals: signalfd failed, errno \(errno)")
        }
        signalReceived = { _ in }
        signalReceived = { [unowned self] _ in self.stop() }
        // The reader of standard output went away: nobody hears the events any more, end cleanly.
        watch(LineWriter.standardOutput.goneDescriptor) { [unowned self] in self.stop() }
    }

    deinit { close(signalDescriptor) }

    /// Calls `handler` whenever `descriptor` is readable.
    func watch(_ descriptor: CInt, handler: @escaping () throws -> Void) {
        handlers[descriptor] = handler
    }

    /// Calls `handler` whenever any of the descriptors `descriptors()` returns, asked anew
    /// before every wait, is readable.
    func watch(descriptors: @escaping () -> [CInt], handler: @escaping () throws -> Void) {
        dynamicSources.append((descriptors, handler))
    }

    func unwatch(_ descriptor: CInt) {
        handlers[descriptor] = nil
    }

    /// Makes ``run()`` return after the current handler.
    func stop() { stopped = true }

    /// Runs until ``stop()``.
    ///
    /// The corresponding C function is `poll`.
    func run() throws {
        stopped = false
        while !stopped {
            var descriptors = [pollfd(fd: signalDescriptor, events: Int16(POLLIN), revents: 0)]
            for descriptor in handlers.keys.sorted() {
                descriptors.append(pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0))
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
            let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
            if ready < 0 {
                if errno == EINTR { continue }
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
                try handlers[entry.fd]?()
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
}
