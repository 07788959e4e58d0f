/// The whole rig's input logic: raw edges and time in, ``ShutterEvent``s out.
///
/// One value type the event loop drives (swift-nio style): it owns software
/// debounce, the buttons, the slider strip, the light-press recognizer and the
/// controls, and never reads a clock. Feed raw edges in time order with
/// ``edge(_:into:)``, let time pass with ``advance(to:into:)`` (the daemon arms a
/// timer for ``nextDeadline``), and end with ``finish(at:into:)``. The same input
/// always gives the same events.
public struct GestureStateMachine: Sendable {
    private enum LineKind: Sendable {
        case half, full, secondary
        case pad(Int)
    }

    /// The timers of the gesture machines, in the order they fire when due at the same instant:
    /// the double-press window, prepare (`half` held), the next burst shot (`full` held), the
    /// secondary button, the strip, the controls' ticks (a glide's step, a coalesced value's send),
    /// the controls' idle timeout and stuck lines.
    private enum Timer: Int, Sendable {
        case lightPress, prepare, burst, secondary, strip, tick, idle, stuck
    }

    private let timings: GestureTimings
    private let kinds: [LineKind]
    private let halfLine: Int?
    /// The `full` line (every board has one; nil only for a board built in code without it).
    private let fullLine: Int?
    private let secondaryLine: Int?
    private let timerHolds: TimerHolds
    private let lineNames: [String]
    /// Stuck detection, by role: which lines are stuck and ignored until they release.
    private var stuckLines: StuckLines
    private var debouncers: [LineDebouncer]
    /// The lines whose debouncer has a change pending: the only ones the scans for deadlines and
    /// timer holds need to visit. Kept by ``debounce(_:_:)`` for every change of a debouncer.
    private var pendingLines: LineSet
    /// The capture lines, `full` and `secondary`, whose stuck watch follows whether a person holds them.
    private let captureLines: [Int]
    /// `half` and `full`, and which `full` presses are clicks.
    private var button: TwoStageButton
    private var secondary: CaptureButton
    private var lightPresses: LightPressRecognizer
    private var strip: SliderStrip
    private var controls: ControlsStateMachine
    /// What the controls' current step did; ``controlsStep(at:into:_:)`` empties it into events
    /// (kept here so a step allocates nothing once it has grown).
    private var controlActions: [ControlsStateMachine.Action] = []
    private var captureAvailable = true
    /// The instant of the latest decision; events are never stamped earlier.
    private var cursor = Instant(rawValue: .min)
    /// While input ends, only deadlines that complete what a person already did may run.
    private var finishing = false
    /// Setup mode's explanations not yet taken; nil while ``explains`` is off, so nothing is built.
    private var explanations: [Explanation]?
    /// Makes the explanations' text from the decisions' reasons.
    private let explainer: Explanation.Formatter

    /// The clock's last instant: a deadline that saturated there is never due.
    static let never = Instant(rawValue: .max)

    /// Until when (exclusive) nothing is due: set by the scan in ``run(until:into:)`` that found nothing
    /// to fire, cleared by every change of state. `advance(to:)` then `edge(_:)` at the same instant (as
    /// the daemon and `replay` feed edges) scan once, not twice.
    private var quietUntil: Instant?

    /// Creates the machine for `board`, every line released and the controls inactive.
    ///
    /// - Parameters:
    ///   - softwareDebounce: the lines whose debounce must be done here (nil = every line whose board
    ///     debounce is above zero); on libgpiod 2.x the kernel debounces some lines and they are left out.
    ///     The glitch filter applies to every line either way.
    ///   - initialValues: persisted control values by control id (nil = the board's initial values);
    ///     unknown ids and values of the wrong kind are ignored, out-of-range values are clamped.
    public init(board: Board, softwareDebounce: Set<LineIndex>? = nil, initialValues: [String: ControlValue]? = nil) {
        timings = board.gestures
        var padNumber = 0
        kinds = board.lines.map { line in
            switch line.role {
            case .half: return .half
            case .full: return .full
            case .secondary: return .secondary
            case .pad:
                padNumber += 1
                return .pad(padNumber - 1)
            }
        }
        halfLine = board.lines.firstIndex { $0.role == .half }
        fullLine = board.lines.firstIndex { $0.role == .full }
        secondaryLine = board.lines.firstIndex { $0.role == .secondary }
        timerHolds = TimerHolds(kinds: kinds, halfLine: halfLine)
        lineNames = board.lines.map(\.name)
        stuckLines = StuckLines(limits: board.lines.map { line in
            switch line.role {
            case .half: nil
            case .full, .secondary: board.gestures.stuckAfter
            case .pad: board.gestures.padStuckAfter
            }
        })
        debouncers = board.lines.indices.map { index in
            let line = board.lines[index]
            let software = softwareDebounce.map { $0.contains(LineIndex(index)) } ?? (line.debounce > .zero)
            let window = software ? max(line.debounce, board.gestures.glitchFilter) : board.gestures.glitchFilter
            // A button's release must last the second-press gap: a shorter dropout is the same press
            // (one light press, one capture, a burst that goes on). Pads are the strip's to judge.
            let isButton = line.role != .pad
            return LineDebouncer(window: window, releaseWindow: isButton ? board.gestures.secondPressGap : nil)
        }
        // Board validation allows 64 pads and the three buttons; a board built in code must fit too.
        precondition(board.lines.count <= LineSet.capacity, "at most \(LineSet.capacity) lines, this board has \(board.lines.count)")
        pendingLines = LineSet()
        captureLines = board.lines.indices.filter { [.full, .secondary].contains(board.lines[$0].role) }
        button = TwoStageButton(timings: board.gestures, hasHalf: halfLine != nil)
        secondary = CaptureButton(action: .secondary, timings: board.gestures, burst: false)
        lightPresses = LightPressRecognizer(window: board.gestures.doublePressWindow)
        strip = SliderStrip(padCount: padNumber, timings: board.gestures)
        controls = ControlsStateMachine(controls: board.controls, padCount: padNumber, timings: board.gestures,
                                        initialValues: initialValues)
        explainer = Explanation.Formatter(board: board, windows: debouncers.map(\.window))
    }

