#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShutterCore
import ShutterService
import ShutterSystem

/// The topics of one node of a rig: `<prefix>/<rig>/<node>/…` and the rig's own.
struct RigTopics: Hashable, Sendable {
    var prefix: String
    var rig: String
    var node: String

    var rigBase: String { "\(prefix)/\(rig)" }
    var nodeBase: String { "\(rigBase)/\(node)" }
    /// Every event line, QoS 0.
    var event: String { "\(nodeBase)/event" }
    /// The `status` reply, retained.
    var status: String { "\(nodeBase)/status" }
    /// `online` / `offline`, retained; `offline` is the last will.
    var availability: String { "\(nodeBase)/availability" }
    /// The socket API's requests.
    var command: String { "\(nodeBase)/cmd" }
    /// Replies to requests that name no MQTT v5 response topic (or one not under it).
    var reply: String { "\(nodeBase)/reply" }

    /// Where a request's reply goes: its MQTT v5 response topic when that lies under ``reply``
    /// (`…/reply/<anything>`, no wildcards), else ``reply``. The response topic is the caller's
    /// choice: taken as given, any client on the command topic could make the node publish on
    /// another service's topic (a Home Assistant config topic) or on its own command topic.
    func replyTopic(for responseTopic: String?) -> String {
        guard let responseTopic, responseTopic == reply || responseTopic.hasPrefix(reply + "/"),
              !responseTopic.contains(where: { $0 == "+" || $0 == "#" || $0 == "\0" }) else { return reply }
        return responseTopic
    }
    /// Rig-wide shots.
    var shot: String { "\(rigBase)/shot" }
    /// This node's result for shot `id`.
    func result(_ id: String) -> String { "\(nodeBase)/shot/\(id)" }
    var results: String { "\(rigBase)/+/shot/+" }
    var availabilities: String { "\(rigBase)/+/availability" }
    /// Control values carried rig-wide (`syncControls`).
    var controls: String { "\(rigBase)/controls" }

    /// The node named by a topic `<prefix>/<rig>/<node>/<rest…>`, and what follows it.
    func nodeTopic(_ topic: String) -> (node: String, rest: [Substring])? {
        guard topic.hasPrefix(rigBase + "/") else { return nil }
        let levels = topic.dropFirst(rigBase.count + 1).split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count >= 2 else { return nil }
        return (String(levels[0]), Array(levels.dropFirst()))
    }
}

/// The daemon as one node of a rig on an MQTT broker: events, status and availability out;
/// commands, shots and results in; Home Assistant discovery.
///
/// Everything runs on the loop's thread: libmosquitto's socket is one of the loop's
/// descriptors and its keep-alive one of its deadlines. An unreachable or refusing broker never
/// stops local capture: the node tries again with a growing backoff (0.5 s to 30 s) and says
/// so once per outage.
public final class MQTTNode {
    let settings: MQTTSettings
    let topics: RigTopics
    private let service: any ServicePort
    /// Where Home Assistant fetches the node's photos (``HTTPServer/photoBaseURL``); nil: nowhere.
    private let liveViewURL: String?
    /// The daemon's working directory when the node was made: where relative photo paths start.
    private let workingDirectory = FileManager.default.currentDirectoryPath
    private let client: any MQTTConnection
    private let password: String?

    enum State: Equatable {
        case waiting(retryAt: Instant)
        case connecting(since: Instant, descriptor: CInt)
        case connected(descriptor: CInt)
    }
    private(set) var state: State
    private var backoff = MQTTNode.firstBackoff
    static let firstBackoff = Nanoseconds.milliseconds(500)
    static let longestBackoff = Nanoseconds.seconds(30)
    /// A CONNECT the broker has not answered in this long is given up and tried again.
    static let connectTimeout = Nanoseconds.seconds(10)
    /// Whether the outage was reported (one warning per outage, not one per attempt).
    private var outageReported = false
    private var nextMisc: Instant?

