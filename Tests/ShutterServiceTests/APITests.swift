#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import ShutterCapture
import ShutterCore
@testable import ShutterAPI
@testable import ShutterHTTP
@testable import ShutterMQTT
@testable import ShutterNode
@testable import ShutterService
@testable import ShutterSystem

@Suite struct APIRequestTests {
    @Test(arguments: [
        ("{\"cmd\":\"status\"}", APICommand.status),
        ("{\"cmd\":\"capture\"}", .capture),
        ("{\"cmd\":\"reload\"}", .reload),
        ("{\"cmd\":\"set\",\"control\":\"zoom\",\"value\":2.5}", .set(control: "zoom", to: .value(2.5))),
        // JSON has no fractions: a string holds one (and a decimal, for a client that sends text).
        ("{\"cmd\":\"set\",\"control\":\"exposure\",\"value\":\"1/3\"}", .set(control: "exposure", to: .value(1.0 / 3))),
        ("{\"cmd\":\"set\",\"control\":\"exposure\",\"value\":\"-2/3\"}", .set(control: "exposure", to: .value(-2.0 / 3))),
        ("{\"cmd\":\"set\",\"control\":\"zoom\",\"value\":\"2.5\"}", .set(control: "zoom", to: .value(2.5))),
        ("{\"cmd\":\"set\",\"control\":\"filter\",\"index\":2}", .set(control: "filter", to: .index(2))),
        ("{\"cmd\":\"set\",\"control\":\"filter\",\"title\":\"Mono\"}", .set(control: "filter", to: .title("Mono"))),
        ("{\"cmd\":\"select\",\"control\":\"exposure\"}", .select(control: "exposure")),
        ("{\"cmd\":\"enable\",\"capture\":true}", .enable(.capture)),
        ("{\"cmd\":\"disable\",\"control\":\"zoom\"}", .disable(.control("zoom"))),
    ])
    func parsesEachCommand(line: String, command: APICommand) throws {
        let request = try APIRequest.parse(Array(line.utf8)).get()
        #expect(request.command == command)
        // The client's own encoding reads back as the same command (a third to its 12 decimals).
        let again = try APIRequest.parse(Array(request.line.utf8)).get()
        if case .set(let control, .value(let value)) = command, case .set(control, .value(let read)) = again.command {
            #expect(abs(read - value) < 1e-12)
        } else {
            #expect(again == request)
        }
    }

    @Test(arguments: [
        ("", "not valid JSON"),
        ("\u{1}\u{2}\u{ff}", "not valid JSON"),
        ("{\"cmd\":\"status\"", "not valid JSON"),
        ("[1,2]", "a request is a JSON object"),
        ("{}", "missing 'cmd'"),
        ("{\"cmd\":5}", "'cmd' must be a string"),
        ("{\"cmd\":\"reboot\"}", "unknown command 'reboot'"),
        ("{\"cmd\":\"status\",\"verbose\":true}", "'status' takes no 'verbose'"),
        ("{\"cmd\":\"set\",\"control\":\"zoom\"}", "exactly one of 'value'"),
        ("{\"cmd\":\"set\",\"control\":\"zoom\",\"value\":2,\"index\":1}", "exactly one of 'value'"),
        ("{\"cmd\":\"set\",\"control\":\"zoom\",\"value\":\"two\"}", "'value' must be a number or a fraction such as \"1/3\", not 'two'"),
        ("{\"cmd\":\"set\",\"control\":\"zoom\",\"value\":\"1/0\"}", "'value' must be a number or a fraction"),
        ("{\"cmd\":\"set\",\"control\":\"zoom\",\"value\":true}", "'value' must be a number"),
        ("{\"cmd\":\"set\",\"control\":\"filter\",\"index\":1.5}", "'index' must be a whole number"),
        ("{\"cmd\":\"set\",\"value\":1}", "'set' needs 'control'"),
        ("{\"cmd\":\"select\",\"control\":3}", "'control' must be a non-empty string"),
        ("{\"cmd\":\"enable\"}", "needs either"),
        ("{\"cmd\":\"enable\",\"capture\":false}", "'capture' must be true"),
        ("{\"cmd\":\"status\",\"id\":{\"a\":1}}", "'id' must be a string or a number"),
        // An id reaches a hook's arguments as {request}: never as an option, never with control characters.
        ("{\"cmd\":\"capture\",\"id\":\"--output=/etc/x\"}", "'id' must not begin with '-'"),
        ("{\"cmd\":\"capture\",\"id\":\"a\\nb\"}", "'id' must not hold control characters"),
        ("{\"cmd\":\"capture\",\"id\":\"a\\u007fb\"}", "'id' must not hold control characters"),
        ("{\"cmd\":\"status\",\"cmd\":\"capture\"}", "given twice"),
        (String(repeating: "[", count: 100), "nested more than"),
    ])
    func refusesBadRequests(line: String, message: String) {
        guard case .failure(let error) = APIRequest.parse(Array(line.utf8)) else {
            Issue.record("accepted \(line)")
            return
        }
        #expect(error.message.contains(message), "\(error.message)")
    }