    // MARK: Inputs

    /// One raw edge from the chip (bounce included), at or after every earlier input's time.
    public mutating func edge(_ edge: Edge, into events: inout [ShutterEvent]) {
        let index = edge.line.rawValue
        precondition(debouncers.indices.contains(index), "edge on line \(index), but the board has \(debouncers.count) lines")
        takeInput(at: edge.time, into: &events)
        let attempt = explanations != nil ? debouncers[index].pendingAttempt : nil
        let attemptWindow = debouncers[index].pendingWindow
        if let transition = debounce(index, { $0.edge(active: edge.active, at: edge.time) }) {
            confirmed(line: index, transition, at: cursor, into: &events)
        } else if let attempt {
            explainRestartedAttempt(line: index, attempt, window: attemptWindow, at: cursor)
        }
    }

    /// What every input does first: time passes to it (each deadline before it fires, at its own
    /// time), and the quiet span the last scan found ends, since the input may change what is due.
    @inline(__always)
    private mutating func takeInput(at now: Instant, into events: inout [ShutterEvent]) {
        advance(to: now, into: &events)
        quietUntil = nil
    }

    /// Lets time pass to `now`: fires every deadline at or before it, in time order.
    public mutating func advance(to now: Instant, into events: inout [ShutterEvent]) {
        if let quietUntil, now < quietUntil {
            if now > cursor { cursor = now }
            return
        }
        run(until: now, into: &events)
        if now > cursor { cursor = now }
    }

    /// The earliest instant at which ``advance(to:into:)`` has something to do.
    ///
    /// Reads a copy of the machine (the scan works in place); an owner that asks on every turn of
    /// its loop asks ``findNextDeadline()`` once after each change instead.
    public var nextDeadline: Instant? {
        if let quietUntil { return Self.deadline(quietUntil: quietUntil) }
        var machine = self
        return machine.scanNextDeadline()
    }

    /// ``nextDeadline``, found in place: no copy of the machine, whose arrays and sets each cost
    /// a retain and a release to copy, on every turn of the owner's loop.
    ///
    /// After ``advance(to:into:)`` (the last step of every turn of an owner's loop) the scan that
    /// found nothing more to fire already knows the answer: no second scan.
    public mutating func findNextDeadline() -> Instant? {
        if let quietUntil { return Self.deadline(quietUntil: quietUntil) }
        return scanNextDeadline()
    }

    /// The next deadline a quiet span ends at: ``never`` there means nothing will be due (a
    /// deadline saturated at the clock's end never comes, so waiting for it is waiting for nothing).
    @inline(__always)
    private static func deadline(quietUntil: Instant) -> Instant? {
        quietUntil == never ? nil : quietUntil
    }

    /// The next deadline found by scanning every machine, whatever the quiet span says: the
    /// answer ``findNextDeadline()`` must agree with (tests compare the two).
    mutating func scanNextDeadline() -> Instant? {
        var earliest = earliestLineDeadline()?.time
        if let timer = earliestTimer() {
            let due = effectiveDue(timer.timer, timer.deadline)
            earliest = earliest.map { min($0, due) } ?? due
        }
        return earliest
    }

    /// Capture became available or not (camera ready, interaction enabled). A press in progress is
    /// cancelled when it goes away, and presses while unavailable give `capture cancelled`.
    public mutating func setCaptureAvailable(_ available: Bool, at now: Instant, into events: inout [ShutterEvent]) {
        takeInput(at: now, into: &events)
        if explains, available != captureAvailable { explain(explainer.captureAvailability(available), at: cursor) }
        captureAvailable = available
        if !available {
            apply(.capture(button.full.cancel(reason: .unavailable), of: .primary), at: cursor, into: &events)
            apply(.capture(secondary.cancel(reason: .unavailable), of: .secondary), at: cursor, into: &events)
            noteHeldLines(at: cursor)
        }
    }

    /// The chip lost edges; `levels` are the lines' levels read afterwards (nil when they could not be
    /// read), in board line order.
    ///
    /// Every line whose level differs from what the recognizer believes changes at `now`, as if its
    /// edge had come then: a press found released ends (a capture or burst as `cancelled`, reason
    /// `edgesLost`, since its photos after the lost release were not meant), a touch found lifted ends.
    public mutating func resynchronize(levels: [Bool], at now: Instant, into events: inout [ShutterEvent]) {
        takeInput(at: now, into: &events)
        for line in debouncers.indices where line < levels.count {
            let time = cursor
            guard let transition = debounce(line, { $0.resynchronize(active: levels[line], at: time) }) else {
                // Whatever `half` was confirming is gone with the levels read back.
                if line == halfLine { button.halfUnconfirmed(LineView(debouncers[line])) }
                continue
            }
            guard admit(line: line, transition, at: cursor, into: &events) else { continue }
            if transition.active {
                controls.input(at: cursor)
                route(line: line, transition, at: cursor, into: &events)
            } else {
                forceRelease(line: line, reason: .edgesLost, at: cursor, into: &events)
            }
            noteHeldLines(at: cursor)
        }
    }

