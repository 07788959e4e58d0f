#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import ShutterCapture
import ShutterCore
@testable import ShutterService

@Suite struct HookQueueTests {
    typealias Queue = HookQueue<String>

    @Test func startsUpToTheLimitQueuesThenDrops() {
        var queue = Queue(maximumRunning: 1, maximumQueued: 1, timeout: .seconds(1))
        let t0 = Instant.seconds(10)
        #expect(queue.submit("a", at: t0) == [.start(Queue.RunID(rawValue: 0), "a")])
        #expect(queue.submit("b", at: t0) == [])
        #expect(queue.submit("c", at: t0) == [.drop("c")])
        #expect(queue.exited(Queue.RunID(rawValue: 0), at: t0 + .milliseconds(5)) == [.start(Queue.RunID(rawValue: 1), "b")])
        #expect(queue.runningCount == 1 && queue.queuedCount == 0)
    }

    @Test func timeoutThenGraceThenKill() {
        var queue = Queue(maximumRunning: 2, maximumQueued: 0, timeout: .milliseconds(100), killGrace: .milliseconds(50))
        let t0 = Instant.seconds(1)
        _ = queue.submit("slow", at: t0)
        #expect(queue.nextDeadline == t0 + .milliseconds(100))
        #expect(queue.advance(to: t0 + .milliseconds(99)) == [])
        #expect(queue.advance(to: t0 + .milliseconds(100)) == [.terminate(Queue.RunID(rawValue: 0))])
        #expect(queue.nextDeadline == t0 + .milliseconds(150))
        #expect(queue.advance(to: t0 + .milliseconds(150)) == [.kill(Queue.RunID(rawValue: 0))])
        // Killed: nothing more to decide until it is reaped, and the slot stays taken until then.
        #expect(queue.nextDeadline == nil)
        #expect(queue.runningCount == 1)
        #expect(queue.exited(Queue.RunID(rawValue: 0), at: t0 + .milliseconds(151)) == [])
        #expect(queue.runningCount == 0)
    }

    @Test func anUnknownRunEndingChangesNothing() {
        var queue = Queue(maximumRunning: 1, maximumQueued: 4, timeout: .seconds(1))
        #expect(queue.exited(Queue.RunID(rawValue: 7), at: .zero) == [])
    }
}

/// The lines a hook runner logs, kept by the test instead of going to standard error (which
/// every test in the process shares).
final class LogLines {
    private(set) var lines: [String] = []

    /// Makes `runner` log here.
    func collect(from runner: HookRunner?) {
        runner?.log = { [unowned self] message, _ in lines.append(message) }
    }

    var text: String { lines.joined(separator: "\n") }
}

@Suite(.serialized) struct HookRunnerTests {
    func rig(_ hooks: String) throws -> TestRig {
        try TestRig(boardJSON: TestRig.simulatorBoard.replacingOccurrences(
            of: "\"output\":", with: "\"hooks\": \(hooks),\n  \"output\":"))
    }

    /// Turns the loop until `count` hooks have ended.
    func waitForExits(_ rig: TestRig, _ count: Int) throws {
        try rig.waitFor {
            rig.daemon.hooks?.reap(now: rig.chip.clock.now)
            return (rig.daemon.hooks?.exits.count ?? 0) >= count
        }
    }

    @Test func thePhotoHookGetsThePathAsArgumentAndTheFieldsInItsEnvironment() throws {
        let out = "/tmp/sdt-hook-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: out) }
        let rig = try rig("{\"photo\": [\"/bin/sh\", \"-c\", \"echo \\\"$1|$SHUTTER_EVENT|$SHUTTER_PATH|$SHUTTER_PRESSED_AT\\\" > \(out)\", \"hook\", \"{path}\"]}")
        defer { rig.close() }
        try rig.click()
        try rig.waitFor { rig.names.contains("photo") }
        try waitForExits(rig, 1)
        let path = try #require(rig.daemon.lastPhotoPath)
        let written = try String(contentsOfFile: out, encoding: .utf8).trimmingCharacters(in: .newlines)
        let fields = written.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        #expect(fields.count == 4)
        #expect(fields[0] == path && fields[2] == path)
        #expect(fields[1] == "photo")
        #expect(Double(fields[3]) != nil)
        #expect(rig.daemon.hooks?.exits.first?.status == "exited 0")
    }

