import Testing
import ShutterCore
@testable import ShutterCapture

private func ms(_ value: Double) -> Instant { Instant(rawValue: Int64(value * 1_000_000)) }

/// A frame's exposure: `total` µs × gain as 10 ms at that gain, answering the newest bias or not.
private func exposed(_ total: Double, answers: Bool = true) -> FrameExposure {
    var exposure = FrameExposure(exposureTime: .microseconds(10_000), analogueGain: total / 10_000, digitalGain: 1)
    exposure.answersNewestBias = answers
    return exposure
}

@Suite("ExposureSettling: when a press may take a frame after a bias change")
struct ExposureSettlingTests {
    @Test func aPressAfterAChangeWaitsForTheFrameThatShowsIt() {
        var settling = ExposureSettling(timeout: .milliseconds(1000))
        var served = settling.frame(exposed(40_000), at: ms(1000), now: ms(1000))
        #expect(served == nil)
        settling.biasChanged(to: 1, at: ms(1010))
        var held = settling.holdsPress(Shot(pressedAt: ms(1020)), now: ms(1020))
        #expect(held)
        // A request queued before the change: the old bias, the new baseline.
        served = settling.frame(exposed(40_000, answers: false), at: ms(1033), now: ms(1040))
        #expect(served == nil)
        // Part of the way: 0.5 EV.
        served = settling.frame(exposed(56_569), at: ms(1066), now: ms(1070))
        #expect(served == nil)
        served = settling.frame(exposed(79_000), at: ms(1099), now: ms(1100))
        #expect(served?.presses.map(\.pressedAt) == [ms(1020)])
        #expect(served?.outcome == .settled)
        let reached = settling.biasReached(by: exposed(79_000)) ?? 0
        #expect(abs(reached - 1) < ExposureSettling.tolerance)
        held = settling.holdsPress(Shot(pressedAt: ms(1110)), now: ms(1110))
        #expect(!held, "once settled, a press takes the ring's frame")
    }

    @Test func aPressBeforeTheChangeIsNotHeld() {
        var settling = ExposureSettling(timeout: .milliseconds(1000))
        _ = settling.frame(exposed(40_000), at: ms(1000), now: ms(1000))
        settling.biasChanged(to: -1, at: ms(1010))
        let held = settling.holdsPress(Shot(pressedAt: ms(1005)), now: ms(1012))
        #expect(!held)
        #expect(settling.outcome(ofFrameAt: ms(1000), exposure: exposed(40_000)) == .settled)
    }

    @Test func theWaitEndsAtTheBound() {
        var settling = ExposureSettling(timeout: .milliseconds(100))
        _ = settling.frame(exposed(40_000), at: ms(1000), now: ms(1000))
        settling.biasChanged(to: 1, at: ms(1010))
        let held = settling.holdsPress(Shot(pressedAt: ms(1020)), now: ms(1020))
        #expect(held)
        var served = settling.frame(exposed(48_000), at: ms(1066), now: ms(1070))
        #expect(served == nil)
        served = settling.frame(exposed(54_000), at: ms(1111), now: ms(1112))
        #expect(served?.outcome == .timeout)
    }

    @Test func anExposureStoppedShortAtALimitCountsAsSettled() {
        var settling = ExposureSettling(timeout: .milliseconds(1000))
        _ = settling.frame(exposed(40_000), at: ms(1000), now: ms(1000))
        settling.biasChanged(to: 2, at: ms(1010))
        let held = settling.holdsPress(Shot(pressedAt: ms(1020)), now: ms(1020))
        #expect(held)
        var served = settling.frame(exposed(100_000), at: ms(1033), now: ms(1040))
        #expect(served == nil)
        served = settling.frame(exposed(100_000), at: ms(1066), now: ms(1070))
        #expect(served?.outcome == .settled, "1.3 EV and no further")
    }

    @Test func aCameraThatReportsNoExposureIsNeverWaitedFor() {
        var settling = ExposureSettling(timeout: .milliseconds(1000))
        _ = settling.frame(FrameExposure(), at: ms(1000), now: ms(1000))
        settling.biasChanged(to: 1, at: ms(1010))
        let held = settling.holdsPress(Shot(pressedAt: ms(1020)), now: ms(1020))
        #expect(!held)
        #expect(settling.outcome(ofFrameAt: ms(1033), exposure: FrameExposure()) == .none)
    }
}
