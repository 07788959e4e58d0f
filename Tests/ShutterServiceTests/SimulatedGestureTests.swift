import Foundation
import Testing
import ShutterCapture
import ShutterCore
@testable import ShutterNode
@testable import ShutterService

/// The gestures the simulator's keys play, recognized as what they are named on the simulator
/// board (its strip of six pads, its gesture timings).
@Suite(.serialized) struct SimulatedGestureTests {
    /// A rig on the simulator board the keys are for, its photos in the rig's directory.
    func simulatorRig() throws -> TestRig {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Boards/simulator.json").path
        let json = try String(contentsOfFile: path, encoding: .utf8)
        return try TestRig(boardJSON: json.replacingOccurrences(of: #""directory": "photos""#, with: #""directory": "PHOTOS""#))
    }

    /// Plays `gesture` on `rig`'s chip, edge by edge on its clock, then lets a second pass; returns
    /// the events it made, without their times.
    func play(_ gesture: SimulatedGesture, on rig: TestRig) throws -> [String] {
        let before = rig.lines.count
        for edge in gesture.edges(on: rig.board, from: rig.chip.clock.now + .milliseconds(10)) {
            let step = edge.time - rig.chip.clock.now
            if step > .zero { try rig.advance(by: step) }
            rig.chip.set(edge.line, active: edge.active, at: rig.chip.clock.now)
            try rig.turn()
        }
        for _ in 0..<20 { try rig.advance(by: .milliseconds(50)) }
        return rig.lines[before...].map(\.line)
    }

    func highlighted(_ lines: [String]) -> [String] {
        lines.compactMap { line in
            guard line.contains(#""event": "controlHighlighted""#), let range = line.range(of: #""control": ""#) else { return nil }
            return String(line[range.upperBound...].prefix { $0 != "\"" })
        }
    }

    func zoomValues(_ lines: [String]) -> [String] {
        lines.compactMap { line in
            guard line.contains(#""event": "controlValue""#), line.contains(#""control": "zoom""#),
                  let range = line.range(of: #""text": ""#) else { return nil }
            return String(line[range.upperBound...].prefix { $0 != "\"" })
        }
    }

    /// One arrow key in the chooser is one control, both ways (a half-strip swipe moved two).
    @Test func aStepMovesTheChoosersHighlightOneControl() throws {
        let rig = try simulatorRig()
        defer { rig.close() }
        _ = try play(.lightPress, on: rig)
        #expect(highlighted(try play(.doubleLightPress, on: rig)) == ["zoom"])
        #expect(highlighted(try play(.stepRight, on: rig)) == ["exposure"])
        #expect(highlighted(try play(.stepRight, on: rig)) == ["filter"])
        #expect(highlighted(try play(.stepLeft, on: rig)) == ["exposure"])
        #expect(highlighted(try play(.stepLeft, on: rig)) == ["zoom"])
    }

    /// A step is one fine step of the zoom; a swipe several.
    @Test func aStepIsOneFineZoomStepAndASwipeSeveral() throws {
        let rig = try simulatorRig()
        defer { rig.close() }
        _ = try play(.lightPress, on: rig)
        #expect(zoomValues(try play(.stepRight, on: rig)) == ["1.2×"])
        #expect(zoomValues(try play(.stepRight, on: rig)) == ["1.3×"])
        #expect(zoomValues(try play(.stepLeft, on: rig)) == ["1.2×"])
        #expect(zoomValues(try play(.swipeRight, on: rig)).count >= 2)
    }
}
