/// The whole rig's input logic: raw edges and time in, ``ShutterEvent``s out.
///
/// One value type the event loop drives (swift-nio style): it owns software
/// debounce, the buttons, the slider strip, the light-press recognizer and the
/// controls, and never reads a clock. Feed raw edges in time order with
/// ``edge(_:into:)``, let time pass with ``advance(to:into:)`` (the daemon arms a
/// timer for ``nextDeadline``), and end with ``finish(at:into:)``. The same input
/// always gives the same events.
public struct RigStateMachine: Sendable {
    private enum LineKind: Sendable {
        case half, full, secondary
        case pad(Int)

        var isPad: Bool {
            if case .pad = self { return true }
            return false
        }
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
        var machine = self
        return machine.scanNextDeadline()
    }

    /// ``nextDeadline``, found in place: no copy of the machine, whose arrays and sets each cost
    /// a retain and a release to copy (issue 23: the daemon's loop asked for the deadline two or
    /// three times a turn, and the copies were a quarter of its work on a turn with a deadline).
    public mutating func findNextDeadline() -> Instant? {
        scanNextDeadline()
    }

    private mutating func scanNextDeadline() -> Instant? {
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
        if explains, available != captureAvailable {
            explain("capture", at: cursor, available ? "available: presses take photos"
                : "unavailable (no camera, or disabled): presses are cancelled")
        }
        captureAvailable = available
        if !available {
            emit(button.full.cancel(reason: .unavailable), of: button.full.action, at: cursor, into: &events)
            emit(secondary.cancel(reason: .unavailable), of: secondary.action, at: cursor, into: &events)
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
                if line == halfLine { button.halfDropped() }
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
        resolvePendingLightPress(because: .inputEnded, at: time, into: &events)
        routeStrip({ $0.finish(at: time) }, at: time, into: &events)
        emit(button.half.finish(), at: time, into: &events)
        emit(button.full.finish(), of: button.full.action, at: time, into: &events)
        emit(secondary.finish(), of: secondary.action, at: time, into: &events)
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
    /// the lines that can change what it decides in ``holders(of:halfLine:)`` (the README's "Order
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
            let holders = timers.map { RigStateMachine.holders(of: $0, halfLine: halfLine) }
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
                    if line.line == halfLine { button.halfDropped() }
                    if let attempt { explainDropped(line: line.line, attempt, window: attemptWindow, at: cursor) }
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
            if let outcome = lightPresses.fire() { report(outcome, at: now, into: &events) }
        case .prepare:
            let action = button.half.fire()
            emit(action, at: now, into: &events)
            if explanations != nil, let halfLine, case .prepareBegan = action {
                explain(lineNames[halfLine], at: now, "held \(Explanation.setting("prepareAfterMs", timings.prepareAfter)): prepare began")
            }
        case .burst:
            let action = button.full.fire()
            if case .burstBoundReached = action {
                burstBoundReached(at: now, into: &events)
            } else {
                emit(action, of: button.full.action, at: now, into: &events)
            }
        case .secondary:
            emit(secondary.fire(), of: secondary.action, at: now, into: &events)
        case .strip:
            // A lift settling and the tap window can fall due at one instant: each is one step.
            repeat {
                routeStrip({ $0.fire(at: now) }, at: now, into: &events)
            } while deadline(of: .strip).map { $0 <= now } ?? false
        case .tick:
            controlsStep(at: now, into: &events) { $0.fireTick(at: now, into: &$1) }
        case .idle:
            controlsStep(at: now, into: &events) { $0.fireIdle(at: now, into: &$1) }
        case .stuck:
            for line in stuckLines.fire(at: now) {
                events.append(.lineStuck(line: lineNames[line], at: now))
                if explains, let limit = stuckLines.limit(of: line) {
                    let setting = kinds[line].isPad ? "padStuckAfterMs" : "stuckAfterMs"
                    explain(lineNames[line], at: now, "active for \(Explanation.setting(setting, limit)): stuck, ignored until it releases")
                }
                forceRelease(line: line, reason: .stuck, at: now, into: &events)
            }
        }
    }