    /// The nodes of the rig whose availability says `online`, this one included.
    private var roster: RigRoster
    /// Whether a full roster was reported (once, until it has room again).
    private var rosterFullReported = false
    /// When this node next says `online` again, so that the others keep it.
    private var announceDue: Instant?
    private var book = RigShotBook()
    /// The status is published again at most this often, after the events that change it.
    static let statusInterval = Nanoseconds.milliseconds(250)
    private var statusPacing = PublishPacing(interval: MQTTNode.statusInterval)
    /// Discovery is sent again at most this often when Home Assistant says it (re)started: it
    /// is some kilobytes, and anyone may publish Home Assistant's `online`, thousands of times.
    static let discoveryInterval = Nanoseconds.seconds(10)
    private var discoveryPacing = PublishPacing(interval: MQTTNode.discoveryInterval)
    /// Set while a control value from another node is applied, so it is not sent back.
    private var applyingRigControl = false
    /// Malformed messages ignored so far (logged a few, then counted).
    private(set) var malformedCount = 0
    /// Clocks: the rig's realtime against the loop's monotonic (tests replace it).
    var realtimeMapping: () -> RealtimeMapping = { RealtimeMapping.sample() }

    /// Makes the node and starts connecting.
    ///
    /// - Parameter liveViewURL: where Home Assistant fetches the node's photos, if anywhere.
    /// - Throws: ``CommandFailure`` when the password file cannot be read, libmosquitto cannot be
    ///   loaded or refuses a setting (a TLS file).
    public convenience init(settings: MQTTSettings, node: String, service: any ServicePort, liveViewURL: String? = nil) throws {
        try self.init(settings: settings, node: node, service: service, liveViewURL: liveViewURL, connection: nil)
    }

