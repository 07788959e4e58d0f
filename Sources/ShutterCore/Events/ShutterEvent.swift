/// The phase of an interaction that has a beginning and an end.
public enum EventPhase: String, Hashable, Sendable {
    case began, changed, ended, cancelled
}

/// Which capture handler a press drives, as the phone's primary and secondary actions.
public enum CaptureAction: String, Hashable, Sendable {
    case primary, secondary
    /// A capture asked for through the local API (`capture` command), not a press.
    case remote
}

/// Why a press cannot lead to a photo.
public enum CancelReason: String, Hashable, Sendable {
    /// Capture is disabled or the camera is not ready.
    case unavailable
    /// Input ended (shutdown, end of a trace) while the press was still down.
    case interrupted
    /// The chip lost edges and reading the line found it released: when it was released is unknown.
    case edgesLost
    /// The line did not change for the board's `stuckAfterMs`: a jammed button is no press.
    case stuck
}

/// Where a light press came from.
public enum LightPressSource: String, Hashable, Sendable {
    /// The first stage of a two-stage button.
    case half
    /// A tap on the slider strip (rigs without a `half` line).
    case strip
}

/// Why the controls became inactive.
public enum InactiveReason: String, Hashable, Sendable {
    /// A full click (or a secondary capture) collapsed them before the capture.
    case capture
    /// No input for the idle timeout.
    case idle
    /// The secondary button toggled them off.
    case toggle
    /// Input ended.
    case finish
}

/// One thing the rig recognized, for the camera, the LED, the buzzer and any listener.
///
/// Every case carries `at`, the instant the decision was made (which is never
/// before the input that caused it); the instants a person acted at travel in
/// their own fields (`pressedAt`). See `EVENTS.md` for the JSON form.
public enum ShutterEvent: Hashable, Sendable {
    /// A press of `full` or of `secondary` mapped to capture, or a remote capture (`began` and `ended` at once).
    /// `photo` is true on the phase that takes the picture (the board's `captureOn`). `releasedAt` (on
    /// `ended` only) is the release's first edge: a `captureOn: "ended"` photo shows that instant.
    case capture(phase: EventPhase, action: CaptureAction, pressedAt: Instant, releasedAt: Instant?, photo: Bool,
                 reason: CancelReason?, at: Instant)
    /// Holding the full press: `began` is shot 1, each `changed` one more shot, `ended` carries the count.
    case burst(phase: EventPhase, pressedAt: Instant, shot: Int, at: Instant)
    /// Holding `half`: focus and metering.
    case prepare(phase: EventPhase, pressedAt: Instant, at: Instant)
    /// A light press, once it is known not to be the first of a double.
    case lightPress(source: LightPressSource, pressedAt: Instant, releasedAt: Instant, at: Instant)
    /// Two light presses inside the double-press window.
    case doubleLightPress(source: LightPressSource, pressedAt: Instant, at: Instant)
    /// A swipe along the strip; `position` in [0, 1], `delta` since the previous swipe event,
    /// `velocity` in strip lengths per second (positive toward the last pad).
    case swipe(phase: EventPhase, position: Double, delta: Double, velocity: Double, flick: Bool, at: Instant)
    /// The controls can be operated; `control` is the current one.
    case controlsActive(control: String, display: ControlDisplay, at: Instant)
    /// A swipe starts (`began`) or ends (`ended`) adjusting `control`.
    case controlsAdjusting(phase: EventPhase, control: String, at: Instant)
    /// The controls went away.
    case controlsInactive(reason: InactiveReason, at: Instant)
    /// A control's new value; pickers also carry the item's title.
    case controlValue(control: String, value: ControlValue, display: ControlDisplay, at: Instant)
    /// The list of controls opened or closed.
    case chooser(phase: EventPhase, at: Instant)
    /// A swipe in the chooser moved to `control`.
    case controlHighlighted(control: String, at: Instant)
    /// A light press in the chooser made `control` current.
    case controlSelected(control: String, display: ControlDisplay, at: Instant)
    /// `line` (board name) stayed active for the board's `stuckAfterMs`: it is ignored until it releases.
    case lineStuck(line: String, at: Instant)
    /// A stuck line released; it counts again.
    case lineFreed(line: String, at: Instant)
    /// Control `control` was enabled or disabled (the API's `enable`/`disable`); only when it changed.
    case controlEnabled(control: String, enabled: Bool, at: Instant)
    /// Capture was enabled or disabled (the API's `enable`/`disable capture`); only when it changed.
    /// The daemon owns this switch and emits it, not the recognizer.
    case captureEnabled(enabled: Bool, at: Instant)

    /// When the decision was made.
    public var time: Instant {
        switch self {
        case .capture(_, _, _, _, _, _, let at), .burst(_, _, _, let at), .prepare(_, _, let at),
             .lightPress(_, _, _, let at), .doubleLightPress(_, _, let at), .swipe(_, _, _, _, _, let at),
             .controlsActive(_, _, let at), .controlsAdjusting(_, _, let at), .controlsInactive(_, let at),
             .controlValue(_, _, _, let at), .chooser(_, let at), .controlHighlighted(_, let at),
             .controlSelected(_, _, let at), .lineStuck(_, let at), .lineFreed(_, let at),
             .controlEnabled(_, _, let at), .captureEnabled(_, let at):
            at
        }
    }

