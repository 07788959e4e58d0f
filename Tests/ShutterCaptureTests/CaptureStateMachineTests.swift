import Testing
import ShutterCore
@testable import ShutterCapture

private func ms(_ value: Double) -> Instant { Instant(rawValue: Int64(value * 1_000_000)) }

/// One step of a table: a frame (start of exposure, sequence number) arriving at a time, a press,
/// the clock reaching a time, a light press or its end.
private enum Step: Sendable, CustomStringConvertible {
    case frame(Double, UInt32, arrives: Double)
    case press(Double, at: Double)
    case tick(Double)
    case prepare
    case standby
    /// The lifecycle queue has done every start and stop asked for; the camera streams or not.
    case settled(streaming: Bool, at: Double)
    /// The camera was opened (or reopened).
    case opened

    var description: String {
        switch self {
        case .frame(let start, let number, let arrives): "frame #\(number) exposed at \(start) arrives at \(arrives)"
        case .press(let time, let at): "press at \(time) seen at \(at)"
        case .tick(let time): "time \(time)"
        case .prepare: "light press"
        case .standby: "light press ends"
        case .settled(let streaming, let at): "the camera settles \(streaming ? "streaming" : "stopped") at \(at)"
        case .opened: "the camera opens"
        }
    }
}

private struct Table: Sendable, CustomTestStringConvertible {
    var name: String
    var keepStreaming = true
    var interval: Double? = 33
    var warmup = 0
    /// Whether the camera streams as soon as it is asked to (the old, blocking start); otherwise
    /// only a `.settled` step says it has.
    var startsAtOnce = true
    /// Whether the camera streams when the table begins (default: when the board keeps it streaming).
    var streamingAtStart: Bool?
    var steps: [Step]
    /// Every action, rendered: `save #N for P`, `fail P stalled`, `start`, `restart`, `stop`.
    var expected: [String]
    var testDescription: String { name }
}

/// The rig shot a press takes part in, for presses that want the frame of their instant.
private let aRigShot = RigShot(id: "d4abe817-adb1-4ecb-9166-b47f8ea689e8", at: 0, origin: "cam-b")

private func render(_ action: CaptureStateMachine.Action) -> String {
    func time(_ instant: Instant) -> String { JSONLine.number(Double(instant.rawValue) / 1e6, decimals: 0) }
    switch action {
    case .save(let number, let shot): return "save #\(number) for \(time(shot.pressedAt))"
    case .fail(let shot, let failure):
        let kind = switch failure { case .stalled: "stalled"; case .backlog: "backlog"; case .startOverdue: "startOverdue"; case .instantNotHeld: "instantNotHeld"; case .rigShotBacklog: "rigShotBacklog" }
        return "fail \(shot.map { time($0.pressedAt) } ?? "stream") \(kind)"
    case .startStream: return "start"
    case .restartStream: return "restart"
    case .stopStream: return "stop"
    }
}