    /// `full` is still held when the next burst shot is due past the burst's bound: a jammed
    /// button, not a person. Reported once as stuck, the press cancelled, ignored until it releases.
    private mutating func burstBoundReached(at now: Instant, into events: inout [ShutterEvent]) {
        guard let line = fullLine else { return }
        stuckLines.stick(line)
        events.append(.lineStuck(line: lineNames[line], at: now))
        if explains {
            explain(lineNames[line], at: now, "held past the burst's bound ("
                + "burstMaxShots \(timings.burstMaxShots), \(Explanation.setting("burstMaxMs", timings.burstMaximum))): "
                + "stuck, ignored until it releases")
        }
        forceRelease(line: line, reason: .stuck, at: now, into: &events)
        noteHeldLines(at: now)
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
        case .full: emit(button.full.cancel(reason: reason), of: button.full.action, at: now, into: &events)
        case .secondary: emit(secondary.cancel(reason: reason), of: secondary.action, at: now, into: &events)
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

    private mutating func route(line: Int, _ transition: ConfirmedTransition, at now: Instant,
                                into events: inout [ShutterEvent]) {
        switch kinds[line] {
        case .half:
            if transition.active {
                if let fullSince = button.halfPressed(since: transition.since) {
                    // `full` came first within the same instant and was taken as noise: a click after all.
                    if explains {
                        explain(lineNames[line], at: now, "pressed at the same instant as full: a full click")
                    }
                    beginPrimaryCapture(since: fullSince, at: now, into: &events)
                    return
                }
                startLightPress(since: transition.since, maximum: timings.lightPressMaximum, at: now, into: &events)
            } else {
                let (prepare, release) = button.halfReleased(since: transition.since)
                emit(prepare, at: now, into: &events)
                if explanations != nil { explainHalfRelease(line: line, release, at: now) }
                switch release {
                case .lightPress(let pressedAt, let releasedAt, _):
                    completeLightPress(pressedAt: pressedAt, releasedAt: releasedAt, at: now, into: &events)
                case .notLight:
                    resolvePendingLightPress(because: .pressNotLight, at: now, into: &events)
                }
            }
        case .full:
            if transition.active {
                let halfConfirming = halfLine.map { debouncers[$0].pendingSince != nil && debouncers[$0].rawLevel } ?? false
                if button.fullPressed(since: transition.since, halfConfirming: halfConfirming) == .noise {
                    if explains, let halfLine {
                        // With no window on `full`, `half` pressed at this same instant may still come.
                        let unless = debouncers[line].window == .zero
                            ? " unless \(lineNames[halfLine]) is pressed at this same instant" : ""
                        explain(lineNames[line], at: now, "pressed while \(lineNames[halfLine]) is released: "
                            + "a two-stage button cannot close its full stage alone, ignored as noise" + unless)
                    }
                    return
                }
                beginPrimaryCapture(since: transition.since, at: now, into: &events)
            } else {
                button.fullReleased()
                emit(button.full.release(since: transition.since), of: button.full.action, at: now, into: &events)
            }
        case .secondary:
            if transition.active {
                resolvePendingLightPress(because: .secondaryPress, at: now, into: &events)
                switch timings.secondaryAction {
                case .capture:
                    if captureAvailable { controlsStep(at: now, into: &events) { $0.collapse(at: now, into: &$1) } }
                    emit(secondary.press(since: transition.since, available: captureAvailable), of: secondary.action, at: now,
                         into: &events)
                    if !captureAvailable, explains { explain(lineNames[line], at: now, "pressed while capture is unavailable: cancelled") }
                case .toggleControls:
                    controlsStep(at: now, into: &events) { $0.toggle(at: now, into: &$1) }
                case .nextControl:
                    controlsStep(at: now, into: &events) { $0.next(at: now, into: &$1) }
                }
            } else {
                emit(secondary.release(since: transition.since), of: secondary.action, at: now, into: &events)
            }
        case .pad(let pad):
            // A finger that comes down far from where it lifted, or again on a pad it left a while
            // ago, begins another touch: the lifted one ends first.
            if transition.active, strip.landingIsANewTouch(pad, at: transition.since) {
                strip.undoResumption(at: transition.since)
                routeStrip({ $0.fire(at: now) }, at: now, into: &events)
            }
            routeStrip({ $0.pad(pad, active: transition.active, since: transition.since) }, at: now, into: &events)
        }
    }

    /// A `full` press that is a click, first edge at `since`: its capture begins.
    private mutating func beginPrimaryCapture(since: Instant, at now: Instant, into events: inout [ShutterEvent]) {
        // A light press still waiting is reported now, though its `controlsActive` and the
        // click's `controlsInactive` then come in one instant: it happened, and clients may
        // count it (README, "Order within one instant").
        resolvePendingLightPress(because: .fullPress, at: now, into: &events)
        // The controls collapse only for a capture that begins.
        if captureAvailable { controlsStep(at: now, into: &events) { $0.collapse(at: now, into: &$1) } }
        emit(button.full.press(since: since, available: captureAvailable), of: button.full.action, at: now, into: &events)
        if !captureAvailable, explains, let line = fullLine {
            explain(lineNames[line], at: now, "pressed while capture is unavailable: cancelled")
        }
    }

    private mutating func route(_ action: SliderStrip.Action, at now: Instant, into events: inout [ShutterEvent]) {
        switch action {
        case .none, .ignored:
            // A touch that was neither a tap nor a swipe already resolved any light press (`notTap`).
            break
        case .touchBegan(let since):
            controlsStep(at: now, into: &events) { $0.touchBegan(at: now, into: &$1) }
            guard halfLine == nil else { return }
            // A tap is known only once the lift grace ran out after it: allow for it in the double's window.
            startLightPress(since: since, maximum: stripTapMaximum, at: now, into: &events)
        case .notTap:
            if halfLine == nil { resolvePendingLightPress(because: .touchNotTap, at: now, into: &events) }
        case .swipeBegan(let motion, _):
            // A light press followed by a swipe: show the controls, then adjust. During a burst this
            // reopens the controls the capture closed: a new swipe is a deliberate input (zoom while
            // shooting), and the burst is not interrupted.
            resolvePendingLightPress(because: .swipe, at: now, into: &events)
            events.append(.swipe(phase: .began, position: motion.position, delta: motion.delta,
                                 velocity: motion.velocity, flick: false, at: now))
            controlsStep(at: now, into: &events) { $0.swipeBegan(deltaPads: motion.deltaPads, padsPerSecond: motion.padsPerSecond, at: now, into: &$1) }
        case .swipeChanged(let motion):
            events.append(.swipe(phase: .changed, position: motion.position, delta: motion.delta,
                                 velocity: motion.velocity, flick: false, at: now))
            controlsStep(at: now, into: &events) { $0.swipeChanged(deltaPads: motion.deltaPads, padsPerSecond: motion.padsPerSecond, at: now, into: &$1) }
        case .swipeEnded(let motion, let end):
            events.append(.swipe(phase: .ended, position: motion.position, delta: motion.delta,
                                 velocity: motion.velocity, flick: end.isFlick, at: now))
            controlsStep(at: now, into: &events) { $0.swipeEnded(flick: end.isFlick, padsPerSecond: motion.padsPerSecond, at: now, into: &$1) }
        case .tap(let pressedAt, let releasedAt, _):
            guard halfLine == nil else { return }
            completeLightPress(pressedAt: pressedAt, releasedAt: releasedAt, at: now, into: &events)
        case .doubleTap(let pressedAt, let firstReleasedAt, let secondPressedAt, let releasedAt):
            guard halfLine == nil else { return }
            // Both taps, in the order they happened: the double-press window decides as for any two.
            completeLightPress(pressedAt: pressedAt, releasedAt: firstReleasedAt, at: now, into: &events)
            startLightPress(since: secondPressedAt, maximum: stripTapMaximum, at: now, into: &events)
            completeLightPress(pressedAt: secondPressedAt, releasedAt: releasedAt, at: now, into: &events)
        }
    }

    // MARK: Events

    // The sub-machines return actions; only the functions below (and `report`, `route(_:)` for the
    // strip) turn them into events, each action's events in the README's "Order within one instant":
    // `burst ended` just before `capture ended`/`cancelled`. Across machines the order is the order
    // `route` runs them in: a pending `lightPress` first (`resolvePendingLightPress`), then the
    // controls' `controlsInactive` (`collapse`) before `capture began`; `prepare ended` before what
    // the release of `half` meant.

    /// The events of the action of the capture button whose presses are `button` (its `action`).
    @inline(__always)
    private mutating func emit(_ action: CaptureButton.Action, of button: CaptureAction, at now: Instant,
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
        case .burstBoundReached:
            // Handled by the burst timer, which ends the press as stuck.
            break
        }
    }