    /// The instant whose camera frame a photo this event asks for must show, if it asks for one: the
    /// press for `capture began`, the release for `capture ended` (board `captureOn: "ended"`), the
    /// scheduled instant for a burst shot.
    public var photoInstant: Instant? {
        switch self {
        case .capture(let phase, _, let pressedAt, let releasedAt, true, _, _):
            phase == .ended ? releasedAt : pressedAt
        case .burst(.began, _, _, let at), .burst(.changed, _, _, let at):
            at
        default:
            nil
        }
    }

    /// The event's name in JSON.
    public var name: String {
        switch self {
        case .capture: "capture"
        case .burst: "burst"
        case .prepare: "prepare"
        case .lightPress: "lightPress"
        case .doubleLightPress: "doubleLightPress"
        case .swipe: "swipe"
        case .controlsActive: "controlsActive"
        case .controlsAdjusting: "controlsAdjusting"
        case .controlsInactive: "controlsInactive"
        case .controlValue: "controlValue"
        case .chooser: "chooser"
        case .controlHighlighted: "controlHighlighted"
        case .controlSelected: "controlSelected"
        case .lineStuck: "lineStuck"
        case .lineFreed: "lineFreed"
        case .controlEnabled: "controlEnabled"
        case .captureEnabled: "captureEnabled"
        }
    }

    /// Whether the event ends an adjustment of the controls (its swipe, a selection, the controls
    /// closing): the moment to save their values, not each coalesced value of a swipe.
    public var endsAnAdjustment: Bool {
        switch self {
        case .controlsAdjusting, .controlSelected, .controlsInactive: true
        default: false
        }
    }

    /// The event as one line of JSON, `"event"` and `"t"` first; byte-identical on every run.
    public var json: JSONLine { json(keepingMembers: true) }

    /// The event's JSON line appended to `out` with its line feed, as ``json`` prints it: for a
    /// stream of many lines (`shutter replay`), without the members hooks read.
    public func appendJSONLine(to out: inout [UInt8]) {
        json(keepingMembers: false).appendClosedLine(to: &out)
    }

    private func json(keepingMembers: Bool) -> JSONLine {
        var line = JSONLine(event: name, at: time, keepingMembers: keepingMembers)
        switch self {
        case .capture(let phase, let action, let pressedAt, let releasedAt, let photo, let reason, _):
            line.add("phase", phase.rawValue)
            line.add("action", action.rawValue)
            line.add("pressedAt", pressedAt)
            if let releasedAt { line.add("releasedAt", releasedAt) }
            line.add("photo", photo)
            if let reason { line.add("reason", reason.rawValue) }
        case .burst(let phase, let pressedAt, let shot, _):
            line.add("phase", phase.rawValue)
            line.add("pressedAt", pressedAt)
            line.add(phase == .ended ? "shots" : "shot", shot)
        case .prepare(let phase, let pressedAt, _):
            line.add("phase", phase.rawValue)
            line.add("pressedAt", pressedAt)
        case .lightPress(let source, let pressedAt, let releasedAt, _):
            line.add("source", source.rawValue)
            line.add("pressedAt", pressedAt)
            line.add("releasedAt", releasedAt)
        case .doubleLightPress(let source, let pressedAt, _):
            line.add("source", source.rawValue)
            line.add("pressedAt", pressedAt)
        case .swipe(let phase, let position, let delta, let velocity, let flick, _):
            line.add("phase", phase.rawValue)
            line.add("position", position, decimals: 4)
            line.add("delta", delta, decimals: 4)
            line.add("velocity", velocity, decimals: 3)
            if phase == .ended { line.add("flick", flick) }
        case .controlsActive(let control, let display, _), .controlSelected(let control, let display, _):
            line.add("control", control)
            line.add("label", display.label)
            line.add("text", display.text)
        case .controlsAdjusting(let phase, let control, _):
            line.add("phase", phase.rawValue)
            line.add("control", control)
        case .controlsInactive(let reason, _):
            line.add("reason", reason.rawValue)
        case .controlValue(let control, let value, let display, _):
            line.add("control", control)
            switch value {
            case .number(let number): line.add("value", number)
            case .index(let index):
                line.add("index", index)
                line.add("title", display.title ?? String(index))
            }
            line.add("label", display.label)
            line.add("text", display.text)
        case .chooser(let phase, _):
            line.add("phase", phase.rawValue)
        case .controlHighlighted(let control, _):
            line.add("control", control)
        case .lineStuck(let name, _), .lineFreed(let name, _):
            line.add("line", name)
        case .controlEnabled(let control, let enabled, _):
            line.add("control", control)
            line.add("enabled", enabled)
        case .captureEnabled(let enabled, _):
            line.add("enabled", enabled)
        }
        return line
    }
}
