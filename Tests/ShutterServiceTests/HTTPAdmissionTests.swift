import Testing
import ShutterCore
@testable import ShutterHTTP
@testable import ShutterService

/// Who keeps the HTTP server's slots, decided without sockets.
@Suite("HTTP admission")
struct HTTPAdmissionTests {
    let start = Instant(rawValue: 1_000_000_000)

    @Test func aNewConnectionTakesTheSlotOfTheOneWaitingLongest() {
        var admission = HTTPAdmission(capacity: 3, requestDeadline: .seconds(10))
        let result1 = admission.arrive(10, at: start)
        #expect(result1 == nil)
        let result2 = admission.arrive(11, at: start + .seconds(1))
        #expect(result2 == nil)
        let result3 = admission.arrive(12, at: start + .seconds(2))
        #expect(result3 == nil)
        admission.requestComplete(10)
        // 11 has waited longest for its request (10 is being answered).
        let result4 = admission.arrive(13, at: start + .seconds(3))
        #expect(result4 == 11)
        #expect(admission.holding == 3)
        // A response ended: 10 waits again, from now, so 12 has waited longer.
        admission.responseEnded(10, at: start + .seconds(4))
        let result5 = admission.arrive(14, at: start + .seconds(5))
        #expect(result5 == 12)
    }

    @Test func whenEverySlotIsAnsweringOrStreamingThereIsNoRoom() {
        var admission = HTTPAdmission(capacity: 2, requestDeadline: .seconds(10))
        _ = admission.arrive(10, at: start)
        _ = admission.arrive(11, at: start)
        #expect(admission.hasRoom)
        admission.requestComplete(10)
        admission.requestComplete(11)
        let streaming = admission.beginStream(11)
        #expect(streaming)
        #expect(!admission.hasRoom)
        // A response ended: its connection waits for its next request, and may give its place.
        admission.responseEnded(10, at: start + .seconds(1))
        #expect(admission.hasRoom)
        let released = admission.arrive(12, at: start + .seconds(2))
        #expect(released == 10)
        admission.requestComplete(12)
        #expect(!admission.hasRoom)
        // The library closed one: there is room again.
        admission.closed(12)
        #expect(admission.hasRoom)
    }

    @Test func streamsTakeThreeQuartersOfTheSlotsAtMost() {
        var admission = HTTPAdmission(capacity: 16, requestDeadline: .seconds(10))
        #expect(admission.streamCapacity == 12)
        for descriptor in CInt(0)..<16 {
            _ = admission.arrive(descriptor, at: start)
            admission.requestComplete(descriptor)
        }
        let streams = (CInt(0)..<16).filter { admission.beginStream($0) }
        #expect(streams.count == 12)
        // A stream already begun stays one (a resumed stream asks again).
        let result8 = admission.beginStream(0)
        #expect(result8)
        #expect(HTTPAdmission(capacity: 1, requestDeadline: .seconds(1)).streamCapacity == 1)
        #expect(HTTPAdmission(capacity: 2, requestDeadline: .seconds(1)).streamCapacity == 1)
    }

    @Test func aConnectionWaitingPastTheDeadlineIsLetGoOnce() {
        var admission = HTTPAdmission(capacity: 4, requestDeadline: .seconds(10))
        _ = admission.arrive(10, at: start)
        _ = admission.arrive(11, at: start + .seconds(4))
        _ = admission.arrive(12, at: start + .seconds(1))
        admission.requestComplete(12)
        #expect(admission.nextDeadline == start + .seconds(10))
        let result9 = admission.overdue(at: start + .seconds(9.9))
        #expect(result9.isEmpty)
        let result10 = admission.overdue(at: start + .seconds(10))
        #expect(result10 == [10])
        let result11 = admission.overdue(at: start + .seconds(10.5))
        #expect(result11.isEmpty)
        #expect(admission.nextDeadline == start + .seconds(14))
        // Being answered, or let go, no deadline; let go, the slot is free before the close.
        #expect(admission.holding == 2)
        let result12 = admission.overdue(at: start + .seconds(60))
        #expect(result12 == [11])
    }

    /// Wrong tokens count per address, and the addresses remembered are bounded.
    @Test func wrongTokensCountPerAddressWithinABound() {
        var wrong = HTTPWrongTokens()
        let guesser: HTTPWrongTokens.Peer = [10, 0, 0, 9], owner: HTTPWrongTokens.Peer = [10, 0, 0, 2]
        for index in 0..<10 {
            let count = wrong.record(from: guesser, at: start + .seconds(Double(index)))
            #expect(count == index + 1)
        }
        #expect(wrong.slowed(guesser, at: start + .seconds(10)) == .seconds(50))
        #expect(wrong.slowed(owner, at: start + .seconds(10)) == nil)
        #expect(wrong.slowed(guesser, at: start + .seconds(60)) == nil)
        for index in 0..<1000 {
            _ = wrong.record(from: [UInt8(index >> 8), UInt8(index & 0xFF), 1, 1], at: start + .seconds(20))
        }
        #expect(wrong.times.count == HTTPWrongTokens.peerLimit)
    }
}