    /// End of input (end of a trace, shutdown).
    ///
    /// First completes what a person already did: pending edges are confirmed or dropped, a light
    /// press waits out its double-press window, a lifted finger its grace, a coalesced value is sent.
    /// Then whatever is still in progress is ended: a press still down gives `capture cancelled`
    /// (`reason: interrupted`), a swipe ends, prepare ends, the controls become inactive. Holds do not
    /// start bursts or prepare here, so this terminates with a button held and bursts on.
    public mutating func finish(at now: Instant, into events: inout [ShutterEvent]) {
        takeInput(at: now, into: &events)
        finishing = true
        run(until: Instant(rawValue: .max), into: &events)
        let time = cursor
        apply(.lightPress(lightPresses.resolve(because: .inputEnded)), at: time, into: &events)
        apply(.strip(strip.finish(at: time)), at: time, into: &events)
        apply(.button(.half(button.half.finish())), at: time, into: &events)
        apply(.capture(button.full.finish(), of: .primary), at: time, into: &events)
        apply(.capture(secondary.finish(), of: .secondary), at: time, into: &events)
        controlsStep(at: time, into: &events) { $0.finish(at: time, into: &$1) }
        // Input is over: a line still held is no longer watched, so it cannot become stuck later.
        stuckLines.stopWatching()
        finishing = false
        quietUntil = nil
    }

    /// Each control's current value by id, for the state file.
    public var controlValues: [String: ControlValue] { controls.valuesByID }

    // MARK: Time

    // The scans below are `mutating` though they only read: a mutating method gets the machine by
    // address, a non-mutating one called from `run` got a copy of all of it (some 700 bytes) first,
    // which cost a quarter of the recognizer's time.

    /// Runs one step of line `index`'s debouncer and notes whether a change is still pending there.
    @inline(__always)
    private mutating func debounce(_ index: Int, _ step: (inout LineDebouncer) -> ConfirmedTransition?) -> ConfirmedTransition? {
        let transition = step(&debouncers[index])
        pendingLines.set(index, debouncers[index].deadline != nil)
        return transition
    }

    @inline(__always)
    private mutating func earliestLineDeadline() -> (line: Int, time: Instant)? {
        var best: (line: Int, time: Instant)?
        for index in pendingLines.members {
            if let deadline = debouncers[index].deadline, best == nil || deadline < best!.time {
                best = (index, deadline)
            }
        }
        return best
    }

    /// Which lines can change a timer's decision: a change of one of them still being confirmed holds the timer.
    private struct Holders: OptionSet, Sendable {
        let rawValue: UInt8
        static let half = Holders(rawValue: 1 << 0)
        static let full = Holders(rawValue: 1 << 1)
        static let secondary = Holders(rawValue: 1 << 2)
        static let pads = Holders(rawValue: 1 << 3)
        /// Of the lines above, only those stuck detection watches.
        static let watchedOnly = Holders(rawValue: 1 << 4)
        static let every: Holders = [.half, .full, .secondary, .pads]
    }

    /// The one description of each timer: its deadline here and in ``finishingDeadline(of:)``, and
    /// the lines that can change what it decides in ``holders(of:halfLine:)`` (Docs/Events.md's "Order
    /// within one instant" lists them). Adding a timer is a case in these three and one in ``fire(_:at:into:)``.
    @inline(__always)
    private mutating func deadline(of timer: Timer) -> Instant? {
        if finishing { return finishingDeadline(of: timer) }
        switch timer {
        case .lightPress: return lightPresses.deadline
        case .prepare: return button.half.deadline
        case .burst: return button.full.deadline
        case .secondary: return secondary.deadline
        case .strip: return strip.deadline
        case .tick: return controls.tickDeadline
        case .idle: return controls.idleDeadline
        case .stuck: return stuckLines.deadline
        }
    }

    /// While input ends, only timers that complete what a person already did run: a light press
    /// waits out its window, a lifted finger its grace, a glide and a coalesced value run to their end.
    /// Holds start nothing, the controls do not time out, and no line becomes stuck.
    @inline(__always)
    private mutating func finishingDeadline(of timer: Timer) -> Instant? {
        switch timer {
        case .lightPress: lightPresses.deadline
        case .strip: strip.graceDeadline
        case .tick: controls.tickDeadline
        case .prepare, .burst, .secondary, .idle, .stuck: nil
        }
    }

    /// Fixed for the board: the scans, which run for every edge, take them from ``timerHolds``.
    private static func holders(of timer: Timer, halfLine: Int?) -> Holders {
        switch timer {
        // The double-press window: a second press of whatever makes light presses.
        case .lightPress: halfLine == nil ? .pads : .half
        // A release of `half` before it, or `full` pressed first.
        case .prepare: [.half, .full]
        // Burst shots: the release of `full`.
        case .burst: .full
        case .secondary: .secondary
        case .strip: .pads
        // Coalescing and glide ticks wait for nothing.
        case .tick: []
        // The idle timeout: any input restarts it.
        case .idle: .every
        // A line about to be stuck: its release.
        case .stuck: [.every, .watchedOnly]
        }
    }

    /// Each timer's holders as the board's lines, found once for the board: the scans run for every
    /// edge, and so take a set of lines to intersect with the pending ones instead of building
    /// option sets and asking each pending line's role.
    private struct TimerHolds: Sendable {
        /// By timer, the lines whose role can hold it.
        private var lines: [LineSet]
        /// By timer, the condition on those lines (``Holders/watchedOnly``).
        private var conditions: [Holders]

        init(kinds: [LineKind], halfLine: Int?) {
            let timers = (0...Timer.stuck.rawValue).map { Timer(rawValue: $0)! }
            let holders = timers.map { GestureStateMachine.holders(of: $0, halfLine: halfLine) }
            conditions = holders.map { $0.intersection(.watchedOnly) }
            lines = holders.map { holders in
                var set = LineSet()
                for (line, kind) in kinds.enumerated() {
                    let role: Holders = switch kind {
                    case .half: .half
                    case .full: .full
                    case .secondary: .secondary
                    case .pad: .pads
                    }
                    set.set(line, holders.contains(role))
                }
                return set
            }
        }