    /// Runs one step of the controls and emits what it did.
    @inline(__always)
    private mutating func controlsStep(at now: Instant, into events: inout [ShutterEvent],
                                       _ step: (inout ControlsStateMachine, inout [ControlsStateMachine.Action]) -> Void) {
        step(&controls, &controlActions)
        emitControlActions(at: now, into: &events)
    }

    /// The events of the controls' actions, in their order; the idle timeout is explained.
    @inline(__always)
    private mutating func emitControlActions(at now: Instant, into events: inout [ShutterEvent]) {
        guard !controlActions.isEmpty else { return }
        for action in controlActions {
            events.append(action.event(at: now))
            if explanations != nil, case .closed(.idle) = action {
                explain("controls", at: now,
                        "no input for \(Explanation.setting("controlsIdleTimeoutMs", timings.controlsIdleTimeout)): inactive")
            }
        }
        controlActions.removeAll(keepingCapacity: true)
    }

    /// The events of `half`'s prepare action.
    @inline(__always)
    private mutating func emit(_ action: HalfButton.Action, at now: Instant, into events: inout [ShutterEvent]) {
        switch action {
        case .none: break
        case .prepareBegan(let pressedAt): events.append(.prepare(phase: .began, pressedAt: pressedAt, at: now))
        case .prepareEnded(let pressedAt): events.append(.prepare(phase: .ended, pressedAt: pressedAt, at: now))
        }
    }

