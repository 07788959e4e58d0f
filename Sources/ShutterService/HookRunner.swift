#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShutterCore
import ShutterSystem

/// Runs the board's hooks: argument vectors started with `posix_spawn` (no shell), event fields in
/// the environment, output and exit status to the log, reaped on SIGCHLD from the loop.
///
/// The decisions (start, queue, drop, SIGTERM at the timeout, SIGKILL after the grace) are
/// ``HookQueue``'s; this class only spawns, signals, reads pipes and reaps. Nothing here waits:
/// a hook that hangs costs a process slot, never the loop's time.
public final class HookRunner {
    /// One hook to run: its argument vector (placeholders filled) and environment additions.
    public struct Job: Hashable, Sendable {
        public var name: String
        public var arguments: [String]
        public var environment: [String: String]
    }

    private struct Process {
        var pid: pid_t
        var job: Job
        var output: CInt
        var pending: [UInt8] = []
    }

    private var queue: HookQueue<Job>
    private var processes: [HookQueue<Job>.RunID: Process] = [:]
    private unowned let loop: EventLoop
    private let settings: HookSettings
    /// Where the runner's diagnostics go: the daemon's log (standard error); a test gives its own
    /// sink rather than capture the process's standard error, which every test shares.
    public var log: (_ message: String, _ priority: Log.Priority) -> Void = Log.write
    /// The latest exit statuses, oldest first (the last 32; `status` and tests read them).
    public private(set) var exits: [(job: Job, status: String)] = []

    private func record(_ job: Job, _ status: String) {
        exits.append((job, status))
        if exits.count > 32 { exits.removeFirst() }
    }

    public init(settings: HookSettings, loop: EventLoop) {
        self.settings = settings
        self.loop = loop
        queue = HookQueue(maximumRunning: settings.maxRunning, maximumQueued: settings.maxQueued, timeout: settings.timeout)
    }

    public var runningCount: Int { queue.runningCount }
    public var queuedCount: Int { queue.queuedCount }
    public var nextDeadline: Instant? { queue.nextDeadline }

    /// The jobs an event asks for (none when no hook wants it).
    public static func jobs(for event: ServiceEvent, settings: HookSettings) -> [Job] {
        jobs(for: event.name, fields: event.fields, line: event.line, settings: settings)
    }

    /// The jobs for the event `name` whose line is `line` and members `fields` (as text): each
    /// field fills its `{placeholder}` and becomes a `SHUTTER_` variable.
    static func jobs(for name: String, fields: [(key: String, text: String)], line: String, settings: HookSettings) -> [Job] {
        var wanted: [(String, [String])] = []
        if name == "photo", let photo = settings.photo { wanted.append(("photo", photo)) }
        if let event = settings.event, settings.events.contains(name) { wanted.append(("event", event)) }
        guard !wanted.isEmpty else { return [] }
        var values: [String: String] = [:]
        for (key, text) in fields { values[key] = text }
        var environment: [String: String] = ["SHUTTER_EVENT": name, "SHUTTER_JSON": line]
        for (key, value) in values where key != "event" {
            environment["SHUTTER_" + environmentName(key)] = value
        }
        return wanted.map { hookName, template in
            Job(name: hookName, arguments: template.map { fill($0, with: values) }, environment: environment)
        }
    }

    /// Replaces each `{field}` of `template` with its value, in one pass from left to right: what
    /// was filled in is never read again, so a value holding another placeholder's name (a path
    /// with `{event}` in it) stays as it is, whatever order the fields come in. An unknown
    /// `{name}` and a lone brace are kept.
    static func fill(_ template: String, with values: [String: String]) -> String {
        var filled = ""
        var rest = template[...]
        while let open = rest.firstIndex(of: "{") {
            filled += rest[..<open]
            let afterOpen = rest.index(after: open)
            guard let close = rest[afterOpen...].firstIndex(where: { $0 == "}" || $0 == "{" }), rest[close] == "}",
                  let value = values[String(rest[afterOpen..<close])] else {
                filled += "{"
                rest = rest[afterOpen...]
                continue
            }
            filled += value
            rest = rest[rest.index(after: close)...]
        }
        return filled + rest
    }

    /// `pressedAt` → `PRESSED_AT`.
    static func environmentName(_ key: String) -> String {
        var name = ""
        for character in key {
            if character.isUppercase, !name.isEmpty { name += "_" }
            name += character.uppercased()
        }
        return name
    }

    /// Queues the hooks an event asks for.
    public func handle(_ event: ServiceEvent, now: Instant) {
        for job in Self.jobs(for: event, settings: settings) {
            perform(queue.submit(job, at: now), now: now)
        }
    }

    /// Sends due signals.
    public func advance(to now: Instant) {
        perform(queue.advance(to: now), now: now)
    }

    /// Reaps every hook that ended (called on SIGCHLD); never waits.
    public func reap(now: Instant) {
        for (id, process) in processes.sorted(by: { $0.key < $1.key }) {
            var status: CInt = 0
            let result = waitpid(process.pid, &status, WNOHANG)
            guard result == process.pid || (result < 0 && errno == ECHILD) else { continue }
            drain(id, final: true)
            processes[id] = nil
            let text = result < 0 ? "vanished" : Self.describe(status)
            record(process.job, text)
            let message = "shutter: hook \(process.job.name) (\(process.job.arguments[0]), pid \(process.pid)) \(text)"
            if text == "exited 0" { log(message, .info) } else { log(message, .warning) }
            perform(queue.exited(id, at: now), now: now)
        }
    }

