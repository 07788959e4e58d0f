import ShutterCore

/// The capture service's decisions, without a camera: which frame a press gets, when a waiting
/// press fails, the stall watchdog, burst de-duplication, and when to stream or stand by.
///
/// A value type fed timestamped inputs (frames by start of exposure and sequence number, presses
/// by their kernel edge time, the time now) that returns the actions to carry out, with an
/// explicit deadline (``nextDeadline``), as `GestureStateMachine` is. ``CaptureService`` keeps the I/O:
/// it holds the frames' bytes, starts and stops the camera, and encodes what ``Action/save(sequence:shot:)`` names.
public struct CaptureStateMachine: Sendable {
    /// What the machine knows of a frame: when its exposure started and the driver's number for it.
    public struct Stamp: Hashable, Sendable {
        public var timestamp: Instant
        public var sequence: UInt32
        public init(timestamp: Instant, sequence: UInt32) {
            self.timestamp = timestamp
            self.sequence = sequence
        }
    }

    /// Why a press fails, or the stream is reported failing.
    public enum Failure: Hashable, Sendable {
        /// No frame for `silence` while streaming (the watchdog).
        case stalled(silence: Nanoseconds)
        /// Too many photos are being saved already.
        case backlog(limit: Int)
        /// The camera's start, asked for `waited` ago, has not finished within ``startTimeout``.
        case startOverdue(waited: Nanoseconds)
        /// A rig's shot came after the ring let go of the frame exposing at its instant: the
        /// oldest frame held began `oldestHeldAfter` past the instant.
        case instantNotHeld(oldestHeldAfter: Nanoseconds)
        /// As many rig shots as ``CaptureStateMachine/rigShotLimit`` wait for their frames already.
        case rigShotBacklog(limit: Int)
    }

    /// What the service must do.
    public enum Action: Hashable, Sendable {
        /// Encode and write the held frame numbered `sequence` for `shot`.
        case save(sequence: UInt32, shot: Shot)
        /// Report `captureFailed` for `shot` (`nil`: for the stream).
        case fail(shot: Shot?, Failure)
        /// Start the camera streaming; once it has (off the event loop), call ``settled(streaming:at:warmupFrames:)``.
        case startStream
        /// Stop the camera and start it again; once done, call ``settled(streaming:at:warmupFrames:)``.
        case restartStream
        /// Stop the camera: nothing needs frames (then call ``streamStopped()``).
        case stopStream
    }

    /// Whether the board keeps the camera streaming between shots.
    public let keepStreaming: Bool
    /// The most photos being saved or waiting; a longer burst fails fast instead of growing memory.
    public let maximumInFlight: Int
    /// The most rig shots waiting for their frames, beside ``maximumInFlight``: a shot set in the
    /// future waits until its instant, and a node sent many (or whose clock runs ahead) must not
    /// take the slots of its own button.
    public var rigShotLimit: Int { max(1, maximumInFlight / 2) }
    /// The frames held, oldest first, as many as the service's ring holds.
    public private(set) var held: [Stamp] = []
    /// How many frames the ring holds (the service sets it once it knows the frame size); lowering it forgets the oldest.
    public var ringCapacity: Int {
        didSet {
            ringCapacity = max(1, ringCapacity)
            if held.count > ringCapacity { held.removeFirst(held.count - ringCapacity) }
        }
    }
    /// The nominal frame interval, when the camera says.
    public var frameInterval: Nanoseconds?
    /// How long presses wait for a start to finish before they fail (the board's `camera.startTimeoutMs`).
    public let startTimeout: Nanoseconds
    /// When the start under way was asked for.
    private var startAskedAt: Instant?
    /// The start under way is overdue and that was reported; presses arriving during it fail at the next tick.
    private var startOverdueReported = false
    public private(set) var isStreaming = false
    /// A start (or restart) was asked for and the camera has not yet said it streams: presses
    /// wait for it, no second start is asked for, and the watchdog waits too (the start is the
    /// lifecycle queue's to finish or fail).
    public private(set) var isStarting = false
    /// A light press started the camera: keep it until a shot or ``standby()``.
    public private(set) var isPrepared = false
    private var warmupRemaining = 0
    /// The shots waiting for a frame, in the order they came.
    private var waiting: [Shot] = []
    /// The newest frame already saved for a press, since the stream started: never saved again.
    private var lastSaved: UInt32?
    /// When the last frame arrived (or the stream started): the watchdog's reference.
    private var lastArrival: Instant?
    /// A stall was reported and no frame came since: restarts stay quiet unless a press waits.
    private var stallReported = false
    /// No frame past the warm-up yet since the stream started: the watchdog gives the camera
    /// ``startupGrace`` between frames. A camera's first frames after a start come irregularly
    /// (libcamera 0.4's vimc under emulation: a first frame, then 1.3 s to the next, before any
    /// interval is measured), and a stream stopped between shots (`keepStreaming` off) lives
    /// only for its warm-up and one frame.
    private var warmingUp = false
    /// Frames kept since the stream started (past its warm-up).
    private var framesPastWarmup = 0

