import Testing
@testable import ShutterCore

/// The gesture machines' actions, driven directly (no rig): each input returns what it decided,
/// with the reasons an explanation needs.
@Suite struct GestureActionTests {
    private static func at(_ milliseconds: Double) -> Instant { .zero + .milliseconds(milliseconds) }

    /// `half` as a debouncer with a 10 ms window, pressed at `pressAt` and, if given, let go at `dropAt`.
    private static func halfLine(pressAt: Double, dropAt: Double? = nil) -> LineDebouncer {
        var half = LineDebouncer(window: .milliseconds(10))
        _ = half.edge(active: true, at: at(pressAt))
        if let dropAt {
            _ = half.edge(active: false, at: at(dropAt))
            _ = half.fire()
        }
        return half
    }

    @Test("a full press while half is still confirming is a click, and that half press belongs to it")
    func clickAwaitingHalf() {
        var button = TwoStageButton(timings: GestureTimings(), hasHalf: true)
        let halfLine = LineView(Self.halfLine(pressAt: 0))
        let pressed = button.fullPressed(since: Self.at(1), halfLine: halfLine, fullWindowIsZero: false,
                                         available: true)
        #expect(pressed == .full(.began(pressedAt: Self.at(1), photo: true)))
        #expect(button.halfPressed(since: Self.at(0), available: true) == .half(.pressed(since: Self.at(0))))
        #expect(button.halfReleased(since: Self.at(50))
            == .half(.released(preparedSince: nil, .notLight(reason: .fullClicked))))
    }

    @Test("a half change dropped after a click leaves nothing waiting: the next half press may be light")
    func droppedHalfLeavesNoClickWaiting() {
        var button = TwoStageButton(timings: GestureTimings(), hasHalf: true)
        let halfLine = LineView(Self.halfLine(pressAt: 0))
        _ = button.fullPressed(since: Self.at(1), halfLine: halfLine, fullWindowIsZero: false, available: true)
        _ = button.fullReleased(since: Self.at(2))
        button.halfUnconfirmed(LineView(Self.halfLine(pressAt: 0, dropAt: 1)))
        _ = button.halfPressed(since: Self.at(100), available: true)
        let released = button.halfReleased(since: Self.at(150))
        let light = HalfButton.Release.lightPress(pressedAt: Self.at(100), releasedAt: Self.at(150),
                                                  held: .milliseconds(50))
        #expect(released == .half(.released(preparedSince: nil, light)))
    }

    @Test("full alone on a two-stage button is noise; half at the same instant makes it a click")
    func noiseThenSameInstantClick() {
        var button = TwoStageButton(timings: GestureTimings(), hasHalf: true)
        let settled = LineDebouncer(window: .zero)
        let noise = button.fullPressed(since: Self.at(5), halfLine: LineView(settled), fullWindowIsZero: true,
                                       available: true)
        #expect(noise == .fullNoise(halfMayFollow: true))
        #expect(button.halfPressed(since: Self.at(5), available: false)
            == .clickAfterHalf(capture: .refused(pressedAt: Self.at(5))))
    }

    @Test("the light-press recognizer returns one action from every input")
    func lightPressActions() {
        var recognizer = LightPressRecognizer(window: .milliseconds(300))
        let maximum = Nanoseconds.milliseconds(350)
        #expect(recognizer.pressStarted(since: Self.at(0), maximum: maximum) == LightPressRecognizer.Action.none)
        #expect(recognizer.lightPress(pressedAt: Self.at(0), releasedAt: Self.at(100)) == .waiting)
        #expect(recognizer.pressStarted(since: Self.at(150), maximum: maximum) == .secondPress(gap: .milliseconds(50)))
        #expect(recognizer.lightPress(pressedAt: Self.at(150), releasedAt: Self.at(200))
            == .double(pressedAt: Self.at(0)))
        #expect(recognizer.lightPress(pressedAt: Self.at(1000), releasedAt: Self.at(1100)) == .waiting)
        #expect(recognizer.resolve(because: .swipe)
            == .single(pressedAt: Self.at(1000), releasedAt: Self.at(1100), because: .interrupted(by: .swipe)))
        #expect(recognizer.fire() == LightPressRecognizer.Action.none)
    }

    @Test("what comes first at one instant is a table from decision to rule")
    func precedence() {
        typealias Rig = GestureStateMachine
        let began = CaptureButton.Action.began(pressedAt: Self.at(0), photo: true)
        #expect(Rig.precedence(of: .capture(began, of: .primary), stripMakesLightPresses: false)
            == Rig.Precedence(resolvesLightPress: .fullPress, collapsesControls: true))
        let refused = CaptureButton.Action.refused(pressedAt: Self.at(0))
        #expect(Rig.precedence(of: .capture(refused, of: .secondary), stripMakesLightPresses: false)
            == Rig.Precedence(resolvesLightPress: .secondaryPress))
        #expect(Rig.precedence(of: .capture(.burstShot(pressedAt: Self.at(0), shot: 2), of: .primary),
                               stripMakesLightPresses: false) == .none)
        #expect(Rig.precedence(of: .secondaryPressed(.toggleControls), stripMakesLightPresses: true)
            == Rig.Precedence(resolvesLightPress: .secondaryPress))
        #expect(Rig.precedence(of: .halfReleased(.notLight(reason: .fullClicked)), stripMakesLightPresses: false)
            == Rig.Precedence(resolvesLightPress: .pressNotLight))
        #expect(Rig.precedence(of: .strip(.notTap(moved: 0)), stripMakesLightPresses: true)
            == Rig.Precedence(resolvesLightPress: .touchNotTap))
        #expect(Rig.precedence(of: .strip(.notTap(moved: 0)), stripMakesLightPresses: false) == .none)
        #expect(Rig.precedence(of: .strip(.touchBegan(since: Self.at(0))), stripMakesLightPresses: true)
            == Rig.Precedence.none)
    }
}