        @inline(__always)
        func lines(_ timer: Timer) -> LineSet { lines[timer.rawValue] }

        @inline(__always)
        func conditions(_ timer: Timer) -> Holders { conditions[timer.rawValue] }
    }

    @inline(__always)
    private mutating func earliestTimer() -> (timer: Timer, deadline: Instant)? {
        // In firing order (earlier timers win ties): this runs for every edge. Inlined with each
        // component's deadline getter: called out of line, it would copy the whole machine first.
        // Unrolled (a loop over the cases was measurably slower).
        var best: (timer: Timer, deadline: Instant)?
        consider(.lightPress, &best)
        consider(.prepare, &best)
        consider(.burst, &best)
        consider(.secondary, &best)
        consider(.strip, &best)
        consider(.tick, &best)
        consider(.idle, &best)
        consider(.stuck, &best)
        return best
    }

    @inline(__always)
    private mutating func consider(_ timer: Timer, _ best: inout (timer: Timer, deadline: Instant)?) {
        if let due = deadline(of: timer), best.map({ due < $0.deadline }) ?? true { best = (timer, due) }
    }

    /// A gesture deadline is held while a line that can change the timer's decision has an
    /// unconfirmed change that began before it (a press starting exactly at a window's end, still
    /// being confirmed, must count as inside it): until that change is confirmed or dropped, at most
    /// two of the line's own windows past the deadline, so a line that chatters without end cannot
    /// hold time back for ever. Other lines (a pad chattering during a burst) hold nothing.
    @inline(__always)
    private mutating func effectiveDue(_ timer: Timer, _ deadline: Instant) -> Instant {
        var due = deadline
        for index in pendingLines.intersection(timerHolds.lines(timer)).members {
            guard let since = debouncers[index].pendingSince, since <= deadline,
                  let settles = debouncers[index].deadline, settles > due, canChange(timer, line: index)
            else { continue }
            let window = debouncers[index].pendingWindow
            due = max(due, min(settles, deadline + window + window))
        }
        return due
    }

    /// Whether a change of `line`, one whose role can hold `timer`, can change what `timer` decides.
    @inline(__always)
    private mutating func canChange(_ timer: Timer, line: Int) -> Bool {
        !timerHolds.conditions(timer).contains(.watchedOnly) || stuckLines.isWatched(line)
    }

    /// Fires every deadline up to `limit` in time order; line confirmations first at equal instants.
    private mutating func run(until limit: Instant, into events: inout [ShutterEvent]) {
        while true {
            let line = earliestLineDeadline()
            let timer = earliestTimer()
            let timerDue = timer.map { effectiveDue($0.timer, $0.deadline) }
            // A deadline saturated at the clock's end never comes (only extreme inputs reach it).
            if let line, line.time <= limit, line.time < Self.never, timerDue.map({ line.time <= $0 }) ?? true {
                if line.time > cursor { cursor = line.time }
                let attempt = explanations != nil ? debouncers[line.line].pendingAttempt : nil
                let attemptWindow = debouncers[line.line].pendingWindow
                if let transition = debounce(line.line, { $0.fire() }) {
                    confirmed(line: line.line, transition, at: cursor, into: &events)
                } else {
                    if line.line == halfLine { button.halfUnconfirmed(LineView(debouncers[line.line])) }
                    if let attempt {
                        explain(explainer.dropped(line: line.line, attempt, window: attemptWindow), at: cursor)
                    }
                }
            } else if let timer, let due = timerDue, due <= limit, due < Self.never {
                if due > cursor { cursor = due }
                fire(timer.timer, at: cursor, into: &events)
                // Every timer must move its deadline past the instant it fired at, or time stops.
                if let again = deadline(of: timer.timer), again <= timer.deadline {
                    preconditionFailure("\(timer.timer) timer did not move past \(timer.deadline.rawValue) ns")
                }
            } else {
                // Nothing is due before the earlier of the two: until then `advance` need not scan.
                var next = line?.time ?? Self.never
                if let timerDue, timerDue < next { next = timerDue }
                quietUntil = next
                return
            }
        }
    }

    private mutating func fire(_ timer: Timer, at now: Instant, into events: inout [ShutterEvent]) {
        switch timer {
        case .lightPress:
            apply(.lightPress(lightPresses.fire()), at: now, into: &events)
        case .prepare:
            apply(.button(.half(button.half.fire())), at: now, into: &events)
        case .burst:
            apply(.capture(button.full.fire(), of: .primary), at: now, into: &events)
        case .secondary:
            apply(.capture(secondary.fire(), of: .secondary), at: now, into: &events)
        case .strip:
            // A lift settling and the tap window can fall due at one instant: each is one step.
            repeat {
                apply(.strip(strip.fire(at: now)), at: now, into: &events)
            } while deadline(of: .strip).map { $0 <= now } ?? false
        case .tick:
            controlsStep(at: now, into: &events) { $0.fireTick(at: now, into: &$1) }
        case .idle:
            controlsStep(at: now, into: &events) { $0.fireIdle(at: now, into: &$1) }
        case .stuck:
            for line in stuckLines.fire(at: now) {
                events.append(.lineStuck(line: lineNames[line], at: now))
                if explains, let limit = stuckLines.limit(of: line) {
                    explain(explainer.stuck(line: line, limit: limit), at: now)
                }
                forceRelease(line: line, reason: .stuck, at: now, into: &events)
            }
        }
    }