    /// How long a camera may take to send its first frame after it starts (webcams meter and
    /// negotiate USB bandwidth first; an emulated one is slower still) before it counts as stalled.
    public static let startupGrace = Nanoseconds.seconds(5)

    public init(ringCapacity: Int, keepStreaming: Bool, maximumInFlight: Int = 8, frameInterval: Nanoseconds? = nil,
                startTimeout: Nanoseconds = .seconds(10)) {
        self.ringCapacity = max(1, ringCapacity)
        self.startTimeout = startTimeout
        self.keepStreaming = keepStreaming
        self.maximumInFlight = maximumInFlight
        self.frameInterval = frameInterval
    }

    /// Presses waiting for a frame.
    public var waitingCount: Int { waiting.count }

    /// How long the stream may go without a frame: five frame intervals, never less than a second.
    public var stallLimit: Nanoseconds {
        Nanoseconds(rawValue: max(Nanoseconds.seconds(1).rawValue, (frameInterval ?? .zero).rawValue * 5))
    }

    /// When ``tick(now:)`` must run next: the stall watchdog's deadline while streaming, the start
    /// timeout while starting (until it has been reported, or again once a press waits).
    public var nextDeadline: Instant? {
        if isStarting, let startAskedAt {
            return startOverdueReported && waiting.isEmpty ? nil : startAskedAt + startTimeout
        }
        guard isStreaming, let lastArrival else { return nil }
        return lastArrival + currentStallLimit
    }

    /// Asks for a start at `now`.
    private mutating func askStart(at now: Instant) {
        isStarting = true
        startAskedAt = now
        startOverdueReported = false
    }

    /// No start is under way any more (it finished, or the stream stopped).
    private mutating func startEnded() {
        isStarting = false
        startAskedAt = nil
        startOverdueReported = false
    }

    /// The silence allowed now: ``startupGrace`` until the first frame past the warm-up, and
    /// until the second while the frame interval is unknown (a camera without a board rate
    /// measures it from its frames, and one frame tells nothing: a slow camera is not a stalled
    /// one); then ``stallLimit``.
    private var currentStallLimit: Nanoseconds {
        warmingUp || (frameInterval == nil && framesPastWarmup < 2) ? max(stallLimit, Self.startupGrace) : stallLimit
    }

    /// The camera started streaming at `now`; its first `warmupFrames` frames are skipped while
    /// auto-exposure settles. Frames held before are gone.
    public mutating func streamStarted(at now: Instant, warmupFrames: Int) {
        isStreaming = true
        startEnded()
        held.removeAll()
        lastSaved = nil
        warmupRemaining = max(0, warmupFrames)
        lastArrival = now
        warmingUp = true
        framesPastWarmup = 0
    }

