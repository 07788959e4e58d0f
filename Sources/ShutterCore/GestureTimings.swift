/// Every timing the gesture recognizer uses, from the board's `gestures` object.
///
/// Defaults come from well-tested peers: the kernel's gpio-keys debounce (5 ms),
/// ESPHome's click window (50–350 ms) and libinput's tap timeout (180 ms).
public struct GestureTimings: Hashable, Sendable {
    /// A level held for less than this is noise, never a press or a touch.
    public var glitchFilter = Nanoseconds.milliseconds(5)
    /// The longest half press that still counts as a light press.
    public var lightPressMaximum = Nanoseconds.milliseconds(350)
    /// How soon a second light press must follow the first to make a double.
    public var doublePressWindow = Nanoseconds.milliseconds(300)
    /// The longest touch on the strip that is a tap (the light press of a one-stage rig).
    public var tapMaximum = Nanoseconds.milliseconds(180)
    /// Holding `half` this long starts `prepare` (focus and metering).
    public var prepareAfter = Nanoseconds.milliseconds(300)
    /// Whether holding the full press takes a burst.
    public var burstEnabled = false
    /// Holding the full press this long starts a burst.
    public var burstAfter = Nanoseconds.milliseconds(500)
    /// The time between burst shots.
    public var burstInterval = Nanoseconds.milliseconds(200)
    /// A burst takes at most this many shots: a `full` still held when the next would be due is
    /// jammed (a person bursting for minutes is rarer than a button stuck down), reported once
    /// and ignored until it releases.
    public var burstMaxShots = 500
    /// The same bound in time, counted from the press: no burst shot is due later than this.
    /// With the defaults (500 ms to the first shot, one each 200 ms) it is the bound that stops
    /// a burst, after 298 shots; `burstMaxShots` bounds quick intervals.
    public var burstMaximum = Nanoseconds.milliseconds(60_000)
    /// Controls become inactive after this long without input.
    public var controlsIdleTimeout = Nanoseconds.milliseconds(5000)
    /// At most one control value update per this span during a swipe.
    public var coalescingInterval = Nanoseconds.milliseconds(50)
    /// A finger may leave every pad this long between two pads and still be one swipe.
    public var liftGrace = Nanoseconds.milliseconds(60)
    /// A line or finger back less than this after letting go is the same press: a pad or a
    /// button's contact dropping out for a few milliseconds, or a finger rolling over to the next
    /// pad. No person presses again that soon, so a second press, tap or burst needs this gap.
    public var secondPressGap = Nanoseconds.milliseconds(20)
    /// A line active this long without a change is stuck (water on a pad, a jammed button): it is
    /// reported once and ignored until it releases.
    public var stuckAfter = Nanoseconds.milliseconds(30_000)
    /// The same for a pad, longer: a thumb rests on the strip while it holds the rig.
    public var padStuckAfter = Nanoseconds.milliseconds(120_000)
    /// Whether the photo is taken when the press begins or when it ends.
    public var captureOn = CapturePhase.began
    /// What the secondary button does.
    public var secondaryAction = SecondaryAction.capture
    /// How long before a decision that makes events (the end of a press's confirmation window,
    /// of a light press's double-press window) the daemon's loop wakes, to wait out the rest
    /// awake instead of asleep: a sleeping process wakes after its timer, late by the kernel's
    /// wake-up latency (tens of µs on an idle PC, more on a busy board, milliseconds under
    /// emulation), while one awake reaches the instant itself. It costs this much CPU per
    /// decision, never while idle; 0 sleeps until the deadline.
    public var wakeAhead = Nanoseconds.milliseconds(1)
    /// How long before such a decision the daemon's loop leaves the camera alone, and takes its
    /// frames again once the decision is made: polling a V4L2 camera waits for its driver's
    /// queue lock, which a driver may hold while it makes a frame (vivid does), and a loop
    /// waiting there decides late. The frames wait in the driver with their own timestamps, so
    /// no photo changes. Never longer than this at a stretch; 0 polls the camera throughout.
    public var holdCamera = Nanoseconds.milliseconds(10)

    public init() {}
}

/// The capture phase that takes the photo.
public enum CapturePhase: String, CaseIterable, Hashable, Sendable {
    case began, ended
}