    @Test func echoesTheIdOfARefusedRequest() {
        guard case .failure(let error) = APIRequest.parse(Array("{\"id\":42,\"cmd\":\"nope\"}".utf8)) else {
            Issue.record("accepted")
            return
        }
        #expect(APIReply.failure(id: error.id, CommandRefusal(.invalidRequest, error.message))
            .hasPrefix("{\"id\": 42, \"ok\": false, \"kind\": \"invalidRequest\", \"error\": \"unknown command 'nope'"))
    }

    @Test func subscribeIsTheSocketsOwnRequestAndEverythingElseACommand() throws {
        #expect(try APISocketRequest.parse(Array("{\"cmd\":\"subscribe\",\"id\":\"a\"}".utf8)).get() == .subscribe(id: .string("a")))
        #expect(try APISocketRequest.parse(Array("{\"cmd\":\"status\",\"id\":7}".utf8)).get()
                == .command(APIRequest(id: .number(7, text: "7"), command: .status)))
        // The daemon's commands know nothing of subscribing: HTTP and MQTT deliver events their own way.
        guard case .failure(let unknown) = APIRequest.parse(Array("{\"cmd\":\"subscribe\"}".utf8)) else {
            Issue.record("the command model took subscribe")
            return
        }
        #expect(unknown.message.contains("unknown command 'subscribe'"), "\(unknown.message)")
        // The socket lists it with the commands, and refuses what subscribe does not take.
        guard case .failure(let typo) = APISocketRequest.parse(Array("{\"cmd\":\"subscrib\"}".utf8)),
              case .failure(let extra) = APISocketRequest.parse(Array("{\"cmd\":\"subscribe\",\"control\":\"zoom\"}".utf8)),
              case .failure(let badID) = APISocketRequest.parse(Array("{\"cmd\":\"subscribe\",\"id\":[1]}".utf8)) else {
            Issue.record("a bad subscribe was accepted")
            return
        }
        #expect(typo.message.contains("reload, subscribe)"), "\(typo.message)")
        #expect(extra.message == "'subscribe' takes no 'control'")
        #expect(badID.message.contains("'id' must be a string or a number"))
        #expect(APISocketRequest.subscribe(id: .string("a")).line == "{\"cmd\":\"subscribe\",\"id\":\"a\"}" ||
                APISocketRequest.subscribe(id: .string("a")).line == "{\"id\":\"a\",\"cmd\":\"subscribe\"}")
    }
}

@Suite(.serialized) struct APIServerTests {
    @Test func statusDescribesTheRig() throws {
        let rig = try TestRig(api: true)
        defer { rig.close() }
        let client = try TestClient(rig)
        let reply = try client.call("{\"id\":\"s1\",\"cmd\":\"status\"}")
        #expect(reply["id"] == .string("s1"))
        #expect(reply["ok"] == .bool(true))
        #expect(reply["board"] == .string("test"))
        #expect(reply["captureAvailable"] == .bool(true))
        #expect(reply["controlsState"] == .string("inactive"))
        #expect(reply["currentControl"] == .string("zoom"))
        guard case .array(let controls)? = reply["controls"], controls.count == 3,
              case .object(let zoom) = controls[0], case .object(let filter) = controls[2] else {
            Issue.record("controls: \(String(describing: reply["controls"]))")
            return
        }
        #expect(zoom["label"] == .string("Zoom"))
        #expect(zoom["text"] == .string("1.0×"))
        #expect(zoom["enabled"] == .bool(true))
        // Zoom moves on a log scale (systemZoom's default); a client drawing the scale needs it.
        #expect(zoom["scale"] == .string("log"))
        #expect(filter["scale"] == nil)
        #expect(filter["titles"] == .array([.string("None"), .string("Mono"), .string("Vivid"), .string("Warm")]))
        guard case .object(let counters)? = reply["counters"] else { Issue.record("no counters"); return }
        #expect(counters["photos"].map { if case .number(let n, _) = $0 { n == 0 } else { false } } == true)
    }