    /// Makes the node on `connection` (a test's fake) instead of libmosquitto's when given.
    init(settings: MQTTSettings, node: String, service: any ServicePort, liveViewURL: String?,
         connection: (any MQTTConnection)?) throws {
        self.settings = settings
        self.service = service
        self.liveViewURL = liveViewURL
        topics = RigTopics(prefix: settings.topicPrefix, rig: settings.rig, node: node)
        roster = RigRoster(own: node)
        if let file = settings.passwordFile {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw CommandFailure("mqtt.passwordFile: cannot read \(file): \(String(cString: strerror(errno)))")
            }
            password = text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        } else {
            password = nil
        }
        if let connection {
            client = connection
        } else {
            do throws(MQTTClient.Failure) {
                client = try MQTTClient(clientID: "shutter-\(settings.rig)-\(node)".prefix(64).description,
                                        will: (topics.availability, "offline"), username: settings.username, password: password,
                                        tls: settings.usesTLS ? (settings.caFile, settings.certFile, settings.keyFile) : nil,
                                        maximumPacketSize: UInt32(Self.maximumPayloadBytes))
            } catch {
                throw CommandFailure("mqtt: \(error)")
            }
        }
        state = .waiting(retryAt: service.loop.clock.now)
        client.connected = { [unowned self] reason in connected(reason: reason) }
        client.disconnected = { [unowned self] reason in
            // libmosquitto's own error code here (MOSQ_ERR_*), not an MQTT reason code.
            if reason != 0 { lost("the connection ended: \(MQTTClient.errorText(reason))") }
        }
        client.received = { [unowned self] message in received(message) }
        // Weak: the service keeps its observers for its whole life, and this node may go first.
        service.observeEvents { [weak self] event in self?.eventPublished(event) }
    }

    var broker: String { "\(settings.host):\(settings.port)" }
    var isConnected: Bool { if case .connected = state { true } else { false } }

    // MARK: - The connection

    /// When the node next needs the loop: a retry, a CONNECT overdue, the keep-alive, an
    /// announcement, a silent node to forget, the status, a shot's timeout.
    public var nextDeadline: Instant? {
        var earliest: Instant?
        switch state {
        case .waiting(let retryAt): earliest = retryAt
        case .connecting(let since, _): earliest = since + Self.connectTimeout
        case .connected:
            earliest = Instant.earliest(nextMisc, announceDue)
            earliest = Instant.earliest(earliest, roster.nextDeadline)
        }
        earliest = Instant.earliest(earliest, statusPacing.due)
        earliest = Instant.earliest(earliest, discoveryPacing.due)
        return Instant.earliest(earliest, book.nextDeadline)
    }

    public func advance(to now: Instant) {
        switch state {
        case .waiting(let retryAt) where now >= retryAt:
            connect(now: now)
        case .connecting(let since, _) where now - since >= Self.connectTimeout:
            lost("the broker did not answer within \(Int(Self.connectTimeout.milliseconds / 1000)) s")
        case .connected:
            if let due = nextMisc, now >= due {
                // Keep-alive pings: libmosquitto sends one when the keep-alive has passed without traffic.
                nextMisc = now + .milliseconds(settings.keepAlive.milliseconds / 4)
                if let failure = client.misc() { lost(failure.description); return }
                flush()
            }
            if let due = announceDue, now >= due {
                announceDue = now + RigRoster.announceInterval
                client.publish(topics.availability, "online", qos: 1, retain: true)
                flush()
            }
            let forgotten = roster.expire(now: now)
            if forgotten > 0 {
                Log.info("shutter: mqtt: forgot \(forgotten) node(s) not heard from in \(Int(RigRoster.silenceLimit.milliseconds / 1000)) s")
            }
        default:
            break
        }
        if statusPacing.isDue(now: now) { publishStatus(now: now) }
        if discoveryPacing.isDue(now: now) { publishDiscovery(now: now) }
        for completion in book.expire(now: now) { completed(completion) }
    }

    private func connect(now: Instant) {
        do throws(MQTTClient.Failure) {
            try client.connect(host: settings.host, port: settings.port, keepAliveSeconds: Int(settings.keepAlive.milliseconds / 1000))
        } catch {
            retryLater(error.description, now: now)
            return
        }
        let descriptor = client.socket
        guard descriptor >= 0 else { retryLater("no socket", now: now); return }
        state = .connecting(since: now, descriptor: descriptor)
        service.loop.watch(descriptor, events: Int16(POLLIN | POLLOUT)) { [unowned self] revents in socketReady(revents) }
    }

    private func socketReady(_ revents: Int16) {
        if revents & Int16(POLLOUT) != 0, let failure = client.write() { lost(failure.description); return }
        if revents & Int16(POLLIN | POLLERR | POLLHUP) != 0, let failure = client.read() { lost(failure.description); return }
        flush()
    }

    /// Writes what the callbacks queued, and watches for writability only while something waits.
    private func flush() {
        let descriptor: CInt
        switch state {
        case .connected(let fd), .connecting(_, let fd): descriptor = fd
        case .waiting: return
        }
        // Inside a callback the library holds its locks: the caller of read() flushes after it.
        guard !client.isInCallback else { return }
        if client.wantsWrite, let failure = client.write() { lost(failure.description); return }
        guard client.socket == descriptor else { lost("the connection was closed"); return }
        service.loop.setEvents(Int16(POLLIN) | (client.wantsWrite ? Int16(POLLOUT) : 0), for: descriptor)
    }

    private func connected(reason: CInt) {
        let now = service.loop.clock.now
        guard reason == 0 else {
            // Refused: a wrong password, a client the broker does not allow. Said once per outage, clearly.
            let hint = [134, 135, 4, 5].contains(reason) ? " (check mqtt.username and mqtt.passwordFile)" : ""
            lost("the broker refused the connection: \(reasonText(reason))\(hint)")
            return
        }
        guard case .connecting(_, let descriptor) = state else { return }
        state = .connected(descriptor: descriptor)
        backoff = Self.firstBackoff
        outageReported = false
        nextMisc = now + .milliseconds(settings.keepAlive.milliseconds / 4)
        Log.notice("shutter: mqtt: connected to \(broker) as node '\(topics.node)' of rig '\(settings.rig)'")
        roster.removeAll()
        announceDue = now + RigRoster.announceInterval
        // Retain-as-published: a retained command published while the node is connected keeps
        // its flag and is refused as one that waited; no-local: the node's own clearing of it
        // does not come back.
        client.subscribe(topics.command, qos: 1, noLocal: true, retainAsPublished: true)
        client.subscribe(topics.shot, qos: 1)
        client.subscribe(topics.results, qos: 1)
        client.subscribe(topics.availabilities, qos: 1)
        if settings.syncControls { client.subscribe(topics.controls, qos: 0, noLocal: true) }
        if settings.discovery { client.subscribe("\(settings.discoveryPrefix)/status", qos: 1) }
        client.publish(topics.availability, "online", qos: 1, retain: true)
        publishStatus(now: now)
        if settings.discovery {
            let legacyTopic = discovery.legacyTopic
            if legacyTopic != discovery.topic { client.publish(legacyTopic, "", qos: 1, retain: true) }
            publishDiscovery(now: now)
        }
        service.announce(.connection(connected: true, broker: broker, reason: nil, at: now))
    }

    private func lost(_ reason: String) {
        // The disconnect callback and the failed read that ran it both report one loss.
        if case .waiting = state { return }
        let now = service.loop.clock.now
        let wasConnected = isConnected
        switch state {
        case .connecting(_, let descriptor), .connected(let descriptor): service.loop.unwatch(descriptor)
        case .waiting: break
        }
        // Drops the socket so the next attempt starts clean (no disconnect packet reaches a dead link).
        client.disconnect()
        nextMisc = nil
        announceDue = nil
        roster.removeAll()
        retryLater(reason, now: now)
        if wasConnected {
            service.announce(.connection(connected: false, broker: broker, reason: reason, at: now))
        }
    }

    private func retryLater(_ reason: String, now: Instant) {
        if !outageReported {
            Log.warning("shutter: mqtt: \(broker): \(reason); trying again with backoff (local capture goes on)")
            outageReported = true
        }
        // Jitter, so a rig's nodes do not all knock on a restarted broker at the same instant.
        let jitter = Double.random(in: 0.8...1.2)
        state = .waiting(retryAt: now + .milliseconds(backoff.milliseconds * jitter))
        backoff = min(Self.longestBackoff, .milliseconds(backoff.milliseconds * 2))
    }

    private func reasonText(_ reason: CInt) -> String { MQTTClient.reasonText(reason) }

    /// Ends the session: `offline` published (a clean goodbye sends no last will) and written
    /// out before the socket closes, for at most half a second.
    public func close() {
        if case .connected(let descriptor) = state {
            client.publish(topics.availability, "offline", qos: 0, retain: true)
            var entry = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            for _ in 0..<10 where client.wantsWrite {
                _ = poll(&entry, 1, 50)
                if client.write() != nil { break }
            }
            service.loop.unwatch(descriptor)
        } else if case .connecting(_, let descriptor) = state {
            service.loop.unwatch(descriptor)
        }
        client.disconnect()
        state = .waiting(retryAt: .init(rawValue: .max))
    }

    // MARK: - Out

    /// Every event line goes to the node's event topic; those that change the status make it due.
    func eventPublished(_ event: ServiceEvent) {
        guard isConnected else { return }
        client.publish(topics.event, event.line)
        if event.changesStatus { statusChanged() }
        if settings.syncControls, !applyingRigControl, case .gesture(.controlValue(let control, let value, _, _)) = event.kind,
           let spec = service.board.controls.first(where: { $0.id == control }), spec.isSyncedAcrossRig,
           case .number(let number) = value {
            var line = JSONLine()
            line.add("origin", topics.node)
            line.add("control", control)
            line.add("value", number, decimals: 12)
            client.publish(topics.controls, line.description)
        }
        flush()
    }

    private func statusChanged() {
        statusPacing.request(now: service.loop.clock.now)
    }

    private func publishStatus(now: Instant) {
        statusPacing.done(now: now)
        guard isConnected else { return }
        client.publish(topics.status, APIReply.line(id: nil, .status(service.status(now: now))), qos: 1, retain: true)
        flush()
    }

    private func publishDiscovery(now: Instant) {
        discoveryPacing.done(now: now)
        guard settings.discovery, isConnected else { return }
        client.publish(discovery.topic, discovery.text, qos: 1, retain: true)
    }

    /// This node's Home Assistant discovery, for the running board.
    private var discovery: HomeAssistantDiscovery {
        HomeAssistantDiscovery(node: topics.node, rig: settings.rig, topicPrefix: settings.topicPrefix,
                               discoveryPrefix: settings.discoveryPrefix, board: service.board,
                               liveViewURL: liveViewURL, softwareVersion: shutterVersion, workingDirectory: workingDirectory)
    }

    // MARK: - In

    /// The largest payload the node reads on any topic, as the socket caps a request line; the
    /// broker is asked for no larger packet (MQTT v5's Maximum Packet Size), and a broker that
    /// ignores it finds what is larger refused by its size, never parsed.
    static let maximumPayloadBytes = 64 * 1024

    /// Why `payload` is not read, when it is over ``maximumPayloadBytes``.
    static func sizeProblem(_ payload: [UInt8]) -> String? {
        payload.count > maximumPayloadBytes ? "a payload of \(payload.count) bytes, more than the \(maximumPayloadBytes) the node reads" : nil
    }

    private func received(_ message: MQTTClient.Message) {
        let topic = message.topic
        if topic == topics.command {
            command(message)
        } else if let problem = Self.sizeProblem(message.payload) {
            malformed(topic, problem)
        } else if topic == topics.shot {
            switch Self.parseShot(message.payload) {
            case .success(let shot): shotArrived(shot)
            case .failure(let problem): malformed(topic, problem.description)
            }
        } else if topic == topics.controls {
            rigControl(message.payload)
        } else if topic == "\(settings.discoveryPrefix)/status" {
            // Home Assistant restarted: it forgot the devices it did not read retained.
            if HomeAssistantDiscovery.isBirth(message.payload) { discoveryPacing.request(now: service.loop.clock.now) }
        } else if let (node, rest) = topics.nodeTopic(topic) {
            if let problem = MQTTSettings.topicLevelProblem(node) {
                malformed(topic, "a node's name \(problem)")
            } else if rest.count == 1, rest[0] == "availability" {
                availability(of: node, online: message.payload.elementsEqual("online".utf8))
            } else if rest.count == 2, rest[0] == "shot" {
                guard book.isCollecting(String(rest[1])) else { return }
                switch Self.parseResult(message.payload, node: node, shot: String(rest[1])) {
                case .success(let result):
                    roster.heard(from: node, now: service.loop.clock.now)
                    if let completion = book.record(result) { completed(completion) }
                case .failure(let problem): malformed(topic, problem.description)
                }
            }
        }
    }

    private func availability(of node: String, online: Bool) {
        guard online else {
            roster.offline(node)
            return
        }
        switch roster.online(node, now: service.loop.clock.now) {
        case .added:
            rosterFullReported = false
        case .known:
            break
        case .refused:
            // Said once until the roster has room again: a flood of fake nodes must not flood the journal.
            if !rosterFullReported {
                Log.warning("shutter: mqtt: \(RigRoster.capacity) nodes of rig '\(settings.rig)' are online already; '\(node)' and any further one are ignored until one goes offline or stays silent for \(Int(RigRoster.silenceLimit.milliseconds / 1000)) s")
                rosterFullReported = true
            }
        }
    }

    private func malformed(_ topic: String, _ problem: String) {
        malformedCount += 1
        // A flood of bad messages must not flood the journal: the first few, then one in a hundred.
        if malformedCount <= 5 || malformedCount % 100 == 0 {
            Log.warning("shutter: mqtt: ignored a malformed message on \(topic) (\(malformedCount) so far): \(problem)")
        }
    }

    /// A request on the node's `cmd` topic: the socket's commands, one reply each.
    private func command(_ message: MQTTClient.Message) {
        let reply: String
        if message.retained {
            // Empty: a retained command cleared (by this node or another client), nothing to answer.
            guard !message.payload.isEmpty else { return }
            // A retained command would be carried out again by every restart: never acted on,
            // and cleared so that the next connect does not meet it again.
            malformed(message.topic, "a retained command")
            reply = APIReply.failure(id: nil, CommandRefusal(.invalidRequest, "retained commands are not carried out (publish without retain); it was cleared"))
            client.publish(topics.command, "", qos: 1, retain: true)
        } else if let problem = Self.sizeProblem(message.payload) {
            malformed(message.topic, problem)
            reply = APIReply.failure(id: nil, CommandRefusal(.invalidRequest, problem + "; not read"))
        } else {
            // The socket's parser: `subscribe` is no command here (events are the node's topics).
            switch APIRequest.parse(message.payload) {
            case .failure(let error):
                malformed(message.topic, error.message)
                reply = APIReply.failure(id: error.id, CommandRefusal(.invalidRequest, error.message))
            case .success(let request):
                reply = APIReply.line(id: request.id, service.execute(request))
            }
        }
        client.publish(topics.replyTopic(for: message.responseTopic), reply, qos: 1, correlationData: message.correlationData)
    }

    private func rigControl(_ payload: [UInt8]) {
        guard case .object(let members)? = try? JSONValue.parse(payload), case .string(let origin)? = members["origin"],
              case .string(let control)? = members["control"], case .number(let value, _)? = members["value"] else {
            malformed(topics.controls, "expected {\"origin\":NODE,\"control\":ID,\"value\":NUMBER}")
            return
        }
        guard origin != topics.node else { return }
        applyingRigControl = true
        defer { applyingRigControl = false }
        if case .refused(let refusal) = service.execute(APIRequest(id: nil, command: .set(control: control, to: .value(value)))) {
            Log.info("shutter: mqtt: \(origin)'s \(control) \(value) not applied here: \(refusal.message)")
        }
    }

    // MARK: - Shots

    /// The name of this node's photo of `shot`: ``MQTTSettings/shotTemplate`` with `{shot}` and
    /// `{node}` filled in.
    public func fileName(of shot: RigShot) -> String {
        settings.shotTemplate.replacingEvery("{shot}", with: shot.id).replacingEvery("{node}", with: topics.node)
    }

    /// A press on this node (or a rig capture asked for here): the shot goes to the rig. This
    /// node's own photo of it is the daemon's shot that carries it (named ``shotFileName(_:)``),
    /// reported as every node's is.
    public func originate(pressedAt: Instant) -> RigShot {
        let now = service.loop.clock.now
        let shot = RigShot(id: UUID().uuidString.lowercased(), at: realtimeMapping().realtime(of: pressedAt), origin: topics.node)
        book.originate(shot, expecting: roster.nodes, now: now, timeout: settings.shotTimeout)
        if isConnected {
            var line = JSONLine()
            line.add("shot", shot.id)
            line.add("at", json: String(shot.at))
            line.add("origin", shot.origin)
            // QoS 1: delivered at least once (a second delivery is ignored by id); expiry: a shot
            // the broker could not deliver within 5 s is dropped, not delivered to a node that
            // connects later.
            client.publish(topics.shot, line.description, qos: 1, expirySeconds: 5)
            flush()
        }
        service.announce(.shot(shot, pressedAt: pressedAt, at: now))
        return shot
    }

    /// Another node's shot: take the frame of its instant from the ring, or say why not.
    private func shotArrived(_ shot: RigShot) {
        guard shot.origin != topics.node, book.firstSighting(of: shot.id) else { return }
        let now = service.loop.clock.now
        let mapping = realtimeMapping()
        let pressedAt = mapping.instant(ofRealtime: shot.at)
        if let reason = service.takeRigShot(shot, pressedAt: pressedAt, fileName: fileName(of: shot), maxAge: settings.maxShotAge) {
            missed(shot, reason: reason, at: now)
        }
    }

    /// This node's photo or failure of its part in `shot`: published as its result.
    public func answered(_ shot: RigShot, with outcome: ShotOutcome) {
        switch outcome {
        case .photo(let photoFrameAt, let path, let bytes, let sha256):
            let frameAt = realtimeMapping().realtime(of: photoFrameAt)
            let clock = RealtimeMapping.discipline()
            publishResult(RigShotResult(shot: shot.id, node: topics.node, outcome: .photo(frameAt: frameAt)), shot: shot) { line in
                line.add("frameAt", json: String(frameAt))
                line.add("offsetMs", Double(frameAt - shot.at) / 1e6, decimals: 3)
                line.add("clockSynchronized", clock.synchronized)
                line.add("clockErrorMs", json: clock.estimatedError.map { JSONLine.number($0.milliseconds, decimals: 3) } ?? "null")
                line.add("path", path)
                line.add("bytes", bytes)
                if let sha256 { line.add("sha256", sha256) }
            }
        case .failed(let reason, let missesTheShot, let at):
            if missesTheShot {
                // This node could not take the instant, as a refused shot: missed, not failed.
                missed(shot, reason: reason, at: at)
            } else {
                publishResult(RigShotResult(shot: shot.id, node: topics.node, outcome: .failed(reason: reason)), shot: shot)
            }
        }
    }

    /// Shot `shot` cannot be taken here: said as an event and as this node's result.
    private func missed(_ shot: RigShot, reason: String, at: Instant) {
        service.announce(.missed(shot, reason: reason, at: at))
        publishResult(RigShotResult(shot: shot.id, node: topics.node, outcome: .missed(reason: reason)), shot: shot)
    }

    private func publishResult(_ result: RigShotResult, shot: RigShot, details: (inout JSONLine) -> Void = { _ in }) {
        // The origin's own result counts at once, whether or not the broker is there to carry it.
        if shot.origin == topics.node, let completion = book.record(result) { completed(completion) }
        guard isConnected else { return }
        var line = JSONLine()
        line.add("shot", shot.id)
        line.add("node", topics.node)
        line.add("origin", shot.origin)
        switch result.outcome {
        case .photo: line.add("result", "photo")
        case .missed(let reason):
            line.add("result", "missed")
            line.add("reason", reason)
        case .failed(let reason):
            line.add("result", "failed")
            line.add("reason", reason)
        }
        details(&line)
        client.publish(topics.result(shot.id), line.description, qos: 1)
        flush()
    }

    private func completed(_ completion: RigShotCompletion) {
        service.announce(.complete(completion, at: service.loop.clock.now))
    }

    /// What is wrong with a message from the broker.
    struct MessageProblem: Error, ExpressibleByStringLiteral, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
        init(stringLiteral value: String) { description = value }
    }

    /// Reads a shot message: `{"shot":ID,"at":NS,"origin":NODE}`.
    static func parseShot(_ payload: [UInt8]) -> Result<RigShot, MessageProblem> {
        let value: JSONValue
        do { value = try JSONValue.parse(payload) } catch { return .failure(MessageProblem(error.description)) }
        guard case .object(let members) = value else { return .failure("a shot is a JSON object") }
        guard case .string(let id)? = members["shot"], RigShot.isValidID(id) else {
            return .failure("'shot' must be a UUID (36 characters, hex digits in groups of 8-4-4-4-12)")
        }
        guard case .number(_, let text)? = members["at"], let at = Int64(text), at > 0 else {
            return .failure("'at' must be the press's CLOCK_REALTIME in whole nanoseconds")
        }
        guard case .string(let origin)? = members["origin"], MQTTSettings.topicLevelProblem(origin) == nil else {
            return .failure("'origin' must be a node name")
        }
        return .success(RigShot(id: id, at: at, origin: origin))
    }

    /// Reads a node's result message, trusting the topic for the node and shot.
    static func parseResult(_ payload: [UInt8], node: String, shot: String) -> Result<RigShotResult, MessageProblem> {
        guard case .object(let members)? = try? JSONValue.parse(payload), case .string(let kind)? = members["result"] else {
            return .failure("a result is a JSON object with 'result'")
        }
        let reason: String = if case .string(let text)? = members["reason"] { text } else { "" }
        switch kind {
        case "photo":
            guard case .number(_, let text)? = members["frameAt"], let frameAt = Int64(text) else {
                return .failure("a photo result needs 'frameAt' in whole nanoseconds")
            }
            return .success(RigShotResult(shot: shot, node: node, outcome: .photo(frameAt: frameAt)))
        case "missed": return .success(RigShotResult(shot: shot, node: node, outcome: .missed(reason: reason)))
        case "failed": return .success(RigShotResult(shot: shot, node: node, outcome: .failed(reason: reason)))
        default: return .failure("'result' must be photo, missed or failed")
        }
    }

    /// What `status` says of the node's broker.
    var statusSummary: ServiceStatus.MQTT {
        ServiceStatus.MQTT(broker: broker, state: isConnected ? "connected" : "disconnected", rig: settings.rig, node: topics.node,
                          nodesOnline: isConnected ? roster.count : 0)
    }
}