/// What the secondary button is mapped to.
public enum SecondaryAction: String, CaseIterable, Hashable, Sendable {
    /// Take a photo, like the primary action (the phone's fall-through).
    case capture
    /// Show or hide the controls.
    case toggleControls
    /// Make the next enabled control current.
    case nextControl
}

extension GestureTimings: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case glitchFilterMs, lightPressMaxMs, doublePressWindowMs, tapMaxMs, prepareAfterMs
        case burst, burstAfterMs, burstIntervalMs, burstMaxShots, burstMaxMs, controlsIdleTimeoutMs, coalescingIntervalMs, liftGraceMs
        case captureOn, secondaryAction, stuckAfterMs, padStuckAfterMs, secondPressGapMs, wakeAheadMs, holdCameraMs
    }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = GestureTimings()
        glitchFilter = try container.decodeMilliseconds(forKey: .glitchFilterMs, in: 0...100) ?? defaults.glitchFilter
        lightPressMaximum = try container.decodeMilliseconds(forKey: .lightPressMaxMs, in: 20...5000) ?? defaults.lightPressMaximum
        doublePressWindow = try container.decodeMilliseconds(forKey: .doublePressWindowMs, in: 0...5000) ?? defaults.doublePressWindow
        tapMaximum = try container.decodeMilliseconds(forKey: .tapMaxMs, in: 20...5000) ?? defaults.tapMaximum
        prepareAfter = try container.decodeMilliseconds(forKey: .prepareAfterMs, in: 0...10_000) ?? defaults.prepareAfter
        burstEnabled = try container.decodeIfPresent(Bool.self, forKey: .burst) ?? defaults.burstEnabled
        burstAfter = try container.decodeMilliseconds(forKey: .burstAfterMs, in: 50...10_000) ?? defaults.burstAfter
        burstInterval = try container.decodeMilliseconds(forKey: .burstIntervalMs, in: 10...10_000) ?? defaults.burstInterval
        burstMaxShots = try container.decodeIfPresent(Int.self, forKey: .burstMaxShots) ?? defaults.burstMaxShots
        if !(1...100_000).contains(burstMaxShots) {
            throw container.fail(.burstMaxShots, "must be between 1 and 100000")
        }
        burstMaximum = try container.decodeMilliseconds(forKey: .burstMaxMs, in: 1000...3_600_000) ?? defaults.burstMaximum
        controlsIdleTimeout = try container.decodeMilliseconds(forKey: .controlsIdleTimeoutMs, in: 100...600_000)
            ?? defaults.controlsIdleTimeout
        coalescingInterval = try container.decodeMilliseconds(forKey: .coalescingIntervalMs, in: 0...1000)
            ?? defaults.coalescingInterval
        liftGrace = try container.decodeMilliseconds(forKey: .liftGraceMs, in: 0...1000) ?? defaults.liftGrace
        secondPressGap = try container.decodeMilliseconds(forKey: .secondPressGapMs, in: 0...1000) ?? defaults.secondPressGap
        stuckAfter = try container.decodeMilliseconds(forKey: .stuckAfterMs, in: 1000...3_600_000) ?? defaults.stuckAfter
        padStuckAfter = try container.decodeMilliseconds(forKey: .padStuckAfterMs, in: 1000...3_600_000) ?? defaults.padStuckAfter
        captureOn = try container.decodeEnum(CapturePhase.self, forKey: .captureOn) ?? defaults.captureOn
        secondaryAction = try container.decodeEnum(SecondaryAction.self, forKey: .secondaryAction) ?? defaults.secondaryAction
        wakeAhead = try container.decodeMilliseconds(forKey: .wakeAheadMs, in: 0...20) ?? defaults.wakeAhead
        holdCamera = try container.decodeMilliseconds(forKey: .holdCameraMs, in: 0...100) ?? defaults.holdCamera
        if lightPressMaximum <= glitchFilter {
            throw container.fail(.lightPressMaxMs, "must be longer than glitchFilterMs (\(glitchFilter.milliseconds.shortDescription) ms)")
        }
        if burstMaximum < burstAfter {
            throw container.fail(.burstMaxMs, "must be at least burstAfterMs (\(burstAfter.milliseconds.shortDescription) ms): "
                + "a burst ends before its first shot")
        }
        if tapMaximum <= glitchFilter {
            throw container.fail(.tapMaxMs, "must be longer than glitchFilterMs (\(glitchFilter.milliseconds.shortDescription) ms)")
        }
    }
}
