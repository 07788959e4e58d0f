#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import ShutterService
import ShutterSystem

/// The local API on a Unix socket: one JSON object a line each way.
///
/// This is only the transport: it accepts clients, cuts their bytes into lines, hands each line
/// to ``APIRequest/parse(_:)`` and the daemon's ``Daemon/execute(_:)``, and frames replies and
/// event lines back. Every socket is non-blocking and watched by the daemon's one loop; a client
/// that sends too much, too long a line or garbage gets an error reply or is disconnected, and a
/// subscriber that stops reading loses its oldest lines (and is told how many), never the loop's time.
public final class APIServer {
    /// A failure to set up the socket, with the path and what to do.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    /// What one client, and all of them together, may cost the daemon: every limit that keeps
    /// a client that floods, stops reading or sits idle from reaching a press, a photo or the
    /// watchdog. Tests make them small.
    public struct Limits: Sendable {
        /// The longest request line; a longer one gets an error and closes the connection.
        public var maximumLineBytes = 64 * 1024
        /// Event lines queued for one subscriber; beyond this the oldest are dropped.
        public var subscriberQueueLimit = 256
        /// Reply bytes queued for a client that sends requests but does not read: its requests
        /// wait (and its socket is not read) above this until it reads.
        public var replyBacklogLimit = 32 * 1024
        /// Clients at once. When full, a new client closes the longest-idle client that is not
        /// subscribed, or is refused with an error line when every client is busy or subscribed.
        public var maximumClients = 512
        /// Clients one user may hold, except root and the daemon's own user.
        public var clientsPerUser = 128
        /// Requests run for one client in one turn of the loop, and for all clients together:
        /// a client that pipelines thousands waits its turn, the loop does not. The second also
        /// bounds the clients accepted and the sockets read in one wake-up.
        public var requestsPerClientPerTurn = 4
        public var requestsPerTurn = 64
        /// A client that is not subscribed, owes nothing and sends nothing for this long is closed.
        public var idleTimeout = Nanoseconds.seconds(60)
        /// How long the listener rests when the process is out of descriptors (EMFILE).
        public var acceptBackoff = Nanoseconds.milliseconds(100)

        public init() {}
    }

    public let path: String
    public let limits: Limits
    /// Who may control and who may only look (``APIAccess``): checked before a request runs.
    public let access: APIAccess
    private let listener: CInt
    private let service: any ServicePort
    private var sessions: [CInt: Session] = [:]
    private var readBuffer = [UInt8](repeating: 0, count: 16 * 1024)
    /// Clients with a request to run, in turn order: those that had none waiting first (a
    /// `status` from a person or a script), then those still holding requests after a turn (a
    /// client that pipelines thousands), so one client's backlog never delays another's request.
    private var ready: [Session] = []
    private var backlogged: [Session] = []
    /// A descriptor held back for the moment the process runs out (EMFILE): closed, it lets one
    /// waiting client be accepted and told why it cannot stay.
    private var reserveDescriptor: CInt
    /// When the listener is watched again after running out of descriptors.
    private var listenerResumes: Instant?
    /// Reads left in this wake-up, and whether a readable client waits for the next.
    private var readsLeft: Int
    private var readsDeferred = false
    /// When idle clients are next looked for.
    private var nextIdleSweep: Instant?
    /// Whether an event line went to a subscriber since ``takeEventLineWritten()`` was last asked.
    private var wroteEventLine = false
    private let ownUser = getuid()
    /// Requests run since the server started (tests count turns with it).
    private(set) var requestsRun = 0
    /// The most reply bytes held for any one client now (tests check the backlog limit with it).
    var largestReplyBacklog: Int { sessions.values.map(\.output.replyBytes).max() ?? 0 }

    /// A connected client.
    final class Session {
        let descriptor: CInt
        /// The peer's user and groups (SO_PEERCRED, SO_PEERGROUPS), nil when unknown.
        let credentials: UnixSocket.PeerCredentials?
        /// What the client may do, decided once when it connected.
        let role: APIRole
        var user: uid_t? { credentials?.user }
        /// Bytes received and not yet run; `consumed` of them are done.
        var input: [UInt8] = []
        var consumed = 0
        var output: APIOutputQueue
        var subscribed = false
        /// The client is done sending (or its line was too long): nothing more is read.
        var readClosed = false
        /// The client cannot be written to any more (it went away): replies are discarded.
        var writeClosed = false
        /// Close once what is queued is written (a line too long).
        var condemned = false
        var lastActive: Instant
        /// In ``APIServer/ready`` or ``APIServer/backlogged``.
        var isReady = false
        /// Whole request lines in `input` not yet run.
        var lineCount = 0