    @Test func statusCountsClientsAndSubscribers() throws {
        let rig = try TestRig(api: true)
        defer { rig.close() }
        let asker = try TestClient(rig)
        /// (connected, subscribed) from a status reply.
        func clients() throws -> [Double] {
            guard case .object(let clients)? = try asker.call("{\"cmd\":\"status\"}")["clients"] else { return [] }
            return ["connected", "subscribed"].compactMap { if case .number(let n, _)? = clients[$0] { n } else { nil } }
        }
        #expect(try clients() == [1, 0])
        let subscriber = try TestClient(rig)
        #expect(try subscriber.call("{\"cmd\":\"subscribe\"}")["ok"] == .bool(true))
        #expect(try clients() == [2, 1])
    }

    @Test func setGoesThroughTheControlsAndIsSaved() throws {
        let rig = try TestRig(api: true)
        defer { rig.close() }
        let client = try TestClient(rig)
        #expect(try client.call("{\"cmd\":\"set\",\"control\":\"zoom\",\"value\":2.5}")["ok"] == .bool(true))
        #expect(rig.lines.last?.line.contains("\"event\": \"controlValue\"") == true)
        #expect(rig.lines.last?.line.contains("\"value\": 2.5") == true)
        #expect(try client.call("{\"cmd\":\"set\",\"control\":\"filter\",\"title\":\"Vivid\"}")["ok"] == .bool(true))
        #expect(rig.lines.last?.line.contains("\"title\": \"Vivid\"") == true)
        rig.daemon.state?.waitUntilSaved()
        let saved = ControlStateFile.load(path: rig.directory + "/state.json")
        #expect(saved["zoom"] == .number(2.5))
        #expect(saved["filter"] == .index(2))
    }

    /// `shutter ctl set iso 200` sends the number 200 (it cannot tell a number from a title): on
    /// a picker the daemon takes the item titled with that number.
    @Test func aNumberPicksThePickerItemTitledWithIt() throws {
        let board = TestRig.simulatorBoard.replacingOccurrences(of: "\"initial\": \"None\"}", with: """
            "initial": "None"},
                {"id": "iso", "kind": "picker", "label": "ISO", "titles": ["100", "200", "400", "1.5"], "initial": "100"}
            """)
        let rig = try TestRig(boardJSON: board)
        defer { rig.close() }
        let result = rig.daemon.execute(APIRequest(id: nil, command: .set(control: "iso", to: .value(200))))
        #expect(result.refusal == nil, "\(result)")
        #expect(rig.lines.last?.line.contains("\"title\": \"200\"") == true)
        #expect(rig.daemon.execute(APIRequest(id: nil, command: .set(control: "iso", to: .value(1.5)))).refusal == nil)
        #expect(rig.lines.last?.line.contains("\"index\": 3") == true)
        let refused = try #require(rig.daemon.execute(APIRequest(id: nil, command: .set(control: "iso", to: .value(300)))).refusal)
        #expect(refused.kind == .notFound)
        #expect(refused.message.contains("no item titled 300") && refused.message.contains("100, 200, 400, 1.5"), "\(refused)")
    }

    /// `shutter ctl set exposure 1/3`: the word is a fraction, a number, `#N` or a title.
    @Test(arguments: [
        ("1/3", APICommand.SetValue.value(1.0 / 3)), ("-2/3", .value(-2.0 / 3)), ("0.5", .value(0.5)), ("-2", .value(-2)),
        ("#2", .index(2)), ("Mono", .title("Mono")), ("1/125", .value(0.008)), ("1/3/4", .title("1/3/4")),
    ])
    func aCtlWordIsAValueAnIndexOrATitle(word: String, value: APICommand.SetValue) {
        #expect(APICommand.SetValue(word: word) == value)
    }

    /// A board whose exposure steps in thirds, with a picker titled with fractions.
    static let thirdsBoard = TestRig.simulatorBoard
        .replacingOccurrences(of: "\"range\": [-2, 2], \"step\": 0.5", with: "\"range\": [-2, 2], \"step\": \"1/3\"")
        .replacingOccurrences(of: "\"initial\": \"None\"}", with: """
        "initial": "None"},
            {"id": "shutter", "kind": "picker", "label": "Shutter", "titles": ["1/250", "1/125", "1/60"], "initial": "1/250"}
        """)