    // MARK: Routing

    private var lightPressSource: LightPressSource { halfLine == nil ? .strip : .half }

    /// How long a tap may take to be known from its touch: its maximum, then the lift grace after it,
    /// whose end is included (one nanosecond past it).
    private var stripTapMaximum: Nanoseconds { timings.tapMaximum + timings.liftGrace + Nanoseconds(rawValue: 1) }

    /// Lets a confirmed change through stuck detection.
    ///
    /// - Returns: whether the change is routed to the gesture machines: false for a stuck line, which
    ///   is ignored until it releases (its release gives `lineFreed` and is not routed either).
    private mutating func admit(line: Int, _ transition: ConfirmedTransition, at now: Instant,
                                        into events: inout [ShutterEvent]) -> Bool {
        switch stuckLines.confirmed(line: line, active: transition.active, since: transition.since) {
        case .route:
            return true
        case .ignore:
            return false
        case .freed:
            events.append(.lineFreed(line: lineNames[line], at: now))
            return false
        }
    }

    /// Tells stuck detection which capture lines a person holds in a capture now (a press that began,
    /// a burst): those are not watched.
    private mutating func noteHeldLines(at now: Instant) {
        for line in captureLines {
            if case .full = kinds[line] {
                stuckLines.setHeld(line, button.full.isCapturing, at: now)
            } else {
                stuckLines.setHeld(line, secondary.isCapturing, at: now)
            }
        }
    }

    /// Releases `line` without a person releasing it (stuck, or found released after lost edges):
    /// a capture press is cancelled; anything else releases as usual.
    private mutating func forceRelease(line: Int, reason: CancelReason, at now: Instant, into events: inout [ShutterEvent]) {
        let release = ConfirmedTransition(active: false, since: now)
        switch kinds[line] {
        case .full: apply(.capture(button.full.cancel(reason: reason), of: .primary), at: now, into: &events)
        case .secondary: apply(.capture(secondary.cancel(reason: reason), of: .secondary), at: now, into: &events)
        case .half, .pad: break
        }
        route(line: line, release, at: now, into: &events)
    }

    private mutating func confirmed(line: Int, _ transition: ConfirmedTransition, at now: Instant,
                                    into events: inout [ShutterEvent]) {
        guard admit(line: line, transition, at: now, into: &events) else { return }
        controls.input(at: now)
        route(line: line, transition, at: now, into: &events)
        noteHeldLines(at: now)
    }

    /// Hands a confirmed change of `line` to the machine that owns the line, and applies what it decided.
    private mutating func route(line: Int, _ transition: ConfirmedTransition, at now: Instant,
                                into events: inout [ShutterEvent]) {
        let since = transition.since
        switch kinds[line] {
        case .half:
            let action = transition.active ? button.halfPressed(since: since, available: captureAvailable)
                : button.halfReleased(since: since)
            apply(.button(action), at: now, into: &events)
        case .full:
            let action = transition.active
                ? button.fullPressed(since: since, halfLine: halfLine.map { LineView(debouncers[$0]) } ?? .absent,
                                     fullWindowIsZero: debouncers[line].window == .zero, available: captureAvailable)
                : button.fullReleased(since: since)
            apply(.button(action), at: now, into: &events)
        case .secondary:
            if !transition.active {
                apply(.capture(secondary.release(since: since), of: .secondary), at: now, into: &events)
            } else if timings.secondaryAction == .capture {
                apply(.capture(secondary.press(since: since, available: captureAvailable), of: .secondary), at: now,
                      into: &events)
            } else {
                apply(.secondaryPressed(timings.secondaryAction), at: now, into: &events)
            }
        case .pad(let pad):
            // A finger that comes down far from where it lifted, or again on a pad it left a while
            // ago, begins another touch: the lifted one ends first.
            if transition.active, strip.landingIsANewTouch(pad, at: since) {
                strip.undoResumption(at: since)
                apply(.strip(strip.fire(at: now)), at: now, into: &events)
            }
            apply(.strip(strip.pad(pad, active: transition.active, since: since)), at: now, into: &events)
        }
    }

    // MARK: Events

    /// What one of the rig's machines decided: ``apply(_:at:into:)`` turns each into events, and
    /// into the inputs of the machines it concerns (a tap is a light press, a light press opens the controls).
    enum Decision: Hashable, Sendable {
        /// What the two-stage button (`half`, `full`) did.
        case button(TwoStageButton.Action)
        /// What `half`'s release meant, once its prepare ended.
        case halfReleased(HalfButton.Release)
        /// What a capture button did: `full` (`primary`) or `secondary`.
        case capture(CaptureButton.Action, of: CaptureAction)
        /// The secondary button, mapped to the controls, was pressed.
        case secondaryPressed(SecondaryAction)
        case lightPress(LightPressRecognizer.Action)
        case strip(SliderStrip.Action)
        case controls(ControlsStateMachine.Action)

        var isCapture: Bool {
            if case .capture = self { return true }
            return false
        }
    }

    /// What comes before a decision's own events at its instant.
    struct Precedence: Hashable, Sendable {
        /// A light press still waiting is resolved as single, for this cause, and reported first.
        var resolvesLightPress: LightPressRecognizer.Interruption?
        /// The controls collapse (`controlsInactive`, `capture`) first.
        var collapsesControls = false

        static let none = Precedence(resolvesLightPress: nil)
    }

