#if canImport(Glibc)
import Glibc
#endif
import CShutterSystem
import ShutterCore

/// The one way into the loop from another thread: a queue of work under a lock and an eventfd
/// that wakes the loop when the queue stops being empty.
///
/// A library that insists on a thread of its own (an HTTP server's, an MQTT client's) calls
/// ``post(_:ifDropped:)`` from that thread; the work runs on the loop's thread, between inputs,
/// where daemon state may be touched. Work runs in the order it was posted (FIFO across all
/// posters, so also per poster), each item exactly once.
///
/// A wake-up runs at most ``batchLimit`` items: the rest wait for the next wake-up, which comes
/// at once (the mailbox wakes the loop again) but only after the loop has looked at its other
/// inputs, so a flood of posted work delays a press, a photo or the watchdog by one batch at
/// most and never starves them.
///
/// At most ``capacity`` items wait: a poster that floods faster than the loop runs is refused
/// (``Drop/full``), so memory stays bounded. Once closed (the loop is gone, or the daemon is
/// stopping), nothing runs any more: work still queued and work posted later is dropped
/// (``Drop/closed``). A dropped item's `ifDropped` handler is called instead of its work, so a
/// caller waiting for a reply hears that none comes; nothing leaks: a dropped closure is released.
public final class LoopMailbox: @unchecked Sendable {
    /// Why posted work will not run.
    public enum Drop: Hashable, Sendable {
        /// The mailbox is closed: the loop is gone or the daemon is stopping.
        case closed
        /// ``capacity`` items already wait.
        case full
    }

    /// One item: what to run on the loop, and what to run instead if it never will.
    private struct Item {
        var work: @Sendable () -> Void
        var dropped: (@Sendable (Drop) -> Void)?
    }

    /// Items run per wake-up of the loop.
    public let batchLimit: Int
    /// Items that may wait at once.
    public let capacity: Int
    /// The batch being run, kept between wake-ups so a steady trickle allocates nothing; only
    /// the loop's thread touches it.
    private var batch: [Item] = []
    /// What posters and the loop share.
    private struct Waiting {
        var queue: [Item] = []
        /// Where the unrun part of `queue` starts (the array is emptied when all is run, and
        /// compacted by a post when most of it is).
        var head = 0
        /// The eventfd, or -1 once closed.
        var descriptor: CInt
    }
    private let waiting: Locked<Waiting>

    /// Makes the mailbox and its eventfd (non-blocking, close-on-exec).
    ///
    /// - Parameters:
    ///   - batchLimit: the most items one wake-up runs.
    ///   - capacity: the most items that wait; a post beyond is refused.
    /// - Throws: ``LoopFailure`` naming `eventfd` and errno.
    ///
    /// The corresponding C function is `eventfd`.
    public init(batchLimit: Int = 64, capacity: Int = 4096) throws {
        precondition(batchLimit > 0 && capacity > 0, "a mailbox must hold and run at least one item")
        self.batchLimit = batchLimit
        self.capacity = capacity
        let descriptor = eventfd(0, CShutterSystem_EFD_CLOEXEC | CShutterSystem_EFD_NONBLOCK)
        guard descriptor >= 0 else {
            throw LoopFailure("cannot make the loop's mailbox: eventfd failed: \(Errno.current)")
        }
        waiting = Locked(Waiting(descriptor: descriptor))
    }

    deinit { close() }

    /// Queues `work` to run on the loop's thread; callable from any thread.
    ///
    /// The loop is woken only when the queue goes from empty to non-empty: a burst of posts
    /// costs one write and one wake-up.
    ///
    /// - Parameters:
    ///   - work: runs once, on the loop's thread; it must not block (it holds up the loop).
    ///   - ifDropped: runs instead of `work`, with the reason, when `work` will not run: on this
    ///     thread when the mailbox is full or already closed, else on the thread that closes it.
    ///     Must not block.
    /// - Returns: false when the work was refused (`ifDropped` has run, `work` never will).
    ///
    /// The corresponding C function is `write` (to the eventfd).
    @discardableResult
    public func post(_ work: @escaping @Sendable () -> Void, ifDropped: (@Sendable (Drop) -> Void)? = nil) -> Bool {
        let capacity = self.capacity
        let refusal = waiting.withLock { state -> Drop? in
            guard state.descriptor >= 0 else { return .closed }
            let count = state.queue.count - state.head
            guard count < capacity else { return .full }
            if state.head > 0, state.head >= count {
                // Mostly run already (a steady stream that never lets the queue empty): compact.
                state.queue.removeFirst(state.head)
                state.head = 0
            }
            state.queue.append(Item(work: work, dropped: ifDropped))
            // Under the lock, so close() cannot close the descriptor between the check and the write.
            if count == 0 { Self.signal(state.descriptor) }
            return nil
        }
        if let refusal { ifDropped?(refusal) }
        return refusal == nil
    }

    /// How many items wait to run.
    public var waitingCount: Int { waiting.withLock { $0.queue.count - $0.head } }

    /// Whether ``close()`` has been called.
    public var isClosed: Bool { waiting.withLock { $0.descriptor < 0 } }

    /// The descriptor the loop polls, asked before every wait: -1 once closed, which poll skips
    /// (a closed descriptor's number may already belong to another file).
    var pollDescriptor: CInt { waiting.withLock { $0.descriptor } }

    /// Runs up to ``batchLimit`` waiting items in order, on the calling (the loop's) thread;
    /// wakes the loop again when more wait.
    ///
    /// Items run outside the lock: an item may post more work (it runs in a later batch).
    ///
    /// The corresponding C function is `read` (of the eventfd).
    func runWaiting() {
        let batchLimit = self.batchLimit
        waiting.withLock { state in
            guard state.descriptor >= 0 else { return }
            // Reset the counter before taking the batch: a post after this point either lands
            // in this batch or wakes the loop again; none is left without a wake-up.
            var counter: UInt64 = 0
            _ = read(state.descriptor, &counter, MemoryLayout<UInt64>.size)
            let end = min(state.queue.count, state.head + batchLimit)
            batch.append(contentsOf: state.queue[state.head..<end])
            state.head = end
            if state.head == state.queue.count {
                state.queue.removeAll(keepingCapacity: state.queue.count <= 1024)
                state.head = 0
            } else {
                Self.signal(state.descriptor)
            }
        }
        for item in batch {
            // An item may close the mailbox (the daemon stopping): the rest of its batch is dropped.
            if isClosed { item.dropped?(.closed) } else { item.work() }
        }
        batch.removeAll(keepingCapacity: true)
    }

    /// Closes the mailbox: nothing more runs; the items still waiting are dropped (their
    /// `ifDropped` handlers run here, in order) and later posts are refused. Idempotent.
    ///
    /// The corresponding C function is `close` (of the eventfd).
    public func close() {
        let dropped = waiting.withLock { state -> [Item] in
            guard state.descriptor >= 0 else { return [] }
            Glibc.close(state.descriptor)
            state.descriptor = -1
            let unrun = Array(state.queue[state.head...])
            state.queue = []
            state.head = 0
            return unrun
        }
        for item in dropped { item.dropped?(.closed) }
    }

    /// Adds one to the eventfd's counter: the loop's poll sees it readable.
    private static func signal(_ descriptor: CInt) {
        var one: UInt64 = 1
        // EAGAIN only if the counter is at its maximum: the loop is already woken.
        _ = write(descriptor, &one, MemoryLayout<UInt64>.size)
    }
}
