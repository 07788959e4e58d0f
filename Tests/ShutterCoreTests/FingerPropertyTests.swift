import Testing
@testable import ShutterCore

/// What a person meant, over many touches of the finger model: a lift changes no value, a touch
/// is one swipe, a tap is one light press. Each check is also shown failing on a trace made wrong
/// on purpose, so a check that cannot fail does not pass for that reason.
@Suite("Finger model properties")
struct FingerPropertyTests {
    static let seeds: [UInt64] = Array(1...60)

    /// Swipes (with a re-grip after some), each resting before it lifts.
    static func swipes(seed: UInt64, thumb: Bool) -> [FingerTouch] {
        var model = FingerModel(seed: seed, thumb: thumb)
        var touches: [FingerTouch] = []
        var t = 1000.0
        for _ in 0..<3 {
            let touch = model.swipe(at: t)
            touches.append(touch)
            if model.random.chance(0.5) { touches.append(model.regrip(after: touch)) }
            t = touches.last!.end + 1000
        }
        return touches
    }

    static func taps(seed: UInt64, thumb: Bool) -> [FingerTouch] {
        var model = FingerModel(seed: seed, thumb: thumb)
        return (0..<4).map { model.tap(at: 1000 + 900 * Double($0)) }
    }

    static func lightPressFirst(_ trace: inout TraceBuilder) { trace.press("half", at: 100, for: 100) }

    @Test(arguments: [false, true])
    func aLiftChangesNoValue(thumb: Bool) {
        for seed in Self.seeds {
            let touches = Self.swipes(seed: seed, thumb: thumb)
            let trace = FingerChecks.edges(touches, board: Rigs.simulator, thumb: thumb, extra: Self.lightPressFirst)
            let failure = FingerChecks.liftKeepsValue(touches, trace: trace)
            #expect(failure == nil, "seed \(seed): \(failure ?? "")")
        }
    }

    @Test(arguments: [false, true])
    func eachTouchIsOneSwipe(thumb: Bool) {
        for seed in Self.seeds {
            let touches = Self.swipes(seed: seed, thumb: thumb)
            let events = FingerChecks.edges(touches, board: Rigs.simulator, thumb: thumb, extra: Self.lightPressFirst).run()
            let failure = FingerChecks.oneSwipePerTouch(touches.count, events: events)
            #expect(failure == nil, "seed \(seed): \(failure ?? "")")
        }
    }

    @Test(arguments: [false, true])
    func aTapIsOneLightPress(thumb: Bool) {
        let board = Rigs.board(withoutHalf: true)
        for seed in Self.seeds {
            let touches = Self.taps(seed: seed, thumb: thumb)
            let events = FingerChecks.edges(touches, board: board, thumb: thumb).run()
            let failure = FingerChecks.oneLightPressPerTap(touches.count, events: events)
            #expect(failure == nil, "seed \(seed): \(failure ?? "")")
        }
    }

    /// A thumb resting on pad 0 through swipes (a rig with `half`) or taps (a strip-only rig), rolling
    /// off over pad 1 once they are over: it changes no value and makes no tap.
    @Test(arguments: [false, true])
    func aRestingThumbChangesNothing(taps: Bool) {
        let board = taps ? Rigs.board(withoutHalf: true) : Rigs.simulator
        for seed in Self.seeds {
            let touches = taps ? Self.taps(seed: seed, thumb: true) : Self.swipes(seed: seed, thumb: true)
            let events = FingerChecks.edges(touches, board: board, thumb: true,
                                            extra: taps ? { _ in } : Self.lightPressFirst).run()
            let failure = FingerChecks.restingContactDoesNothing(touches, events: events)
            #expect(failure == nil, "seed \(seed): \(failure ?? "")")
        }
    }

    // MARK: Each check fails on a wrong trace

    /// A thumb that lands just before it rolls off is a tap, not a resting contact.
    @Test func theRestingThumbCheckFailsWhenTheThumbTaps() {
        let board = Rigs.board(withoutHalf: true)
        var failures = 0
        for seed in Self.seeds {
            let touches = Self.taps(seed: seed, thumb: true)
            var trace = FingerChecks.edges(touches, board: board, thumb: false)
            FingerChecks.restingThumb(&trace, from: FingerChecks.thumbLift(touches) - 60, touches: touches)
            if FingerChecks.restingContactDoesNothing(touches, events: trace.run()) != nil { failures += 1 }
        }
        #expect(failures == Self.seeds.count)
    }