    /// A hook that exits 3 and a hook whose program does not exist are each logged (the status,
    /// the program, and for the missing one why it did not start) and recorded; the daemon goes
    /// on: no hook is left running and the next press still gives its photo.
    @Test func aFailingOrMissingHookIsLoggedAndTheDaemonGoesOn() throws {
        let failingLog = LogLines()
        do {
            let rig = try rig("{\"event\": [\"/bin/sh\", \"-c\", \"exit 3\"], \"events\": [\"controlValue\"]}")
            defer { rig.close() }
            failingLog.collect(from: rig.daemon.hooks)
            #expect(rig.daemon.execute(APIRequest(id: nil, command: .set(control: "zoom", to: .value(2)))).refusal == nil)
            try waitForExits(rig, 1)
            #expect(rig.daemon.hooks?.exits.first?.status == "exited 3")
        }
        let failing = failingLog.lines.filter { $0.contains("shutter: hook event (/bin/sh, pid ") }
        #expect(failing.count == 1 && failing.first?.hasSuffix(") exited 3") == true, "log: \(failingLog.text)")

        let missingLog = LogLines()
        let photos = try {
            let missing = try self.rig("{\"photo\": [\"/nonexistent/upload\", \"{path}\"]}")
            defer { missing.close() }
            missingLog.collect(from: missing.daemon.hooks)
            try missing.click()
            try missing.waitFor { missing.names.contains("photo") }
            #expect(missing.daemon.hooks?.exits.first?.status == "not started")
            #expect(missing.daemon.hooks?.runningCount == 0)
            // The daemon goes on: a second press gets its photo too (and its hook fails the same way).
            try missing.click()
            try missing.waitFor { missing.names.filter { $0 == "photo" }.count == 2 }
            #expect(missing.daemon.hooks?.exits.map(\.status) == ["not started", "not started"])
            return missing.names.filter { $0 == "photo" }.count
        }()
        #expect(photos == 2)
        let notStarted = missingLog.lines.filter { $0.contains("shutter: hook photo not started: /nonexistent/upload: ") }
        #expect(notStarted.count == 2, "log: \(missingLog.text)")
        #expect(notStarted.allSatisfy { $0.contains("No such file or directory") }, "log: \(missingLog.text)")
    }

    /// At the timeout the hook's process group gets SIGTERM, and SIGKILL after the grace when it
    /// keeps running. The hook traps TERM and records it in a file (so "terminated" is seen, not
    /// assumed), then keeps going; only then does the virtual clock pass the grace, and the hook
    /// ends killed by signal 9. Both signals are logged, TERM first.
    @Test func aHookOverItsTimeoutIsTerminatedThenKilled() throws {
        let out = "/tmp/sdt-hook-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: out) }
        func written() -> String { (try? String(contentsOfFile: out, encoding: .utf8)) ?? "" }
        let log = LogLines()
        do {
            // Each `sleep` dies of the group's TERM; the shell runs its trap and sleeps again.
            let rig = try rig("""
            {"event": ["/bin/sh", "-c", "trap 'echo TERM >> \(out)' TERM; echo ready > \(out); while :; do sleep 1; done"],
             "events": ["controlValue"], "timeoutMs": 100}
            """)
            defer { rig.close() }
            log.collect(from: rig.daemon.hooks)
            _ = rig.daemon.execute(APIRequest(id: nil, command: .set(control: "zoom", to: .value(2))))
            #expect(rig.daemon.hooks?.runningCount == 1)
            // The trap is in place before the virtual timeout passes.
            try rig.waitFor("the hook saying its TERM trap is set") { written() == "ready\n" }
            try rig.advance(by: .milliseconds(150))
            try rig.waitFor("the hook's trap recording SIGTERM") { written() == "ready\nTERM\n" }
            #expect(rig.daemon.hooks?.runningCount == 1, "TERM was trapped: the hook still runs")
            #expect(rig.daemon.hooks?.exits.isEmpty == true)
            try rig.advance(by: .seconds(2.1))
            try waitForExits(rig, 1)
            #expect(rig.daemon.hooks?.exits.first?.status == "killed by signal 9")
        }
        let term = log.lines.firstIndex { $0.contains("shutter: hook event (pid ") && $0.hasSuffix("ran over 0.1 s: SIGTERM") }
        let kill = log.lines.firstIndex { $0.contains("shutter: hook event (pid ") && $0.hasSuffix("ignored SIGTERM: SIGKILL") }
        let termIndex = try #require(term, "log: \(log.text)")
        let killIndex = try #require(kill, "log: \(log.text)")
        #expect(termIndex < killIndex)
    }

