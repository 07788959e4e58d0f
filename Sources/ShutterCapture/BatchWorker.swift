import CShutterSystem
import Dispatch
import ShutterCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A thread of shutter's own that runs work one item after another, in the order given, as
/// batch work (`SCHED_BATCH`, sched(7)): a photo's encode and the strips it is cut into.
///
/// A photo's encode is woken at the instant its press's `capture began` is written to the API's
/// subscribers, and with a strip per core it wants every core for the next milliseconds. A
/// woken thread of the ordinary policy may take the CPU from the thread running there (Linux
/// `kernel/sched/fair.c`, `check_preempt_wakeup_fair`; `check_preempt_wakeup` before 6.6), and
/// since 6.6 (EEVDF, Debian 13's and Raspberry Pi OS's 6.12) it then keeps it for a whole
/// slice: an encode woken just after a subscriber took the subscriber's CPU, and the
/// subscriber's line waited 1–2.5 ms for it (on this project's host, 16 to 24 of 300 presses).
/// A batch thread does not preempt when woken ("Batch tasks do not preempt non-idle tasks
/// (their preemption is driven by the tick)", same function), and is otherwise scheduled as
/// any other at its nice value: a photo gets the same share of the CPUs and is as fast on an
/// idle rig, it just does not cut in front of whoever the press woke first.
///
/// Dispatch's queues cannot carry this: their items run on threads their QoS class shares with
/// every other queue of that class (standard output's writer among them), so a policy set in
/// one item would follow the thread into others, and set and restored around each item it comes
/// too late: the wake-up that preempts is the one that starts the item (tried: no change).
///
/// The thread starts with the first item and waits, without a timer, for the next; it ends once
/// the worker is gone and what was given has run. Should the thread not start (`pthread_create`
/// failing for want of threads) the item runs on a serial Dispatch queue as ordinary work, and
/// so do the items given while that queue has work (in order, one at a time: they may share
/// state, as the encode's items share one JPEG encoder); the first item given after it has
/// none tries a thread again.
final class BatchWorker: Sendable {
    private let mailbox: Mailbox
    private let start: @Sendable (Mailbox) -> Int32
    private let fallback: DispatchQueue

    /// - Parameters:
    ///   - name: the thread's name in `ps -L` and /proc (at most 15 bytes are kept).
    ///   - start: starts a thread serving the mailbox, returning 0 or an errno value; tests
    ///     make it fail.
    init(name: String, start: @escaping @Sendable (Mailbox) -> Int32 = BatchWorker.startThread) {
        mailbox = Mailbox(name: name)
        self.start = start
        fallback = DispatchQueue(label: "shutter.\(name)", qos: .default)
    }

    deinit { mailbox.close() }

    /// Runs `work` on the worker's thread once what was given before has run; `group` is
    /// entered now and left when `work` returns. Called from one thread at a time (the loop
    /// gives photos, the encode thread strips).
    func async(group: DispatchGroup, _ work: @escaping @Sendable () -> Void) {
        group.enter()
        let item: @Sendable () -> Void = {
            work()
            group.leave()
        }
        let route = mailbox.state.withLock { state -> Route in
            if state.fallbackItems > 0 {
                state.fallbackItems += 1
                return .fallback
            }
            state.items.append(item)
            defer { state.threadStarted = true }
            return state.threadStarted ? .thread : .startingThread
        }
        switch route {
        case .thread:
            mailbox.ready.signal()
        case .startingThread:
            if start(mailbox) == 0 {
                mailbox.ready.signal()
                return
            }
            // Only the item just added is waiting: no thread has served this mailbox before.
            mailbox.state.withLock { state in
                state.items.removeAll()
                state.threadStarted = false
                state.fallbackItems += 1
            }
            runOnFallback(work, group: group)
        case .fallback:
            runOnFallback(work, group: group)
        }
    }

    /// Where ``async(group:_:)`` sends an item.
    private enum Route {
        /// The running thread's mailbox.
        case thread
        /// The mailbox, once a thread is started for it.
        case startingThread
        /// The Dispatch queue, behind the items already there.
        case fallback
    }

    /// Runs `work` on the fallback queue, counted in ``Mailbox/State/fallbackItems`` (by the
    /// caller) until it has run; `group` is left after the count, so that whoever waited for
    /// it finds the queue's work done.
    private func runOnFallback(_ work: @escaping @Sendable () -> Void, group: DispatchGroup) {
        let mailbox = mailbox
        fallback.async {
            work()
            mailbox.state.withLock { $0.fallbackItems -= 1 }
            group.leave()
        }
    }

    /// The worker thread's scheduling policy (SCHED_BATCH is 3), as it found it once running:
    /// nil until the thread runs, or when it could not be asked. For tests.
    var threadPolicy: Int32? { mailbox.state.withLock { $0.threadPolicy } }

    /// Starts a detached thread that serves `mailbox` until it is closed and empty.
    ///
    /// The corresponding C function is `pthread_create`.
    static func startThread(_ mailbox: Mailbox) -> Int32 {
        let context = Unmanaged.passRetained(mailbox).toOpaque()
        let result = CShutterSystem_startDetachedThread({ context in
            guard let context else { return nil }
            Unmanaged<Mailbox>.fromOpaque(context).takeRetainedValue().serve()
            return nil
        }, context)
        if result != 0 { Unmanaged<Mailbox>.fromOpaque(context).release() }
        return result
    }

    /// The work waiting for the thread, and the signal that wakes it: one per item, one more
    /// when the worker is gone.
    final class Mailbox: Sendable {
        struct State {
            var items: [@Sendable () -> Void] = []
            var threadStarted = false
            /// Items given to the fallback queue that have not finished: while there are any,
            /// new items go there too.
            var fallbackItems = 0
            var threadPolicy: Int32?
        }

        let name: String
        let state = Locked(State())
        let ready = DispatchSemaphore(value: 0)

        init(name: String) { self.name = name }

        /// Lets the thread end once every item given has run.
        func close() { ready.signal() }

        /// The thread's life: batch work from the start, then each item as it comes.
        ///
        /// The corresponding C functions are `sched_setscheduler` and `prctl` (PR_SET_NAME).
        func serve() {
            _ = CShutterSystem_nameCallingThread(name)
            // Refused (a seccomp filter, say): the work runs as ordinary work, as it did before.
            _ = CShutterSystem_makeCallingThreadBatch()
            let policy = CShutterSystem_callingThreadPolicy()
            state.withLock { $0.threadPolicy = policy >= 0 ? policy : nil }
            while true {
                ready.wait()
                let next = state.withLock { state -> (@Sendable () -> Void)? in
                    state.items.isEmpty ? nil : state.items.removeFirst()
                }
                // Woken with nothing to run: the close's signal, after every item's.
                guard let next else { return }
                next()
            }
        }
    }
}
