/// Which hooks run, wait, time out or are dropped: the decisions around hook processes, without
/// the processes.
///
/// A value type the daemon's loop drives like the gesture machines: ``submit(_:at:)`` when an
/// event wants a hook, ``exited(_:at:)`` when a process was reaped, ``advance(to:)`` when
/// ``nextDeadline`` has passed. Each returns the actions to carry out (start a process, send it
/// SIGTERM or SIGKILL, log a dropped job); it never reads a clock and never touches a process.
public struct HookQueue<Job: Hashable & Sendable>: Sendable {
    /// One run of a hook, numbered in submission order.
    public struct RunID: RawRepresentable, Hashable, Sendable, Comparable {
        public var rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// What the loop must do.
    public enum Action: Hashable, Sendable {
        /// Start `job` as run `id`.
        case start(RunID, Job)
        /// The run is over its timeout: SIGTERM.
        case terminate(RunID)
        /// The run ignored SIGTERM for the grace period: SIGKILL.
        case kill(RunID)
        /// The queue was full: `job` will not run (log it).
        case drop(Job)
    }

    private struct Running: Sendable {
        var id: RunID
        var startedAt: Instant
        var terminatedAt: Instant?
        /// SIGKILL was sent; nothing is left to decide until the process is reaped.
        var killed = false
    }

    public let maximumRunning: Int
    public let maximumQueued: Int
    public let timeout: Nanoseconds
    /// How long after SIGTERM a run gets SIGKILL.
    public let killGrace: Nanoseconds
    private var running: [Running] = []
    private var queued: [(id: RunID, job: Job)] = []
    private var nextID = 0

    public init(maximumRunning: Int, maximumQueued: Int, timeout: Nanoseconds, killGrace: Nanoseconds = .seconds(2)) {
        precondition(maximumRunning >= 1 && maximumQueued >= 0)
        self.maximumRunning = maximumRunning
        self.maximumQueued = maximumQueued
        self.timeout = timeout
        self.killGrace = killGrace
    }

    /// Runs in progress.
    public var runningCount: Int { running.count }
    /// Jobs waiting for a free slot.
    public var queuedCount: Int { queued.count }

    /// A job wants to run: it starts now, waits, or is dropped when the queue is full.
    public mutating func submit(_ job: Job, at now: Instant) -> [Action] {
        let id = RunID(rawValue: nextID)
        nextID += 1
        if running.count < maximumRunning {
            running.append(Running(id: id, startedAt: now))
            return [.start(id, job)]
        }
        guard queued.count < maximumQueued else { return [.drop(job)] }
        queued.append((id, job))
        return []
    }

    /// Run `id` ended (exited, killed, or failed to start): the oldest waiting job takes its slot.
    public mutating func exited(_ id: RunID, at now: Instant) -> [Action] {
        guard let index = running.firstIndex(where: { $0.id == id }) else { return [] }
        running.remove(at: index)
        var actions: [Action] = []
        while running.count < maximumRunning, !queued.isEmpty {
            let next = queued.removeFirst()
            running.append(Running(id: next.id, startedAt: now))
            actions.append(.start(next.id, next.job))
        }
        return actions
    }

    /// The earliest instant a run times out or is due for SIGKILL.
    public var nextDeadline: Instant? {
        // A loop, not filter/map/min: the event loop asks before every wait, and arrays would allocate each time.
        var earliest: Instant?
        for run in running where !run.killed {
            earliest = Instant.earliest(earliest, run.terminatedAt.map { $0 + killGrace } ?? run.startedAt + timeout)
        }
        return earliest
    }

    /// Lets time pass: runs over their timeout get SIGTERM, runs that outlived the grace get SIGKILL.
    public mutating func advance(to now: Instant) -> [Action] {
        var actions: [Action] = []
        for index in running.indices where !running[index].killed {
            if let terminatedAt = running[index].terminatedAt {
                if terminatedAt + killGrace <= now {
                    // Killed once; the slot frees when the process is reaped.
                    running[index].killed = true
                    actions.append(.kill(running[index].id))
                }
            } else if running[index].startedAt + timeout <= now {
                running[index].terminatedAt = now
                actions.append(.terminate(running[index].id))
            }
        }
        return actions
    }
}
