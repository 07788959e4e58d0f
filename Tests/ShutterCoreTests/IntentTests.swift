import Testing
@testable import ShutterCore

/// Realistic human timing, generated with what the person meant, checked against what was recognized.
enum HumanTraces {
    /// A trace of `count` gestures and the gesture events they must give, in order.
    static func make(seed: UInt64, board: Board, count: Int = 12) -> (trace: TraceBuilder, intents: [String]) {
        var random = SplitMix64(seed: seed)
        var trace = TraceBuilder(board)
        var intents: [String] = []
        let hasHalf = board.line(named: "half") != nil
        var t = 200.0
        for _ in 0..<count {
            var kind = random.int(0...7)
            if !hasHalf, kind <= 3 { kind = [6, 7, 4, 5][kind] }
            switch kind {
            case 0:   // light press, 80–250 ms, bounce at both ends
                trace.press("half", at: t, for: random.ms(50...300), bounces: random.int(0...5))
                intents.append("lightPress")
            case 1:   // double light press, gap 100–250 ms
                let first = random.ms(50...290)
                trace.press("half", at: t, for: first, bounces: random.int(0...5))
                trace.press("half", at: t + first + random.ms(40...295), for: random.ms(50...290), bounces: random.int(0...5))
                intents.append("doubleLightPress")
            case 2:   // full click: half, full within tens of ms, release full then half
                trace.fullClick(at: t, lead: random.ms(6...150), hold: random.ms(30...600), trail: random.ms(6...200),
                                bounces: random.int(0...5))
                intents += ["capture began primary", "capture ended primary"]
            case 3:   // half held to focus
                trace.press("half", at: t, for: random.ms(500...1500), bounces: random.int(0...5))
                intents += ["prepare began", "prepare ended"]
            case 4:   // secondary click
                trace.press("secondary", at: t, for: random.ms(60...400), bounces: random.int(0...5))
                intents += ["capture began secondary", "capture ended secondary"]
            case 5:   // swipe over 3–6 pads at 30–150 ms per pad, overlapping or briefly gapped
                let length = random.int(3...6)
                let start = random.int(0...(6 - length))
                var pads = Array(start..<(start + length))
                if random.chance(0.5) { pads.reverse() }
                let perPad = random.ms(20...200)
                let overlap = random.chance(0.7) ? random.ms(5...25) : -random.ms(5...min(55, perPad - 12))
                trace.swipe(pads, at: t, perPad: perPad, overlap: overlap)
                intents += ["swipe began", "swipe ended"]
            default:  // tap: one pad, or two neighbours landing together
                let pad = random.int(0...4)
                let duration = random.ms(30...170)
                trace.press("pad\(pad)", at: t, for: duration)
                if random.chance(0.5) {
                    let offset = random.ms(0...40)
                    let second = min(duration - random.ms(-10...10), 170 - offset)
                    trace.press("pad\(pad + 1)", at: t + offset, for: max(second, 20))
                }
                if !hasHalf { intents.append("lightPress") }
            }
            let end = trace.edges.map(\.time.rawValue).max()! / 1_000_000
            t = Double(end) + random.ms(500...2000)
        }
        return (trace, intents)
    }

    /// The gesture-level events: what a person did, not how the controls answered.
    static func gestures(_ events: [ShutterEvent]) -> [String] {
        events.compactMap { event in
            switch event {
            case .capture, .prepare, .lightPress, .doubleLightPress: event.summary
            case .swipe(.began, _, _, _, _, _): "swipe began"
            case .swipe(.ended, _, _, _, _, _): "swipe ended"
            default: nil
            }
        }
    }
}

@Suite("Human timing: recognized as meant")
struct IntentTests {
    static let traceCount = 300

    @Test(arguments: [false, true])
    func recognizedAsMeant(withoutHalf: Bool) {
        let board = withoutHalf ? Rigs.board(withoutHalf: true) : Rigs.simulator
        var failures = 0
        var intentCount = 0
        for seed in 1...UInt64(Self.traceCount) {
            let (clean, intents) = HumanTraces.make(seed: seed &* 7919, board: board)
            intentCount += intents.count
            let dirty = CleanTraces.dirty(clean, seed: seed)
            for trace in [clean, dirty] {
                let got = HumanTraces.gestures(CleanTraces.run(trace).events)
                if got != intents {
                    failures += 1
                    if failures <= 3 { Issue.record("seed \(seed): meant \(intents)\n got \(got)") }
                }
            }
        }
        #expect(failures == 0)
        print("intent: \(Self.traceCount) human-timed traces × (clean, noisy) on \(withoutHalf ? "a strip-tap rig" : "simulator.json"), \(intentCount) gestures meant, \(failures) misrecognized")
    }
}
