#if canImport(Glibc)
import Glibc
#endif
import CShutterSystem
import ShutterGPIO

/// A mutual-exclusion lock over `pthread_mutex_t`, for the few values other threads share with the loop.
///
/// The mutex lives at a fixed address of its own (a pthread mutex must not move).
///
/// The corresponding C functions are `pthread_mutex_lock` and `pthread_mutex_unlock`.
final class PThreadLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let result = pthread_mutex_init(mutex, nil)
        precondition(result == 0, "pthread_mutex_init failed: \(result)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` holding the lock.
    func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

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
    private let lock = PThreadLock()
    // Everything below is guarded by `lock`.
    private var queue: [Item] = []
    /// Where the unrun part of `queue` starts (the array is emptied when all is run, and
    /// compacted by a post when most of it is).
    private var head = 0
    /// The eventfd, or -1 once closed.
    private var descriptor: CInt

    /// Makes the mailbox and its eventfd (non-blocking, close-on-exec).
    ///
    /// - Parameters:
    ///   - batchLimit: the most items one wake-up runs.
    ///   - capacity: the most items that wait; a post beyond is refused.
    /// - Throws: ``CommandFailure`` naming `eventfd` and errno.
    ///
    /// The corresponding C function is `eventfd`.
    public init(batchLimit: Int = 64, capacity: Int = 4096) throws {
        precondition(batchLimit > 0 && capacity > 0, "a mailbox must hold and run at least one item")
        self.batchLimit = batchLimit
        self.capacity = capacity
        descriptor = eventfd(0, CShutterSystem_EFD_CLOEXEC | CShutterSystem_EFD_NONBLOCK)
        guard descriptor >= 0 else {
            throw CommandFailure("cannot make the loop's mailbox: eventfd failed: \(Errno.current)")
        }
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
        let refusal = lock.withLock { () -> Drop? in
            guard descriptor >= 0 else { return .closed }
            let waiting = queue.count - head
            guard waiting < capacity else { return .full }
            if head > 0, head >= waiting {
                // Mostly run already (a steady stream that never lets the queue empty): compact.
                queue.removeFirst(head)
                head = 0
            }
            queue.append(Item(work: work, dropped: ifDropped))
            // Under the lock, so close() cannot close the descriptor between the check and the write.
            if waiting == 0 { Self.signal(descriptor) }
            return nil
        }
        if let refusal { ifDropped?(refusal) }
        return refusal == nil
    }

    /// How many items wait to run.
    public var waitingCount: Int { lock.withLock { queue.count - head } }

    /// Whether ``close()`` has been called.
    public var isClosed: Bool { lock.withLock { descriptor < 0 } }

    /// The descriptor the loop polls, asked before every wait: -1 once closed, which poll skips
    /// (a closed descriptor's number may already belong to another file).
    var pollDescriptor: CInt { lock.withLock { descriptor } }

    /// Runs up to ``batchLimit`` waiting items in order, on the calling (the loop's) thread;
    /// wakes the loop again when more wait.
    ///
    /// Items run outside the lock: an item may post more work (it runs in a later batch).
    ///
    /// The corresponding C function is `read` (of the eventfd).
    func runWaiting() {
        lock.withLock {
            guard descriptor >= 0 else { return }
            // Reset the counter before taking the batch: a post after this point either lands
            // in this batch or wakes the loop again; none is left without a wake-up.
            var counter: UInt64 = 0
            _ = read(descriptor, &counter, MemoryLayout<UInt64>.size)
            let end = min(queue.count, head + batchLimit)
            batch.append(contentsOf: queue[head..<end])
            head = end
            if head == queue.count {
                queue.removeAll(keepingCapacity: queue.count <= 1024)
                head = 0
            } else {
                Self.signal(descriptor)
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
        let dropped = lock.withLock { () -> [Item] in
            guard descriptor >= 0 else { return [] }
            Glibc.close(descriptor)
            descriptor = -1
            let waiting = Array(queue[head...])
            queue = []
            head = 0
            return waiting
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