    /// A third of an EV sent as a fraction is the third the slider steps through; a decimal
    /// within half a step of a third (0.33, 0.3, -0.667) is taken as it.
    @Test func thirdsAreTakenAsFractionsOrNearbyDecimals() throws {
        let rig = try TestRig(boardJSON: Self.thirdsBoard, api: true)
        defer { rig.close() }
        let client = try TestClient(rig)
        #expect(try client.call("{\"cmd\":\"set\",\"control\":\"exposure\",\"value\":\"1/3\"}")["ok"] == .bool(true))
        #expect(rig.lines.last?.line.contains("\"text\": \"+⅓ EV\"") == true, "\(rig.lines.last?.line ?? "")")
        for (given, third) in [("-0.667", -2.0 / 3), ("0.3", 1.0 / 3), ("0.33", 1.0 / 3), ("\"-4/3\"", -4.0 / 3)] {
            #expect(try client.call("{\"cmd\":\"set\",\"control\":\"exposure\",\"value\":\(given)}")["ok"] == .bool(true), "\(given)")
            guard case .number(let value)? = rig.daemon.interpreter.machine.controlValues["exposure"] else { Issue.record("no exposure"); return }
            #expect(abs(value - third) < 1e-12, "\(given): \(value)")
        }
        // A picker titled with fractions takes the fraction as its title, as it takes 200 for "200".
        #expect(try client.call("{\"cmd\":\"set\",\"control\":\"shutter\",\"value\":\"1/125\"}")["ok"] == .bool(true))
        #expect(rig.daemon.interpreter.machine.controlValues["shutter"] == .index(1))
    }

    /// `shutter ctl set exposure 0.33` (and -1.6667, 1/3): the word goes to the daemon as the CLI
    /// sends it; the reply says the value taken, and when it is not the value given, says so.
    @Test(arguments: [
        ("0.33", 0.333333333333, "+⅓ EV", "0.33 taken as +⅓ EV (0.333333)"),
        ("-1.6667", -1.666666666667, "\u{2212}1⅔ EV", "-1.6667 taken as \u{2212}1⅔ EV (-1.666667)"),
        ("1/3", 0.333333333333, "+⅓ EV", nil),
        ("-4/3", -1.333333333333, "\u{2212}1⅓ EV", nil),
        ("0.3333333333333333", 0.333333333333, "+⅓ EV", nil),
    ] as [(String, Double, String, String?)])
    func aSetReplySaysTheValueTaken(word: String, taken: Double, text: String, note: String?) throws {
        let rig = try TestRig(boardJSON: Self.thirdsBoard, api: true)
        defer { rig.close() }
        let client = try TestClient(rig)
        let reply = try client.call(APISocketRequest.command(APIRequest(id: .number(3, text: "3"), command: .set(control: "exposure", to: APICommand.SetValue(word: word)))).line)
        #expect(reply["ok"] == .bool(true), "\(reply)")
        #expect(reply["id"] == .number(3, text: "3"))
        #expect(reply["control"] == .string("exposure"))
        guard case .number(let value, _)? = reply["value"] else { Issue.record("no value in \(reply)"); return }
        #expect(abs(value - taken) < 1e-9, "\(value)")
        #expect(reply["text"] == .string(text))
        #expect(reply["note"] == note.map(JSONValue.string), "\(reply)")
        // The CLI prints the note, else the value taken.
        #expect(APIReply.summary(ofSet: reply) == (note ?? "exposure: \(text)"))
    }

    /// A picker's reply names the item taken; a number is never snapped to a picker's item.
    @Test func aPickerSetReplyNamesTheItem() throws {
        let rig = try TestRig(boardJSON: Self.thirdsBoard, api: true)
        defer { rig.close() }
        let client = try TestClient(rig)
        let reply = try client.call("{\"cmd\":\"set\",\"control\":\"filter\",\"title\":\"Mono\"}")
        #expect(reply["ok"] == .bool(true))
        #expect(reply["index"] == .number(1, text: "1"))
        #expect(reply["text"] == .string("Mono"))
        #expect(reply["note"] == nil)
        #expect(try client.call("{\"cmd\":\"set\",\"control\":\"shutter\",\"value\":0.008}")["ok"] == .bool(true))
        #expect(try client.call("{\"cmd\":\"set\",\"control\":\"shutter\",\"value\":0.0081}")["ok"] == .bool(false))
    }

