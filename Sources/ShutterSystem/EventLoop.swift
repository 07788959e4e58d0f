#if canImport(Glibc)
import Glibc
#endif
import CShutterSystem
import ShutterCore

/// One poll loop for everything: line descriptors, the camera, stdin, sockets, signals and one deadline.
///
/// Handlers run on the loop's thread and must not block; slow work goes to a
/// queue that reports back through a descriptor. Other threads hand work in through
/// ``mailbox`` (the one thread-safe part): it runs here, between inputs, a bounded batch per wake-up.
///
/// A wake-up allocates nothing of the loop's own: the poll set, the watch order and the list a
/// dynamic source fills are kept from one wake-up to the next, so a camera streaming at 30 fps
/// into an idle rig costs no heap traffic here (`shutter-daemon-bench` counts it).
public final class EventLoop {
    /// What a descriptor is watched for, and who is told.
    private struct Watch {
        var events: Int16
        var handler: (Int16) throws -> Void
    }

    private var watches: [CInt: Watch] = [:]
    /// The watched descriptors in ascending order (handlers run in this order), kept between
    /// wake-ups and rebuilt only when a descriptor is watched or unwatched.
    private var watchOrder: [CInt] = []
    private var watchOrderIsStale = false
    /// Sources whose descriptors change over time (a camera that comes and goes): each appends
    /// its current descriptors to the list it is given; a held one is not polled in the last
    /// ``holdAhead`` before an awaited deadline.
    private var dynamicSources: [(descriptors: (inout [CInt]) -> Void, held: Bool, handler: () throws -> Void)] = []
    /// Storage kept from one wake-up to the next, so that an idle loop allocates nothing: the
    /// poll set, where each dynamic source's descriptors start in it, and a source's scratch list.
    private var pollSet: [pollfd] = []
    private var dynamicStarts: [Int] = []
    private var dynamicScratch: [CInt] = []
    private let signalDescriptor: CInt
    /// The deadline's timer (a timerfd) on the system's clock, -1 on any other: there the wait's
    /// timeout is the deadline. ``armedDeadline`` is the instant it is set to.
    let deadlineTimer: CInt
    private var armedDeadline: Instant?
    /// When the held sources were last left out of a wait that still holds them, if they are.
    private var holdingSince: Instant?
    private var stopped = false
    /// Work posted from other threads (an HTTP server's, an MQTT client's), run on this loop's
    /// thread after the wake-up's inputs, at most ``LoopMailbox/batchLimit`` items per wake-up.
    /// Closed when the loop goes away (``Daemon/finish()`` closes it first): later posts are dropped.
    public let mailbox: LoopMailbox
    /// The loop's clock: the system's CLOCK_MONOTONIC in the daemon, a virtual clock in tests.
    public let clock: any MonotonicClock

    /// The next instant the loop must wake at, if any; asked before every wait.
    public var nextDeadline: () -> Instant? = { nil }
    /// The next deadline when someone waits for what is decided there (a press's capture at the
    /// end of its confirmation window), which the loop reaches awake: asked before every wait,
    /// after ``nextDeadline``; it matters only when it is that deadline.
    public var awaitedDeadline: () -> Instant? = { nil }
    /// How long before ``awaitedDeadline`` the loop stops sleeping. Its timer wakes it then, and it
    /// waits out the rest polling its descriptors without a timeout (so an input is still handled
    /// at once), as a sleeping process wakes after its timer late by the scheduler's wake-up
    /// latency and then runs on code and memory that went cold. On the system's clock only (a
    /// virtual clock does not move while the loop polls); zero sleeps until every deadline.
    public var wakeAhead = Nanoseconds.zero
    /// How long before ``awaitedDeadline`` the loop stops polling the sources watched with
    /// `heldBeforeDecisions` (the camera), and handles them again once that deadline is decided.
    /// Polling a V4L2 device takes its queue's lock (`vb2_fop_poll`, videobuf2-v4l2.c), which a
    /// driver may hold while it makes a frame: vivid holds it (`dev->mutex`, its queue's lock:
    /// vivid-core.c) around each frame's fill (vivid-kthread-cap.c), milliseconds under
    /// emulation, and the loop waited in that poll past the decision. What a held source has
    /// waits in the kernel meanwhile (a frame with its own timestamp). Its timer wakes the loop
    /// when the hold begins, on any clock; a hold lasts at most this long at a stretch, however
    /// closely awaited deadlines follow each other; zero never holds.
    public var holdAhead = Nanoseconds.zero
    /// Called when the deadline has passed, with the current time: first thing in a wake-up
    /// when it had passed by then (before the inputs), and after the inputs when it has now.
    public var deadlineReached: (Instant) throws -> Void = { _ in }
    /// Called after every wake-up, once its inputs are handled.
    public var afterWake: () throws -> Void = {}
    /// How the loop gives up its CPU for ``yieldToWokenReader()``: `sched_yield`. Tests count the calls.
    var yieldCPU: () -> Void = { _ = sched_yield() }
    /// Whether ``yieldToWokenReader()`` has yielded since the last wake-up began or ended.
    private var yieldedSinceWakeUpBoundary = false
    /// Called for SIGINT, SIGTERM, SIGHUP and SIGCHLD; the default stops the loop on SIGINT and SIGTERM.
    public var signalReceived: (CInt) -> Void

