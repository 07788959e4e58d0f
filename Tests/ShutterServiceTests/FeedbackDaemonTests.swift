import Foundation
import Testing
import ShutterCapture
import ShutterCore
@testable import ShutterService

@Suite("Daemon feedback: LED and buzzer on the mock chip")
struct FeedbackDaemonTests {
    static let board = TestRig.simulatorBoard.replacingOccurrences(
        of: #""output": {"#, with: #""feedback": [{"role": "led"}, {"role": "buzzer", "activeLow": true}], "output": {"#)

    @Test("the LED is lit while the controls are active and goes dark when they go idle")
    func ledFollowsControls() throws {
        // Frames on the rig's clock: a camera silent for seconds of it stalls, and the LED says so.
        let cameras = ManualCameras()
        let rig = try TestRig(boardJSON: Self.board, cameraFactory: cameras.open)
        defer { rig.close() }
        let camera = try cameras.streamingWithFrames(in: rig)
        #expect(rig.chip.outputLevel("led") == false)
        try rig.press("half", for: .milliseconds(100))
        #expect(rig.names.contains("controlsActive"))
        #expect(rig.chip.outputLevel("led") == true)
        for _ in 0..<120 {
            camera.emit(at: rig.chip.clock.now)
            try rig.advance(by: .milliseconds(50))
        }
        #expect(rig.names.contains("controlsInactive"))
        #expect(!rig.names.contains("captureFailed"))
        #expect(rig.chip.outputLevel("led") == false)
        let changes = rig.chip.outputChanges(of: "led").map(\.active)
        #expect(changes == [true, false])
    }

    @Test("the chooser blinks the LED on the loop's deadlines")
    func chooserBlinks() throws {
        let rig = try TestRig(boardJSON: Self.board)
        defer { rig.close() }
        // A double light press opens the chooser.
        rig.chip.set(rig.line("half"), active: true, at: rig.chip.clock.now)
        try rig.advance(by: .milliseconds(80))
        rig.chip.set(rig.line("half"), active: false, at: rig.chip.clock.now)
        try rig.advance(by: .milliseconds(80))
        rig.chip.set(rig.line("half"), active: true, at: rig.chip.clock.now)
        try rig.advance(by: .milliseconds(80))
        rig.chip.set(rig.line("half"), active: false, at: rig.chip.clock.now)
        let before = rig.chip.outputChanges(of: "led").count
        for _ in 0..<100 { try rig.advance(by: .milliseconds(10)) }
        #expect(rig.names.contains("chooser"))
        // 1 s of a 250 ms on / 250 ms off blink: four changes, each 250 ms after the one before.
        let blink = Array(rig.chip.outputChanges(of: "led").dropFirst(before))
        #expect(blink.count >= 4)
        let gaps = zip(blink, blink.dropFirst()).map { ($1.time - $0.time).rawValue / 1_000_000 }
        #expect(gaps.allSatisfy { (250...260).contains($0) }, "gaps \(gaps) ms")
    }

    @Test("each photo flashes the LED and clicks the buzzer, then both go back")
    func photoFlashAndClick() throws {
        let rig = try TestRig(boardJSON: Self.board)
        defer { rig.close() }
        try rig.click()
        try rig.waitFor { rig.names.contains("photo") }
        for _ in 0..<40 { try rig.advance(by: .milliseconds(10)) }
        let led = rig.chip.outputChanges(of: "led")
        let buzzer = rig.chip.outputChanges(of: "buzzer")
        #expect(led.map(\.active) == [true, false])
        #expect(buzzer.map(\.active) == [true, false])
        if led.count == 2, buzzer.count == 2 {
            let flash = (led[1].time - led[0].time).rawValue / 1_000_000
            let click = (buzzer[1].time - buzzer[0].time).rawValue / 1_000_000
            #expect((150...160).contains(flash), "flash \(flash) ms")
            #expect((20...30).contains(click), "click \(click) ms")
        }
    }

    @Test("finishing the daemon leaves the LED dark and releases the lines")
    func darkAfterFinish() throws {
        let rig = try TestRig(boardJSON: Self.board)
        try rig.press("half", for: .milliseconds(100))
        #expect(rig.chip.outputLevel("led") == true)
        rig.close()
        #expect(rig.chip.outputLevel("led") == false)
    }
}
