import CTurboJPEG
import Dispatch
import Foundation
import Testing
import ShutterCore
@testable import ShutterCapture

/// The calling thread's scheduling policy as the kernel reports it: field 41 of
/// /proc/thread-self/stat (proc(5)); 0 is SCHED_OTHER, 3 SCHED_BATCH.
private func kernelPolicyOfThisThread() -> Int? {
    guard let stat = try? String(contentsOfFile: "/proc/thread-self/stat", encoding: .utf8),
          let nameEnd = stat.lastIndex(of: ")") else { return nil }
    // After the name come field 3 (the state) onwards, so field 41 is the 39th.
    let fields = stat[stat.index(after: nameEnd)...].split(separator: " ")
    return fields.count > 38 ? Int(fields[38]) : nil
}

/// The calling thread's name (/proc/thread-self/comm).
private func nameOfThisThread() -> String? {
    (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines)
}

/// The calling thread's id: the end of /proc/thread-self's target ("PID/task/TID").
private func idOfThisThread() -> String? {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self"))?.split(separator: "/").last.map(String.init)
}

/// What one work item saw of its thread.
private struct Seen: Sendable, Equatable {
    var index: Int
    var thread: pthread_t
    var policy: Int?
    var name: String?
}

private let batchPolicy = 3

@Suite("Batch worker")
struct BatchWorkerTests {
    /// Items run one after another in the order given, on one thread of the worker's own that
    /// the kernel reports as SCHED_BATCH, under the worker's name.
    @Test func itemsRunInOrderOnOneBatchThreadOfItsOwn() {
        let worker = BatchWorker(name: "shutter-test")
        let group = DispatchGroup()
        let seen = Locked<[Seen]>([])
        for index in 0..<20 {
            worker.async(group: group) {
                let record = Seen(index: index, thread: pthread_self(), policy: kernelPolicyOfThisThread(), name: nameOfThisThread())
                seen.withLock { $0.append(record) }
            }
        }
        group.wait()
        let records = seen.withLock { $0 }
        #expect(records.map(\.index) == Array(0..<20))
        #expect(Set(records.map(\.thread)).count == 1)
        #expect(records.first?.thread != pthread_self())
        #expect(records.allSatisfy { $0.policy == batchPolicy && $0.name == "shutter-test" })
        #expect(worker.threadPolicy == Int32(batchPolicy))
    }

    /// The thread starts with the first item, not before (an idle rig has no thread waiting for
    /// photos it never takes), and ends once the worker is gone, after the items given to it.
    @Test func theThreadLivesFromTheFirstItemUntilTheWorkerIsGoneAndItsWorkDone() throws {
        var worker: BatchWorker? = BatchWorker(name: "shutter-test")
        #expect(worker?.threadPolicy == nil)
        let group = DispatchGroup(), gate = DispatchSemaphore(value: 0)
        let ran = Locked<[String?]>([])
        worker?.async(group: group) {
            gate.wait()
            let thread = idOfThisThread()
            ran.withLock { $0.append(thread) }
        }
        worker?.async(group: group) {
            let thread = idOfThisThread()
            ran.withLock { $0.append(thread) }
        }
        worker = nil  // with both items still to run
        gate.signal()
        group.wait()
        let threads = ran.withLock { $0 }
        #expect(threads.count == 2)
        let thread = try #require(threads.compactMap { $0 }.first)
        #expect(threads.last == thread)
        #expect(thread != idOfThisThread())
        var alive = FileManager.default.fileExists(atPath: "/proc/self/task/\(thread)")
        for _ in 0..<200 where alive {
            usleep(10_000)
            alive = FileManager.default.fileExists(atPath: "/proc/self/task/\(thread)")
        }
        #expect(!alive)
    }

    /// When no thread can be started, each item still runs (as ordinary work, on a Dispatch
    /// queue) and its group is left; the next item asks for a thread again.
    @Test func anItemRunsEvenWhenNoThreadCanBeStarted() {
        let attempts = Locked(0)
        let worker = BatchWorker(name: "shutter-test") { _ in
            attempts.withLock { $0 += 1 }
            return EAGAIN
        }
        let group = DispatchGroup()
        let policies = Locked<[Int?]>([])
        for _ in 0..<3 {
            worker.async(group: group) {
                let policy = kernelPolicyOfThisThread()
                policies.withLock { $0.append(policy) }
            }
            group.wait()
        }
        #expect(policies.withLock { $0 }.count == 3)
        #expect(policies.withLock { $0 }.allSatisfy { $0 != nil && $0 != batchPolicy })
        #expect(attempts.withLock { $0 } == 3)
        #expect(worker.threadPolicy == nil)
    }

    /// Items given while one runs on the Dispatch queue (no thread could start) wait for it
    /// there, in order, rather than start a thread that would run them beside it: the encode
    /// worker's items share one JPEG encoder. Once that queue has nothing left, the next item
    /// asks for a thread again.
    @Test func itemsGivenWhileAFallbackItemRunsRunAfterItInOrder() {
        let attempts = Locked(0)
        let worker = BatchWorker(name: "shutter-test") { mailbox in
            let attempt = attempts.withLock { $0 += 1; return $0 }
            return attempt == 1 ? EAGAIN : BatchWorker.startThread(mailbox)
        }
        let group = DispatchGroup(), gate = DispatchSemaphore(value: 0)
        let order = Locked<[Int]>([])
        worker.async(group: group) {
            gate.wait()
            order.withLock { $0.append(1) }
        }
        worker.async(group: group) { order.withLock { $0.append(2) } }
        worker.async(group: group) { order.withLock { $0.append(3) } }
        // A thread started for the second item would have run it and the third by now.
        usleep(50_000)
        gate.signal()
        group.wait()
        #expect(order.withLock { $0 } == [1, 2, 3])
        #expect(attempts.withLock { $0 } == 1)
        #expect(worker.threadPolicy == nil)
        let policy = Locked<Int?>(nil)
        worker.async(group: group) {
            let seen = kernelPolicyOfThisThread()
            policy.withLock { $0 = seen }
        }
        group.wait()
        #expect(attempts.withLock { $0 } == 2)
        #expect(policy.withLock { $0 } == batchPolicy)
    }

    /// A photo's strips after the first are encoded on the encoder's helper threads, which are
    /// batch work: woken for a photo, they do not take the CPU from whoever the press woke.
    @Test func aFramesStripHelpersAreBatchWork() throws {
        let (width, height) = (1280, 720)
        let y = [UInt8](repeating: 120, count: width * height)
        let chroma = [UInt8](repeating: 128, count: width / 2 * height / 2)
        let layout = try #require(JPEGStripLayout(width: width, height: height, subsampling: TJSAMP_420, maxStrips: 4))
        let encoder = try JPEGEncoder(strips: 4)
        let seen = Locked<[Int: Int?]>([:])
        let jpeg = try encoder.compressPlanes(y, chroma, chroma, width: width, height: height, strides: (width, width / 2, width / 2),
                                              subsampling: TJSAMP_420, quality: 80) { rows in
            let policy = kernelPolicyOfThisThread()
            seen.withLock { $0[rows.lowerBound] = policy }
        }
        #expect(!jpeg.isEmpty)
        let policies = seen.withLock { $0 }
        #expect(policies.count == layout.rows.count)
        // The first strip is the caller's (this test's thread, as it is); every other a helper's.
        #expect(policies[0] == kernelPolicyOfThisThread())
        for strip in layout.rows.dropFirst() {
            #expect(policies[strip.lowerBound] == batchPolicy, "strip at row \(strip.lowerBound)")
        }
    }
}