    @Test(arguments: [
        ("{\"cmd\":\"set\",\"control\":\"zoom\",\"value\":9}", "out of range", CommandRefusal.Kind.outOfRange),
        ("{\"cmd\":\"set\",\"control\":\"zoom\",\"value\":8.3}", "out of range", .outOfRange),
        ("{\"cmd\":\"set\",\"control\":\"filter\",\"index\":4}", "out of range", .outOfRange),
        ("{\"cmd\":\"set\",\"control\":\"filter\",\"title\":\"Sepia\"}", "has no item 'Sepia'", .notFound),
        ("{\"cmd\":\"set\",\"control\":\"filter\",\"value\":1}", "is a picker", .notFound),
        ("{\"cmd\":\"set\",\"control\":\"zoom\",\"index\":1}", "give a value", .invalidRequest),
        ("{\"cmd\":\"set\",\"control\":\"iso\",\"value\":1}", "no control 'iso'", .notFound),
        ("{\"cmd\":\"select\",\"control\":\"iso\"}", "no control 'iso'", .notFound),
        ("{\"cmd\":\"sett\"}", "unknown command 'sett'", .invalidRequest),
    ])
    func refusedValuesChangeNothing(line: String, message: String, kind: CommandRefusal.Kind) throws {
        let rig = try TestRig(api: true)
        defer { rig.close() }
        let client = try TestClient(rig)
        let before = rig.daemon.interpreter.machine.controlValues
        let reply = try client.call(line)
        #expect(reply["ok"] == .bool(false))
        if case .string(let error)? = reply["error"] { #expect(error.contains(message), "\(error)") } else { Issue.record("no error") }
        // The kind a front-end answers with (HTTP maps it to a status code), not read from the text.
        #expect(reply["kind"] == .string(kind.rawValue))
        #expect(rig.daemon.interpreter.machine.controlValues == before)
        #expect(!rig.names.contains("controlValue"))
    }

    @Test func selectAndDisableAControl() throws {
        let rig = try TestRig(api: true)
        defer { rig.close() }
        let client = try TestClient(rig)
        #expect(try client.call("{\"cmd\":\"select\",\"control\":\"exposure\"}")["ok"] == .bool(true))
        #expect(rig.names.last == "controlSelected")
        #expect(try client.call("{\"cmd\":\"disable\",\"control\":\"zoom\"}")["ok"] == .bool(true))
        let refused = try client.call("{\"cmd\":\"set\",\"control\":\"zoom\",\"value\":2}")
        #expect(refused["ok"] == .bool(false))
        let status = try client.call("{\"cmd\":\"status\"}")
        guard case .array(let controls)? = status["controls"], case .object(let zoom) = controls[0] else { Issue.record("controls"); return }
        #expect(zoom["enabled"] == .bool(false))
        #expect(status["currentControl"] == .string("exposure"))
    }

    /// `status` and the `controlValue` event read a value the same way: one formatter for both.
    @Test func statusFormatsValuesAsTheEventsDo() throws {
        // A continuous exposure range, so −1/3 can be set and must read as a third, not as `-0.33`.
        let board = TestRig.simulatorBoard.replacingOccurrences(of: "\"range\": [-2, 2], \"step\": 0.5", with: "\"range\": [-2, 2]")
        let rig = try TestRig(boardJSON: board, api: true)
        defer { rig.close() }
        let client = try TestClient(rig)
        #expect(try client.call("{\"cmd\":\"set\",\"control\":\"exposure\",\"value\":-0.3333333333333333}")["ok"] == .bool(true))
        #expect(try client.call("{\"cmd\":\"set\",\"control\":\"zoom\",\"value\":2}")["ok"] == .bool(true))
        let status = try client.call("{\"cmd\":\"status\"}")
        guard case .array(let controls)? = status["controls"] else { Issue.record("no controls"); return }
        var statusTexts: [String: JSONValue] = [:]
        for case .object(let control) in controls {
            if case .string(let id)? = control["id"] { statusTexts[id] = control["text"] }
        }
        for id in ["exposure", "zoom"] {
            let event = try #require(rig.lines.last { $0.name == "controlValue" && $0.line.contains("\"control\": \"\(id)\"") })
            let text = try #require(object(event.line)?["text"])
            #expect(statusTexts[id] == text, "\(id)")
        }
        #expect(statusTexts["exposure"] == .string("\u{2212}⅓ EV"))
        #expect(statusTexts["zoom"] == .string("2.0×"))
    }

    /// A subscriber woken by an event line is queued on the loop's CPU and would wait there for
    /// the rest of the wake-up: the loop yields once in a wake-up (or a read of the lines
    /// between wake-ups) that wrote a subscriber a line, and never when no line reached one.
    @Test func theLoopYieldsOnceForEachStretchThatWroteASubscriberALine() throws {
        let rig = try TestRig(api: true)
        defer { rig.close() }
        var yields = 0
        rig.daemon.loop.yieldCPU = { yields += 1 }
        var subscribed = false, stretchesWithLines = 0, linesPublished = 0
        /// One turn as the rig makes it (the lines read, then the loop turned), each half counted.
        func countedTurn() throws {
            for step in [{ try rig.daemon.pump() }, { try rig.daemon.loop.runOnce(timeoutMilliseconds: 0) }] {
                let linesBefore = rig.lines.count, yieldsBefore = yields
                try step()
                let published = rig.lines.count - linesBefore
                #expect(yields - yieldsBefore == (subscribed && published > 0 ? 1 : 0),
                        "\(published) lines published, \(yields - yieldsBefore) yields")
                if published > 0 { stretchesWithLines += 1; linesPublished += published }
            }
        }
        /// A full click on the two-stage button, each turn counted; then 500 ms pass.
        func click() throws {
            rig.chip.set(rig.line("half"), active: true, at: rig.chip.clock.now)
            for (line, active) in [("full", true), ("full", false), ("half", false)] {
                for _ in 0..<4 { rig.chip.clock.advance(by: .milliseconds(10)); try countedTurn() }
                rig.chip.set(rig.line(line), active: active, at: rig.chip.clock.now)
            }
            for _ in 0..<50 { rig.chip.clock.advance(by: .milliseconds(10)); try countedTurn() }
        }
        // Nobody subscribed: the click's lines go to no socket.
        try click()
        #expect(rig.names.contains("capture") && yields == 0)
        let subscriber = try TestClient(rig)
        #expect(try subscriber.call("{\"cmd\":\"subscribe\"}")["ok"] == .bool(true))
        subscribed = true
        yields = 0
        stretchesWithLines = 0
        linesPublished = 0
        // A light press shows the controls; the click then collapses them as it begins the capture.
        rig.chip.set(rig.line("half"), active: true, at: rig.chip.clock.now)
        for _ in 0..<10 { rig.chip.clock.advance(by: .milliseconds(10)); try countedTurn() }
        rig.chip.set(rig.line("half"), active: false, at: rig.chip.clock.now)
        for _ in 0..<50 { rig.chip.clock.advance(by: .milliseconds(10)); try countedTurn() }
        try click()
        #expect(yields == stretchesWithLines && yields > 0)
        // Several lines in one stretch (the press's capture began with the controls it collapses): one yield.
        #expect(linesPublished > stretchesWithLines, "\(linesPublished) lines in \(stretchesWithLines) stretches")
        #expect(try subscriber.readLine().map { object($0)?["event"] != nil } == true)
    }

