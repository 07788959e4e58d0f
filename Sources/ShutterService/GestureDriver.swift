import ShutterCore

/// Carries edges from a watcher through the state machines and hands their events on.
///
/// The same interpreter serves the daemon (real clock, real chip) and replay
/// (virtual clock, mock chip): it never reads a clock itself, it is told the time.
///
/// Its stored properties that every edge reaches are `@exclusivity(unchecked)`: each access to a
/// class's property is otherwise checked at run time, at a cost comparable to the work done per
/// edge. They are safe unchecked because no access overlaps another: the long ones (a machine
/// fed an edge into ``events``) call only the machines, which are values and never call out, and
/// the callbacks are called with no access under way.
public final class GestureDriver {
    public let board: Board
    public let watcher: any EdgeWatcher
    @exclusivity(unchecked) public private(set) var machine: GestureStateMachine
    @exclusivity(unchecked) private var edges: [Edge] = []
    @exclusivity(unchecked) private var events: [ShutterEvent] = []
    /// Receives every event, in order (unless ``emitPublished`` is set).
    @exclusivity(unchecked) public var emit: (ShutterEvent) -> Void = { _ in }
    /// Set instead of ``emit`` by an owner that publishes each event as a ``ServiceEvent``:
    /// receives every event, in order, with its published form when it was made ahead of time
    /// (a decision ``prepareNextDecision()`` worked out and ``pump(now:)`` adopted), nil when the
    /// owner makes it now. The one place a prediction and what it will publish are kept.
    @exclusivity(unchecked) public var emitPublished: ((ShutterEvent, ServiceEvent?) -> Void)?
    /// Receives each raw edge before the state machines see it (`record`, `monitor`).
    @exclusivity(unchecked) public var observeEdge: (Edge) -> Void = { _ in }
    /// Receives why the recognizer decided what it did (setup mode, `--explain`), before the events
    /// the decisions made; setting it turns explanations on, nil (the default) keeps them off.
    @exclusivity(unchecked) public var explain: ((Explanation) -> Void)? {
        didSet {
            machine.explains = explain != nil
            prepared = nil  // made without (or with) explanations
        }
    }
    /// Told how many edges the kernel lost, when it lost some.
    public var reportLostEdges: (Int, Instant) -> Void = { _, _ in }
    /// Whether the levels could be read back after the last loss (and the recognizer resynchronised).
    public private(set) var resynchronised = false

    /// What the state machines decide at their next deadline if nothing comes before it; their
    /// state after it is ``machineAhead``.
    private struct PreparedDecision {
        var deadline: Instant
        var events: [ShutterEvent]
        /// ``events`` as published, made with them when ``emitPublished`` is set.
        var published: [ServiceEvent]
        /// The machines' deadline after this one, found when the decision was made.
        var nextDeadline: Instant?
        /// ``changes`` when it was made: any later change to the machines makes it stale.
        var madeAfter: UInt64
    }
    @exclusivity(unchecked) private var prepared: PreparedDecision?
    /// ``prepared`` while it stands: nothing has changed the machines since it was made.
    private var standingDecision: PreparedDecision? {
        guard let prepared, prepared.madeAfter == changes else { return nil }
        return prepared
    }
    /// The state machines run ahead to ``prepared``'s deadline (with the explanations of that run
    /// still in them), swapped with ``machine`` when the decision is adopted: a swap moves them
    /// without a copy, so that no reference is counted and no storage freed before the decision's
    /// events go out (each touches memory that went cold while the loop slept). The machines it
    /// replaced stay here until the next decision is prepared.
    private var machineAhead: GestureStateMachine
    /// The published forms of the adopted decision's events, handed on with them by ``flush``.
    @exclusivity(unchecked) private var adoptedPublished: [ServiceEvent] = []
    /// How many prepared decisions were adopted at their deadline (the others were overtaken).
    private(set) var adoptedDecisions = 0
    /// Counts the changes to ``machine`` (an edge, a deadline that passed, a command): a prepared
    /// decision stands only while this is what it was when the decision was made.
    @exclusivity(unchecked) private var changes: UInt64 = 0

    public init(board: Board, watcher: any EdgeWatcher, initialValues: [String: ControlValue]? = nil) {
        self.board = board
        self.watcher = watcher
        let software = Set(board.lines.indices.map { LineIndex($0) }.filter {
            board[$0].debounce > .zero && !watcher.kernelDebouncedLines.contains($0)
        })
        machine = GestureStateMachine(board: board, softwareDebounce: software, initialValues: initialValues)
        machineAhead = machine
        edges.reserveCapacity(256)
        events.reserveCapacity(64)
        nextDeadline = machine.findNextDeadline()
    }

    /// The next instant the state machines need to be woken at: found after every change to
    /// them, as the loop asks for it on every turn.
    @exclusivity(unchecked) public private(set) var nextDeadline: Instant?

    /// Works out, ahead of time, what the state machines will decide at their next deadline if no
    /// edge comes before it (the end of a press's confirmation window), with the lines it will
    /// publish (for ``emitPublished``). Called when a wake-up's work is done: at the deadline ``pump(now:)``
    /// then adopts the result, and the press's decision costs a read of the lines and a write,
    /// not a run of the recognizer and the making of its lines on code that went cold while the
    /// loop slept. Does nothing when the decision is already prepared or there is no deadline.
    public func prepareNextDecision() {
        guard let deadline = nextDeadline else {
            prepared = nil
            return
        }
        guard standingDecision == nil else { return }
        machineAhead = machine
        var made: [ShutterEvent] = []
        machineAhead.advance(to: deadline, into: &made)
        let published = emitPublished == nil ? [] : made.map { ServiceEvent(.gesture($0)) }
        prepared = PreparedDecision(deadline: deadline, events: made, published: published,
                                    nextDeadline: machineAhead.findNextDeadline(), madeAfter: changes)
    }

