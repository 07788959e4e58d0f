/// Why the recognizer decided what it did, one line for people: setup mode (`--explain`).
///
/// The recognizer makes these from its decisions, whose reasons carry the figures the decision was
/// made on ("full: 3.2 ms pulse dropped (glitch filter 5 ms)"), with ``Formatter``, only while
/// ``GestureStateMachine/explains`` is on: off, no text is built and nothing is stored.
public struct Explanation: Hashable, Sendable {
    /// When the decision was made (the recognizer's time, as events are stamped).
    public var time: Instant
    /// What the decision is about: a line's name, `strip`, `controls` or `capture`.
    public var subject: String
    /// The decision and its reason.
    public var reason: String

    public init(time: Instant, subject: String, reason: String) {
        self.time = time
        self.subject = subject
        self.reason = reason
    }

    /// The line setup mode prints: "subject: reason".
    public var line: String { "\(subject): \(reason)" }
}

extension Explanation {
    /// A span as explanations state it: "3.2 ms", "410 ms" (one decimal below 10 ms, whole above).
    static func milliseconds(_ span: Nanoseconds) -> String {
        let value = span.milliseconds
        return JSONLine.number(value, decimals: abs(value) < 10 ? 1 : 0) + " ms"
    }

    /// A board timing with its field name: "lightPressMaxMs 350".
    static func setting(_ name: String, _ span: Nanoseconds) -> String {
        "\(name) \(JSONLine.number(span.milliseconds, decimals: 1))"
    }

    /// A distance on the strip: "0 pads", "0.5 pad", "1 pad", "1.5 pads".
    static func pads(_ distance: Double) -> String {
        let text = JSONLine.number(abs(distance), decimals: 2)
        return text + (text == "0" || abs(distance) > 1 ? " pads" : " pad")
    }
}

extension Explanation {
    /// An explanation's words before it is stamped with its instant.
    typealias Text = (subject: String, reason: String)

    /// Makes setup mode's text from the reasons the recognizer's decisions carry: it decides
    /// nothing and reads no machine, so what is explained is what was decided.
    struct Formatter: Sendable {
        private let timings: GestureTimings
        private let lineNames: [String]
        /// Each line's debounce window (`max(debounceMs, glitchFilterMs)`, or the glitch filter alone).
        private let windows: [Nanoseconds]
        private let isPad: [Bool]
        private let halfLine: Int?
        private let fullLine: Int?
        private let secondaryLine: Int?

        /// - Parameter windows: each line's debounce window, in board line order.
        init(board: Board, windows: [Nanoseconds]) {
            timings = board.gestures
            lineNames = board.lines.map(\.name)
            self.windows = windows
            isPad = board.lines.map { $0.role == .pad }
            halfLine = board.lines.firstIndex { $0.role == .half }
            fullLine = board.lines.firstIndex { $0.role == .full }
            secondaryLine = board.lines.firstIndex { $0.role == .secondary }
        }

        /// Why the recognizer decided `decision`; nil for a decision that needs no word.
        func text(of decision: GestureStateMachine.Decision) -> Text? {
            switch decision {
            case .button(let action):
                return text(of: action)
            case .halfReleased(let release):
                return text(of: release)
            case .capture(.refused, let button):
                guard let line = button == .primary ? fullLine : secondaryLine else { return nil }
                return (lineNames[line], "pressed while capture is unavailable: cancelled")
            case .capture(.burstBoundReached, _):
                guard let line = fullLine else { return nil }
                let bound = "burstMaxShots \(timings.burstMaxShots), " + setting("burstMaxMs", timings.burstMaximum)
                return (lineNames[line], "held past the burst's bound (\(bound)): stuck, ignored until it releases")
            case .capture, .secondaryPressed:
                return nil
            case .lightPress(let action):
                return text(of: action).map { (lightPressSubject, $0) }
            case .strip(let action):
                return text(of: action).map { ("strip", $0) }
            case .controls(.closed(.idle)):
                let timeout = setting("controlsIdleTimeoutMs", timings.controlsIdleTimeout)
                return ("controls", "no input for \(timeout): inactive")
            case .controls:
                return nil
            }
        }

        private func text(of action: TwoStageButton.Action) -> Text? {
            switch action {
            case .half(.prepareBegan):
                guard let halfLine else { return nil }
                return (lineNames[halfLine], "held \(setting("prepareAfterMs", timings.prepareAfter)): prepare began")
            case .fullNoise(let halfMayFollow):
                guard let halfLine, let fullLine else { return nil }
                let half = lineNames[halfLine]
                // With no window on `full`, `half` pressed at this same instant may still come.
                let unless = halfMayFollow ? " unless \(half) is pressed at this same instant" : ""
                return (lineNames[fullLine], "pressed while \(half) is released: "
                    + "a two-stage button cannot close its full stage alone, ignored as noise" + unless)
            case .clickAfterHalf:
                guard let halfLine else { return nil }
                return (lineNames[halfLine], "pressed at the same instant as full: a full click")
            case .half, .full:
                return nil
            }
        }

        private func text(of release: HalfButton.Release) -> Text? {
            guard let halfLine else { return nil }
            let maximum = setting("lightPressMaxMs", timings.lightPressMaximum)
            switch release {
            case .lightPress(_, _, let held):
                return (lineNames[halfLine], "held \(milliseconds(held)) ≤ \(maximum): a light press")
            case .notLight(.fullClicked):
                return (lineNames[halfLine], "released after a full click: not a light press")
            case .notLight(.heldLongerThanMaximum(let held)):
                return (lineNames[halfLine], "held \(milliseconds(held)) > \(maximum): not a light press")
            case .notLight(.notPressed):
                return nil
            }
        }