        init(descriptor: CInt, credentials: UnixSocket.PeerCredentials?, role: APIRole, eventLimit: Int, now: Instant) {
            self.descriptor = descriptor
            self.credentials = credentials
            self.role = role
            output = APIOutputQueue(eventLimit: eventLimit)
            lastActive = now
        }

        /// The client went away: nothing more is written to it, and what it was owed is forgotten.
        func stopWriting() {
            writeClosed = true
            output.removeAll()
        }

        /// Whether a whole request line is waiting.
        var hasLine: Bool { lineCount > 0 }
    }

    /// Creates the socket at `path` and starts accepting on the daemon's loop.
    ///
    /// - Parameter access: who controls; by default every client that can connect.
    /// - Throws: ``Failure`` when another daemon answers on `path`, `path` is not a socket, or its
    ///   directory cannot be written.
    public init(path: String, service: any ServicePort, limits: Limits = Limits(), access: APIAccess = .everyoneControls) throws(Failure) {
        self.path = path
        self.service = service
        self.limits = limits
        self.access = access
        readsLeft = limits.requestsPerTurn
        do throws(UnixSocket.ListenFailure) {
            listener = try UnixSocket.listen(at: path, mode: access.socketMode)
        } catch {
            throw Failure(error.description)
        }
        reserveDescriptor = open("/dev/null", O_RDONLY | O_CLOEXEC)
        service.loop.watch(listener) { [unowned self] in acceptClients() }
        service.observeEvents { [unowned self] event in broadcast(event.line) }
    }

    /// Connected clients.
    public var clientCount: Int { sessions.count }
    /// Clients that receive events.
    public var subscriberCount: Int { sessions.values.filter(\.subscribed).count }

    /// When the server next needs the loop without input: now while requests wait their turn,
    /// the idle sweep, the listener's rest after EMFILE.
    public var nextDeadline: Instant? {
        var earliest = ready.isEmpty && backlogged.isEmpty && !readsDeferred ? nil : Instant.zero
        earliest = Instant.earliest(earliest, listenerResumes)
        return Instant.earliest(earliest, nextIdleSweep)
    }

    /// Runs the requests whose turn it is and what falls due at `now`.
    public func advance(to now: Instant) {
        if let resumes = listenerResumes, resumes <= now {
            listenerResumes = nil
            service.loop.watch(listener) { [unowned self] in acceptClients() }
        }
        if let sweep = nextIdleSweep, sweep <= now { closeIdleClients(now: now) }
        runTurn()
        readsLeft = limits.requestsPerTurn
        readsDeferred = false
    }

    /// Closes every client and the socket, and removes the socket file.
    public func close() {
        for descriptor in sessions.keys.sorted() { drop(descriptor) }
        service.loop.unwatch(listener)
        Glibc.close(listener)
        if reserveDescriptor >= 0 { Glibc.close(reserveDescriptor) }
        unlink(path)
    }

    // MARK: - Accepting

    private func acceptClients() {
        // A bounded number per wake-up: thousands connecting at once do not hold the loop.
        for _ in 0..<limits.requestsPerTurn {
            switch valueOrErrno({ UnixSocket.accept(listener) }) {
            case .success(let descriptor):
                admit(descriptor)
            case .failure(let error):
                switch error.rawValue {
                case EMFILE, ENFILE, ENOBUFS, ENOMEM: outOfDescriptors()
                case ECONNABORTED: continue
                default: break  // EAGAIN: none left
                }
                return
            }
        }
    }