    /// The events of the decision ``prepareNextDecision()`` worked out, while it stands; nil when
    /// none does (nothing prepared, or the machines changed since).
    public var preparedEvents: [ShutterEvent]? { standingDecision?.events }

    /// The next deadline if someone waits for what is decided there: the decision prepared for it
    /// (``prepareNextDecision()``) makes events, and nothing changed since it was made. The loop
    /// wakes ahead of this one (the board's `wakeAheadMs`); a deadline that only moves the
    /// machines along (a debounce that confirms nothing yet) is slept until.
    public var awaitedDeadline: Instant? {
        guard let decision = standingDecision, !decision.events.isEmpty else { return nil }
        return decision.deadline
    }

    /// Reads every waiting edge, feeds each in time order, then lets deadlines up to `now` fire.
    ///
    /// When no edge came and the next deadline has passed, the decision ``prepareNextDecision()``
    /// made for it is adopted: the same events, as the machines run ahead the same way (they
    /// are values fed only timestamped inputs, and there was none since).
    public func pump(now: Instant) throws {
        edges.removeAll(keepingCapacity: true)
        let lost = try watcher.readEdges(into: &edges)
        if let decision = standingDecision, edges.isEmpty, lost == 0, decision.deadline <= now {
            changes &+= 1
            prepared = nil
            adoptedDecisions += 1
            swap(&machine, &machineAhead)
            nextDeadline = decision.nextDeadline
            events.append(contentsOf: decision.events)
            adoptedPublished = decision.published
            flush(findingNextDeadline: false)
            adoptedPublished = []
        } else if !edges.isEmpty || lost > 0 || nextDeadline.map({ $0 <= now }) == true {
            // Only time passing short of the next deadline leaves the machines as they were.
            changes &+= 1
        }
        for edge in edges {
            observeEdge(edge)
            // edge(_:into:) first fires every deadline due before the edge, at its own time.
            advanceExplaining(to: edge.time)
            machine.edge(edge, into: &events)
            // The deadline is found once, after the last step below: an edge's own scan would
            // be overtaken by the next input.
            flush(findingNextDeadline: false)
        }
        if lost > 0 {
            // The recognizer may believe a line is still down: read the levels and feed the differences.
            let levels = try? watcher.currentLevels()
            resynchronised = levels != nil
            reportLostEdges(lost, now)
            if let levels {
                machine.resynchronize(levels: levels, at: now, into: &events)
                flush(findingNextDeadline: false)
            }
        }
        advanceExplaining(to: now)
        machine.advance(to: now, into: &events)
        flush()
    }

    /// While explaining, lets the machines' time pass to just short of `now` one deadline at a
    /// time, handing on each deadline's explanations and events before the next's: the machine
    /// keeps its explanations apart from its events, so one flush after several deadlines would
    /// put every explanation ahead of every event, where an adopted decision (flushed alone)
    /// puts each right before what it explains.
    private func advanceExplaining(to now: Instant) {
        guard explain != nil else { return }
        var previous: Instant?
        while let deadline = machine.findNextDeadline(), deadline < now, previous.map({ deadline > $0 }) ?? true {
            machine.advance(to: deadline, into: &events)
            flush(findingNextDeadline: false)
            previous = deadline
        }
    }

    /// Tells the state machines whether a photo can be taken now.
    public func setCaptureAvailable(_ available: Bool, at now: Instant) {
        changes &+= 1
        machine.setCaptureAvailable(available, at: now, into: &events)
        flush()
    }

    /// Ends input: pending deadlines run, and whatever is still in progress ends or is cancelled.
    public func finish(at now: Instant) {
        changes &+= 1
        machine.finish(at: now, into: &events)
        flush()
    }

    /// Hands on the events made, and notes the machines' next deadline (every change of them ends
    /// here; an adopted decision brings the deadline it found).
    private func flush(findingNextDeadline: Bool = true) {
        if findingNextDeadline { nextDeadline = machine.findNextDeadline() }
        if let explain {
            for explanation in machine.takeExplanations() { explain(explanation) }
        }
        if let emitPublished {
            for (index, event) in events.enumerated() {
                emitPublished(event, index < adoptedPublished.count ? adoptedPublished[index] : nil)
            }
        } else {
            for event in events { emit(event) }
        }
        events.removeAll(keepingCapacity: true)
    }
}

extension GestureDriver {
    /// Runs a command on the state machines (a remote capture, a control set through the API) and
    /// hands on the events it made, also when it throws.
    public func perform<T, E: Error>(_ body: (inout GestureStateMachine, inout [ShutterEvent]) throws(E) -> T) throws(E) -> T {
        var made: [ShutterEvent] = []
        changes &+= 1
        defer {
            nextDeadline = machine.findNextDeadline()
            if let explain {
                for explanation in machine.takeExplanations() { explain(explanation) }
            }
            for event in made {
                if let emitPublished { emitPublished(event, nil) } else { emit(event) }
            }
        }
        return try body(&machine, &made)
    }
}