    /// Docs/Events.md's "Order within one instant" as data: what a decision's events follow.
    ///
    /// A pending `lightPress` comes first, then `controlsInactive` before `capture began`. A light
    /// press still waiting when a full click comes is reported then (it happened, and a client may
    /// count it), so its `controlsActive` and the click's `controlsInactive` share the instant. The
    /// other orders are within one machine's action: `burst ended` before `capture ended`/`cancelled`,
    /// `prepare ended` before what the release of `half` meant, the controls' actions as they come.
    /// - Parameter stripMakesLightPresses: the rig has no `half`, so the strip's taps are its light presses.
    static func precedence(of decision: Decision, stripMakesLightPresses: Bool) -> Precedence {
        switch decision {
        case .capture(.began, let button):
            Precedence(resolvesLightPress: button == .primary ? .fullPress : .secondaryPress, collapsesControls: true)
        case .capture(.refused, let button):
            Precedence(resolvesLightPress: button == .primary ? .fullPress : .secondaryPress)
        case .secondaryPressed:
            Precedence(resolvesLightPress: .secondaryPress)
        case .halfReleased(.notLight):
            Precedence(resolvesLightPress: .pressNotLight)
        // A light press followed by a swipe: show the controls, then adjust.
        case .strip(.swipeBegan):
            Precedence(resolvesLightPress: .swipe)
        // A touch that outlived the tap window is no second light press (on a rig whose taps are light presses).
        case .strip(.notTap):
            stripMakesLightPresses ? Precedence(resolvesLightPress: .touchNotTap) : .none
        case .button, .halfReleased, .capture, .lightPress, .strip, .controls:
            .none
        }
    }

    /// Turns what a machine decided into events (explained in setup mode), after what
    /// ``precedence(of:stripMakesLightPresses:)`` puts first, and feeds the machines it concerns.
    private mutating func apply(_ decision: Decision, at now: Instant, into events: inout [ShutterEvent]) {
        // A capture's explanation (a press refused) is about its own event: it comes with it, below.
        if explanations != nil, !decision.isCapture { explain(decision, at: now) }
        let precedence = Self.precedence(of: decision, stripMakesLightPresses: halfLine == nil)
        if let cause = precedence.resolvesLightPress {
            apply(.lightPress(lightPresses.resolve(because: cause)), at: now, into: &events)
        }
        if precedence.collapsesControls { controlsStep(at: now, into: &events) { $0.collapse(at: now, into: &$1) } }
        switch decision {
        case .button(let action):
            apply(action, at: now, into: &events)
        case .halfReleased(let release):
            if case .lightPress(let pressedAt, let releasedAt, _) = release {
                apply(.lightPress(lightPresses.lightPress(pressedAt: pressedAt, releasedAt: releasedAt)), at: now,
                      into: &events)
            }
        case .capture(let action, let button):
            if explanations != nil { explain(decision, at: now) }
            apply(action, of: button, at: now, into: &events)
        case .secondaryPressed(let action):
            if action == .toggleControls {
                controlsStep(at: now, into: &events) { $0.toggle(at: now, into: &$1) }
            } else {
                controlsStep(at: now, into: &events) { $0.next(at: now, into: &$1) }
            }
        case .lightPress(let action):
            apply(action, at: now, into: &events)
        case .strip(let action):
            apply(action, at: now, into: &events)
        case .controls(let action):
            events.append(action.event(at: now))
        }
    }

    /// The two-stage button's part of ``apply(_:at:into:)``.
    private mutating func apply(_ action: TwoStageButton.Action, at now: Instant, into events: inout [ShutterEvent]) {
        switch action {
        case .half(.none):
            break
        case .half(.prepareBegan(let pressedAt)):
            events.append(.prepare(phase: .began, pressedAt: pressedAt, at: now))
        case .half(.prepareEnded(let pressedAt)):
            events.append(.prepare(phase: .ended, pressedAt: pressedAt, at: now))
        case .half(.pressed(let since)):
            let start = lightPresses.pressStarted(since: since, maximum: timings.lightPressMaximum)
            apply(.lightPress(start), at: now, into: &events)
        case .half(.released(let preparedSince, let release)):
            if let preparedSince { events.append(.prepare(phase: .ended, pressedAt: preparedSince, at: now)) }
            apply(.halfReleased(release), at: now, into: &events)
        case .full(let capture), .clickAfterHalf(let capture):
            apply(.capture(capture, of: .primary), at: now, into: &events)
        case .fullNoise:
            break
        }
    }

    /// A capture button's part of ``apply(_:at:into:)``: `burst ended` just before `capture ended`
    /// or `cancelled`.
    @inline(__always)
    private mutating func apply(_ action: CaptureButton.Action, of button: CaptureAction, at now: Instant,
                                into events: inout [ShutterEvent]) {
        switch action {
        case .none:
            break
        case .began(let pressedAt, let photo):
            events.append(.capture(phase: .began, action: button, pressedAt: pressedAt, releasedAt: nil, photo: photo,
                                   reason: nil, at: now))
        case .burstShot(let pressedAt, let shot):
            events.append(.burst(phase: shot == 1 ? .began : .changed, pressedAt: pressedAt, shot: shot, at: now))
        case .ended(let pressedAt, let releasedAt, let photo, let shots):
            if shots > 0 { events.append(.burst(phase: .ended, pressedAt: pressedAt, shot: shots, at: now)) }
            events.append(.capture(phase: .ended, action: button, pressedAt: pressedAt, releasedAt: releasedAt, photo: photo,
                                   reason: nil, at: now))
        case .cancelled(let pressedAt, let reason, let shots):
            if shots > 0 { events.append(.burst(phase: .ended, pressedAt: pressedAt, shot: shots, at: now)) }
            events.append(.capture(phase: .cancelled, action: button, pressedAt: pressedAt, releasedAt: nil, photo: false,
                                   reason: reason, at: now))
        case .refused(let pressedAt):
            events.append(.capture(phase: .cancelled, action: button, pressedAt: pressedAt, releasedAt: nil,
                                   photo: false, reason: .unavailable, at: now))
        case .burstBoundReached:
            // `full` is still held when the next burst shot is due past the burst's bound: a jammed
            // button, not a person. Reported once as stuck, the press cancelled, ignored until it releases.
            guard let line = fullLine else { return }
            stuckLines.stick(line)
            events.append(.lineStuck(line: lineNames[line], at: now))
            forceRelease(line: line, reason: .stuck, at: now, into: &events)
            noteHeldLines(at: now)
        }
    }