@Suite("CaptureStateMachine: the capture decisions without a camera")
struct CaptureStateMachineTests {
    @Test(arguments: [
        Table(name: "a press takes the frame whose exposure covers it",
              steps: [.frame(0, 0, arrives: 40), .frame(33, 1, arrives: 73), .press(60, at: 74)],
              expected: ["save #1 for 60"]),
        Table(name: "a press newer than every frame, still in the newest one's exposure, takes it at once",
              steps: [.frame(0, 0, arrives: 40), .frame(33, 1, arrives: 73), .press(50, at: 51)],
              expected: ["save #1 for 50"]),
        Table(name: "a press after the newest exposure waits and takes the frame that covers it",
              steps: [.frame(0, 0, arrives: 40), .press(40, at: 41), .frame(33, 1, arrives: 73)],
              expected: ["save #1 for 40"]),
        Table(name: "interval unknown: a later-stamped frame shows which one covered the press",
              interval: nil,
              steps: [.frame(0, 0, arrives: 40), .press(20, at: 41), .frame(33, 1, arrives: 73)],
              expected: ["save #0 for 20"]),
        Table(name: "a burst never saves one frame twice; a shot with no new frame waits",
              steps: [.frame(0, 0, arrives: 40), .press(10, at: 41), .press(11, at: 41), .press(12, at: 41),
                      .frame(33, 1, arrives: 73), .frame(66, 2, arrives: 106)],
              expected: ["save #0 for 10", "save #1 for 11", "save #2 for 12"]),
        Table(name: "the stall watchdog fails waiting presses after a second and restarts the stream",
              steps: [.frame(0, 0, arrives: 40), .press(100, at: 100), .tick(1039), .tick(1040)],
              expected: ["fail 100 stalled", "restart"]),
        Table(name: "a stall with nobody waiting is reported once per silence",
              steps: [.frame(0, 0, arrives: 40), .tick(1040), .frame(1050, 0, arrives: 1060), .tick(2060)],
              expected: ["fail stream stalled", "restart", "fail stream stalled", "restart"]),
        Table(name: "slow frames: the watchdog waits five frame intervals",
              interval: 500,
              steps: [.frame(0, 0, arrives: 500), .tick(1500), .tick(3000)],
              expected: ["fail stream stalled", "restart"]),
        Table(name: "low power: a press starts the camera, skips the warm-up frames, takes the next and stops",
              keepStreaming: false, warmup: 2,
              steps: [.press(0, at: 0), .frame(10, 0, arrives: 40), .frame(43, 1, arrives: 73), .frame(76, 2, arrives: 106)],
              expected: ["start", "save #2 for 0", "stop"]),
        Table(name: "low power: a light press keeps the camera until the shot; its end without one stops it",
              keepStreaming: false,
              steps: [.prepare, .frame(0, 0, arrives: 40), .frame(33, 1, arrives: 73), .standby],
              expected: ["start", "stop"]),
        Table(name: "low power: a camera that never sends a frame fails the press after the start-up grace and stops",
              keepStreaming: false,
              steps: [.press(0, at: 0), .tick(1000), .tick(4999), .tick(5000)],
              expected: ["start", "fail 0 stalled", "stop"]),
        Table(name: "low power: the start-up grace lasts through the warm-up frames, not only until the first",
              keepStreaming: false, interval: nil, warmup: 2,
              // libcamera 0.4's vimc under emulation: a first frame, then 1.3 s to the next.
              steps: [.press(0, at: 0), .frame(2000, 0, arrives: 2000), .tick(3100), .frame(3300, 1, arrives: 3300),
                      .tick(4400), .frame(4600, 2, arrives: 4600), .tick(5700)],
              expected: ["start", "save #2 for 0", "stop"]),
        Table(name: "past the warm-up the stall limit is the stream's own again",
              interval: 150, warmup: 1,
              steps: [.frame(0, 0, arrives: 0), .tick(1500), .frame(1500, 1, arrives: 1500), .tick(2499), .tick(2500)],
              expected: ["fail stream stalled", "restart"]),
        // libcamera 0.4's vimc under emulation (about 1 fps, a start's first frames 1.3 s apart),
        // or a camera module in a long-exposure mode, with no board fps: after the first frame
        // the interval is not known yet, and a 1 s limit restarted a stream that was only slow.
        Table(name: "past the warm-up, a stream whose interval is not yet known keeps the start-up grace for one more frame",
              interval: nil, warmup: 1,
              steps: [.frame(0, 0, arrives: 0), .frame(1300, 1, arrives: 1300), .tick(2400), .tick(6299)],
              expected: []),
        Table(name: "from the second frame past the warm-up, an interval still unknown gets the one-second limit",
              interval: nil, warmup: 1,
              steps: [.frame(0, 0, arrives: 0), .frame(1300, 1, arrives: 1300), .frame(2200, 2, arrives: 2200), .tick(3199), .tick(3200)],
              expected: ["fail stream stalled", "restart"]),
        Table(name: "a restarted stream gets the start-up grace again before its first frame",
              steps: [.frame(0, 0, arrives: 40), .tick(1040), .tick(2040), .tick(6040)],
              expected: ["fail stream stalled", "restart", "restart"]),
        Table(name: "low power: while the light press is held a stalled camera is restarted",
              keepStreaming: false,
              steps: [.prepare, .frame(0, 0, arrives: 40), .tick(2000)],
              expected: ["start", "fail stream stalled", "restart"]),
        // The camera starts and stops off the event loop: the machine knows a start is under way.
        Table(name: "a press while the camera starts waits for that start: no second one",
              keepStreaming: false, startsAtOnce: false,
              steps: [.press(0, at: 0), .press(5, at: 5), .settled(streaming: true, at: 100),
                      .frame(110, 0, arrives: 140), .frame(143, 1, arrives: 173)],
              expected: ["start", "save #0 for 0", "save #1 for 5", "stop"]),
        Table(name: "a light press while a press's start is under way asks for nothing more",
              keepStreaming: false, startsAtOnce: false,
              steps: [.press(0, at: 0), .prepare, .settled(streaming: true, at: 100), .frame(110, 0, arrives: 140)],
              expected: ["start", "save #0 for 0", "stop"]),
        Table(name: "the light press ends while the camera starts: stopped after the start",
              keepStreaming: false, startsAtOnce: false,
              steps: [.prepare, .standby, .settled(streaming: false, at: 100)],
              expected: ["start", "stop"]),
        Table(name: "a camera that streams though nothing wants it any more is stopped",
              keepStreaming: false, startsAtOnce: false,
              steps: [.prepare, .standby, .settled(streaming: true, at: 100)],
              expected: ["start", "stop", "stop"]),
        Table(name: "no watchdog while the camera starts; the start-up grace counts from the start's end",
              keepStreaming: false, startsAtOnce: false,
              steps: [.press(0, at: 0), .tick(9_000), .settled(streaming: true, at: 9_000), .tick(13_999), .tick(14_000)],
              expected: ["start", "fail 0 stalled", "stop"]),
        Table(name: "a press during a restart waits for it: no second restart, no watchdog",
              startsAtOnce: false,
              steps: [.frame(0, 0, arrives: 40), .tick(1040), .press(1100, at: 1100), .tick(3000),
                      .settled(streaming: true, at: 3000), .frame(3010, 0, arrives: 3040)],
              expected: ["fail stream stalled", "restart", "save #0 for 1100"]),
        Table(name: "a camera that should stream but does not is started again",
              startsAtOnce: false,
              steps: [.frame(0, 0, arrives: 40), .tick(1040), .settled(streaming: false, at: 1100)],
              expected: ["fail stream stalled", "restart", "start"]),
        Table(name: "a board that keeps streaming starts the camera once it opens",
              startsAtOnce: false, streamingAtStart: false,
              steps: [.opened, .press(10, at: 10), .opened],
              expected: ["start"]),
        Table(name: "low power: an opened camera stays stopped until a press",
              keepStreaming: false, startsAtOnce: false,
              steps: [.opened],
              expected: []),
        Table(name: "a press waiting on a start that hangs fails after the start timeout; so does one during it",
              keepStreaming: false, startsAtOnce: false,
              steps: [.press(100, at: 100), .tick(5000), .tick(10099), .tick(10100), .press(10200, at: 10200), .tick(10300),
                      // Once the start has finished, a press waits for its frame again.
                      .settled(streaming: true, at: 12000), .press(12100, at: 12100), .tick(16000)],
              expected: ["start", "fail 100 startOverdue", "fail 10200 startOverdue"]),
        Table(name: "a start that hangs with nobody waiting is reported once",
              startsAtOnce: false, streamingAtStart: false,
              steps: [.opened, .tick(9999), .tick(10000), .tick(20000)],
              expected: ["start", "fail stream startOverdue"]),
    ])
    fileprivate func table(_ table: Table) {
        var machine = CaptureStateMachine(ringCapacity: 4, keepStreaming: table.keepStreaming, maximumInFlight: 8,
                                          frameInterval: table.interval.map { .milliseconds($0) })
        if table.streamingAtStart ?? table.keepStreaming { machine.streamStarted(at: ms(0), warmupFrames: table.warmup) }
        var actions: [CaptureStateMachine.Action] = []
        func started(_ new: [CaptureStateMachine.Action], at time: Double) {
            actions += new
            if table.startsAtOnce, new.contains(.startStream) || new.contains(.restartStream) {
                machine.streamStarted(at: ms(time), warmupFrames: new.contains(.startStream) ? table.warmup : 0)
            }
        }
        for step in table.steps {
            switch step {
            case .frame(let start, let number, let arrives):
                started(machine.frame(.init(timestamp: ms(start), sequence: number), at: ms(arrives)).actions, at: arrives)
            case .press(let time, let at): started(machine.press(Shot(pressedAt: ms(time)), now: ms(at), inFlight: 0), at: at)
            case .tick(let time): started(machine.tick(now: ms(time)), at: time)
            case .prepare: started(machine.prepare(at: ms(0)), at: 0)
            case .standby: started(machine.standby(), at: 0)
            case .settled(let streaming, let at):
                started(machine.settled(streaming: streaming, at: ms(at), warmupFrames: table.warmup), at: at)
            case .opened: started(machine.cameraOpened(at: ms(0)), at: 0)
            }
        }
        #expect(actions.map(render) == table.expected)
    }

