import Testing
@testable import ShutterCore

@Suite("Mock GPIO chip")
struct MockChipTests {
    let lines = [BoardLine(name: "full", role: .full, selector: .name("full")),
                 BoardLine(name: "pad0", role: .pad, selector: .name("pad0"))]
    let full = LineIndex(0), pad = LineIndex(1)

    @Test("edges are delivered only once the virtual clock reaches them")
    func virtualTime() throws {
        let chip = MockChip()
        let watcher = try chip.watch(lines, consumer: "test")
        chip.set(full, active: true, at: .nanoseconds(1_000))
        chip.set(full, active: false, at: .nanoseconds(5_000))
        var edges: [Edge] = []
        #expect(try watcher.readEdges(into: &edges) == 0)
        #expect(edges.isEmpty)
        chip.clock.advance(to: .nanoseconds(1_000))
        _ = try watcher.readEdges(into: &edges)
        #expect(edges == [Edge(line: full, active: true, time: .nanoseconds(1_000))])
        chip.clock.advance(by: .microseconds(10))
        edges.removeAll()
        _ = try watcher.readEdges(into: &edges)
        #expect(edges == [Edge(line: full, active: false, time: .nanoseconds(5_000))])
        #expect(try watcher.currentLevels() == [false, false])
    }

    @Test("setting the level a line already has is no edge")
    func noEdgeWithoutChange() throws {
        let chip = MockChip()
        let watcher = try chip.watch(lines, consumer: "test")
        chip.set(pad, active: false)
        var edges: [Edge] = []
        _ = try watcher.readEdges(into: &edges)
        #expect(edges.isEmpty)
    }

    @Test("bounce injects alternating edges and settles at the level asked")
    func bounce() throws {
        let chip = MockChip()
        let watcher = try chip.watch(lines, consumer: "test")
        chip.bounce(full, at: .zero, toggles: 5, spacing: .microseconds(300), settlesActive: true)
        chip.clock.advance(to: .nanoseconds(10_000_000))
        var edges: [Edge] = []
        #expect(try watcher.readEdges(into: &edges) == 0)
        // toggles: up, down, up, down, up; the settle at "up" repeats the level, so no sixth edge.
        #expect(edges.map(\.active) == [true, false, true, false, true])
        #expect(edges.map(\.time.rawValue) == [0, 300_000, 600_000, 900_000, 1_200_000])
    }

    @Test("a full kernel queue drops new edges and the loss is counted")
    func overflow() throws {
        let chip = MockChip(queueCapacityPerLine: 4)
        let watcher = try chip.watch(lines, consumer: "test")
        for i in 0..<7 { chip.set(pad, active: i % 2 == 0, at: .nanoseconds(Int64(i) * 1_000)) }
        chip.clock.advance(to: .nanoseconds(100_000))
        var edges: [Edge] = []
        let lost = try watcher.readEdges(into: &edges)
        #expect(edges.count == 4)
        #expect(lost == 3)
    }
}

@Suite("Edge continuity")
struct EdgeContinuityTests {
    @Test("a repeated level is dropped and counted as a loss")
    func repeatedLevel() {
        var continuity = EdgeContinuity(lineCount: 1)
        continuity.setLevel(false, of: LineIndex(0))
        let line = LineIndex(0)
        #expect(continuity.check(Edge(line: line, active: true, time: .zero)) == (true, 0))
        #expect(continuity.check(Edge(line: line, active: true, time: .nanoseconds(1))) == (false, 1))
        #expect(continuity.check(Edge(line: line, active: false, time: .nanoseconds(2))) == (true, 0))
    }

    @Test("a gap in the kernel's sequence numbers counts the edges lost")
    func sequenceGap() {
        var continuity = EdgeContinuity(lineCount: 2)
        #expect(continuity.check(Edge(line: LineIndex(0), active: true, time: .zero), globalSequence: 1) == (true, 0))
        #expect(continuity.check(Edge(line: LineIndex(1), active: true, time: .zero), globalSequence: 2) == (true, 0))
        // Sequence 3 to 6 never arrived.
        #expect(continuity.check(Edge(line: LineIndex(0), active: false, time: .zero), globalSequence: 7) == (true, 4))
    }

    @Test("edges lost before the first one read are counted: the kernel numbers from 1")
    func gapBeforeFirstRead() {
        var continuity = EdgeContinuity(lineCount: 1)
        #expect(continuity.check(Edge(line: LineIndex(0), active: true, time: .zero), globalSequence: 1001) == (true, 1000))
    }
}