        /// What light presses come from: the half line, or the strip's taps.
        private var lightPressSubject: String { halfLine.map { lineNames[$0] } ?? "strip" }

        /// What the light-press recognizer decided, and why a light press is single.
        private func text(of action: LightPressRecognizer.Action) -> String? {
            let window = setting("doublePressWindowMs", timings.doublePressWindow)
            switch action {
            case .none:
                return nil
            case .secondPress(let gap):
                return "pressed again \(milliseconds(gap)) after a light press ≤ \(window): "
                    + "a double light press if this one is light too"
            case .single(_, _, .pressedAgainLate(let gap)):
                return "pressed again \(milliseconds(gap)) after a light press > \(window): that light press was single"
            // The first of two light presses is single only because this one completed: this one waits.
            case .waiting, .single(_, _, .anotherLightPress):
                return "light press waits \(window) for a second one before it is reported"
            case .double:
                return "second light press inside the window: a double light press"
            case .single(_, _, .interrupted(let cause)):
                let text = switch cause {
                case .inputEnded: "input ended"
                case .pressNotLight: "a press that was not light"
                case .fullPress: "a full press"
                case .secondaryPress: "a secondary press"
                case .touchNotTap: "a touch that is no tap"
                case .swipe: "a swipe"
                }
                return "\(text) came instead of a second light press: the light press is single"
            case .single(_, _, .secondPressNotLight):
                return "second press held too long to be light: no double, the light press is single"
            case .single(_, _, .noSecondPress):
                return "no second press within \(window): a single light press"
            }
        }

        /// Why the strip decided `action`: the figures ride on the action.
        private func text(of action: SliderStrip.Action) -> String? {
            let tapMaximum = setting("tapMaxMs", timings.tapMaximum)
            switch action {
            case .tap(let pressedAt, let releasedAt, let moved):
                return "moved \(pads(moved)) in \(milliseconds(releasedAt - pressedAt)) ≤ \(tapMaximum): a tap"
            case .doubleTap(let pressedAt, let firstReleasedAt, let secondPressedAt, let releasedAt):
                let first = milliseconds(firstReleasedAt - pressedAt)
                let second = milliseconds(releasedAt - secondPressedAt)
                return "a tap of \(first), then one of \(second) ≤ \(tapMaximum) on the next pad "
                    + "\(milliseconds(secondPressedAt - firstReleasedAt)) later: two taps"
            case .notTap(let moved):
                return "touched longer than \(tapMaximum), moved \(pads(moved)): not a tap"
            case .swipeBegan(_, .moved(let distance, let after)):
                return "moved \(pads(distance)) in \(milliseconds(after)): a swipe"
            case .swipeBegan(_, .rested(let distance)):
                let dwell = milliseconds(SliderStrip.dwell)
                return "moved \(pads(distance)) and rested there \(dwell) after \(tapMaximum): a swipe"
            case .swipeEnded(_, .inputEnded):
                return "input ended: the swipe ends without a flick"
            case .swipeEnded(let motion, .lifted(let flick)):
                let speed = JSONLine.number(abs(motion.padsPerSecond), decimals: 1)
                let limit = JSONLine.number(SliderStrip.flickPadsPerSecond, decimals: 1)
                return flick ? "lifted at \(speed) pads/s ≥ \(limit): a flick"
                    : "lifted at \(speed) pads/s < \(limit): the swipe ends, no flick"
            case .ignored(let pressedAt, let releasedAt, let moved):
                return "touch of \(milliseconds(releasedAt - pressedAt)) > \(tapMaximum) "
                    + "that moved \(pads(moved)): neither a tap nor a swipe"
            case .none, .touchBegan, .swipeChanged:
                return nil
            }
        }

        /// The debouncer dropped a change of `line` that did not hold for `window`.
        func dropped(line: Int, _ attempt: (start: Instant, lastEdge: Instant), window: Nanoseconds) -> Text {
            let pulse = milliseconds(attempt.lastEdge - attempt.start)
            return (lineNames[line], "\(pulse) pulse dropped (\(windowName(of: line, window)))")
        }

        /// What a debounce window is called: the glitch filter, the debounce, or (a button's
        /// release) the second-press gap.
        private func windowName(of line: Int, _ window: Nanoseconds) -> String {
            if window == timings.glitchFilter { return "glitch filter " + milliseconds(window) }
            if window != windows[line] { return setting("secondPressGapMs", window) + ": the same press" }
            return "debounce " + milliseconds(window)
        }

        /// `line` was active for `limit`: stuck.
        func stuck(line: Int, limit: Nanoseconds) -> Text {
            let limit = setting(isPad[line] ? "padStuckAfterMs" : "stuckAfterMs", limit)
            return (lineNames[line], "active for \(limit): stuck, ignored until it releases")
        }

        /// Capture became available or not.
        func captureAvailability(_ available: Bool) -> Text {
            ("capture", available ? "available: presses take photos"
                : "unavailable (no camera, or disabled): presses are cancelled")
        }

        private func milliseconds(_ span: Nanoseconds) -> String { Explanation.milliseconds(span) }
        private func setting(_ name: String, _ span: Nanoseconds) -> String { Explanation.setting(name, span) }
        private func pads(_ distance: Double) -> String { Explanation.pads(distance) }
    }
}