    /// Called once when the reader of standard output goes away; the default stops the loop
    /// (nobody hears the events any more). The daemon with an API keeps serving instead.
    public var standardOutputClosed: () -> Void

    /// The signals the loop receives through its descriptor.
    public static let handledSignals: [CInt] = [SIGINT, SIGTERM, SIGHUP, SIGCHLD]

    /// Blocks the handled signals and receives them through a descriptor, so a
    /// signal is handled between inputs, never in the middle of one. SIGPIPE is
    /// ignored: a client that hangs up is seen as a failed write, not a dead daemon.
    ///
    /// On the system's clock the loop waits for its deadline on a timer descriptor set to the
    /// instant: ppoll's own timeout ends up to 0.1 % of the wait late (300 µs for a light press at
    /// the end of a 300 ms double-press window), a timerfd's at the instant. The thread that makes
    /// the loop (the one that runs it) also gets the smallest timer slack, for any timed wait left.
    ///
    /// - Parameters:
    ///   - clock: the loop's clock.
    ///   - mailboxBatchLimit: the most posted work items one wake-up runs.
    ///
    /// The corresponding C functions are `signalfd`, `timerfd_create` and `prctl` (PR_SET_TIMERSLACK).
    public init(clock: any MonotonicClock = SystemMonotonicClock(), mailboxBatchLimit: Int = 64) throws {
        self.clock = clock
        // 1 ns, the least there is (0 would restore the default). Failure costs only the slack.
        _ = CShutterSystem_setTimerSlack(1)
        mailbox = try LoopMailbox(batchLimit: mailboxBatchLimit)
        var signals = sigset_t()
        sigemptyset(&signals)
        for signal in Self.handledSignals { sigaddset(&signals, signal) }
        sigprocmask(SIG_BLOCK, &signals, nil)
        signal(SIGPIPE, SIG_IGN)
        signalDescriptor = signalfd(-1, &signals, CShutterSystem_SFD_CLOEXEC | CShutterSystem_SFD_NONBLOCK)
        guard signalDescriptor >= 0 else {
            throw LoopFailure("cannot receive signals: signalfd failed, errno \(errno)")
        }
        if clock is SystemMonotonicClock {
            deadlineTimer = CShutterSystem_deadlineTimerCreate()
            guard deadlineTimer >= 0 else {
                let failure = Errno.current
                close(signalDescriptor)
                throw LoopFailure("cannot make the loop's deadline timer: timerfd_create failed: \(failure)")
            }
        } else {
            deadlineTimer = -1
        }
        signalReceived = { _ in }
        standardOutputClosed = {}
        signalReceived = { [unowned self] signal in
            if signal == SIGINT || signal == SIGTERM { self.stop() }
        }
        standardOutputClosed = { [unowned self] in self.stop() }
        // Rung once: the reader goes once, and a bell rung more than once before it runs runs once.
        LineWriter.standardOutput.ringWhenGone(mailbox.makeBell { [unowned self] in standardOutputClosed() })
    }

    deinit {
        mailbox.close()
        close(signalDescriptor)
        if deadlineTimer >= 0 { close(deadlineTimer) }
    }

