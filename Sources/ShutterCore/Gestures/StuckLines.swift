/// Which lines are stuck: active too long with nobody behind them (water on a pad, a jammed button).
///
/// Stuck detection knows roles, because a button held by a person is not a stuck line:
/// - `half` is never stuck: holding it only keeps focus (a photographer waiting for the moment),
///   and a `full` click on it must still be a click however long it was held;
/// - `full` and `secondary` are watched for the board's `stuckAfterMs`, but not while a person holds
///   them in a capture (a press that began, a burst): only a press the recognizer ignores (`full`
///   without `half`, a press while capture is unavailable, `secondary` mapped to the controls) is
///   watched, from when it stopped being a capture;
/// - pads are watched for `padStuckAfterMs`, longer: a thumb rests on the strip while holding the rig.
///
/// A value type like the gesture machines: confirmed changes and time in, stuck lines out, and the
/// next deadline for the rig's timer.
struct StuckLines: Sendable {
    private struct Line: Sendable {
        /// How long the line may stay active unwatched-for; nil: never stuck.
        let limit: Nanoseconds?
        var active = false
        /// A person holds it in a gesture: not watched.
        var held = false
        var stuck = false
        /// Since when it has been active and watched.
        var since: Instant?
    }

    private var lines: [Line]
    /// The lines being watched (`since` set, with a limit): the scans visit only these, so a
    /// change costs the same on a strip of 6 pads as on one of 64.
    private var watched = LineSet()
    /// The earliest instant a line becomes stuck, kept so the deadline scan stays cheap.
    private(set) var deadline: Instant?

    /// - Parameter limits: each line's limit in board order (nil: the line is never stuck).
    init(limits: [Nanoseconds?]) {
        precondition(limits.count <= LineSet.capacity, "at most \(LineSet.capacity) lines")
        lines = limits.map { Line(limit: $0) }
    }

    /// The limit that applies to `line`, for explanations.
    func limit(of line: Int) -> Nanoseconds? { lines[line].limit }

    /// Whether `line` is active and watched (it may become stuck).
    func isWatched(_ line: Int) -> Bool { lines[line].since != nil }

    /// Whether `line` is stuck (ignored until it releases).
    func isStuck(_ line: Int) -> Bool { lines[line].stuck }

    /// A confirmed change of `line`.
    ///
    /// - Returns: `.route` to pass the change on, `.ignore` for a stuck line still active, `.freed`
    ///   for a stuck line that released (it counts again; the release itself is not routed).
    mutating func confirmed(line: Int, active: Bool, since: Instant) -> Confirmed {
        if lines[line].stuck {
            guard !active else { return .ignore }
            lines[line].stuck = false
            return .freed
        }
        lines[line].active = active
        watch(line, since: active && !lines[line].held ? since : nil)
        return .route
    }

    enum Confirmed: Hashable, Sendable { case route, ignore, freed }

    /// Whether a person holds `line` in a gesture now; a line let go while still active is watched
    /// from `now`.
    mutating func setHeld(_ line: Int, _ held: Bool, at now: Instant) {
        guard lines[line].held != held else { return }
        lines[line].held = held
        watch(line, since: !held && lines[line].active && !lines[line].stuck ? now : nil)
    }

    /// The lines whose limit ran out at `now`, in board order; each is now stuck and released.
    mutating func fire(at now: Instant) -> [Int] {
        var due: [Int] = []
        for index in watched.members {
            guard let since = lines[index].since, let limit = lines[index].limit, since + limit <= now else { continue }
            lines[index].stuck = true
            lines[index].active = false
            lines[index].since = nil
            watched.set(index, false)
            due.append(index)
        }
        updateDeadline()
        return due
    }

    /// `line` is stuck now, whatever its watch (a `full` held past the burst's bound): it is
    /// released and ignored until it releases, as for a limit that ran out.
    mutating func stick(_ line: Int) {
        lines[line].stuck = true
        lines[line].active = false
        watch(line, since: nil)
    }

    /// Input ended: no line is watched any more, so none becomes stuck later.
    mutating func stopWatching() {
        for index in lines.indices { lines[index].since = nil }
        watched = LineSet()
        deadline = nil
    }

    /// Watches `line` from `since`, or stops watching it (nil), and keeps the deadline.
    private mutating func watch(_ line: Int, since: Instant?) {
        let wasWatched = lines[line].since != nil
        lines[line].since = since
        if let since, let limit = lines[line].limit, !wasWatched {
            // A new watch can only bring the deadline forward.
            watched.set(line, true)
            let due = since + limit
            if deadline.map({ due < $0 }) ?? true { deadline = due }
        } else {
            watched.set(line, since != nil && lines[line].limit != nil)
            if wasWatched { updateDeadline() }
        }
    }

    private mutating func updateDeadline() {
        var earliest: Instant?
        for index in watched.members {
            let line = lines[index]
            guard let since = line.since, let limit = line.limit else { continue }
            let due = since + limit
            if earliest.map({ due < $0 }) ?? true { earliest = due }
        }
        deadline = earliest
    }
}
