import Foundation
import Testing
import ShutterCore
@testable import ShutterService

/// The decision at a deadline worked out ahead (``GestureDriver/prepareNextDecision()``) and
/// adopted when the deadline passes: the same events, in the same order, as running the state
/// machines at the deadline, whatever came between.
@Suite("Prepared decisions")
struct PreparedDecisionTests {
    /// An interpreter on the simulator board's mock chip, every edge of a session queued on it
    /// from the start (the chip hands out those at or before its clock), recording what it hands on.
    final class Rig {
        let chip = MockChip()
        let board: Board
        let interpreter: GestureDriver
        var lines: [String] = []

        init(edges: [Edge], explaining: Bool) throws {
            board = try Board.decode(Data(TestRig.simulatorBoard.utf8), file: "test-board.json")
            interpreter = GestureDriver(board: board, watcher: try chip.watch(board.lines, consumer: "prepared-test"))
            interpreter.emit = { [unowned self] event in lines.append("\(event)") }
            if explaining { interpreter.explain = { [unowned self] in lines.append("why \($0.line)") } }
            for edge in edges { chip.set(edge.line, active: edge.active, at: edge.time) }
        }

        /// The first line where `other` differs from this rig's, for a failure's message.
        func firstDifference(from other: Rig) -> String? {
            guard lines != other.lines else { return nil }
            let common = min(lines.count, other.lines.count)
            let index = (0..<common).first { lines[$0] != other.lines[$0] } ?? common
            let mine = index < lines.count ? lines[index] : "(none)", theirs = index < other.lines.count ? other.lines[index] : "(none)"
            return "line \(index): \(mine) where deciding at the deadline gives \(theirs)"
        }

        func pump(at now: Instant) throws {
            chip.clock.advance(to: now)
            try interpreter.pump(now: now)
        }
    }

    /// A session of `count` gestures drawn from `seed`, with contact bounce on some edges and
    /// pauses short enough that gestures sometimes run into each other's windows.
    static func session(seed: UInt64, board: Board, count: Int) -> [Edge] {
        var random = SplitMix64(seed: seed)
        var edges: [Edge] = []
        var start = Instant.nanoseconds(100_000_000)
        for _ in 0..<count {
            let gesture = SimulatedGesture.allCases.randomElement(using: &random)!
            for edge in gesture.edges(on: board, from: start) {
                // Bounce: the level flickers for 0.4-2 ms before it settles, inside the debounce window.
                if Int.random(in: 0..<4, using: &random) == 0 {
                    let flicker = Int64.random(in: 200_000...1_000_000, using: &random)
                    edges.append(Edge(line: edge.line, active: edge.active, time: edge.time))
                    edges.append(Edge(line: edge.line, active: !edge.active, time: edge.time + Nanoseconds(rawValue: flicker)))
                    edges.append(Edge(line: edge.line, active: edge.active, time: edge.time + Nanoseconds(rawValue: 2 * flicker)))
                } else {
                    edges.append(edge)
                }
            }
            let last = edges.last?.time ?? start
            start = last + .milliseconds(Double.random(in: 0...400, using: &random))
        }
        // The chip takes edges in time order, whatever line they are on.
        return edges.sorted { $0.time < $1.time }
    }