    /// Calls `handler` whenever `descriptor` is readable.
    public func watch(_ descriptor: CInt, handler: @escaping () throws -> Void) {
        watches[descriptor] = Watch(events: Int16(POLLIN)) { _ in try handler() }
        watchOrderIsStale = true
    }

    /// Calls `handler` with the returned events whenever `descriptor` has any of `events`
    /// (POLLIN, POLLOUT; errors and hang-ups are always reported).
    public func watch(_ descriptor: CInt, events: Int16, handler: @escaping (Int16) throws -> Void) {
        watches[descriptor] = Watch(events: events, handler: handler)
        watchOrderIsStale = true
    }

    /// Changes what `descriptor` is watched for (a socket with output waiting wants POLLOUT too).
    public func setEvents(_ events: Int16, for descriptor: CInt) {
        watches[descriptor]?.events = events
    }

    /// Calls `handler` whenever any of the descriptors `descriptors` appends to the list it is
    /// given, asked anew before every wait, is readable. The list is the loop's own, emptied
    /// before each call and kept between wake-ups: a source that fills it allocates nothing.
    /// With `heldBeforeDecisions`, not in the last ``holdAhead`` before an awaited deadline.
    public func watch(descriptors: @escaping (_ into: inout [CInt]) -> Void, heldBeforeDecisions: Bool = false,
                      handler: @escaping () throws -> Void) {
        dynamicSources.append((descriptors, heldBeforeDecisions, handler))
        dynamicStarts.reserveCapacity(dynamicSources.count + 1)
    }

    /// Calls `handler` whenever any of the descriptors `descriptors()` returns, asked anew
    /// before every wait, is readable. (A returned array is a new allocation on every wake-up:
    /// prefer ``watch(descriptors:handler:)-(inout,_)`` on a hot path.)
    public func watch(descriptors: @escaping () -> [CInt], handler: @escaping () throws -> Void) {
        watch(descriptors: { list in list.append(contentsOf: descriptors()) }, handler: handler)
    }

    public func unwatch(_ descriptor: CInt) {
        watches[descriptor] = nil
        watchOrderIsStale = true
    }

    /// How many descriptors are watched (not counting dynamic sources and the signal descriptor).
    public var watchCount: Int { watches.count }

    /// Makes ``run()`` return after the current handler.
    public func stop() { stopped = true }

    /// Lets a reader the loop has just written an event line to run before the rest of this
    /// wake-up; at most once in a wake-up (its first line is the one waited for, a press's
    /// `capture began`), or in a stretch of work between wake-ups.
    ///
    /// A write to a Unix or TCP socket wakes its reader with a sync wake-up (`sock_def_readable`,
    /// WF_SYNC in the kernel), which says the writer is about to sleep: the scheduler queues the
    /// reader on the writer's CPU (`wake_affine_idle`) and keeps it there when it last ran there,
    /// as it has once it has waited for the loop like this (`select_idle_sibling` looks for an
    /// idle CPU only while the cache domain is little used, SIS_UTIL). Host ftrace: 112 of 124
    /// subscriber wake-ups for `capture began` were queued on the loop's CPU with the other one
    /// idle, and waited 0.12–0.18 ms for the rest of the loop's turn (the press handed to the
    /// camera, the timer rearmed). Yielding hands the CPU to the queued reader and takes it back
    /// when the reader goes back to its read; with nothing else runnable on this CPU the call
    /// returns at once (`yield_task_fair`). A CPU-bound thread on the same CPU may keep it for
    /// the rest of its slice (1.5–3 ms): the loop's remaining work waits that long, which hands
    /// the photo on later but changes no photo (its frame is chosen by the press's kernel
    /// timestamp) and no gesture (the lines' edges keep theirs).
    ///
    /// The corresponding C function is `sched_yield`.
    public func yieldToWokenReader() {
        guard !yieldedSinceWakeUpBoundary else { return }
        yieldedSinceWakeUpBoundary = true
        yieldCPU()
    }

    /// Runs until ``stop()``.
    public func run() throws {
        stopped = false
        while !stopped {
            try runOnce(timeoutMilliseconds: nil)
        }
    }