/// A message sent again after the events that call for it, at most once an interval: the
/// requests within an interval of the last send make one send, at the interval's end.
///
/// A value that never reads a clock: the owner asks ``isDue(now:)`` at its deadline ``due``.
struct PublishPacing {
    let interval: Nanoseconds
    /// When the next send is due; nil when none was asked for.
    private(set) var due: Instant?
    private var doneAt: Instant?

    init(interval: Nanoseconds) {
        self.interval = interval
    }

    /// A send is called for at `now`: due now, or when the interval since the last one ends.
    mutating func request(now: Instant) {
        let earliest = doneAt.map { $0 + interval } ?? now
        due = Instant.earliest(due, max(now, earliest))
    }

    func isDue(now: Instant) -> Bool { due.map { now >= $0 } ?? false }

    /// The message was sent at `now` (or there was no connection to send it on): what was
    /// asked for before is answered.
    mutating func done(now: Instant) {
        due = nil
        doneAt = now
    }
}

extension ControlSpec {
    /// Whether `syncControls` carries this control's values to the rig: zoom and exposure.
    var isSyncedAcrossRig: Bool {
        switch kind {
        case .systemZoom, .systemExposureBias: true
        default: false
        }
    }
}

extension MQTTSettings {
    /// The node name of a board that names none (`mqtt.node`) and no `--mqtt-node`: the host
    /// name up to its first dot, as rigs name their machines; "shutter" if it has none.
    public static var hostNodeName: String {
        ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "shutter"
    }
}

extension MQTTNode: ServiceTransport, RigParticipant {
    public func report(into status: inout ServiceStatus) {
        status.mqtt = statusSummary
    }
}
