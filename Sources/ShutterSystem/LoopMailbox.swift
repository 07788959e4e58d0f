#if canImport(Glibc)
import Glibc
#endif
import CShutterSystem
import ShutterCore

/// The one way into the loop from another thread: a queue of work under a lock, the bells
/// (``LoopBell``) rung since the loop last looked, and an eventfd that wakes the loop when either
/// stops being empty.
///
/// A bell is the lane for a result a worker thread finished (a photo written, a camera opened, a
/// preview made): rung any number of times before the loop gets to it, its handler runs once,
/// before the posted work of that wake-up, so a photo never waits behind a batch of clients' work.
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
    /// The bells being run, kept as `batch` is.
    private var bellBatch: [LoopBell] = []
    /// What posters and the loop share.
    private struct Waiting {
        var queue: [Item] = []
        /// The bells rung and not run yet, in the order they were first rung; each at most once.
        var rung: [LoopBell] = []
        /// Where the unrun part of `queue` starts (the array is emptied when all is run, and
        /// compacted by a post when most of it is).
        var head = 0
        /// The eventfd, or -1 once closed.
        var descriptor: CInt
        /// Whether the eventfd was written since the loop last read it: the loop is woken
        /// already, and a post or a ring need not write again.
        var signalled = false

        /// Wakes the loop unless it is woken already.
        mutating func wake() {
            guard !signalled else { return }
            signalled = true
            LoopMailbox.signal(descriptor)
        }
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
    /// The loop is woken only when it is not woken already: a burst of posts costs one write
    /// and one wake-up.
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
            state.wake()
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
    /// (a closed descriptor's number may already belong to another file). A command that runs
    /// its own poll instead of an ``EventLoop`` polls it too, and calls ``runWaiting(holding:)``.
    public var pollDescriptor: CInt { waiting.withLock { $0.descriptor } }

    /// Makes a bell whose ringing runs `handler` on the loop's thread, once per wake-up however
    /// often it was rung. Call on the loop's thread. The bell does not keep the mailbox; a bell
    /// rung after the mailbox is closed or gone does nothing.
    ///
    /// - Parameters:
    ///   - heldBeforeDecisions: the handler does not run while the loop holds its held sources
    ///     (``EventLoop/holdAhead``): it touches the camera, as they do. It runs once the hold ends.
    ///   - handler: what the ringing asks the loop to do; it must not block.
    public func makeBell(heldBeforeDecisions: Bool = false, _ handler: @escaping () -> Void) -> LoopBell {
        let bell = LoopBell(mailbox: self, held: heldBeforeDecisions, handler: handler)
        // Room for every bell made, so that ringing one never grows an array.
        bellCount += 1
        let count = bellCount
        waiting.withLock { $0.rung.reserveCapacity(count) }
        bellBatch.reserveCapacity(count)
        return bell
    }

    /// How many bells were made (``makeBell(heldBeforeDecisions:_:)``).
    private var bellCount = 0

    /// Marks `bell` rung and wakes the loop unless something already waits; nothing once closed.
    fileprivate func ring(_ bell: LoopBell) {
        waiting.withLock { state in
            guard state.descriptor >= 0, !bell.isRung else { return }
            bell.isRung = true
            state.rung.append(bell)
            state.wake()
        }
    }

    /// Wakes the loop when a held bell was rung during a hold that has ended: the loop asks
    /// before each wait that does not hold.
    func wakeForHeldBells() {
        waiting.withLock { state in
            guard state.descriptor >= 0, state.rung.contains(where: \.held) else { return }
            state.wake()
        }
    }

    /// Runs the bells rung (but, while `holding`, not the held ones: they stay rung), then up to
    /// ``batchLimit`` waiting items in order, on the calling (the loop's) thread; wakes the loop
    /// again when more items wait.
    ///
    /// Bells and items run outside the lock: a handler may ring a bell or post more work (it runs
    /// in a later wake-up).
    ///
    /// The corresponding C function is `read` (of the eventfd).
    public func runWaiting(holding: Bool = false) {
        let batchLimit = self.batchLimit
        waiting.withLock { state in
            guard state.descriptor >= 0 else { return }
            // Reset the counter before taking the batch: a post after this point either lands
            // in this batch or wakes the loop again; none is left without a wake-up.
            var counter: UInt64 = 0
            _ = read(state.descriptor, &counter, MemoryLayout<UInt64>.size)
            state.signalled = false
            if !state.rung.isEmpty {
                // Unmarked as they are taken: a ring from now on rings again.
                for bell in state.rung where !(holding && bell.held) {
                    bell.isRung = false
                    bellBatch.append(bell)
                }
                state.rung.removeAll { !$0.isRung }
            }
            let end = min(state.queue.count, state.head + batchLimit)
            batch.append(contentsOf: state.queue[state.head..<end])
            state.head = end
            if state.head == state.queue.count {
                state.queue.removeAll(keepingCapacity: state.queue.count <= 1024)
                state.head = 0
            } else {
                state.wake()
            }
        }
        for bell in bellBatch where !isClosed { bell.handler() }
        bellBatch.removeAll(keepingCapacity: true)
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
            state.rung = []
            return unrun
        }
        for item in dropped { item.dropped?(.closed) }
    }

    /// Adds one to the eventfd's counter: the loop's poll sees it readable.
    fileprivate static func signal(_ descriptor: CInt) {
        var one: UInt64 = 1
        // EAGAIN only if the counter is at its maximum: the loop is already woken.
        _ = write(descriptor, &one, MemoryLayout<UInt64>.size)
    }
}

/// A wake-up a worker thread rings for the loop to run one handler (``LoopMailbox/makeBell(heldBeforeDecisions:_:)``):
/// rung any number of times before the loop gets to it, the handler runs once, on the loop's
/// thread, as a byte in a wake-up pipe once did, but through the loop's one wake channel.
///
/// Unchecked: ``ring()`` may be called from any thread; `isRung` is read and written only under
/// the mailbox's lock, `handler` is called only on the loop's thread.
public final class LoopBell: @unchecked Sendable {
    private weak var mailbox: LoopMailbox?
    fileprivate let held: Bool
    fileprivate let handler: () -> Void
    fileprivate var isRung = false

    fileprivate init(mailbox: LoopMailbox, held: Bool, handler: @escaping () -> Void) {
        self.mailbox = mailbox
        self.held = held
        self.handler = handler
    }

    /// Asks the loop to run the handler; callable from any thread, allocates nothing. Nothing
    /// happens once the mailbox is closed or gone.
    ///
    /// The corresponding C function is `write` (to the mailbox's eventfd, when it was idle).
    public func ring() { mailbox?.ring(self) }

    /// Whether ringing does nothing any more: the mailbox is closed or gone.
    public var isSilent: Bool { mailbox?.isClosed ?? true }
}
