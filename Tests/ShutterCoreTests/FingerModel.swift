@testable import ShutterCore

/// A finger on the strip as a person's finger is: a width of 0.8–1.5 pads over pads 0.9 pad wide
/// with gaps between them, landing and lifting over a few milliseconds, pads dropping out for
/// 5–15 ms while it is down. Each touch knows what the person meant, for the property checks.
struct FingerTouch {
    /// When it lands (ms), its width (pads), and where its centre is over time: keyframes of
    /// (ms after landing, centre in pads), straight between them; it lifts at the last one.
    var start: Double
    var width: Double
    var path: [(t: Double, centre: Double)]
    /// Milliseconds between one pad leaving and the next at the lift (lowest first unless `fromTop`).
    var liftSpread: Double
    var fromTop = false
    /// Dropouts: (ms after landing, length ms); the lowest pad touched then leaves and comes back.
    var dropouts: [(at: Double, length: Double)] = []

    var duration: Double { path.last!.t }
    var end: Double { start + duration }
    var liftCentre: Double { path.last!.centre }

    func centre(at t: Double) -> Double {
        guard t > path[0].t else { return path[0].centre }
        for (a, b) in zip(path, path.dropFirst()) where t <= b.t {
            return a.centre + (b.centre - a.centre) * (t - a.t) / max(b.t - a.t, 1e-9)
        }
        return path.last!.centre
    }

    /// The pads under the finger with its centre at `centre` (pad i spans i ± 0.45).
    func pads(at centre: Double, padCount: Int) -> [Int] {
        (0..<padCount).filter { pad in
            min(centre + width / 2, Double(pad) + 0.45) > max(centre - width / 2, Double(pad) - 0.45)
        }
    }

    /// Raw edges (ms, pad, active), in time order: a millisecond grid while down, a lift over
    /// `liftSpread` per pad, landing pads 1 ms apart.
    func edges(padCount: Int) -> [(ms: Double, pad: Int, active: Bool)] {
        var result: [(ms: Double, pad: Int, active: Bool)] = []
        var down: Set<Int> = []
        var step = 0.0
        while step < duration {
            var now = Set(pads(at: centre(at: step), padCount: padCount))
            for dropout in dropouts where step >= dropout.at && step < dropout.at + dropout.length {
                if let lowest = pads(at: centre(at: dropout.at), padCount: padCount).min(), now.count > 0 {
                    now.remove(lowest)
                }
            }
            // Landing: a finger that stays put comes down on its pads 1 ms apart, lowest first.
            var landing = 0.0
            let still = path.count > 1 && path[1].centre == path[0].centre
            for pad in now.subtracting(down).sorted() {
                result.append((start + step + landing, pad, true))
                if step == 0, still { landing += 1 }
            }
            for pad in down.subtracting(now).sorted() { result.append((start + step, pad, false)) }
            down = now
            step += 1
        }
        var lift = 0.0
        for pad in (fromTop ? down.sorted(by: >) : down.sorted()) {
            result.append((end + lift, pad, false))
            lift += liftSpread
        }
        return result.sorted { $0.ms < $1.ms }
    }
}

/// Generates touches a person makes, and checks what the recognizer made of them.
struct FingerModel {
    var random: SplitMix64
    let padCount = 6
    /// The lowest centre a finger uses: above 2.25 with a thumb resting on pad 0, so the two never join.
    var lowest: Double

    init(seed: UInt64, thumb: Bool) {
        random = SplitMix64(seed: seed)
        lowest = thumb ? 2.5 : 0
    }

    mutating func width() -> Double { 0.8 + Double(random.int(0...70)) / 100 }
    mutating func place() -> Double { lowest + Double(random.int(0...Int((5 - lowest) * 10))) / 10 }
    mutating func spread() -> Double { Double(random.int(0...4)) }

    /// A tap: down 40–140 ms without moving, 0–2 dropouts of 5–15 ms inside it.
    mutating func tap(at start: Double) -> FingerTouch {
        let length = Double(random.int(40...140))
        var touch = FingerTouch(start: start, width: width(), path: [(0, place()), (length, 0)], liftSpread: spread(),
                                fromTop: random.chance(0.5))
        touch.path[1].centre = touch.path[0].centre
        // At most one: two dropouts a few milliseconds apart are one long one to the debouncer.
        if random.chance(0.7) {
            let dropout = Double(random.int(5...15))
            if length - dropout - 20 > 10 {
                touch.dropouts.append((Double(random.int(10...Int(length - dropout - 10))), dropout))
            }
        }
        return touch
    }

    /// A swipe: from one place to another at least 2 pads away over 150–600 ms, then a rest of
    /// 150–300 ms (no flick), with dropouts of 5–15 ms anywhere but the lift.
    mutating func swipe(at start: Double) -> FingerTouch {
        var from = place(), to = place()
        while abs(to - from) < 2 { from = place(); to = place() }
        let moving = Double(random.int(150...600)), rest = Double(random.int(150...300))
        var touch = FingerTouch(start: start, width: width(), path: [(0, from), (moving, to), (moving + rest, to)],
                                liftSpread: spread(), fromTop: random.chance(0.5))
        // Up to two, one in each half, so they never run together.
        let half = (moving + rest) / 2
        for part in 0..<random.int(0...2) {
            let dropout = Double(random.int(5...15))
            let from = 20 + half * Double(part)
            touch.dropouts.append((Double(random.int(Int(from)...Int(from + half - dropout - 60))), dropout))
        }
        return touch
    }