    @Test func remoteCaptureReachesASubscriberWithItsPhoto() throws {
        let rig = try TestRig(api: true)
        defer { rig.close() }
        let subscriber = try TestClient(rig)
        #expect(try subscriber.call("{\"cmd\":\"subscribe\"}")["ok"] == .bool(true))
        let client = try TestClient(rig)
        #expect(try client.call("{\"id\":1,\"cmd\":\"capture\"}")["ok"] == .bool(true))
        var seen: [String] = []
        while seen.count < 20, let line = try subscriber.readLine() {
            seen.append(line)
            if object(line)?["event"] == .string("photo") { break }
        }
        #expect(seen.contains { $0.contains("\"event\": \"capture\"") && $0.contains("\"action\": \"remote\"") })
        // The subscriber's own photo line, not merely the last line it read: that is always some
        // line the daemon published.
        let photoLine = try #require(seen.first { object($0)?["event"] == .string("photo") },
                                     "the subscriber got no photo line: \(seen)")
        guard case .string(let path)? = object(photoLine)?["path"] else {
            Issue.record("the photo line names no path: \(photoLine)")
            return
        }
        #expect(path.hasPrefix(rig.directory + "/photos/"))
        #expect(FileManager.default.fileExists(atPath: path), "\(path) is not on disk")
        // Exactly the line standard output gets.
        #expect(rig.lines.contains { $0.name == "photo" && $0.line == photoLine })
        #expect(rig.daemon.counters.photos == 1)
    }

    /// A remote capture's `id` comes back on its photo, so a front-end can answer "saved, here"
    /// and not only "accepted"; a press's photo, and a request without an id, name none.
    @Test func aRemoteCapturesIdComesBackOnItsPhotoAndOnlyOnIt() throws {
        let rig = try TestRig(api: true)
        defer { rig.close() }
        let subscriber = try TestClient(rig)
        #expect(try subscriber.call("{\"cmd\":\"subscribe\"}")["ok"] == .bool(true))
        let client = try TestClient(rig)
        func photos() throws -> [[String: JSONValue]] {
            var found: [[String: JSONValue]] = []
            while let line = try subscriber.readLine() {
                guard let event = object(line) else { continue }
                if event["event"] == .string("photo") { found.append(event); break }
            }
            return found
        }
        let accepted = try client.call("{\"id\":\"shot-1\",\"cmd\":\"capture\"}")
        #expect(accepted["ok"] == .bool(true))
        #expect(accepted["request"] == .string("shot-1"))
        let first = try #require(photos().first)
        #expect(first["request"] == .string("shot-1"))
        #expect(first["pressedAt"] == accepted["pressedAt"])
        try rig.click()
        let pressed = try #require(photos().first)
        #expect(pressed["request"] == nil)
        #expect(try client.call("{\"cmd\":\"capture\"}")["request"] == nil)
        #expect(try #require(photos().first)["request"] == nil)
        #expect(try client.call("{\"id\":7,\"cmd\":\"capture\"}")["ok"] == .bool(true))
        #expect(try #require(photos().first)["request"].map { if case .number(7, _) = $0 { true } else { false } } == true)
    }

    /// A refused capture says why in a kind: disabled (enable it) is not unavailable (wait for the camera).
    @Test func aRefusedCaptureSaysWhichKindOfRefusal() throws {
        let rig = try TestRig(api: true)
        defer { rig.close() }
        let client = try TestClient(rig)
        #expect(try client.call("{\"cmd\":\"disable\",\"capture\":true}")["ok"] == .bool(true))
        #expect(try client.call("{\"cmd\":\"capture\"}")["kind"] == .string("disabled"))
        #expect(try client.call("{\"cmd\":\"enable\",\"capture\":true}")["ok"] == .bool(true))
        // No camera to be had: the rig waits for one, and a capture is refused as unavailable.
        let cameraless = try TestRig(api: true, cameraFactory: { _ throws(CaptureError) in
            throw CaptureError.noDevice(requested: "missing", available: [])
        })
        defer { cameraless.close() }
        let unavailable = try TestClient(cameraless).call("{\"cmd\":\"capture\"}")
        #expect(unavailable["kind"] == .string("unavailable"), "\(unavailable)")
        #expect(!cameraless.names.contains("capture"))
    }

    @Test func disabledCaptureIsRefusedForPressesAndRemotely() throws {
        let rig = try TestRig(api: true)
        defer { rig.close() }
        let client = try TestClient(rig)
        #expect(try client.call("{\"cmd\":\"disable\",\"capture\":true}")["ok"] == .bool(true))
        let refused = try client.call("{\"cmd\":\"capture\"}")
        #expect(refused["ok"] == .bool(false))
        try rig.click()
        #expect(rig.lines.contains { $0.name == "capture" && $0.line.contains("\"reason\": \"unavailable\"") })
        #expect(try client.call("{\"cmd\":\"enable\",\"capture\":true}")["ok"] == .bool(true))
        #expect(try client.call("{\"cmd\":\"capture\"}")["ok"] == .bool(true))
    }

    @Test func everyBadLineGetsOneErrorReplyAndTheConnectionStaysUsable() throws {
        let rig = try TestRig(api: true)
        defer { rig.close() }
        let client = try TestClient(rig)
        try client.sendRaw([0xff, 0x00, 0x13, 0x80, 0x0a])
        try client.send("{\"cmd\":")
        try client.send("{\"id\":3,\"cmd\":\"status\",\"bogus\":1}")
        for _ in 0..<3 {
            let reply = try #require(client.readLine().flatMap(object))
            #expect(reply["ok"] == .bool(false))
        }
        #expect(try client.call("{\"cmd\":\"status\"}")["ok"] == .bool(true))
    }

    @Test func aLineOverTheLimitClosesTheConnectionOnly() throws {
        let rig = try TestRig(api: true)
        defer { rig.close() }
        let client = try TestClient(rig)
        try client.sendRaw([UInt8](repeating: UInt8(ascii: "x"), count: APIServer.Limits().maximumLineBytes + 10))
        let reply = try #require(client.readLine().flatMap(object))
        #expect(reply["ok"] == .bool(false))
        #expect(try client.waitUntilClosed())
        let other = try TestClient(rig)
        #expect(try other.call("{\"cmd\":\"status\"}")["ok"] == .bool(true))
    }

    @Test func aClientLeavingMidLineIsForgotten() throws {
        let rig = try TestRig(api: true)
        defer { rig.close() }
        do {
            let client = try TestClient(rig)
            try client.sendRaw(Array("{\"cmd\":\"capt".utf8))
            try rig.turn()
        }
        for _ in 0..<20 { try rig.turn() }
        #expect(rig.node.api?.clientCount == 0)
        #expect(!rig.names.contains("capture"))
        let other = try TestClient(rig)
        #expect(try other.call("{\"cmd\":\"status\"}")["ok"] == .bool(true))
    }

    @Test func hundredsOfClientsEachGetTheirReply() throws {
        let rig = try TestRig(api: true)
        defer { rig.close() }
        let clients = try (0..<300).map { _ in try TestClient(rig) }
        for (index, client) in clients.enumerated() { try client.send("{\"id\":\(index),\"cmd\":\"status\"}") }
        for (index, client) in clients.enumerated() {
            let reply = try #require(client.readLine().flatMap(object))
            #expect(reply["id"] == .number(Double(index), text: String(index)))
        }
        #expect(rig.node.api?.clientCount == 300)
    }

    /// What a subscriber that never reads gets of `count` controlValue lines, its queue limited
    /// to `queueLimit` lines: the lines it finally reads, the drop notices among them, and
    /// whether the last line it read is the last the daemon published.
    func floodASubscriberThatNeverReads(queueLimit: Int, count: Int = 3000) throws
        -> (values: Int, notices: [[String: JSONValue]], endsWithTheNewest: Bool) {
        var options = NodeOptions()
        options.apiLimits.subscriberQueueLimit = queueLimit
        let rig = try TestRig(options: options, api: true)
        defer { rig.close() }
        let subscriber = try TestClient(rig)
        var size: CInt = 4096
        setsockopt(subscriber.descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<CInt>.size))
        try subscriber.send("{\"cmd\":\"subscribe\"}")
        for _ in 0..<10 { try rig.turn() }
        let client = try TestClient(rig)
        // Enough controlValue lines to fill the socket buffers and the queue many times over.
        for index in 0..<count {
            let value = 1 + Double(index % 14) * 0.5
            try client.send("{\"cmd\":\"set\",\"control\":\"zoom\",\"value\":\(value)}")
            if index % 20 == 19 { for _ in 0..<20 { #expect(try client.readLine() != nil) } }
        }
        var lines: [String] = []
        while let line = try subscriber.readLine(turns: 50) { lines.append(line) }
        let notices = lines.compactMap(object).filter { $0["event"] == .string("dropped") }
        let values = lines.filter { $0.contains("controlValue") }.count
        return (values, notices, lines.last == rig.lines.last?.line)
    }

    /// A subscriber that never reads holds up nothing: what its socket cannot take waits in a queue
    /// of `subscriberQueueLimit` lines, the oldest dropped beyond it, and a notice says how many.
    ///
    /// The bound itself: the socket holds the same first lines whatever the limit, so the lines
    /// the subscriber finally reads with the default limit (256) and with a limit of 16 differ by
    /// exactly the 240 lines the larger queue kept. An unbounded queue, or a limit not applied,
    /// fails that.
    @Test func aSubscriberThatNeverReadsLosesTheOldestLinesAndIsTold() throws {
        let count = 3000
        let limit = APIServer.Limits().subscriberQueueLimit
        #expect(limit == 256)
        let full = try floodASubscriberThatNeverReads(queueLimit: limit, count: count)
        // One notice waits whole at a time, taking in later drops; one more may have gone out
        // before the socket filled (not one notice per event dropped).
        #expect(full.notices.count >= 1 && full.notices.count <= 2)
        var dropped = 0
        for notice in full.notices { if case .number(let n, _)? = notice["count"] { dropped += Int(n) } }
        #expect(full.values + dropped == count)
        // The newest line always arrives.
        #expect(full.endsWithTheNewest)
        let small = try floodASubscriberThatNeverReads(queueLimit: 16, count: count)
        #expect(small.endsWithTheNewest)
        #expect(full.values - small.values == limit - 16,
                "read \(full.values) lines with a queue of \(limit), \(small.values) with 16")
    }

    @Test func aStaleSocketIsReplacedAndALiveOneRefused() throws {
        let rig = try TestRig(api: true)
        defer { rig.close() }
        // A second daemon on the same path: refused, naming it.
        #expect {
            _ = try UnixSocket.listen(at: rig.socketPath)
        } throws: { error in
            "\(error)".contains("another shutter daemon is already answering") && "\(error)".contains(rig.socketPath)
        }
        // A socket file nobody answers on (a crashed daemon): replaced.
        let stale = rig.directory + "/stale.sock"
        let descriptor = try UnixSocket.listen(at: stale)
        close(descriptor)
        let again = try UnixSocket.listen(at: stale)
        close(again)
        var info = stat()
        #expect(stat(rig.socketPath, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o660)
    }
}