    /// Drives two interpreters through the same wake-ups, as the daemon's loop would: after each
    /// edge (a little late, or up to 20 ms), at each deadline (exactly, or late by up to 20 ms, past later
    /// deadlines too), and at times when another part of the daemon woke the loop. Only
    /// `ahead` prepares its decisions, after most wake-ups; capture becomes available or not
    /// now and then, sometimes after a decision was prepared.
    static func compare(seed: UInt64, explaining: Bool) throws -> (plain: Rig, ahead: Rig) {
        let board = try Board.decode(Data(TestRig.simulatorBoard.utf8), file: "test-board.json")
        let edges = session(seed: seed, board: board, count: 24)
        let plain = try Rig(edges: edges, explaining: explaining)
        let ahead = try Rig(edges: edges, explaining: explaining)
        var random = SplitMix64(seed: seed ^ 0x5EED)
        var now = Instant.nanoseconds(0)
        var nextEdge = 0
        let end = edges.last!.time + .milliseconds(3_000)
        while now < end {
            try #require(plain.interpreter.nextDeadline == ahead.interpreter.nextDeadline, "seed \(seed) at \(now)")
            while nextEdge < edges.count, edges[nextEdge].time <= now { nextEdge += 1 }
            var wake = end
            if nextEdge < edges.count {
                // Mostly read soon after it came; now and then late (the loop was busy), so that
                // edges and a passed deadline are found in the same wake-up.
                let delay = Int.random(in: 0..<4, using: &random) == 0
                    ? Int64.random(in: 1_000_000...20_000_000, using: &random) : Int64.random(in: 20_000...400_000, using: &random)
                wake = edges[nextEdge].time + Nanoseconds(rawValue: delay)
            }
            if let deadline = plain.interpreter.nextDeadline {
                let lateness: Int64 = switch Int.random(in: 0..<4, using: &random) {
                case 0: 0
                case 1: Int64.random(in: 1...100_000, using: &random)
                case 2: Int64.random(in: 100_000...2_000_000, using: &random)
                default: Int64.random(in: 2_000_000...20_000_000, using: &random)
                }
                wake = min(wake, max(deadline + Nanoseconds(rawValue: lateness), now))
            }
            // Another source (a camera frame, a client) wakes the loop now and then.
            if Int.random(in: 0..<5, using: &random) == 0 {
                wake = min(wake, now + Nanoseconds(rawValue: Int64.random(in: 1...3_000_000, using: &random)))
            }
            now = max(now, wake)
            try plain.pump(at: now)
            try ahead.pump(at: now)
            // A change that is no edge (the camera going away and coming back), now and then
            // after the decision was prepared: the prepared one is stale and must not be adopted.
            let prepares = Int.random(in: 0..<3, using: &random) > 0
            if prepares { ahead.interpreter.prepareNextDecision() }
            if Int.random(in: 0..<12, using: &random) == 0 {
                let available = Int.random(in: 0..<3, using: &random) > 0
                plain.interpreter.setCaptureAvailable(available, at: now)
                ahead.interpreter.setCaptureAvailable(available, at: now)
            }
        }
        plain.interpreter.finish(at: now)
        ahead.interpreter.finish(at: now)
        return (plain, ahead)
    }

    @Test("adopting prepared decisions gives the same events as deciding at the deadline", arguments: 0..<40)
    func sameEvents(seed: UInt64) throws {
        let (plain, ahead) = try Self.compare(seed: seed, explaining: false)
        #expect(ahead.firstDifference(from: plain) == nil, "seed \(seed)")
        #expect(plain.lines.count > 10, "the session made events")
        #expect(plain.interpreter.adoptedDecisions == 0)
        // The comparison means something only when decisions were in fact adopted.
        #expect(ahead.interpreter.adoptedDecisions > 10, "seed \(seed): \(ahead.interpreter.adoptedDecisions) adopted")
    }

    @Test("explanations come out the same, before the events they explain", arguments: 0..<8)
    func sameExplanations(seed: UInt64) throws {
        let (plain, ahead) = try Self.compare(seed: seed, explaining: true)
        #expect(ahead.firstDifference(from: plain) == nil, "seed \(seed)")
        #expect(plain.lines.contains { $0.hasPrefix("why ") })
        #expect(ahead.interpreter.adoptedDecisions > 10)
    }