    static func describe(_ status: CInt) -> String {
        let signal = status & 0x7f
        if signal == 0 { return "exited \((status >> 8) & 0xff)" }
        return "killed by signal \(signal)"
    }

    private func perform(_ actions: [HookQueue<Job>.Action], now: Instant) {
        for action in actions {
            switch action {
            case .start(let id, let job):
                start(id, job, now: now)
            case .terminate(let id):
                if let process = processes[id] {
                    log("shutter: hook \(process.job.name) (pid \(process.pid)) ran over \(JSONLine.number(settings.timeout.milliseconds / 1000, decimals: 3)) s: SIGTERM", .warning)
                    kill(-process.pid, SIGTERM)
                }
            case .kill(let id):
                if let process = processes[id] {
                    log("shutter: hook \(process.job.name) (pid \(process.pid)) ignored SIGTERM: SIGKILL", .warning)
                    kill(-process.pid, SIGKILL)
                }
            case .drop(let job):
                log("shutter: hook \(job.name) dropped: \(settings.maxRunning) running and \(settings.maxQueued) waiting already (\(job.arguments.joined(separator: " ")))", .warning)
            }
        }
    }

    private func start(_ id: HookQueue<Job>.RunID, _ job: Job, now: Instant) {
        var pipeEnds: [CInt] = [0, 0]
        guard pipe(&pipeEnds) == 0 else {
            log("shutter: hook \(job.name) not started: pipe failed: \(Errno.current)", .error)
            perform(queue.exited(id, at: now), now: now)
            return
        }
        // Neither end leaks into other children; only the loop's end is non-blocking (the
        // child's stdout blocks as any ordinary pipe does).
        _ = fcntl(pipeEnds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(pipeEnds[1], F_SETFD, FD_CLOEXEC)
        _ = fcntl(pipeEnds[0], F_SETFL, fcntl(pipeEnds[0], F_GETFL) | O_NONBLOCK)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The loop blocks SIGTERM/SIGINT/SIGHUP/SIGCHLD and ignores SIGPIPE; a hook gets the defaults back.
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in EventLoop.handledSignals + [SIGPIPE] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        // Its own process group, so a timeout's signal reaches whatever the hook started too.
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        var environment = ProcessInfo.processInfo.environment
        for (key, value) in job.environment { environment[key] = value }
        // NOTIFY_SOCKET is for the daemon alone.
        environment["NOTIFY_SOCKET"] = nil
        let argv = job.arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, job.arguments[0], &actions, &attributes, argv, envp)
        close(pipeEnds[1])
        guard result == 0 else {
            close(pipeEnds[0])
            log("shutter: hook \(job.name) not started: \(job.arguments[0]): \(Errno(rawValue: result))", .error)
            record(job, "not started")
            perform(queue.exited(id, at: now), now: now)
            return
        }
        processes[id] = Process(pid: pid, job: job, output: pipeEnds[0])
        loop.watch(pipeEnds[0]) { [unowned self] in
            drain(id, final: false)
            // End of output usually means the hook exited: reap now rather than wait for SIGCHLD
            // (which another thread may have taken when the daemon is embedded, as in tests).
            if processes[id]?.output == -1 { reap(now: loop.clock.now) }
        }
    }

    /// Logs what a hook wrote, a line at a time.
    private func drain(_ id: HookQueue<Job>.RunID, final: Bool) {
        guard var process = processes[id] else { return }
        var chunk = [UInt8](repeating: 0, count: 4096)
        var ended = false
        while true {
            switch valueOrErrno({ read(process.output, &chunk, chunk.count) }) {
            case .success(let count) where count > 0:
                process.pending.append(contentsOf: chunk[..<count])
                if process.pending.count > 64 * 1024 { process.pending.removeFirst(process.pending.count - 64 * 1024) }
                continue
            case .success:
                ended = true
            case .failure(let errno):
                ended = errno != .wouldBlock
            }
            break
        }
        while let newline = process.pending.firstIndex(of: UInt8(ascii: "\n")) {
            log("shutter: hook \(process.job.name)[\(process.pid)]: " + String(decoding: process.pending[..<newline], as: UTF8.self), .info)
            process.pending.removeFirst(newline + 1)
        }
        if ended || final {
            if !process.pending.isEmpty {
                log("shutter: hook \(process.job.name)[\(process.pid)]: " + String(decoding: process.pending, as: UTF8.self), .info)
                process.pending.removeAll()
            }
            if process.output >= 0 {
                loop.unwatch(process.output)
                close(process.output)
                process.output = -1
            }
        }
        processes[id] = process
    }

    /// At shutdown: SIGTERM to every hook still running, SIGKILL to those alive after `grace`, all reaped.
    public func stopAll(grace: Nanoseconds = .seconds(2)) {
        guard !processes.isEmpty else { return }
        for process in processes.values { kill(-process.pid, SIGTERM) }
        let clock = SystemMonotonicClock()
        let end = clock.now + grace
        while !processes.isEmpty {
            reap(now: clock.now)
            if processes.isEmpty { break }
            if clock.now >= end {
                for process in processes.values { kill(-process.pid, SIGKILL) }
                for process in processes.values { var status: CInt = 0; waitpid(process.pid, &status, 0) }
                reap(now: clock.now)
                processes.removeAll()
                break
            }
            usleep(10_000)
        }
    }
}