    /// The camera stopped (or went away): frames held are gone; shots still waiting are
    /// returned for the service to fail with its reason.
    public mutating func streamStopped() -> [Shot] {
        isStreaming = false
        startEnded()
        held.removeAll()
        warmupRemaining = 0
        lastArrival = nil
        defer { waiting.removeAll() }
        return waiting
    }

    /// A frame arrived at `now`. Returns whether the service keeps it in its ring (warm-up frames
    /// are dropped; when the ring is full the oldest goes) and what to do.
    public mutating func frame(_ stamp: Stamp, at now: Instant) -> (keep: Bool, actions: [Action]) {
        lastArrival = now
        stallReported = false
        if warmupRemaining > 0 {
            warmupRemaining -= 1
            return (false, [])
        }
        warmingUp = false
        framesPastWarmup += 1
        if held.count >= ringCapacity { held.removeFirst(held.count - ringCapacity + 1) }
        held.append(stamp)
        var actions: [Action] = []
        var index = 0
        while index < waiting.count {
            if let chosen = choice(for: waiting[index].pressedAt, reusingSavedFrames: waiting[index].takesSavedFrame) {
                actions.append(save(chosen, for: waiting.remove(at: index)))
            } else {
                index += 1
            }
        }
        return (true, actions + standbyIfIdle())
    }

    /// The camera needs `count` of its buffers back (photos hold the others): the oldest held
    /// frames go, never the newest (the next press's frame may be it). Presses waiting are not
    /// affected: they wait for a newer frame.
    public mutating func giveBack(oldest count: Int) {
        let dropped = min(count, held.count - 1)
        if dropped > 0 { held.removeFirst(dropped) }
    }

    /// A press: `shot`, of the frame at its `pressedAt` (the kernel's edge time), with `inFlight`
    /// photos being saved now.
    ///
    /// A rig's shot (``Shot/takesSavedFrame``) wants the frame of its instant and no other: a
    /// frame already saved for another press may serve it (another shot, or one that arrived out
    /// of order, saved it or a later one first; a burst never reuses one), and when the ring no
    /// longer holds that frame the shot fails (``Failure/instantNotHeld(oldestHeldAfter:)``)
    /// rather than take a later one, whose photo would not be of the rig's instant.
    public mutating func press(_ shot: Shot, now: Instant, inFlight: Int) -> [Action] {
        let pressedAt = shot.pressedAt, rigShot = shot.takesSavedFrame
        let rigShotsWaiting = waiting.count { $0.takesSavedFrame }
        if rigShot, rigShotsWaiting >= rigShotLimit {
            return [.fail(shot: shot, .rigShotBacklog(limit: rigShotLimit))]
        }
        if inFlight + waiting.count - rigShotsWaiting >= maximumInFlight {
            return [.fail(shot: shot, .backlog(limit: maximumInFlight))]
        }
        isPrepared = false
        if !isStreaming {
            // A cold camera: the frames before the press are gone; the first after the warm-up serves it.
            waiting.append(shot)
            if isStarting { return [] }  // the start already asked for serves this press too (or it fails at the next tick when overdue)
            askStart(at: now)
            return [.startStream]
        }
        if rigShot, warmupRemaining == 0, let oldest = held.first?.timestamp, pressedAt < oldest {
            return [.fail(shot: shot, .instantNotHeld(oldestHeldAfter: oldest - pressedAt))]
        }
        if warmupRemaining == 0, let chosen = choice(for: pressedAt, reusingSavedFrames: rigShot) {
            return [save(chosen, for: shot)] + standbyIfIdle()
        }
        waiting.append(shot)
        return []
    }

    /// A light press at `now`: start the camera ahead of the shot when the board stops it between shots.
    public mutating func prepare(at now: Instant) -> [Action] {
        guard !isStreaming, !isStarting else { return [] }  // as when streaming: the camera is coming
        isPrepared = true
        askStart(at: now)
        return [.startStream]
    }