    /// The light-press recognizer's part of ``apply(_:at:into:)``: singles and doubles are
    /// reported, and open the controls or the chooser.
    private mutating func apply(_ action: LightPressRecognizer.Action, at now: Instant,
                                into events: inout [ShutterEvent]) {
        switch action {
        case .none, .secondPress, .waiting:
            break
        case .single(let pressedAt, let releasedAt, _):
            events.append(.lightPress(source: lightPressSource, pressedAt: pressedAt, releasedAt: releasedAt, at: now))
            controlsStep(at: now, into: &events) { $0.lightPress(at: now, into: &$1) }
        case .double(let pressedAt):
            events.append(.doubleLightPress(source: lightPressSource, pressedAt: pressedAt, at: now))
            controlsStep(at: now, into: &events) { $0.doubleLightPress(at: now, into: &$1) }
        }
    }

    /// The strip's part of ``apply(_:at:into:)``: swipes move the controls; on a rig without `half`,
    /// taps are light presses.
    @inline(__always)
    private mutating func apply(_ action: SliderStrip.Action, at now: Instant, into events: inout [ShutterEvent]) {
        switch action {
        // A touch that was neither a tap nor a swipe already resolved any light press (`notTap`).
        case .none, .ignored, .notTap:
            break
        case .touchBegan(let since):
            // A touch stops a glide, whatever it turns out to be.
            controlsStep(at: now, into: &events) { $0.touchBegan(at: now, into: &$1) }
            guard halfLine == nil else { return }
            // A tap is known only once the lift grace ran out after it: allow for it in the double's window.
            let start = lightPresses.pressStarted(since: since, maximum: stripTapMaximum)
            apply(.lightPress(start), at: now, into: &events)
        case .swipeBegan(let motion, _):
            // During a burst this reopens the controls the capture closed: a new swipe is a deliberate
            // input (zoom while shooting), and the burst is not interrupted.
            events.append(.swipe(phase: .began, position: motion.position, delta: motion.delta,
                                 velocity: motion.velocity, flick: false, at: now))
            controlsStep(at: now, into: &events) {
                $0.swipeBegan(deltaPads: motion.deltaPads, padsPerSecond: motion.padsPerSecond, at: now, into: &$1)
            }
        case .swipeChanged(let motion):
            events.append(.swipe(phase: .changed, position: motion.position, delta: motion.delta,
                                 velocity: motion.velocity, flick: false, at: now))
            controlsStep(at: now, into: &events) {
                $0.swipeChanged(deltaPads: motion.deltaPads, padsPerSecond: motion.padsPerSecond, at: now, into: &$1)
            }
        case .swipeEnded(let motion, let end):
            events.append(.swipe(phase: .ended, position: motion.position, delta: motion.delta,
                                 velocity: motion.velocity, flick: end.isFlick, at: now))
            controlsStep(at: now, into: &events) {
                $0.swipeEnded(flick: end.isFlick, padsPerSecond: motion.padsPerSecond, at: now, into: &$1)
            }
        case .tap(let pressedAt, let releasedAt, _):
            guard halfLine == nil else { return }
            let completed = lightPresses.lightPress(pressedAt: pressedAt, releasedAt: releasedAt)
            apply(.lightPress(completed), at: now, into: &events)
        case .doubleTap(let pressedAt, let firstReleasedAt, let secondPressedAt, let releasedAt):
            guard halfLine == nil else { return }
            // Both taps, in the order they happened: the double-press window decides as for any two.
            apply(.lightPress(lightPresses.lightPress(pressedAt: pressedAt, releasedAt: firstReleasedAt)), at: now,
                  into: &events)
            apply(.lightPress(lightPresses.pressStarted(since: secondPressedAt, maximum: stripTapMaximum)), at: now,
                  into: &events)
            apply(.lightPress(lightPresses.lightPress(pressedAt: secondPressedAt, releasedAt: releasedAt)), at: now,
                  into: &events)
        }
    }

    /// Runs one step of the controls and applies what it did, in its order.
    @inline(__always)
    private mutating func controlsStep(at now: Instant, into events: inout [ShutterEvent],
                                       _ step: (inout ControlsStateMachine, inout [ControlsStateMachine.Action]) -> Void) {
        step(&controls, &controlActions)
        applyControlActions(at: now, into: &events)
    }

    /// Applies the controls' actions in their order (the buffer is kept, so a step allocates
    /// nothing once it has grown).
    @inline(__always)
    private mutating func applyControlActions(at now: Instant, into events: inout [ShutterEvent]) {
        guard !controlActions.isEmpty else { return }
        for action in controlActions {
            apply(.controls(action), at: now, into: &events)
        }
        controlActions.removeAll(keepingCapacity: true)
    }
}

extension GestureStateMachine {
    /// Runs a whole trace as `shutter replay` does: for each edge, `advance(to:)` its time, then the
    /// edge; then `finish(at:)` the last edge's time. Edges must be in non-decreasing time order.
    public static func replay(_ edges: [Edge], board: Board) -> [ShutterEvent] {
        var machine = GestureStateMachine(board: board)
        var events: [ShutterEvent] = []
        for edge in edges {
            machine.edge(edge, into: &events)
        }
        machine.finish(at: edges.last?.time ?? .zero, into: &events)
        return events
    }
}