    private mutating func report(_ outcome: LightPressOutcome, at now: Instant, into events: inout [ShutterEvent]) {
        switch outcome {
        case .single(let pressedAt, let releasedAt, let reason):
            if explanations != nil { explainSingle(reason, at: now) }
            events.append(.lightPress(source: lightPressSource, pressedAt: pressedAt, releasedAt: releasedAt, at: now))
            controlsStep(at: now, into: &events) { $0.lightPress(at: now, into: &$1) }
        case .double(let pressedAt):
            events.append(.doubleLightPress(source: lightPressSource, pressedAt: pressedAt, at: now))
            controlsStep(at: now, into: &events) { $0.doubleLightPress(at: now, into: &$1) }
        }
    }
}

extension RigStateMachine {
    /// Runs a whole trace as `shutter replay` does: for each edge, `advance(to:)` its time, then the
    /// edge; then `finish(at:)` the last edge's time. Edges must be in non-decreasing time order.
    public static func replay(_ edges: [Edge], board: Board) -> [ShutterEvent] {
        var machine = RigStateMachine(board: board)
        var events: [ShutterEvent] = []
        for edge in edges {
            machine.edge(edge, into: &events)
        }
        machine.finish(at: edges.last?.time ?? .zero, into: &events)
        return events
    }
}

// MARK: - Remote commands (the local API)

extension RigStateMachine {
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
    /// is emitted at once. A value outside the range or off the step is refused, not clamped.
    public mutating func setControl(_ id: String, to value: ControlValue, at now: Instant,
                                    into events: inout [ShutterEvent]) throws(ControlRefusal) {
        takeInput(at: now, into: &events)
        // What the command did before it was refused (nothing today) is still said.
        defer { emitControlActions(at: cursor, into: &events) }
        try controls.set(id, to: value, at: cursor, into: &controlActions)
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
        defer { emitControlActions(at: cursor, into: &events) }
        try controls.select(id, at: cursor, into: &controlActions)
    }