    @Test func theDeadlineIsTheWatchdogs() {
        var machine = CaptureStateMachine(ringCapacity: 4, keepStreaming: true, frameInterval: .milliseconds(400))
        #expect(machine.nextDeadline == nil)  // not streaming: nothing to watch
        machine.streamStarted(at: ms(100), warmupFrames: 0)
        #expect(machine.nextDeadline == ms(5100))  // the start-up grace before the first frame
        _ = machine.frame(.init(timestamp: ms(120), sequence: 0), at: ms(300))
        #expect(machine.nextDeadline == ms(2300))  // then 5 × 400 ms
        _ = machine.frame(.init(timestamp: ms(150), sequence: 0), at: ms(500))
        #expect(machine.nextDeadline == ms(2500))
    }

    @Test func whileStartingTheDeadlineIsTheStartTimeout() {
        var machine = CaptureStateMachine(ringCapacity: 4, keepStreaming: true, startTimeout: .seconds(3))
        _ = machine.cameraOpened(at: ms(100))
        #expect(machine.nextDeadline == ms(3100))
        _ = machine.tick(now: ms(3100))
        #expect(machine.nextDeadline == nil)  // reported; nobody waits
        _ = machine.press(Shot(pressedAt: ms(3200)), now: ms(3200), inFlight: 0)
        #expect(machine.nextDeadline == ms(3100))  // overdue: the press fails at the next tick
        machine.streamStarted(at: ms(4000), warmupFrames: 0)
        #expect(machine.nextDeadline == ms(9000))  // the watchdog's start-up grace from here
    }