// MARK: - Remote commands (the local API)

extension GestureStateMachine {
    /// A photo asked for through the API, taken as a press would be: `capture` with action
    /// `remote`, `began` then `ended` at the same instant (a press and its release with no time
    /// between), `photo: true` on the phase the board's `captureOn` names. While capture is
    /// unavailable the command is refused and says nothing: no press began, so there is nothing
    /// to cancel (the reply tells the client why).
    /// - Returns: whether a photo was asked for.
    @discardableResult
    public mutating func remoteCapture(at now: Instant, into events: inout [ShutterEvent]) -> Bool {
        takeInput(at: now, into: &events)
        guard captureAvailable else { return false }
        let onRelease = timings.captureOn == .ended
        events.append(.capture(phase: .began, action: .remote, pressedAt: cursor, releasedAt: nil, photo: !onRelease,
                               reason: nil, at: cursor))
        events.append(.capture(phase: .ended, action: .remote, pressedAt: cursor, releasedAt: cursor, photo: onRelease,
                               reason: nil, at: cursor))
        return true
    }

    /// Sets control `id` to `value` through the controls, as a swipe's last value: `controlValue`
    /// is emitted at once. A number is taken as the nearest value the control can take within half
    /// a step of it (``SliderValues/nearest(to:)``); one out of range is refused, not clamped.
    /// Returns the value taken, and the number given when it was another.
    @discardableResult
    public mutating func setControl(_ id: String, to value: ControlValue, at now: Instant,
                                    into events: inout [ShutterEvent]) throws(ControlRefusal) -> ControlSetting {
        takeInput(at: now, into: &events)
        // What the command did before it was refused (nothing today) is still said.
        defer { applyControlActions(at: cursor, into: &events) }
        return try controls.set(id, to: value, at: cursor, into: &controlActions)
    }

    /// The index of the item titled `title` in picker `id`.
    public func itemIndex(titled title: String, in id: String) throws(ControlRefusal) -> Int {
        try controls.itemIndex(titled: title, in: id)
    }

    /// The item of picker `id` titled with the number `number`; nil when `id` is not a picker.
    public func itemIndex(numbered number: Double, in id: String) throws(ControlRefusal) -> Int? {
        try controls.itemIndex(numbered: number, in: id)
    }

    /// Makes `id` the current control (`controlSelected`; an open chooser closes).
    public mutating func selectControl(_ id: String, at now: Instant, into events: inout [ShutterEvent]) throws(ControlRefusal) {
        takeInput(at: now, into: &events)
        // What the command did before it was refused (nothing today) is still said.
        defer { applyControlActions(at: cursor, into: &events) }
        try controls.select(id, at: cursor, into: &controlActions)
    }

    /// Enables or disables control `id`.
    public mutating func setControlEnabled(_ id: String, _ enabled: Bool, at now: Instant,
                                           into events: inout [ShutterEvent]) throws(ControlRefusal) {
        takeInput(at: now, into: &events)
        // What the command did before it was refused (nothing today) is still said.
        defer { applyControlActions(at: cursor, into: &events) }
        try controls.setEnabled(id, enabled, at: cursor, into: &controlActions)
    }

    /// Where the controls are, for `status`.
    public var controlsSnapshot: ControlsSnapshot { controls.snapshot }

    /// Says what changed for the controls since `previous`, the snapshot of the machine this one
    /// replaced (a reload, camera limits): `controlEnabled`, `controlValue` (a value clamped or
    /// reset) and `controlSelected`, each only where it changed.
    public mutating func reportChanges(since previous: ControlsSnapshot, at now: Instant, into events: inout [ShutterEvent]) {
        takeInput(at: now, into: &events)
        let time = cursor
        controlsStep(at: time, into: &events) { $0.reportChanges(since: previous, at: time, into: &$1) }
    }

    /// Whether a press can take a photo now.
    public var isCaptureAvailable: Bool { captureAvailable }
}

// MARK: - Setup mode (explanations)

extension GestureStateMachine {
    /// Whether the recognizer explains its decisions (`shutter run --explain`): each glitch dropped,
    /// each press classified, each tap, swipe and double-press window decided gives an
    /// ``Explanation``, taken with ``takeExplanations()``. Off (the default), none is built.
    public var explains: Bool {
        get { explanations != nil }
        set { explanations = newValue ? (explanations ?? []) : nil }
    }

    /// The explanations made since the last call, in the order the decisions were made.
    public mutating func takeExplanations() -> [Explanation] {
        guard let taken = explanations, !taken.isEmpty else { return [] }
        explanations = []
        return taken
    }

    /// Explains `decision` with the figures that ride on it. Callers check ``explains`` first, so
    /// no text is built while off.
    @inline(never)
    private mutating func explain(_ decision: Decision, at now: Instant) {
        guard let text = explainer.text(of: decision) else { return }
        explanations?.append(Explanation(time: now, subject: text.subject, reason: text.reason))
    }

    /// Records one explanation made by ``explainer``.
    @inline(never)
    private mutating func explain(_ text: Explanation.Text, at now: Instant) {
        explanations?.append(Explanation(time: now, subject: text.subject, reason: text.reason))
    }

    /// An edge after a quiet gap started a new attempt: the pulses before it were glitches.
    @inline(never)
    private mutating func explainRestartedAttempt(line: Int, _ attempt: (start: Instant, lastEdge: Instant),
                                                  window: Nanoseconds, at now: Instant) {
        guard let current = debouncers[line].pendingAttempt, current.start != attempt.start else { return }
        explain(explainer.dropped(line: line, attempt, window: window), at: now)
    }
}