    /// Enables or disables control `id`.
    public mutating func setControlEnabled(_ id: String, _ enabled: Bool, at now: Instant,
                                           into events: inout [ShutterEvent]) throws(ControlRefusal) {
        takeInput(at: now, into: &events)
        // What the command did before it was refused (nothing today) is still said.
        defer { emitControlActions(at: cursor, into: &events) }
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

extension RigStateMachine {
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

    /// Records one explanation. Callers check ``explains`` first, so no text is built while off.
    @inline(never)
    private mutating func explain(_ subject: String, at time: Instant, _ reason: String) {
        explanations?.append(Explanation(time: time, subject: subject, reason: reason))
    }

    /// What a debounce window is called in explanations: the glitch filter, the debounce, or (a
    /// button's release) the second-press gap.
    private func windowName(of line: Int, _ window: Nanoseconds) -> String {
        if window == timings.glitchFilter { return "glitch filter " + Explanation.milliseconds(window) }
        if window != debouncers[line].window { return Explanation.setting("secondPressGapMs", window) + ": the same press" }
        return "debounce " + Explanation.milliseconds(window)
    }

    /// The debouncer dropped a change that did not hold for its window.
    @inline(never)
    private mutating func explainDropped(line: Int, _ attempt: (start: Instant, lastEdge: Instant), window: Nanoseconds,
                                         at now: Instant) {
        explain(lineNames[line], at: now,
                "\(Explanation.milliseconds(attempt.lastEdge - attempt.start)) pulse dropped (\(windowName(of: line, window)))")
    }

    /// An edge after a quiet gap started a new attempt: the pulses before it were glitches.
    @inline(never)
    private mutating func explainRestartedAttempt(line: Int, _ attempt: (start: Instant, lastEdge: Instant), window: Nanoseconds,
                                                  at now: Instant) {
        guard let current = debouncers[line].pendingAttempt, current.start != attempt.start else { return }
        explainDropped(line: line, attempt, window: window, at: now)
    }

    @inline(never)
    private mutating func explainHalfRelease(line: Int, _ release: HalfButton.Release, at now: Instant) {
        let maximum = Explanation.setting("lightPressMaxMs", timings.lightPressMaximum)
        switch release {
        case .lightPress(_, _, let held):
            explain(lineNames[line], at: now, "held \(Explanation.milliseconds(held)) ≤ \(maximum): a light press")
        case .notLight(.fullClicked):
            explain(lineNames[line], at: now, "released after a full click: not a light press")
        case .notLight(.heldLongerThanMaximum(let held)):
            explain(lineNames[line], at: now, "held \(Explanation.milliseconds(held)) > \(maximum): not a light press")
        case .notLight(.notPressed):
            break
        }
    }

    /// What light presses come from: the half line, or the strip's taps.
    private var lightPressSubject: String { halfLine.map { lineNames[$0] } ?? "strip" }

    /// A press that may be light began: it may make a double with a light press waiting.
    private mutating func startLightPress(since: Instant, maximum: Nanoseconds, at now: Instant,
                                          into events: inout [ShutterEvent]) {
        let start = lightPresses.pressStarted(since: since, maximum: maximum)
        if explanations != nil { explainLightPressStart(start, at: now) }
        if case .resolved(let outcome) = start { report(outcome, at: now, into: &events) }
    }

    @inline(never)
    private mutating func explainLightPressStart(_ start: LightPressRecognizer.Start, at now: Instant) {
        let window = Explanation.setting("doublePressWindowMs", lightPresses.window)
        switch start {
        case .secondPress(let gap):
            explain(lightPressSubject, at: now, "pressed again \(Explanation.milliseconds(gap)) after a light press ≤ \(window): "
                + "a double light press if this one is light too")
        case .resolved(.single(_, _, .pressedAgainLate(let gap))):
            explain(lightPressSubject, at: now, "pressed again \(Explanation.milliseconds(gap)) after a light press > \(window): "
                + "that light press was single")
        case .unrelated, .resolved:
            break
        }
    }

    /// A light press (or tap) completed: the first of a double waits for its window, the second makes it.
    private mutating func completeLightPress(pressedAt: Instant, releasedAt: Instant, at now: Instant,
                                             into events: inout [ShutterEvent]) {
        let outcome = lightPresses.lightPress(pressedAt: pressedAt, releasedAt: releasedAt)
        if explanations != nil {
            explainCompletedLightPress(outcome, at: now)
        }
        if let outcome { report(outcome, at: now, into: &events) }
    }

    @inline(never)
    private mutating func explainCompletedLightPress(_ outcome: LightPressOutcome?, at now: Instant) {
        if case .double? = outcome {
            explain(lightPressSubject, at: now, "second light press inside the window: a double light press")
        } else {
            explain(lightPressSubject, at: now, "light press waits \(Explanation.setting("doublePressWindowMs", lightPresses.window)) "
                + "for a second one before it is reported")
        }
    }

    /// Something other than a second light press came: a light press still waiting is reported as single.
    private mutating func resolvePendingLightPress(because cause: LightPressOutcome.Interruption, at now: Instant,
                                                   into events: inout [ShutterEvent]) {
        guard let outcome = lightPresses.resolve(because: cause) else { return }
        report(outcome, at: now, into: &events)
    }

    /// Explains why a light press is single (a double needs nothing more than
    /// ``explainCompletedLightPress(_:at:)``); a light press resolved by a late press was explained
    /// when that press started.
    @inline(never)
    private mutating func explainSingle(_ reason: LightPressOutcome.SingleReason, at now: Instant) {
        switch reason {
        case .interrupted(let cause):
            let text = switch cause {
            case .inputEnded: "input ended"
            case .pressNotLight: "a press that was not light"
            case .fullPress: "a full press"
            case .secondaryPress: "a secondary press"
            case .touchNotTap: "a touch that is no tap"
            case .swipe: "a swipe"
            }
            explain(lightPressSubject, at: now, "\(text) came instead of a second light press: the light press is single")
        case .secondPressNotLight:
            explain(lightPressSubject, at: now, "second press held too long to be light: no double, the light press is single")
        case .noSecondPress:
            let window = Explanation.setting("doublePressWindowMs", lightPresses.window)
            explain(lightPressSubject, at: now, "no second press within \(window): a single light press")
        case .pressedAgainLate, .anotherLightPress:
            break
        }
    }

    /// Runs one step of the strip and routes what it meant, explaining taps and swipes.
    @inline(__always)
    private mutating func routeStrip(_ step: (inout SliderStrip) -> SliderStrip.Action, at now: Instant,
                                     into events: inout [ShutterEvent]) {
        let action = step(&strip)
        if explanations != nil { explainStrip(action, at: now) }
        route(action, at: now, into: &events)
    }

    /// Says why the strip decided `action`: the figures ride on the action.
    @inline(never)
    private mutating func explainStrip(_ action: SliderStrip.Action, at now: Instant) {
        let tapMaximum = Explanation.setting("tapMaxMs", timings.tapMaximum)
        switch action {
        case .tap(let pressedAt, let releasedAt, let moved):
            explain("strip", at: now, "moved \(Explanation.pads(moved)) in "
                + "\(Explanation.milliseconds(releasedAt - pressedAt)) ≤ \(tapMaximum): a tap")
        case .doubleTap(let pressedAt, let firstReleasedAt, let secondPressedAt, let releasedAt):
            explain("strip", at: now, "a tap of \(Explanation.milliseconds(firstReleasedAt - pressedAt)), then one of "
                + "\(Explanation.milliseconds(releasedAt - secondPressedAt)) ≤ \(tapMaximum) on the next pad "
                + "\(Explanation.milliseconds(secondPressedAt - firstReleasedAt)) later: two taps")
        case .notTap(let moved):
            explain("strip", at: now, "touched longer than \(tapMaximum), moved \(Explanation.pads(moved)): not a tap")
        case .swipeBegan(_, .moved(let pads, let after)):
            explain("strip", at: now, "moved \(Explanation.pads(pads)) in \(Explanation.milliseconds(after)): a swipe")
        case .swipeBegan(_, .rested(let pads)):
            explain("strip", at: now, "moved \(Explanation.pads(pads)) and rested there "
                + "\(Explanation.milliseconds(SliderStrip.dwell)) after \(tapMaximum): a swipe")
        case .swipeEnded(_, .inputEnded):
            explain("strip", at: now, "input ended: the swipe ends without a flick")
        case .swipeEnded(let motion, .lifted(let flick)):
            let speed = JSONLine.number(abs(motion.padsPerSecond), decimals: 1)
            let limit = JSONLine.number(SliderStrip.flickPadsPerSecond, decimals: 1)
            explain("strip", at: now, flick ? "lifted at \(speed) pads/s ≥ \(limit): a flick"
                                            : "lifted at \(speed) pads/s < \(limit): the swipe ends, no flick")
        case .ignored(let pressedAt, let releasedAt, let moved):
            explain("strip", at: now, "touch of \(Explanation.milliseconds(releasedAt - pressedAt)) > \(tapMaximum) "
                + "that moved \(Explanation.pads(moved)): neither a tap nor a swipe")
        case .none, .touchBegan, .swipeChanged:
            break
        }
    }
}