    /// A rig's shot that arrives after a later shot saved a newer frame still gets the frame of
    /// its own instant (the fault: every candidate lay after it, and the oldest of them, 100 ms
    /// off, was saved); a press of a burst still never saves a frame twice.
    @Test func aLateRigShotTakesTheFrameOfItsInstantEvenIfSavedBefore() {
        func streaming() -> CaptureStateMachine {
            var machine = CaptureStateMachine(ringCapacity: 8, keepStreaming: true, frameInterval: .milliseconds(33))
            machine.streamStarted(at: ms(0), warmupFrames: 0)
            for number in 0..<6 { _ = machine.frame(.init(timestamp: ms(10 + 33 * Double(number)), sequence: UInt32(number)), at: ms(20 + 33 * Double(number))) }
            // The later shot, at 180 ms, came first and saved frame 5 (175 ms).
            #expect(machine.press(Shot(pressedAt: ms(180), rigShot: aRigShot), now: ms(190), inFlight: 0).map(render) == ["save #5 for 180"])
            return machine
        }
        var rig = streaming()
        // The earlier shot, at 80 ms, arrives now: frame 2 (76 ms) covers it.
        #expect(rig.press(Shot(pressedAt: ms(80), rigShot: aRigShot), now: ms(195), inFlight: 0).map(render) == ["save #2 for 80"])
        var burst = streaming()
        // Without reuse (a burst) it waits for a frame newer than 5: 100+ ms off.
        #expect(burst.press(Shot(pressedAt: ms(80)), now: ms(195), inFlight: 0).map(render) == [])
    }

