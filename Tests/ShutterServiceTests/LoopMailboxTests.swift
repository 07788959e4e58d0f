#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import ShutterCore
@testable import ShutterService
@testable import ShutterSystem

/// A value shared between the test's threads and the loop, behind a lock.
final class Shared<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withValue<Result>(_ body: (inout Value) -> Result) -> Result { lock.withLock { body(&value) } }
    var current: Value { withValue { $0 } }
}

/// Starts `count` threads running `body(index)` at once (each waits for the others to start).
func startThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let started = Shared(0)
    for index in 0..<count {
        Thread {
            started.withValue { $0 += 1 }
            while started.current < count { sched_yield() }
            body(index)
        }.start()
    }
}

@Suite("LoopMailbox: work from other threads runs on the loop")
struct LoopMailboxTests {
    /// What one item recorded when it ran: which poster, which of its items, on which thread.
    struct Ran: Hashable {
        var poster: Int
        var sequence: Int
        var onLoopThread: Bool
    }

    @Test(arguments: [(posters: 4, items: 500), (posters: 8, items: 100)])
    func everyItemRunsOnceOnTheLoopThreadInEachPostersOrder(posters: Int, items: Int) throws {
        let loop = try EventLoop()
        let mailbox = loop.mailbox
        let loopThread = pthread_self()
        // Appended to only by items, on the loop's thread; read here, on the same thread.
        let ran = Shared<[Ran]>([])
        startThreads(posters) { poster in
            for sequence in 0..<items {
                mailbox.post {
                    let here = pthread_equal(pthread_self(), loopThread) != 0
                    ran.withValue { $0.append(Ran(poster: poster, sequence: sequence, onLoopThread: here)) }
                }
            }
        }
        let limit = Date().addingTimeInterval(20)
        var wakeUps = 0
        while ran.current.count < posters * items, Date() < limit {
            try loop.runOnce(timeoutMilliseconds: 100)
            wakeUps += 1
        }
        let record = ran.current
        #expect(record.count == posters * items)
        #expect(Set(record).count == record.count, "an item ran twice")
        #expect(record.allSatisfy { $0.onLoopThread })
        for poster in 0..<posters {
            #expect(record.filter { $0.poster == poster }.map(\.sequence) == Array(0..<items), "poster \(poster) out of order")
        }
        // Bounded per wake-up: at least as many wake-ups as batches.
        #expect(wakeUps >= posters * items / mailbox.batchLimit)
        #expect(mailbox.waitingCount == 0)
    }

    /// A flood is run a batch per wake-up, after the wake-up's inputs: a readable line's handler
    /// is never behind more than one batch.
    @Test func aFloodRunsABatchPerWakeUpAfterTheInputs() throws {
        let loop = try EventLoop(mailboxBatchLimit: 8)
        var ends: [CInt] = [-1, -1]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        let order = Shared<[String]>([])
        loop.watch(ends[0]) {
            var byte: UInt8 = 0
            _ = read(ends[0], &byte, 1)
            order.withValue { $0.append("line") }
        }
        for index in 0..<20 { loop.mailbox.post { order.withValue { $0.append("work\(index)") } } }
        var byte: UInt8 = 1
        _ = write(ends[1], &byte, 1)
        try loop.runOnce(timeoutMilliseconds: 1000)
        #expect(order.current == ["line"] + (0..<8).map { "work\($0)" })
        // The rest wakes the loop by itself, a batch at a time.
        try loop.runOnce(timeoutMilliseconds: 0)
        #expect(order.current.count == 1 + 16)
        _ = write(ends[1], &byte, 1)
        try loop.runOnce(timeoutMilliseconds: 0)
        #expect(Array(order.current.suffix(5)) == ["line", "work16", "work17", "work18", "work19"])
        #expect(loop.mailbox.waitingCount == 0)
        // Nothing left: the mailbox's descriptor is quiet again.
        var pollEntry = pollfd(fd: loop.mailbox.pollDescriptor, events: Int16(POLLIN), revents: 0)
        #expect(poll(&pollEntry, 1, 0) == 0)
    }

    /// Posts to a queue that already waits do not write again: a burst costs one wake-up.
    @Test func onlyThePostToAnEmptyQueueWakesTheLoop() throws {
        let mailbox = try LoopMailbox()
        let count = Shared(0)
        for _ in 0..<3 { mailbox.post { count.withValue { $0 += 1 } } }
        var counter: UInt64 = 0
        #expect(read(mailbox.pollDescriptor, &counter, 8) == 8)
        #expect(counter == 1)
        mailbox.runWaiting()
        #expect(count.current == 3)
        mailbox.post { count.withValue { $0 += 1 } }
        #expect(read(mailbox.pollDescriptor, &counter, 8) == 8)
        #expect(counter == 1)
    }