    @Test func excessHooksWaitThenAreDropped() throws {
        let rig = try rig("""
        {"event": ["/bin/sh", "-c", "sleep 0.2"], "events": ["controlValue"], "maxRunning": 1, "maxQueued": 1}
        """)
        defer { rig.close() }
        for value in [2.0, 3.0, 4.0] {
            _ = rig.daemon.execute(APIRequest(id: nil, command: .set(control: "zoom", to: .value(value))))
        }
        #expect(rig.daemon.hooks?.runningCount == 1)
        #expect(rig.daemon.hooks?.queuedCount == 1)
        try waitForExits(rig, 2)
        #expect(rig.daemon.hooks?.exits.map(\.status) == ["exited 0", "exited 0"])
    }

    /// A field's value that holds another placeholder's name stays as it is: one pass over the
    /// template, never a second over what was filled in (dictionary order decided it before).
    @Test func placeholdersAreFilledInOnePass() throws {
        var settings = HookSettings()
        settings.event = ["/bin/echo", "{a}{b}", "{path}", "{missing}", "{", "x{event}y"]
        settings.events = ["note"]
        let fields = [("event", "note"), ("a", "{b}"), ("b", "{a}"), ("path", "/photos/{event}.jpg")]
        let job = try #require(HookRunner.jobs(for: "note", fields: fields, line: "{}", settings: settings).first)
        #expect(job.arguments == ["/bin/echo", "{b}{a}", "/photos/{event}.jpg", "{missing}", "{", "xnotey"])
    }

    /// A hook on the enable/disable events gets the flag as `true`/`false`, in its arguments and environment.
    @Test func enableEventsReachHooksWithTheirFlag() throws {
        var settings = HookSettings()
        settings.event = ["/bin/echo", "{control}", "{enabled}"]
        settings.events = ["controlEnabled", "captureEnabled"]
        let control = ServiceEvent(.gesture(.controlEnabled(control: "zoom", enabled: false, at: .seconds(1))))
        let job = try #require(HookRunner.jobs(for: control, settings: settings).first)
        #expect(job.arguments == ["/bin/echo", "zoom", "false"])
        #expect(job.environment["SHUTTER_ENABLED"] == "false")
        #expect(job.environment["SHUTTER_JSON"] == control.line)
        let capture = ServiceEvent(.gesture(.captureEnabled(enabled: true, at: .seconds(1))))
        let captureJob = try #require(HookRunner.jobs(for: capture, settings: settings).first)
        #expect(captureJob.environment["SHUTTER_ENABLED"] == "true")
    }

    /// A hook's fields come from the typed event, not from its line read back; they are what
    /// reading the line back gives (strings unquoted, numbers as written, nested values as JSON).
    @Test func anEventsFieldsAreItsLinesMembers() throws {
        let failure = CaptureFailure(at: .seconds(2), shot: Shot(pressedAt: .seconds(1)), error: .notReady(reason: "a \"quoted\" {reason}"))
        let events = [
            ServiceEvent(.gesture(.controlEnabled(control: "zoom", enabled: false, at: .seconds(1)))),
            ServiceEvent(.gesture(.capture(phase: .ended, action: .remote, pressedAt: .seconds(1), releasedAt: .seconds(1),
                                          photo: true, reason: nil, at: .seconds(1)))),
            ServiceEvent(.capture(.captureFailed(failure), request: .string("shot-1"))),
            ServiceEvent(.capture(.captureFailed(failure), request: .number(7, text: "7"))),
            ServiceEvent(.edgesLost(count: 3, resynchronised: true, at: .seconds(3))),
        ]
        for event in events {
            guard case .object(let members)? = try? JSONValue.parse(Array(event.line.utf8)) else {
                Issue.record("not a JSON object: \(event.line)")
                continue
            }
            #expect(members["event"] == .string(event.name))
            #expect(event.fields.count == members.count, "\(event.line)")
            for (key, text) in event.fields {
                let expected: String? = switch members[key] {
                case .string(let string)?: string
                case .number(_, let written)?: written
                case .bool(let flag)?: flag ? "true" : "false"
                case let other?: other.text
                case nil: nil
                }
                #expect(text == expected, "\(event.name).\(key)")
            }
        }
        #expect(events[2].fields.last! == ("request", "shot-1"))
    }

    @Test(arguments: [("pressedAt", "PRESSED_AT"), ("path", "PATH"), ("offsetMs", "OFFSET_MS"), ("t", "T")])
    func environmentNames(key: String, name: String) {
        #expect(HookRunner.environmentName(key) == name)
    }
}
