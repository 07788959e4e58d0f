import Foundation
import Testing
import ShutterCapture
import ShutterCore
@testable import ShutterService
@testable import ShutterSystem

@Suite("LineWriter: standard output never blocks the loop")
struct LineWriterTests {
    /// A pipe: (read end, write end).
    func makePipe() throws -> (CInt, CInt) {
        var ends: [CInt] = [-1, -1]
        try #require(pipe(&ends) == 0)
        return (ends[0], ends[1])
    }

    @Test func aReaderThatStopsReadingNeverDelaysTheSender() throws {
        let (reader, writer) = try makePipe()
        defer { close(reader) }
        let cap = 1 << 20
        let output = LineWriter(descriptor: writer, capacity: cap)
        let line = String(repeating: "x", count: 199) + "\n"
        var slowest = Nanoseconds.zero
        var over2ms = 0
        // 4 MiB offered to a pipe that holds 64 KiB and is never read: the writer thread blocks,
        // the sender does not (a blocking write would hang here for good); what does not fit the
        // 1 MiB bound is dropped and counted. A send is a lock and a queue hand-off: on a loaded
        // machine the scheduler may still pause the thread now and then, so the bound is on the
        // share of slow sends, and the slowest is printed.
        for _ in 0..<20_000 {
            let before = monotonicNow()
            output.send(line)
            let took = monotonicNow() - before
            slowest = max(slowest, took)
            if took > .milliseconds(2) { over2ms += 1 }
        }
        print("LineWriter: slowest of 20000 sends to a stopped reader \(slowest.milliseconds) ms, \(over2ms) over 2 ms")
        #expect(over2ms < 20, "\(over2ms) sends took over 2 ms (slowest \(slowest.milliseconds) ms)")
        // The reader comes back: the lines queued arrive, then a line saying how many were dropped.
        final class Drained: @unchecked Sendable { var data = Data() }  // written by one thread, read after it ends
        let drained = Drained()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = read(reader, &buffer, buffer.count)
                if count <= 0 { break }
                drained.data.append(contentsOf: buffer[..<count])
            }
            done.signal()
        }
        output.send("last\n")
        output.flush()
        close(writer)
        done.wait()
        let text = String(decoding: drained.data, as: UTF8.self)
        #expect(text.contains(#""event": "outputDropped""#))
        #expect(text.hasSuffix("last\n"))
        // What arrives is what the pipe held (its own buffer, outside the bound: those lines were
        // written) and what waited in the queue (at most the cap). The queue fills to the cap, since
        // four times the cap was offered; a cap a few times too large keeps more than this allows.
        let keptBytes = text.split(separator: "\n").filter { $0.hasPrefix("xxx") }.count * line.utf8.count
        let getPipeSize: CInt = 1032  // F_GETPIPE_SZ: Glibc's module leaves it out (it is _GNU_SOURCE only)
        let pipeBytes = Int(fcntl(reader, getPipeSize))
        try #require(pipeBytes > 0)
        #expect(keptBytes >= cap - line.utf8.count, "\(keptBytes) bytes kept: the queue never filled to the cap of \(cap)")
        #expect(keptBytes <= cap + pipeBytes + line.utf8.count,
                "\(keptBytes) bytes kept: more than the cap \(cap) plus the pipe's \(pipeBytes) and one line")
    }

    @Test func aReaderThatGoesAwayEndsTheRun() throws {
        let (reader, writer) = try makePipe()
        defer { close(writer) }
        let output = LineWriter(descriptor: writer, capacity: 1 << 20)
        let mailbox = try LoopMailbox()
        var rings = 0
        output.ringWhenGone(mailbox.makeBell { rings += 1 })  // the event loop's bell stops it
        close(reader)
        output.send("nobody reads this\n")  // EPIPE, not SIGPIPE: the process lives on
        output.flush()
        #expect(output.readerGone)
        var ready = pollfd(fd: mailbox.pollDescriptor, events: Int16(POLLIN), revents: 0)
        #expect(poll(&ready, 1, 1000) == 1)
        mailbox.runWaiting()
        #expect(rings == 1)
        output.send("dropped quietly\n")
        output.flush()
        // A loop that asks after the reader went hears it at once.
        output.ringWhenGone(mailbox.makeBell { rings += 10 })
        mailbox.runWaiting()
        #expect(rings == 11)
    }
}