    /// A bell rung from several threads before the loop looks runs its handler once, ahead of
    /// the work posted before it: a photo's result never waits behind clients' work.
    @Test func aBellRungManyTimesRunsOnceAheadOfPostedWork() throws {
        let mailbox = try LoopMailbox(batchLimit: 2)
        var order: [String] = []
        let bell = mailbox.makeBell { order.append("bell") }
        for _ in 0..<3 { mailbox.post {} }
        DispatchQueue.concurrentPerform(iterations: 4) { _ in for _ in 0..<100 { bell.ring() } }
        var counter: UInt64 = 0
        #expect(read(mailbox.pollDescriptor, &counter, 8) == 8)
        #expect(counter == 1)  // one wake-up for the posts and every ring
        mailbox.runWaiting()
        #expect(order == ["bell"])
        #expect(mailbox.waitingCount == 1)  // the batch limit held the third post back
        mailbox.runWaiting()
        #expect(order == ["bell"])  // not rung again: not run again
        bell.ring()
        mailbox.runWaiting()
        #expect(order == ["bell", "bell"])
        mailbox.close()
        #expect(bell.isSilent)
        bell.ring()  // closed: nothing wakes, nothing runs
        mailbox.runWaiting()
        #expect(order == ["bell", "bell"])
    }

    /// A held bell (one that touches the camera) waits out the loop's hold before a decision,
    /// and runs once the hold ends, without another ring.
    @Test func aHeldBellWaitsOutTheHold() throws {
        let mailbox = try LoopMailbox()
        var ran: [String] = []
        let camera = mailbox.makeBell(heldBeforeDecisions: true) { ran.append("camera") }
        let other = mailbox.makeBell { ran.append("other") }
        camera.ring()
        other.ring()
        mailbox.runWaiting(holding: true)
        #expect(ran == ["other"])
        var entry = pollfd(fd: mailbox.pollDescriptor, events: Int16(POLLIN), revents: 0)
        #expect(poll(&entry, 1, 0) == 0)  // quiet through the hold
        mailbox.wakeForHeldBells()
        #expect(poll(&entry, 1, 0) == 1)  // the hold over: the loop wakes for it
        mailbox.runWaiting(holding: false)
        #expect(ran == ["other", "camera"])
        mailbox.wakeForHeldBells()
        #expect(poll(&entry, 1, 0) == 0)
    }

    /// Work an item posts runs in a later batch, not in the middle of this one.
    @Test func workPostedByWorkRunsInTheNextBatch() throws {
        let mailbox = try LoopMailbox()
        let order = Shared<[Int]>([])
        mailbox.post {
            order.withValue { $0.append(1) }
            mailbox.post { order.withValue { $0.append(3) } }
        }
        mailbox.post { order.withValue { $0.append(2) } }
        mailbox.runWaiting()
        #expect(order.current == [1, 2])
        mailbox.runWaiting()
        #expect(order.current == [1, 2, 3])
    }

    /// A poster that outruns the loop is refused once `capacity` items wait, and the queue
    /// takes work again as soon as the loop has run some.
    @Test func aFullMailboxRefusesUntilTheLoopHasRunSome() throws {
        let mailbox = try LoopMailbox(batchLimit: 4, capacity: 6)
        let ran = Shared<[Int]>([])
        let refused = Shared<[LoopMailbox.Drop]>([])
        for index in 0..<8 {
            mailbox.post({ ran.withValue { $0.append(index) } }, ifDropped: { drop in refused.withValue { $0.append(drop) } })
        }
        #expect(refused.current == [.full, .full])
        #expect(mailbox.waitingCount == 6)
        mailbox.runWaiting()
        #expect(ran.current == [0, 1, 2, 3])
        // Compacted on the next post: the two left and the new ones keep their order.
        for index in 8..<12 { #expect(mailbox.post { ran.withValue { $0.append(index) } }) }
        #expect(!mailbox.post {})
        mailbox.runWaiting()
        mailbox.runWaiting()
        #expect(ran.current == [0, 1, 2, 3, 4, 5, 8, 9, 10, 11])
    }

    final class Token: Sendable {}

    /// Closed, the mailbox runs nothing: what waits is dropped (its handler told, its closure
    /// released) and a later post is refused at once.
    @Test func aClosedMailboxDropsWhatWaitsAndRefusesPosts() throws {
        let mailbox = try LoopMailbox()
        let told = Shared<[String]>([])
        weak var released: Token?
        do {
            let token = Token()
            released = token
            mailbox.post({ _ = token; told.withValue { $0.append("ran") } }, ifDropped: { drop in told.withValue { $0.append("dropped \(drop)") } })
        }
        #expect(released != nil)
        mailbox.close()
        #expect(told.current == ["dropped closed"])
        #expect(released == nil, "a dropped closure is released")
        mailbox.runWaiting()
        #expect(told.current == ["dropped closed"])
        #expect(mailbox.post({ told.withValue { $0.append("late") } }, ifDropped: { drop in told.withValue { $0.append("refused \(drop)") } }) == false)
        #expect(told.current == ["dropped closed", "refused closed"])
        #expect(mailbox.pollDescriptor == -1)
        mailbox.close()
    }

    @Test func aLoopThatGoesAwayClosesItsMailbox() throws {
        var loop: EventLoop? = try EventLoop()
        let mailbox = try #require(loop?.mailbox)
        let dropped = Shared(false)
        mailbox.post({}, ifDropped: { _ in dropped.withValue { $0 = true } })
        loop = nil
        #expect(mailbox.isClosed)
        #expect(dropped.current)
        // Posting from other threads after the loop went away neither crashes nor runs anything.
        let refused = Shared(0)
        startThreads(4) { _ in
            for _ in 0..<100 { mailbox.post({}, ifDropped: { _ in refused.withValue { $0 += 1 } }) }
        }
        let limit = Date().addingTimeInterval(10)
        while refused.current < 400, Date() < limit { usleep(1000) }
        #expect(refused.current == 400)
    }
}

/// Commands from a library's own thread, posted through the loop's mailbox as the transports
/// post their work: run on the loop's thread, in order per thread, and dropped (and told) once
/// the daemon stops.
@Suite(.serialized) struct DaemonMailboxTests {
    /// Posts requests to a rig's loop, to run through the port, from any thread.
    struct Poster: Sendable {
        let daemon: LoopBound<Daemon>
        let mailbox: LoopMailbox