    /// A re-grip: another swipe 20–150 ms after `previous` lifted, its centre at least 2.5 pads from
    /// where it lifted (nearer, it would be a slide across a gap), or anywhere after the lift grace.
    mutating func regrip(after previous: FingerTouch) -> FingerTouch {
        let gap = Double(random.int(20...150))
        var touch = swipe(at: previous.end + 4 * 4 + gap)
        if gap <= 80 {
            // Far from the lift: at the other end of the strip's part the finger uses.
            let far = previous.liftCentre - lowest > (5 - lowest) / 2 ? lowest : 5.0
            guard abs(far - previous.liftCentre) >= 2.5 else { return swipe(at: previous.end + 200) }
            touch.path[0].centre = far
            if abs(touch.path[1].centre - far) < 2 { touch.path[1].centre = far == 5 ? far - 2.2 : far + 2.2 }
            touch.path[2].centre = touch.path[1].centre
        }
        return touch
    }
}

/// What the person meant, checked on the events; each returns what went wrong, or nil.
enum FingerChecks {
    static func edges(_ touches: [FingerTouch], board: Board, thumb: Bool, extra: (inout TraceBuilder) -> Void = { _ in })
        -> TraceBuilder {
        var trace = TraceBuilder(board)
        extra(&trace)
        for touch in touches {
            for edge in touch.edges(padCount: 6) { trace.set("pad\(edge.pad)", edge.active, at: edge.ms) }
        }
        if thumb { restingThumb(&trace, from: 10, touches: touches) }
        return trace
    }

    /// When the resting thumb starts to roll off: the touches are over by then.
    static func thumbLift(_ touches: [FingerTouch]) -> Double { (touches.last?.end ?? 0) + 2000 }

    /// A thumb on pad 0 from `landing` ms, rolling onto pad 1 as it lifts after the touches.
    static func restingThumb(_ trace: inout TraceBuilder, from landing: Double, touches: [FingerTouch]) {
        let lift = thumbLift(touches)
        trace.set("pad0", true, at: landing)
        trace.set("pad1", true, at: lift)
        trace.set("pad0", false, at: lift + 30)
        trace.set("pad1", false, at: lift + 60)
    }

    /// The resting contact never changes the value or makes a tap: from its roll off the strip
    /// on, no light press, swipe or value.
    static func restingContactDoesNothing(_ touches: [FingerTouch], events: [ShutterEvent]) -> String? {
        let lift = Instant.nanoseconds(Int64(thumbLift(touches) * 1e6))
        let made = events.filter { event in
            event.time >= lift && ["lightPress", "doubleLightPress", "swipe", "controlValue"].contains(event.name)
        }
        return made.isEmpty ? nil : "the resting thumb made \(made.map(\.summary))"
    }

    /// Value unchanged by a lift: each touch's control value once it rested, just before its lift
    /// began, equals the value once it lifted and the grace ran out.
    static func liftKeepsValue(_ touches: [FingerTouch], trace: TraceBuilder) -> String? {
        var machine = GestureStateMachine(board: trace.board)
        var events: [ShutterEvent] = []
        let edges = trace.sorted
        var next = 0
        for touch in touches {
            let liftStart = Instant.nanoseconds(Int64((touch.end * 1e6).rounded()))
            while next < edges.count, edges[next].time < liftStart {
                machine.advance(to: edges[next].time, into: &events)
                machine.edge(edges[next], into: &events)
                next += 1
            }
            machine.advance(to: liftStart, into: &events)
            let before = machine.controlValues
            let settled = liftStart + .milliseconds(40)
            while next < edges.count, edges[next].time <= settled {
                machine.advance(to: edges[next].time, into: &events)
                machine.edge(edges[next], into: &events)
                next += 1
            }
            machine.advance(to: settled + .milliseconds(100), into: &events)
            let after = machine.controlValues
            if before != after { return "lift at \(touch.end) ms changed \(before) to \(after)" }
        }
        return nil
    }

    /// One swipe per touch: as many `swipe began` and `swipe ended` as swiping touches.
    static func oneSwipePerTouch(_ swipes: Int, events: [ShutterEvent]) -> String? {
        let began = events.filter { $0.summary == "swipe began" }.count
        let ended = events.filter { $0.summary.hasPrefix("swipe ended") }.count
        return began == swipes && ended == swipes ? nil : "\(swipes) swipes meant, \(began) began, \(ended) ended"
    }

    /// No double from one tap: each tap (far apart) is one `lightPress`, never a double.
    static func oneLightPressPerTap(_ taps: Int, events: [ShutterEvent]) -> String? {
        let singles = events.filter { $0.summary == "lightPress" }.count
        let doubles = events.filter { $0.summary == "doubleLightPress" }.count
        return singles == taps && doubles == 0 ? nil : "\(taps) taps meant, \(singles) light presses, \(doubles) doubles"
    }
}