    @Test("the deadline the loop wakes ahead of is a prepared decision's that makes events, while it stands")
    func awaitedDeadline() throws {
        let board = try Board.decode(Data(TestRig.simulatorBoard.utf8), file: "test-board.json")
        let edges = Self.session(seed: 7, board: board, count: 24)
        let rig = try Rig(edges: edges, explaining: false)
        var prepared: [ShutterEvent] = []
        #expect(rig.interpreter.awaitedDeadline == nil, "nothing prepared")
        var read = 0
        rig.interpreter.observeEdge = { _ in read += 1 }
        var now = Instant.nanoseconds(0), nextEdge = 0
        var awaited = 0, sleptUntil = 0
        while nextEdge < edges.count || rig.interpreter.nextDeadline != nil {
            // Each wake-up is at an edge (read 50 µs after it) or at a deadline.
            var wake = nextEdge < edges.count ? edges[nextEdge].time + .microseconds(50) : Instant.nanoseconds(.max)
            let deadline = rig.interpreter.nextDeadline
            if let deadline { wake = min(wake, deadline) }
            now = max(now, wake)
            let readBefore = read
            try rig.pump(at: now)
            while nextEdge < edges.count, edges[nextEdge].time <= now { nextEdge += 1 }
            if read > readBefore || deadline.map({ $0 <= now }) == true {
                // An edge (a level set again is none) or a deadline changed the machines.
                #expect(rig.interpreter.awaitedDeadline == nil, "a decision made before this wake-up stands at \(now)")
            }
            rig.interpreter.prepareNextDecision()
            prepared = rig.interpreter.preparedEvents ?? []
            let expected = prepared.isEmpty ? nil : rig.interpreter.nextDeadline
            #expect(rig.interpreter.awaitedDeadline == expected, "at \(now): \(prepared)")
            if expected != nil { awaited += 1 } else if rig.interpreter.nextDeadline != nil { sleptUntil += 1 }
            if nextEdge == edges.count / 2, expected != nil {
                // Any change to the machines makes the decision stale: nobody waits for it now.
                rig.interpreter.setCaptureAvailable(true, at: now)
                #expect(rig.interpreter.awaitedDeadline == nil)
                rig.interpreter.prepareNextDecision()
            }
        }
        // Both kinds were met: deadlines with events (presses, windows) and without (debounce steps).
        #expect(awaited > 10 && sleptUntil > 10, "\(awaited) awaited, \(sleptUntil) slept until")
    }

    @Test("a press's decision at the end of its window is the prepared one, and an edge before it discards it")
    func pressDecision() throws {
        let board = try Board.decode(Data(TestRig.simulatorBoard.utf8), file: "test-board.json")
        let full = board.line(named: "full")!
        let half = board.line(named: "half")!
        let ms = { (value: Double) in Instant.nanoseconds(Int64(value * 1e6)) }
        // A full click, then a glitch on full (2 ms, shorter than the 5 ms filter).
        let edges = [Edge(line: half, active: true, time: ms(100)), Edge(line: full, active: true, time: ms(160)),
                     Edge(line: full, active: false, time: ms(260)), Edge(line: half, active: false, time: ms(300)),
                     Edge(line: full, active: true, time: ms(1_000)), Edge(line: full, active: false, time: ms(1_002))]
        let rig = try Rig(edges: edges, explaining: false)
        var prepared: [[ShutterEvent]] = []
        try rig.pump(at: ms(160.1))
        rig.interpreter.prepareNextDecision()
        prepared.append(rig.interpreter.preparedEvents ?? [])
        // What the deadline at 165 ms will say: the capture began, pressed at 160 ms.
        #expect(rig.interpreter.nextDeadline == ms(165))
        #expect(prepared.last?.first.map { "\($0)" }?.contains("capture(phase: ShutterCore.EventPhase.began") == true,
                "\(String(describing: prepared.last))")
        let before = rig.lines.count
        try rig.pump(at: ms(165.05))
        #expect(rig.interpreter.adoptedDecisions == 1)
        #expect(Array(rig.lines[before...]) == prepared.last!.map { "\($0)" })
        // The glitch: prepared at its first edge (a press at 1000 ms would begin at 1005), but its
        // second edge is read first, in the same wake-up: nothing is adopted, no capture begins.
        try rig.pump(at: ms(400))
        rig.interpreter.prepareNextDecision()
        try rig.pump(at: ms(1_000.1))
        rig.interpreter.prepareNextDecision()
        #expect(rig.interpreter.nextDeadline == ms(1_005))
        let adopted = rig.interpreter.adoptedDecisions
        let afterGlitch = rig.lines.count
        try rig.pump(at: ms(1_010))
        #expect(rig.interpreter.adoptedDecisions == adopted)
        #expect(rig.lines.count == afterGlitch, "\(rig.lines[afterGlitch...])")
    }
}