        init(_ rig: TestRig) {
            daemon = LoopBound(rig.daemon)
            mailbox = rig.daemon.loop.mailbox
        }

        /// `reply` gets the request's result, or nil when it was dropped.
        func submit(_ request: APIRequest, reply: @escaping @Sendable (CommandResult?) -> Void) {
            let daemon = daemon
            mailbox.post({ reply(daemon.object?.execute(request)) }, ifDropped: { _ in reply(nil) })
        }
    }

    @Test func aStatusPostedFromAnotherThreadIsAnsweredOnTheLoop() throws {
        let rig = try TestRig()
        defer { rig.close() }
        let loopThread = pthread_self()
        let replies = Shared<[(result: CommandResult?, onLoopThread: Bool)]>([])
        let poster = Poster(rig)
        startThreads(1) { _ in
            poster.submit(APIRequest(id: .string("t1"), command: .status)) { result in
                let here = pthread_equal(pthread_self(), loopThread) != 0
                replies.withValue { $0.append((result, here)) }
            }
        }
        try rig.waitFor { !replies.current.isEmpty }
        let reply = try #require(replies.current.first)
        #expect(reply.onLoopThread)
        guard case .status(let status) = reply.result else {
            Issue.record("not a status: \(String(describing: reply.result))")
            return
        }
        #expect(status.board == "test")
        #expect(replies.current.count == 1)
    }

    @Test func requestsFromSeveralThreadsEachGetTheirOwnReplyInOrder() throws {
        let rig = try TestRig()
        defer { rig.close() }
        let ids = Shared<[String]>([])
        let poster = Poster(rig)
        startThreads(4) { thread in
            for index in 0..<25 {
                let request = APIRequest(id: .string("\(thread)-\(index)"), command: .set(control: "zoom", to: .value(Double(1 + index % 4))))
                poster.submit(request) { result in
                    guard let result, result.refusal == nil else { return }
                    ids.withValue { $0.append("\(thread)-\(index)") }
                }
            }
        }
        try rig.waitFor { ids.current.count == 100 }
        #expect(Set(ids.current).count == 100)
        for thread in 0..<4 {
            #expect(ids.current.filter { $0.hasPrefix("\(thread)-") } == (0..<25).map { "\(thread)-\($0)" })
        }
    }

    /// A request the loop has not run when the daemon stops, or one posted after, is dropped,
    /// its poster told, and never run.
    @Test func aDaemonThatStopsDropsWhatWaitsAndWhatComesLater() throws {
        let rig = try TestRig()
        let mailbox = rig.daemon.loop.mailbox
        let replies = Shared<[CommandResult?]>([])
        Poster(rig).submit(APIRequest(id: .number(1, text: "1"), command: .capture)) { result in replies.withValue { $0.append(result) } }
        rig.close()
        let later = mailbox.post({ replies.withValue { $0.append(.done) } }, ifDropped: { _ in replies.withValue { $0.append(nil) } })
        #expect(!later)
        #expect(replies.current == [nil, nil])
        #expect(!rig.names.contains("capture"))
    }
}