    /// Waits once for input, a signal or the deadline and handles what came. Not re-entrant: a
    /// handler must not turn the loop itself.
    ///
    /// - Parameter timeoutMilliseconds: the longest wait; nil waits for the next deadline or input
    ///   (tests on a virtual clock pass 0 and advance the clock themselves).
    ///
    /// The corresponding C function is `ppoll`.
    public func runOnce(timeoutMilliseconds: Int32?) throws {
        yieldedSinceWakeUpBoundary = false
        defer { yieldedSinceWakeUpBoundary = false }
        // Built in storage kept from the last wake-up: no allocation once the capacities have
        // grown to the largest set seen.
        if watchOrderIsStale {
            watchOrder.removeAll(keepingCapacity: true)
            watchOrder.append(contentsOf: watches.keys)
            watchOrder.sort()
            watchOrderIsStale = false
        }
        pollSet.removeAll(keepingCapacity: true)
        pollSet.append(pollfd(fd: signalDescriptor, events: Int16(POLLIN), revents: 0))
        pollSet.append(pollfd(fd: mailbox.pollDescriptor, events: Int16(POLLIN), revents: 0))
        // -1 (a virtual clock): poll skips the entry.
        pollSet.append(pollfd(fd: deadlineTimer, events: Int16(POLLIN), revents: 0))
        for descriptor in watchOrder {
            // watchOrder is rebuilt whenever watches changes, so every descriptor in it is watched.
            pollSet.append(pollfd(fd: descriptor, events: watches[descriptor]?.events ?? 0, revents: 0))
        }
        // Asked before every wait, in this order.
        let deadline = nextDeadline()
        let awaited = awaitedDeadline()
        var holdBegins: Instant?
        var holding = false
        if let awaited, holdAhead > .zero {
            let now = clock.now
            if now < awaited - holdAhead {
                holdBegins = awaited - holdAhead
            } else {
                // Never longer than holdAhead at a stretch: decisions that follow each other
                // closely (a swipe's coalesced updates) would keep the camera waiting throughout.
                // Then this wait polls the held sources, and the next may hold them again.
                holding = holdingSince.map { now < $0 + holdAhead } ?? true
            }
            holdingSince = holding ? (holdingSince ?? now) : nil
        } else {
            holdingSince = nil
        }
        // A bell held through a hold that has ended is run now.
        if !holding { mailbox.wakeForHeldBells() }
        dynamicStarts.removeAll(keepingCapacity: true)
        for source in dynamicSources {
            dynamicStarts.append(pollSet.count)
            if holding && source.held { continue }
            dynamicScratch.removeAll(keepingCapacity: true)
            source.descriptors(&dynamicScratch)
            for descriptor in dynamicScratch {
                pollSet.append(pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0))
            }
        }
        dynamicStarts.append(pollSet.count)
        // To the nanosecond: a deadline is the end of a line's confirmation window, and every
        // press waits for one. poll's whole milliseconds woke the loop up to 1 ms late (rounded
        // up, as waking early only loops), ppoll's timeout up to 0.1 % of the wait late; the
        // timer descriptor wakes it at the instant. Set only when the deadline changed.
        var timeout: Int64 = -1
        var awakeUntil: Instant?
        if deadlineTimer >= 0 {
            var wakeAt = deadline
            if let deadline, wakeAhead > .zero, awaited == deadline {
                if clock.now >= deadline - wakeAhead {
                    awakeUntil = deadline
                    wakeAt = nil
                } else {
                    wakeAt = deadline - wakeAhead
                }
            }
            if awakeUntil == nil { wakeAt = Instant.earliest(wakeAt, holdBegins) }
            if wakeAt != armedDeadline { try setDeadlineTimer(wakeAt) }
        } else if let wakeAt = Instant.earliest(deadline, holdBegins) {
            timeout = max(0, wakeAt.rawValue - clock.now.rawValue)
        }
        if let limit = timeoutMilliseconds {
            let limit = Int64(limit) * 1_000_000
            timeout = timeout < 0 ? limit : min(timeout, limit)
            awakeUntil = awakeUntil.map { min($0, clock.now + Nanoseconds(rawValue: limit)) }
        }
        // Not retried on EINTR: the turn ends, and the next one works out its wait again.
        let polled = valueOrErrno(retryOnInterrupt: false) {
            pollSet.withUnsafeMutableBufferPointer { entries in
                guard let awakeUntil else { return CShutterSystem_ppoll(entries.baseAddress, UInt(entries.count), timeout) }
                // Awake until the deadline: each pass asks the descriptors without waiting, and the
                // first that is ready ends the wait as a sleep would (its handler runs now, and the
                // next turn waits again).
                var ready: CInt
                repeat {
                    ready = CShutterSystem_ppoll(entries.baseAddress, UInt(entries.count), 0)
                } while ready == 0 && clock.now < awakeUntil
                return ready
            }
        }
        let ready: CInt
        switch polled {
        case .success(let count): ready = count
        case .failure(let errno) where errno == .interrupted: return
        case .failure(let errno): throw LoopFailure("poll failed: \(errno)")
        }
        let timerFired = pollSet[Self.deadlineSlot].revents != 0
        if ready == 0 || (ready == 1 && timerFired) {
            // Only the deadline: nothing to dispatch.
            try endWakeUp(timerFired: timerFired)
            return
        }
        // A deadline that has passed goes before the inputs: it is a decision someone waits for
        // (a press at the end of its confirmation window), while a camera frame or a request
        // ready in the same wake-up carries its own time or can wait that long. The recognizer
        // reads the lines itself before it decides, so no edge is passed over.
        try handleDeadline()
        if pollSet[0].revents != 0 {
            var info = signalfd_siginfo()
            while read(signalDescriptor, &info, MemoryLayout<signalfd_siginfo>.size) == MemoryLayout<signalfd_siginfo>.size {
                signalReceived(CInt(info.ssi_signo))
            }
        }
        // Handlers may watch or unwatch descriptors (which rebuilds watchOrder, not pollSet) and may
        // close and unwatch another descriptor of this round: each entry is looked up when its turn comes.
        let fixedEnd = dynamicStarts[0]
        var index = Self.firstWatchSlot
        while index < fixedEnd {
            let entry = pollSet[index]
            index += 1
            if entry.revents != 0 { try watches[entry.fd]?.handler(entry.revents) }
        }
        // A source added by a handler of this round is first polled on the next.
        for sourceIndex in 0..<(dynamicStarts.count - 1) {
            var readable = false
            for slot in dynamicStarts[sourceIndex]..<dynamicStarts[sourceIndex + 1] where pollSet[slot].revents != 0 {
                readable = true
                break
            }
            if readable { try dynamicSources[sourceIndex].handler() }
        }
        // After the inputs: posted work never goes before a press read in the same wake-up.
        if pollSet[Self.mailboxSlot].revents != 0 { mailbox.runWaiting(holding: holding) }
        try endWakeUp(timerFired: timerFired)
    }

    /// A wake-up's last steps: a deadline that has passed by now, then the timer read if it fired
    /// (off the decision's path), then ``afterWake``.
    private func endWakeUp(timerFired: Bool) throws {
        try handleDeadline()
        if timerFired { consumeDeadlineTimer() }
        try afterWake()
    }

    /// The poll set's fixed head: the signal descriptor (slot 0), the mailbox, the deadline's
    /// timer, then the watched descriptors in order.
    private static let mailboxSlot = 1
    private static let deadlineSlot = 2
    private static let firstWatchSlot = 3

    /// Sets the deadline's timer to `deadline`, or disarms it for none.
    ///
    /// The corresponding C function is `timerfd_settime`.
    private func setDeadlineTimer(_ deadline: Instant?) throws {
        guard CShutterSystem_deadlineTimerSet(deadlineTimer, deadline == nil ? 0 : 1, deadline?.rawValue ?? 0) == 0 else {
            throw LoopFailure("cannot set the loop's deadline timer: timerfd_settime failed: \(Errno.current)")
        }
        armedDeadline = deadline
    }

    /// Reads the timer's expiry, after the deadline's work (off the decision's path): it stays
    /// readable until read. The timer fires once; a deadline still ahead is set again next turn.
    ///
    /// The corresponding C function is `read`.
    private func consumeDeadlineTimer() {
        var expirations: UInt64 = 0
        _ = read(deadlineTimer, &expirations, MemoryLayout<UInt64>.size)
        armedDeadline = nil
    }

    private func handleDeadline() throws {
        if let deadline = nextDeadline() {
            let now = clock.now
            if deadline <= now { try deadlineReached(now) }
        }
    }
}

/// The loop, its mailbox or its deadline timer could not be set up or polled: the call and errno.
public struct LoopFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