    /// Lifting off the pads one at a time 60 ms apart is no lift but a roll (the finger moves): the
    /// value changes, and the check says so.
    @Test func theLiftCheckFailsWhenTheLiftIsARoll() {
        var failures = 0
        for seed in Self.seeds {
            var touches = Self.swipes(seed: seed, thumb: false)
            for index in touches.indices { touches[index].liftSpread = 60; touches[index].width = 1.5 }
            let trace = FingerChecks.edges(touches, board: Rigs.simulator, thumb: false, extra: Self.lightPressFirst)
            if FingerChecks.liftKeepsValue(touches, trace: trace) != nil { failures += 1 }
        }
        #expect(failures > 0)
    }

    /// A 100 ms dropout of every pad mid-swipe (longer than the lift grace) splits the touch in two.
    @Test func theSwipeCheckFailsWhenATouchBreaksInTwo() {
        var failures = 0
        for seed in Self.seeds {
            var touches = Self.swipes(seed: seed, thumb: false)
            for index in touches.indices { touches[index].dropouts = []; touches[index].width = 0.8 }
            var trace = FingerChecks.edges(touches, board: Rigs.simulator, thumb: false, extra: Self.lightPressFirst)
            // Every pad off for 100 ms in the middle of the first touch's movement, then back.
            let first = touches[0], middle = first.start + first.path[1].t / 2
            let pads = first.pads(at: first.centre(at: first.path[1].t / 2), padCount: 6)
            var edges = trace.edges.filter { !($0.time > ms(middle) && $0.time < ms(middle + 100)) }
            for pad in pads {
                edges.append(Edge(line: trace.line("pad\(pad)"), active: false, time: ms(middle)))
                edges.append(Edge(line: trace.line("pad\(pad)"), active: true, time: ms(middle + 100)))
            }
            trace.edges = edges
            if FingerChecks.oneSwipePerTouch(touches.count, events: trace.run()) != nil { failures += 1 }
        }
        #expect(failures > 0)
    }

    /// A dropout of 40 ms (two secondPressGapMs) is a person lifting and pressing again: a double.
    @Test func theTapCheckFailsWhenADropoutIsASecondPress() {
        let board = Rigs.board(withoutHalf: true)
        var failures = 0
        for seed in Self.seeds {
            var touches = Self.taps(seed: seed, thumb: false)
            for index in touches.indices {
                touches[index].width = 0.8
                touches[index].path[0].centre = touches[index].path[0].centre.rounded()
                touches[index].path[1].centre = touches[index].path[0].centre
                touches[index].path[1].t = 140
                touches[index].dropouts = [(50, 40)]
            }
            let events = FingerChecks.edges(touches, board: board, thumb: false).run()
            if FingerChecks.oneLightPressPerTap(touches.count, events: events) != nil { failures += 1 }
        }
        #expect(failures == Self.seeds.count)
    }
}

/// The next deadline an owner sleeps until, taken from the scan that last found nothing to fire,
/// against a scan of every machine made there and then: an owner told a later deadline would
/// sleep through a decision, an earlier one would wake for nothing.
@Suite("The next deadline after each turn")
struct NextDeadlineTests {
    @Test(arguments: [false, true])
    func theDeadlineAfterATurnIsTheOneAScanFinds(thumb: Bool) {
        for seed in FingerPropertyTests.seeds.prefix(30) {
            var touches = FingerPropertyTests.swipes(seed: seed, thumb: thumb)
            var model = FingerModel(seed: seed &+ 1000, thumb: thumb)
            for tap in 0..<3 { touches.append(model.tap(at: touches.last!.end + 1000 + 900 * Double(tap))) }
            let trace = FingerChecks.edges(touches, board: Rigs.simulator, thumb: thumb,
                                           extra: FingerPropertyTests.lightPressFirst)
            var machine = GestureStateMachine(board: trace.board)
            var events: [ShutterEvent] = []
            var turns = 0
            // As the interpreter turns: every edge of an instant, then time to that instant, then
            // the deadline; and a turn at each deadline the machines name before the next edge.
            for edge in trace.sorted {
                while let due = machine.findNextDeadline(), due < edge.time {
                    machine.advance(to: due, into: &events)
                    turns += 1
                    #expect(machine.findNextDeadline() == machine.scanNextDeadline(), "seed \(seed), at \(due)")
                }
                machine.edge(edge, into: &events)
                machine.advance(to: edge.time, into: &events)
                #expect(machine.findNextDeadline() == machine.scanNextDeadline(), "seed \(seed), edge at \(edge.time)")
            }
            #expect(turns > touches.count, "seed \(seed): the deadlines were woken for")
        }
    }
}
