/// A fixed on/off pattern: alternating spans, the first one on.
public struct FeedbackPattern: Hashable, Sendable {
    /// Span lengths: on, off, on, … The pattern is over after the last.
    public var spans: [Nanoseconds]

    public init(milliseconds spans: [Double]) {
        self.spans = spans.map { .milliseconds($0) }
    }

    /// The whole pattern's length.
    public var duration: Nanoseconds { spans.reduce(.zero, +) }

    /// The level `elapsed` after the start, and when the span holding it ends; nil once over.
    func level(after elapsed: Nanoseconds) -> (active: Bool, spanEnd: Nanoseconds)? {
        guard elapsed >= .zero else { return nil }
        var end = Nanoseconds.zero
        for (index, span) in spans.enumerated() {
            end = end + span
            if elapsed < end { return (index % 2 == 0, end) }
        }
        return nil
    }
}

/// The patterns the LED and the buzzer play; ``standard`` is what the daemon uses.
public struct FeedbackPatterns: Hashable, Sendable {
    /// The LED on each photo: lit, then dark, so burst shots are told apart even while the LED was lit.
    public var ledPhoto: FeedbackPattern
    /// The LED when a capture fails: a fast blink.
    public var ledFailure: FeedbackPattern
    /// Half the LED's blink period while the chooser is open.
    public var chooserBlinkHalfPeriod: Nanoseconds
    /// The buzzer on each photo: the shutter click.
    public var buzzerPhoto: FeedbackPattern
    /// The buzzer when a capture fails: two long beeps, unlike the click.
    public var buzzerFailure: FeedbackPattern

    public static let standard = FeedbackPatterns(
        ledPhoto: FeedbackPattern(milliseconds: [150, 100]),
        ledFailure: FeedbackPattern(milliseconds: [50, 50, 50, 50, 50, 50, 50, 50, 50, 50, 50, 50]),
        chooserBlinkHalfPeriod: .milliseconds(250),
        buzzerPhoto: FeedbackPattern(milliseconds: [20]),
        buzzerFailure: FeedbackPattern(milliseconds: [300, 100, 300]))
}

/// The levels the feedback lines should have.
public struct FeedbackLevels: Hashable, Sendable, CustomStringConvertible {
    public var led: Bool
    public var buzzer: Bool

    public init(led: Bool, buzzer: Bool) {
        self.led = led
        self.buzzer = buzzer
    }

    public static let off = FeedbackLevels(led: false, buzzer: false)

    public func level(of role: FeedbackRole) -> Bool {
        switch role {
        case .led: led
        case .buzzer: buzzer
        }
    }

    public var description: String { "led \(led ? "on" : "off"), buzzer \(buzzer ? "on" : "off")" }
}

/// What the rig's LED and buzzer show, from the events and the time: a value type the loop drives.
///
/// The LED is lit while the controls are active and blinks while the chooser is open; a photo
/// plays a flash on the LED and a click on the buzzer, a failed capture a fast blink and two long
/// beeps. It never reads a clock: feed events with their times, call ``advance(to:)`` for the
/// levels at an instant, and wake again at ``nextDeadline``. Patterns are timed from the
/// instant they were started at, so a late wake-up shortens a span, never shifts the rest.
public struct FeedbackStateMachine: Sendable {
    private struct Playing: Hashable, Sendable {
        var pattern: FeedbackPattern
        var start: Instant
        var isFailure: Bool
    }

    public let patterns: FeedbackPatterns
    private var controlsActive = false
    /// When the chooser opened, while it is open; the blink is timed from it.
    private var chooserOpenedAt: Instant?
    private var led: Playing?
    private var buzzer: Playing?
    /// The latest instant the machine was told about; inputs are never taken earlier.
    private var cursor = Instant(rawValue: .min)

    public init(patterns: FeedbackPatterns = .standard) {
        self.patterns = patterns
    }

    // MARK: Inputs

    /// One event of the rig's state machines; those about the controls and the chooser change the LED.
    public mutating func event(_ event: ShutterEvent) {
        let now = take(event.time)
        switch event {
        case .controlsActive:
            controlsActive = true
        case .controlsInactive:
            controlsActive = false
            chooserOpenedAt = nil
        case .chooser(.began, _):
            chooserOpenedAt = now
        case .chooser(.ended, _), .chooser(.cancelled, _):
            chooserOpenedAt = nil
        default:
            break
        }
    }

    /// A photo is on disk: flash and click.
    public mutating func photoSaved(at time: Instant) {
        let now = take(time)
        // A failure still being signalled is not cut short by the next shot of a burst.
        if led?.isFailure != true { led = Playing(pattern: patterns.ledPhoto, start: now, isFailure: false) }
        if buzzer?.isFailure != true { buzzer = Playing(pattern: patterns.buzzerPhoto, start: now, isFailure: false) }
    }

    /// A capture failed: fast blink and the failure beeps.
    public mutating func captureFailed(at time: Instant) {
        let now = take(time)
        led = Playing(pattern: patterns.ledFailure, start: now, isFailure: true)
        buzzer = Playing(pattern: patterns.buzzerFailure, start: now, isFailure: true)
    }

    /// Lets time pass to `now` and returns the levels the lines should have then.
    public mutating func advance(to now: Instant) -> FeedbackLevels {
        let now = take(now)
        if let playing = led, now - playing.start >= playing.pattern.duration { led = nil }
        if let playing = buzzer, now - playing.start >= playing.pattern.duration { buzzer = nil }
        return levels(at: now)
    }

    /// The next instant after the latest input at which a level may change; nil while nothing moves.
    public var nextDeadline: Instant? {
        // No arrays: the event loop asks before every wait.
        var earliest = changeDeadline(of: led)
        earliest = Instant.earliest(earliest, changeDeadline(of: buzzer))
        if let opened = chooserOpenedAt {
            let half = patterns.chooserBlinkHalfPeriod.rawValue
            let elapsed = (cursor - opened).rawValue
            earliest = Instant.earliest(earliest, opened + Nanoseconds(rawValue: (elapsed / half + 1) * half))
        }
        return earliest
    }

    /// When a playing pattern's current level ends, if it is playing and not over.
    private func changeDeadline(of playing: Playing?) -> Instant? {
        guard let playing, let level = playing.pattern.level(after: cursor - playing.start) else { return nil }
        return playing.start + level.spanEnd
    }

    // MARK: Levels

    private func levels(at now: Instant) -> FeedbackLevels {
        var ledLevel: Bool
        if let opened = chooserOpenedAt {
            ledLevel = ((now - opened).rawValue / patterns.chooserBlinkHalfPeriod.rawValue) % 2 == 0
        } else {
            ledLevel = controlsActive
        }
        if let playing = led, let level = playing.pattern.level(after: now - playing.start) { ledLevel = level.active }
        let buzzerLevel = buzzer.flatMap { $0.pattern.level(after: now - $0.start) }?.active ?? false
        return FeedbackLevels(led: ledLevel, buzzer: buzzerLevel)
    }

    private mutating func take(_ time: Instant) -> Instant {
        if time > cursor { cursor = time }
        return cursor
    }
}