    /// The process is out of descriptors: the held-back one answers one waiting client, and the
    /// listener rests so the loop does not spin on a listener it cannot accept from.
    private func outOfDescriptors() {
        if reserveDescriptor >= 0 {
            Glibc.close(reserveDescriptor)
            // Each refused client's descriptor is closed again at once: the one freed serves all
            // that are waiting (a bounded number of them per wake-up).
            for _ in 0..<limits.requestsPerTurn {
                let descriptor = UnixSocket.accept(listener)
                guard descriptor >= 0 else { break }
                refuse(descriptor, "too many clients: the daemon is out of file descriptors; try again later")
            }
            reserveDescriptor = open("/dev/null", O_RDONLY | O_CLOEXEC)
        }
        if listenerResumes == nil {
            service.loop.unwatch(listener)
            listenerResumes = service.loop.clock.now + limits.acceptBackoff
        }
    }

    private func refuse(_ descriptor: CInt, _ message: String) {
        refuse(descriptor, CommandRefusal(.busy, message))
    }

    private func refuse(_ descriptor: CInt, _ refusal: CommandRefusal) {
        let line = APIReply.failure(id: nil, refusal) + "\n"
        _ = line.withCString { send(descriptor, $0, strlen($0), Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        Glibc.close(descriptor)
    }

    private func admit(_ descriptor: CInt) {
        let credentials = UnixSocket.peerCredentials(descriptor)
        guard let role = access.role(of: credentials) else {
            refuse(descriptor, access.refusalToConnect(credentials))
            return
        }
        let user = credentials?.user
        if let user, user != 0, user != ownUser,
           sessions.values.lazy.filter({ $0.user == user }).count >= limits.clientsPerUser {
            refuse(descriptor, "too many clients for user \(user) (\(limits.clientsPerUser)); try again later")
            return
        }
        if sessions.count >= limits.maximumClients, !closeLongestIdleClient() {
            refuse(descriptor, "too many clients (\(limits.maximumClients)); try again later")
            return
        }
        let now = service.loop.clock.now
        let session = Session(descriptor: descriptor, credentials: credentials, role: role,
                              eventLimit: limits.subscriberQueueLimit, now: now)
        sessions[descriptor] = session
        if nextIdleSweep == nil { nextIdleSweep = now + limits.idleTimeout }
        service.loop.watch(descriptor, events: Int16(POLLIN)) { [unowned self] events in
            handle(events, on: descriptor)
        }
    }

    /// Whether a client may be closed to make room: not subscribed, owing and asking nothing.
    private func isIdle(_ session: Session) -> Bool {
        !session.subscribed && session.output.isEmpty && !session.isReady && session.consumed == session.input.count
    }

    /// Makes room for a new client by closing the one idle longest; false when none is idle.
    private func closeLongestIdleClient() -> Bool {
        guard let oldest = sessions.values.filter(isIdle).min(by: { $0.lastActive < $1.lastActive }) else { return false }
        refuse(oldest.descriptor, "closing this idle connection: the daemon is full (\(limits.maximumClients) clients) and a new client came")
        forget(oldest.descriptor)
        return true
    }

    private func closeIdleClients(now: Instant) {
        for session in Array(sessions.values) where isIdle(session) && now - session.lastActive >= limits.idleTimeout {
            let seconds = Int(limits.idleTimeout.rawValue / 1_000_000_000)
            refuse(session.descriptor, "closing this connection: idle for \(seconds) s (subscribe to stay connected)")
            forget(session.descriptor)
        }
        nextIdleSweep = sessions.isEmpty ? nil : now + Nanoseconds(rawValue: limits.idleTimeout.rawValue / 4)
    }

    // MARK: - Reading and running requests

    private func handle(_ events: Int16, on descriptor: CInt) {
        guard let session = sessions[descriptor] else { return }
        if events & Int16(POLLOUT) != 0 { flush(session) }
        guard sessions[descriptor] != nil else { return }
        if events & Int16(POLLIN) != 0, !session.readClosed {
            // A bounded number of reads per wake-up (poll reports the others again next time):
            // hundreds of clients sending at once do not make one long wake-up.
            guard readsLeft > 0 else {
                readsDeferred = true
                return
            }
            readsLeft -= 1
            read(session)
        } else if events & Int16(POLLERR | POLLHUP) != 0 {
            // Gone: nothing more can be written to it, but what it sent is still read (when its
            // turn comes) and every whole line runs.
            session.stopWriting()
            if !session.readClosed, !session.hasLine { read(session) }
        }
        settle(session)
    }

    /// One read; the lines it completes run in turn (``runTurn()``), never here.
    private func read(_ session: Session) {
        let count: Int
        switch valueOrErrno({ recv(session.descriptor, &readBuffer, readBuffer.count, 0) }) {
        case .success(let received): count = received
        case .failure(.wouldBlock): return
        case .failure:
            session.readClosed = true
            session.stopWriting()
            return
        }
        if count == 0 {
            session.readClosed = true
            return
        }
        session.lastActive = service.loop.clock.now
        if session.consumed > 0 {
            session.input.removeFirst(session.consumed)
            session.consumed = 0
        }
        session.input.append(contentsOf: readBuffer[0..<count])
        session.lineCount += readBuffer.withUnsafeBytes { Self.newlines(in: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        if !session.hasLine, session.input.count > limits.maximumLineBytes { refuseLongLine(session) }
    }

    /// How many newlines `bytes` holds (memchr: fast in a debug build too).
    private static func newlines(in bytes: UnsafeRawBufferPointer) -> Int {
        guard var cursor = bytes.baseAddress else { return 0 }
        let end = cursor + bytes.count
        var found = 0
        while cursor < end, let hit = memchr(cursor, Int32(UInt8(ascii: "\n")), end - cursor) {
            found += 1
            cursor = UnsafeRawPointer(hit) + 1
        }
        return found
    }

    private func refuseLongLine(_ session: Session) {
        session.input = []
        session.consumed = 0
        session.lineCount = 0
        enqueueReply(APIReply.failure(id: nil, CommandRefusal(.invalidRequest, "request line longer than \(limits.maximumLineBytes) bytes; closing the connection")),
                     to: session)
        session.readClosed = true
        session.condemned = true
    }

    /// Whether the client's next request may run now: one waits and its replies are being taken.
    private func mayRun(_ session: Session) -> Bool {
        !session.condemned && session.hasLine && (session.writeClosed || session.output.replyBytes <= limits.replyBacklogLimit)
    }

    /// Puts the client in the turn order, watches what it needs, closes it when it is done.
    private func settle(_ session: Session) {
        guard sessions[session.descriptor] != nil else { return }
        if mayRun(session), !session.isReady {
            session.isReady = true
            // More requests at once than one turn's share: a pipeline, which waits behind
            // clients whose requests fit in one turn.
            if session.lineCount > limits.requestsPerClientPerTurn {
                backlogged.append(session)
            } else {
                ready.append(session)
            }
        }
        if session.readClosed || session.condemned, !session.isReady, !mayRun(session),
           session.output.isEmpty || session.writeClosed,
           !session.subscribed || session.condemned || session.writeClosed {
            // Done: nothing left to run or to write (a subscriber that stopped sending still listens).
            drop(session.descriptor)
            return
        }
        var events: Int16 = 0
        if !session.output.isEmpty, !session.writeClosed { events |= Int16(POLLOUT) }
        // Read only when the last read's requests have all run and the replies are being taken.
        if !session.readClosed, !session.hasLine, session.output.replyBytes <= limits.replyBacklogLimit { events |= Int16(POLLIN) }
        service.loop.setEvents(events, for: session.descriptor)
    }

    /// Runs waiting requests in turn: a few per client, a bounded number in all; the rest wait
    /// for the next turn, which comes as soon as the loop has looked at its inputs again.
    private func runTurn() {
        var budget = limits.requestsPerTurn
        let fresh = ready
        ready.removeAll(keepingCapacity: true)
        var turns = backlogged.count
        var served = 0
        while served < fresh.count, budget > 0 {
            serve(fresh[served], budget: &budget)
            served += 1
        }
        // Fresh clients the budget did not reach keep their place at the front.
        ready.insert(contentsOf: fresh[served...], at: 0)
        while budget > 0, turns > 0, !backlogged.isEmpty {
            turns -= 1
            serve(backlogged.removeFirst(), budget: &budget)
        }
    }

    /// Runs up to ``Limits/requestsPerClientPerTurn`` of `session`'s requests.
    private func serve(_ session: Session, budget: inout Int) {
        session.isReady = false
        guard sessions[session.descriptor] != nil else { return }
        var ran = 0
        while ran < limits.requestsPerClientPerTurn, budget > 0, mayRun(session) {
            runNextLine(of: session)
            ran += 1
            budget -= 1
        }
        if session.input.count == session.consumed {
            session.input.removeAll(keepingCapacity: session.input.count <= 4096)
            session.consumed = 0
        }
        if sessions[session.descriptor] != nil {
            // Still holding requests after its share: it waits behind clients that hold none.
            if mayRun(session) {
                session.isReady = true
                backlogged.append(session)
            }
            flush(session)
        }
    }

    private func runNextLine(of session: Session) {
        guard let newline = session.input[session.consumed...].firstIndex(of: UInt8(ascii: "\n")) else { return }
        let line = session.input[session.consumed..<newline]
        session.consumed = newline + 1
        session.lineCount -= 1
        guard line.count <= limits.maximumLineBytes else {
            refuseLongLine(session)
            return
        }
        request(line, from: session)
    }

    private func request(_ line: ArraySlice<UInt8>, from session: Session) {
        var line = line
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return }
        requestsRun += 1
        switch APISocketRequest.parse(line) {
        case .failure(let error):
            enqueueReply(APIReply.failure(id: error.id, CommandRefusal(.invalidRequest, error.message)), to: session)
        case .success(.subscribe(let id)):
            // Events are the socket's to deliver, not a command of the daemon's; every role may follow them.
            session.subscribed = true
            enqueueReply(APIReply.success(id: id), to: session)
        case .success(.command(let request)):
            // Checked here, in the transport, where the peer is known: execute() serves every
            // transport and knows no clients.
            if let refusal = access.refusal(of: request.command, for: session.role) {
                enqueueReply(APIReply.failure(id: request.id, refusal), to: session)
                return
            }
            enqueueReply(APIReply.line(id: request.id, service.execute(request)), to: session)
        }
    }

    // MARK: - Writing

    private func broadcast(_ line: String) {
        for session in sessions.values where session.subscribed && !session.writeClosed {
            session.output.appendEvent(line)
            if flush(session) { wroteEventLine = true }
        }
    }

    /// Whether an event line went to a subscriber since the last call (then false again): the
    /// daemon lets a subscriber it woke run (``EventLoop/yieldToWokenReader()``).
    public func takeEventLineWritten() -> Bool {
        defer { wroteEventLine = false }
        return wroteEventLine
    }

    private func enqueueReply(_ line: String, to session: Session) {
        guard !session.writeClosed else { return }
        session.output.appendReply(line)
    }

    /// Writes what the socket takes now; the rest waits for POLLOUT. Returns whether it wrote any.
    @discardableResult
    private func flush(_ session: Session) -> Bool {
        var wrote = false
        while !session.writeClosed {
            let sent = session.output.withNextBytes { bytes in
                valueOrErrno { send(session.descriptor, bytes.baseAddress!, bytes.count, Int32(MSG_NOSIGNAL)) }
            }
            guard let sent else { break }
            guard case .success(let written) = sent else {
                // Full for now (EAGAIN), or gone: what it owes is forgotten, what it sent and is whole still runs.
                if case .failure(let error) = sent, error != .wouldBlock { session.stopWriting() }
                break
            }
            session.output.consume(written)
            session.lastActive = service.loop.clock.now
            wrote = true
        }
        settle(session)
        return wrote
    }

    private func drop(_ descriptor: CInt) {
        guard sessions[descriptor] != nil else { return }
        forget(descriptor)
        Glibc.close(descriptor)
    }

    /// Stops serving `descriptor` (closed by the caller).
    private func forget(_ descriptor: CInt) {
        guard let session = sessions.removeValue(forKey: descriptor) else { return }
        service.loop.unwatch(descriptor)
        if session.isReady {
            ready.removeAll { $0 === session }
            backlogged.removeAll { $0 === session }
        }
        if sessions.isEmpty { nextIdleSweep = nil }
    }
}

extension APIServer: ServiceTransport {
    /// Who is listening: a script can wait until its `events` follower is subscribed before it
    /// presses, instead of sleeping and hoping the follower has started.
    public func report(into status: inout ServiceStatus) {
        status.clients = ServiceStatus.Clients(connected: clientCount, subscribed: subscriberCount)
    }

    public var statusLinePart: String? { "; API \(path)" }
}