    /// The camera opened at `now`: a board that keeps it streaming starts it now.
    public mutating func cameraOpened(at now: Instant) -> [Action] {
        guard keepStreaming, !isStreaming, !isStarting else { return [] }
        askStart(at: now)
        return [.startStream]
    }

    /// The lifecycle queue has carried out every start, restart and stop asked for, and the
    /// camera `streaming` now or not. A start that finished becomes the stream (its first
    /// `warmupFrames` skipped); a camera that streams though nothing wants it any more (the light
    /// press ended while it started) is stopped, and one that should stream but does not is started.
    public mutating func settled(streaming: Bool, at now: Instant, warmupFrames: Int) -> [Action] {
        switch (streaming, isStreaming || isStarting) {
        case (true, true):
            if isStarting { streamStarted(at: now, warmupFrames: warmupFrames) }
            return []
        case (true, false):
            return [.stopStream]
        case (false, true):
            isStreaming = false
            lastArrival = nil
            askStart(at: now)
            return [.startStream]
        case (false, false):
            return []
        }
    }

    /// The light press ended without a shot: stop a camera the board does not keep streaming.
    public mutating func standby() -> [Action] {
        isPrepared = false
        return standbyIfIdle()
    }

    /// The time is `now`: the start timeout and the stall watchdog.
    ///
    /// A start not finished after ``startTimeout`` fails the presses waiting for it (or, with none
    /// waiting, is reported once); it stays asked for, as it cannot be taken back, and presses
    /// during it fail at the next tick. A stream silent for ``stallLimit`` (``startupGrace``
    /// until its first frame past the warm-up) fails the presses waiting (or, with none waiting, reports the
    /// stall once) and is restarted, or stopped when nothing needs it.
    public mutating func tick(now: Instant) -> [Action] {
        if isStarting, let startAskedAt, now - startAskedAt >= startTimeout {
            let failure = Failure.startOverdue(waited: now - startAskedAt)
            var actions = waiting.map { Action.fail(shot: $0, failure) }
            if waiting.isEmpty, !startOverdueReported { actions.append(.fail(shot: nil, failure)) }
            startOverdueReported = true
            waiting.removeAll()
            return actions
        }
        guard isStreaming, let lastArrival, now - lastArrival >= currentStallLimit else { return [] }
        let failure = Failure.stalled(silence: now - lastArrival)
        var actions = waiting.map { Action.fail(shot: $0, failure) }
        if waiting.isEmpty, !stallReported { actions.append(.fail(shot: nil, failure)) }
        stallReported = true
        waiting.removeAll()
        held.removeAll()
        if keepStreaming || isPrepared {
            // No watchdog while the camera restarts: it counts again from the restart's end.
            isStreaming = false
            askStart(at: now)
            self.lastArrival = nil
            actions.append(.restartStream)
        } else {
            isStreaming = false
            self.lastArrival = nil
            actions.append(.stopStream)
        }
        return actions
    }

    /// The frame held for a press at `pressedAt`, or `nil` when it must wait. Frames already saved
    /// for another press are not candidates: a burst never saves one frame twice.
    func choice(for pressedAt: Instant, reusingSavedFrames: Bool = false) -> Stamp? {
        let candidates = reusingSavedFrames ? held : lastSaved.map { last in held.filter { $0.sequence > last } } ?? held
        switch chooseFrame(times: candidates.map(\.timestamp), pressedAt: pressedAt, interval: frameInterval) {
        case .frame(let index): return candidates[index]
        case .next: return nil
        }
    }

    private mutating func save(_ stamp: Stamp, for shot: Shot) -> Action {
        lastSaved = max(lastSaved ?? stamp.sequence, stamp.sequence)
        return .save(sequence: stamp.sequence, shot: shot)
    }

    private mutating func standbyIfIdle() -> [Action] {
        guard !keepStreaming, !isPrepared, waiting.isEmpty, isStreaming || isStarting else { return [] }
        isStreaming = false
        startEnded()
        held.removeAll()
        lastArrival = nil
        return [.stopStream]
    }
}