    /// A rig's shot that comes after the ring let go of the frame exposing at its instant (a link
    /// that came back late, frames read just before the shot) is missed, not answered with the
    /// oldest frame held: that one began after the instant, and the rig's photos would no longer be
    /// of one instant. A local press before every frame held still takes the oldest.
    @Test func aRigShotWhoseFrameTheRingLetGoIsMissedNotAnsweredWithALaterFrame() {
        func streaming() -> CaptureStateMachine {
            var machine = CaptureStateMachine(ringCapacity: 4, keepStreaming: true, frameInterval: .milliseconds(33))
            machine.streamStarted(at: ms(0), warmupFrames: 0)
            // Frames at 10, 43, … 175 ms; the ring keeps the last four: 76, 109, 142, 175.
            for number in 0..<6 { _ = machine.frame(.init(timestamp: ms(10 + 33 * Double(number)), sequence: UInt32(number)), at: ms(20 + 33 * Double(number))) }
            return machine
        }
        var rig = streaming()
        // Frame 1 (43 ms) exposed at 50 ms; the oldest held, frame 2, began 26 ms after it.
        #expect(rig.press(Shot(pressedAt: ms(50), rigShot: aRigShot), now: ms(200), inFlight: 0).map(render) == ["fail 50 instantNotHeld"])
        // Its own instant is still held: frame 2 (76 ms) covers 80 ms.
        #expect(rig.press(Shot(pressedAt: ms(80), rigShot: aRigShot), now: ms(200), inFlight: 0).map(render) == ["save #2 for 80"])
        var local = streaming()
        #expect(local.press(Shot(pressedAt: ms(50)), now: ms(200), inFlight: 0).map(render) == ["save #2 for 50"])
    }

    /// Rig shots whose instant is still to come wait for their frames within a budget of their
    /// own (half the photos in flight): however many a node is sent, the rig's own button keeps
    /// its slots.
    @Test func rigShotsSetInTheFutureLeaveTheButtonItsSlots() {
        var machine = CaptureStateMachine(ringCapacity: 4, keepStreaming: true, maximumInFlight: 8, frameInterval: .milliseconds(33))
        machine.streamStarted(at: ms(0), warmupFrames: 0)
        _ = machine.frame(.init(timestamp: ms(10), sequence: 0), at: ms(20))
        var answers: [String] = []
        for shot in 0..<8 {
            answers += machine.press(Shot(pressedAt: ms(4800 + Double(shot)), rigShot: aRigShot), now: ms(30), inFlight: 0).map(render)
        }
        #expect(answers == ["fail 4804 rigShotBacklog", "fail 4805 rigShotBacklog", "fail 4806 rigShotBacklog", "fail 4807 rigShotBacklog"])
        #expect(machine.waitingCount == 4)
        // The button: a press now gets the frame exposing at its instant, and so do seven more
        // waiting for frames to come.
        #expect(machine.press(Shot(pressedAt: ms(15)), now: ms(30), inFlight: 0).map(render) == ["save #0 for 15"])
        for press in 0..<7 {
            #expect(machine.press(Shot(pressedAt: ms(40 + Double(press))), now: ms(40), inFlight: 1).isEmpty)
        }
        #expect(machine.press(Shot(pressedAt: ms(60)), now: ms(60), inFlight: 1).map(render) == ["fail 60 backlog"])
        // The rig shots' frames come in their time.
        _ = machine.frame(.init(timestamp: ms(43), sequence: 1), at: ms(53))
        let (_, shotsFrame) = machine.frame(.init(timestamp: ms(4790), sequence: 2), at: ms(4800))
        #expect(shotsFrame.map(render).filter { $0.hasPrefix("save #2 for 48") }.count == 4)
    }

    @Test func aBacklogFailsTheExtraPressAtOnce() {
        var machine = CaptureStateMachine(ringCapacity: 4, keepStreaming: true, maximumInFlight: 2)
        machine.streamStarted(at: ms(0), warmupFrames: 0)
        #expect(machine.press(Shot(pressedAt: ms(10)), now: ms(10), inFlight: 2).map(render) == ["fail 10 backlog"])
        #expect(machine.waitingCount == 0)
    }
}
