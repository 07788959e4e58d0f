#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CMicroHTTPD
import Dispatch
import ShutterCore
import ShutterService
import ShutterSystem

/// Live view over HTTP: libmicrohttpd run inside the daemon's one loop, no thread of its own.
///
/// libmicrohttpd parses HTTP; this class only routes (``HTTPRoute``), checks the token
/// (``HTTPAccessPolicy``), and hands commands to the same ``Daemon/execute(_:)`` the socket
/// uses, framing the same ``CommandResult`` as JSON with a status code. The library is polled
/// through its epoll descriptor, watched by the loop, and run again when ``nextDeadline`` says
/// (its connection timeouts). An event stream whose queue is empty is suspended, so an idle
/// viewer costs nothing, and resumed when an event comes; a viewer that stops reading loses its
/// oldest event lines (and is told how many), then is closed by the connection timeout: it
/// never makes the daemon's memory grow, nor delays a press. `/stream` viewers are suspended
/// the same way until the preview feed publishes a newer preview, which each gets once its
/// socket has taken the last one (a slow viewer skips previews); previews are made only while
/// someone watches the stream or polls `/snapshot`. Thumbnails are made off the loop.
public final class HTTPServer {
    /// A failure to set up the server: what failed, with errno, and what to do.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    /// What clients may cost the daemon. Tests make them small.
    public struct Limits: Sendable {
        /// Connections at once (the board's `http.maxClients`); see ``HTTPAdmission`` for who
        /// keeps them.
        public var maximumClients = 24
        /// Seconds a connection may make no progress: a slow request, a viewer that stopped reading.
        public var connectionTimeoutSeconds = 10
        /// How long a connection may take to send a whole request, from its accept or the end
        /// of its last response: a real client sends one at once, a slowloris never finishes.
        public var requestDeadline = Nanoseconds.seconds(10)
        /// Bytes per connection for the request line, the headers and the library's buffers:
        /// longer headers are refused (431).
        public var connectionMemoryBytes = 32 * 1024
        /// The longest command body; a longer one is refused (413).
        public var maximumBodyBytes = 16 * 1024
        /// Event lines queued for one viewer; beyond this the oldest are dropped.
        public var subscriberQueueLimit = 256
        /// How often an idle event stream gets a comment line, so a viewer that went away is
        /// found out (its write fails) and proxies keep the stream open.
        public var heartbeat = Nanoseconds.seconds(15)
        /// Each connection's kernel send buffer (`SO_SNDBUF`, inherited from the listener); nil:
        /// the kernel's autotuning. Small, a viewer that stops reading is found out sooner and
        /// the kernel holds less for it (tests make it tiny to see the daemon's queue bound).
        public var sendBufferBytes: Int?
        /// The photos on one page of `/photos/` when the request does not say (`?limit=`).
        public var photoListLimit = 50
        /// How long a listing of the photos is answered from without scanning again, when no
        /// photo was saved meanwhile and the output directory did not change (a photo removed
        /// from a shot's folder is seen within this).
        public var photoListAge = Nanoseconds.seconds(10)
        /// How long `/snapshot` waits for a preview when none is fresh (previews are made only
        /// while watched, so the first poll starts them).
        public var snapshotWait = Nanoseconds.seconds(2)
        /// How long previews go on being made after the last `/snapshot`, for a page that polls.
        public var snapshotLease = Nanoseconds.seconds(3)
        /// How long a thumbnail may take before the request is answered 503.
        public var thumbnailWait = Nanoseconds.seconds(10)
        /// Bytes of thumbnails kept.
        public var thumbnailCacheBytes = 4 << 20

        public init() {}
    }

    /// How `shutter run` asked for the server.
    public struct Configuration: Sendable {
        public var settings: HTTPSettings
        public var limits = Limits()
        /// Where the token is kept (in the state directory).
        public var tokenPath: String
        /// Whether the token is required; nil: as the settings say (``HTTPSettings/requiresToken``).
        public var requiresToken: Bool?

        public init(settings: HTTPSettings, tokenPath: String, limits: Limits = Limits()) {
            self.settings = settings
            self.tokenPath = tokenPath
            self.limits = limits
        }
    }

    /// Where the server listens, with the port the kernel chose when 0 was asked.
    public let endpoint: HTTPEndpoint
    public let limits: Limits
    private(set) var policy: HTTPAccessPolicy
    /// The token file, read again when it changes (``refreshToken()``).
    private let tokenPath: String
    private var tokenFile: HTTPToken.FileVersion?
    private var tokenFileCheckedAt: Instant?
    private let service: any ServicePort
    /// The library's daemon (set once started, at the end of init).
    private var library: OpaquePointer!
    /// The library's settings: it reads them (the logger's context) until it is stopped.
    private let settings: UnsafeMutablePointer<CMicroHTTPD_settings>
    private var epollDescriptor: CInt = -1
    /// The listening socket: this server accepts, and ``admission`` decides who gets a slot.
    private let listener: CInt
    private var admission: HTTPAdmission
    /// Whether the loop watches the listener: not while every slot is being answered or
    /// streaming (new connections wait in the listen backlog), nor for a while after running
    /// out of descriptors (``acceptResumes``).
    private var accepting = false
    /// When the listener is watched again after running out of descriptors.
    private var acceptResumes: Instant?
    /// When the library must be run again without input (its timeouts), on the loop's clock.
    private var runDue: Instant?
    /// Whether the library is running now: a stream is resumed after it returns, not inside it.
    private var running = false
    private var streams: [ObjectIdentifier: EventStream] = [:]
    /// Responses woken while the library ran: resumed when its pass returns.
    private var resumes: [SuspendableResponse] = []
    private var viewers: [ObjectIdentifier: PreviewViewer] = [:]
    private var parked: [ObjectIdentifier: ParkedRequest] = [:]
    /// Whether this server counts as a watcher of the preview feed (one for all its viewers).
    private var watchingPreviews = false
    /// The loop's bell the preview feed rings while this server watches it; made when first needed.
    private var previewBell: LoopBell?
    /// Previews numbered up to this were made before this server watched: stale for `/snapshot`.
    private var stalePreviews = 0
    /// When `/snapshot`'s pollers stop counting as watchers.
    private var snapshotLeaseEnd: Instant?
    /// The width the last `/snapshot` asked for.
    private var snapshotWidth: Int?
    private var thumbnails: ThumbnailCache
    private let thumbnailQueue = DispatchQueue(label: "shutter.http.thumbnails", qos: .utility)
    /// The last listing of the photos, with what says whether it is still current.
    private var photoListing: (listing: HTTPPhotos.Listing, generation: Int, directory: timespec?, madeAt: Instant)?
    /// Counts the photos saved: a listing made before the last one is not current.
    private var photoGeneration = 0
    private var photoScanRunning = false
    /// Runs a scan of the photos off the loop (tests hold it, to see the loop go on meanwhile).
    var runPhotoScan: (@escaping @Sendable () -> Void) -> Void
    private var nextHeartbeat: Instant?
    private var closed = false

    /// The page's link: with the token when one is required.
    public var link: String { Self.link(endpoint: endpoint, token: policy.token?.text) }

    /// The page's link at `endpoint`, with `token` when given: opening it sets the session cookie.
    public static func link(endpoint: HTTPEndpoint, token: String?) -> String {
        "http://\(endpoint)/" + (token.map { "?token=\($0)" } ?? "")
    }

    /// The token kept in the token file at `path` (as the daemon made it), or nil when it holds none.
    public static func storedToken(at path: String) -> String? { HTTPToken.stored(at: path)?.text }

    /// Whether a token is required.
    public var requiresToken: Bool { policy.token != nil }

    /// Viewers following `/events`.
    public var streamCount: Int { streams.count }
    /// Viewers of `/stream`.
    public var viewerCount: Int { viewers.count }
    /// Previews sent to the viewers of `/stream` now connected, each.
    var previewsSent: [Int] { viewers.values.map(\.sentCount) }
    /// Thumbnails kept, and their bytes.
    var thumbnailCacheUse: (count: Int, bytes: Int) { (thumbnails.count, thumbnails.byteCount) }
    /// What each viewer of `/events` is owed: event lines and bytes (tests: bounded whatever it does).
    var streamBacklogs: [(events: Int, bytes: Int)] { streams.values.map { ($0.queue.eventCount, $0.queue.byteCount) } }

    /// Binds the address, starts libmicrohttpd in external-polling mode and watches it on the
    /// daemon's loop.
    ///
    /// - Throws: ``Failure`` when the library cannot be loaded, the address is not numeric or
    ///   cannot be bound (in use, not this machine's), the token file cannot be made, or the
    ///   library refuses to start.
    ///
    /// The corresponding C functions are `socket`, `bind`, `listen` and `MHD_start_daemon`.
    public init(configuration: Configuration, service: any ServicePort) throws(Failure) {
        try Self.loadLibrary()
        self.service = service
        var limits = configuration.limits
        limits.maximumClients = configuration.settings.maxClients
        self.limits = limits
        thumbnails = ThumbnailCache(byteLimit: limits.thumbnailCacheBytes)
        let thumbnailQueue = thumbnailQueue
        runPhotoScan = { job in thumbnailQueue.async(execute: job) }
        let asked = configuration.settings.endpoint
        let token = try (configuration.requiresToken ?? configuration.settings.requiresToken) ? HTTPToken.loadOrCreate(path: configuration.tokenPath) : nil
        policy = HTTPAccessPolicy(token: token, viewWithoutToken: configuration.settings.viewWithoutToken)
        tokenPath = configuration.tokenPath
        tokenFile = token == nil ? nil : HTTPToken.fileVersion(at: configuration.tokenPath)
        let (listener, port) = try HTTPSocket.listen(asked, backlog: CInt(min(limits.maximumClients * 2, 128)),
                                                     sendBuffer: limits.sendBufferBytes)
        self.listener = listener
        admission = HTTPAdmission(capacity: limits.maximumClients, requestDeadline: limits.requestDeadline)
        endpoint = HTTPEndpoint(address: asked.address, port: port)
        settings = .allocate(capacity: 1)
        settings.initialize(to: CMicroHTTPD_settings())
        // Twice the slots: a connection let go keeps its socket until the library's next pass.
        settings.pointee.connection_limit = UInt32(limits.maximumClients * 2)
        settings.pointee.connection_timeout_seconds = UInt32(limits.connectionTimeoutSeconds)
        settings.pointee.connection_memory_limit = limits.connectionMemoryBytes
        // The C callbacks capture nothing: the server comes back through their context pointer,
        // unretained (the library is stopped before the server goes away).
        settings.pointee.handler = { context, connection, url, method, _, upload, uploadSize, request in
            let server = Unmanaged<HTTPServer>.fromOpaque(context!).takeUnretainedValue()
            return server.access(connection!, url: url, method: method, upload: upload, size: uploadSize!, request: request!)
        }
        settings.pointee.completed = { context, connection, request, _ in
            if let connection { Unmanaged<HTTPServer>.fromOpaque(context!).takeUnretainedValue().responseEnded(on: connection) }
            guard let request, let exchange = request.pointee else { return }
            Unmanaged<HTTPExchange>.fromOpaque(exchange).release()
            request.pointee = nil
        }
        settings.pointee.connection_notify = { context, connection, _, code in
            guard code == .CONNECTION_NOTIFY_CLOSED, let connection else { return }
            Unmanaged<HTTPServer>.fromOpaque(context!).takeUnretainedValue().connectionClosed(connection)
        }
        settings.pointee.log = { context, message in
            guard let context, let message else { return }
            var text = String(cString: message)
            while text.last?.isNewline == true { text.removeLast() }
            Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue().libraryLog(text)
        }
        let context = Unmanaged.passUnretained(self).toOpaque()
        settings.pointee.handler_context = context
        settings.pointee.completed_context = context
        settings.pointee.connection_notify_context = context
        settings.pointee.log_context = context
        guard let started = CMicroHTTPD_start(settings) else {
            Glibc.close(listener)
            settings.deallocate()
            throw Failure("http \(asked): libmicrohttpd would not start (see the message above)")
        }
        library = started
        epollDescriptor = CMicroHTTPD_epoll_descriptor(started)
        guard epollDescriptor >= 0 else {
            MHD_stop_daemon(started)
            Glibc.close(listener)
            settings.deallocate()
            throw Failure("http \(asked): libmicrohttpd has no epoll descriptor (built without epoll?)")
        }
        service.loop.watch(epollDescriptor) { [unowned self] in run() }
        resumeAccepting()
        // Weak: the daemon keeps its observers for its whole life, and this server may go first.
        service.observeEvents { [weak self] event in
            self?.broadcast(event.line)
            if event.name == "photo" { self?.photoGeneration += 1 }
        }
        scheduleRun()
    }

    /// Opens libmicrohttpd when the first server is made (`CMicroHTTPD_load`, idempotent): it is
    /// not linked, so a board without an `http` section never maps it nor GnuTLS and the rest it
    /// brings. `SHUTTER_LIBMICROHTTPD` names another file to open instead of
    /// `libmicrohttpd.so.12`; the tests point it at one that is missing.
    ///
    /// - Throws: ``Failure`` naming the library and dlerror's text (not installed, or a function missing).
    static func loadLibrary() throws(Failure) {
        var error = [CChar](repeating: 0, count: 512)
        guard CMicroHTTPD_load(getenv("SHUTTER_LIBMICROHTTPD"), &error, error.count) == 0 else {
            let text = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw Failure("http: cannot load libmicrohttpd, the HTTP server library (Debian's libmicrohttpd12, libmicrohttpd12t64 on Debian 13): \(text)")
        }
    }

    /// When the server next needs the loop without input: the library's timeout, a resumed
    /// stream, the heartbeat, the end of the snapshot pollers' lease, a parked request's
    /// deadline, a connection's deadline to complete its request, the listener's rest.
    public var nextDeadline: Instant? {
        let earliest = [nextHeartbeat, snapshotLeaseEnd, admission.nextDeadline, acceptResumes].reduce(runDue, Instant.earliest)
        return parked.values.reduce(earliest) {
            Instant.earliest($0, $1.deadline)
        }
    }

    /// Runs the library when its time has come, the heartbeat, and the deadlines.
    public func advance(to now: Instant) {
        guard !closed else { return }
        if let due = nextHeartbeat, due <= now { heartbeat(now: now) }
        if let end = snapshotLeaseEnd, end <= now {
            snapshotLeaseEnd = nil
            updatePreviewWatching()
        }
        for request in parked.values where request.deadline <= now {
            request.exchange.waitedOut = true
            wake(request)
        }
        if let resumes = acceptResumes, resumes <= now {
            acceptResumes = nil
            resumeAccepting()
        }
        let overdue = admission.overdue(at: now)
        for descriptor in overdue { letGo(descriptor) }
        if !overdue.isEmpty { runDue = now }
        if let due = runDue, due <= now { run() }
    }

    /// Ends every event stream, closes every connection and the listening socket.
    ///
    /// The corresponding C function is `MHD_stop_daemon` (after `MHD_resume_connection` for
    /// every suspended stream: stopping with one suspended is undefined).
    public func close() {
        guard !closed else { return }
        closed = true
        for stream in streams.values { stream.ended = true }
        for viewer in viewers.values { viewer.ended = true }
        for request in parked.values { request.exchange.waitedOut = true }
        let suspended: [SuspendableResponse] = Array(streams.values) + Array(viewers.values) + Array(parked.values)
        for response in suspended { resume(response) }
        resumes.removeAll()
        snapshotLeaseEnd = nil
        viewers.removeAll()
        updatePreviewWatching()
        service.loop.unwatch(epollDescriptor)
        pauseAccepting()
        _ = MHD_run(library)
        MHD_stop_daemon(library)
        Glibc.close(listener)
        settings.deallocate()
    }

    /// Where the server's messages go: the daemon's log (standard error); a test gives its own
    /// sink rather than capture the process's standard error, which every test shares.
    var log: (_ message: String, _ priority: Log.Priority) -> Void = Log.write
    /// Messages logged in the current minute, and those left out.
    private var logWindow: (start: Instant, logged: Int, suppressed: Int)?
    /// Messages logged per minute at most: each malformed request or wrong token makes one,
    /// and a flood of them must not flood the journal.
    static let libraryLogLimit = 10

    /// One of libmicrohttpd's messages. A viewer of a stream that leaves is how every stream
    /// ends: the library's complaint that it could not send to it is not logged.
    fileprivate func libraryLog(_ text: String) {
        if text.contains("The socket is no longer available for sending") { return }
        note(text)
    }

    /// Logs `text`, rate-limited.
    private func note(_ text: String, priority: Log.Priority = .info) {
        let now = service.loop.clock.now
        if let window = logWindow, now - window.start < .seconds(60) {
            guard window.logged < Self.libraryLogLimit else {
                logWindow?.suppressed += 1
                return
            }
            logWindow?.logged += 1
        } else {
            if let suppressed = logWindow?.suppressed, suppressed > 0 {
                log("shutter: http: \(suppressed) more messages in the last minute were not logged", .info)
            }
            logWindow = (now, 1, 0)
        }
        log("shutter: http: \(text)", priority)
    }

    // MARK: - Running the library

    /// One pass of the library over its ready connections; then the streams resumed meanwhile.
    ///
    /// The corresponding C function is `MHD_run`.
    private func run() {
        guard !closed else { return }
        running = true
        _ = MHD_run(library)
        running = false
        let waiting = resumes
        resumes.removeAll(keepingCapacity: true)
        for stream in waiting { resume(stream) }
        scheduleRun()
        // A resumed stream is served on the next pass, at once.
        if !waiting.isEmpty { runDue = service.loop.clock.now }
    }

    // MARK: - Connections

    /// Accepts every connection waiting, and gives each a slot or refuses it (``HTTPAdmission``).
    ///
    /// The corresponding C functions are `accept` and `MHD_add_connection`.
    private func acceptConnections() {
        while !closed {
            guard admission.hasRoom else {
                pauseAccepting()
                return
            }
            // The connections let go keep their sockets, and their places in the library's own
            // table (twice the slots), until its next pass closes them: make that pass before
            // the table is full, or the library would refuse the next connection itself.
            if admission.connections.count >= limits.maximumClients * 2 {
                run()
                guard admission.connections.count < limits.maximumClients * 2 else {
                    runDue = service.loop.clock.now
                    return
                }
            }
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let accepted = withUnsafeMutablePointer(to: &address) { address in
                address.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                    valueOrErrno { UnixSocket.accept(listener, address: socketAddress, length: &length) }
                }
            }
            guard case .success(let descriptor) = accepted else {
                guard case .failure(let failure) = accepted else { return }
                let error = failure.rawValue
                switch error {
                case EAGAIN, EWOULDBLOCK: return
                case ECONNABORTED: continue
                case EMFILE, ENFILE:
                    // Out of descriptors: the waiting connection stays readable, so the listener
                    // rests (the loop would spin on it) until a connection may have closed.
                    note("cannot accept a connection: \(Errno(rawValue: error)); resting 100 ms", priority: .warning)
                    pauseAccepting()
                    acceptResumes = service.loop.clock.now + .milliseconds(100)
                    return
                default:
                    note("cannot accept a connection: \(Errno(rawValue: error))", priority: .warning)
                    return
                }
            }
            if let release = admission.arrive(descriptor, at: service.loop.clock.now) { letGo(release) }
            let added = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { MHD_add_connection(library, descriptor, $0, length) }
            }
            // Refused, the library has closed the socket already.
            if added != MHD_Result.YES { admission.closed(descriptor) }
            runDue = service.loop.clock.now
        }
    }

    /// Stops watching the listener: new connections wait in the listen backlog.
    private func pauseAccepting() {
        guard accepting else { return }
        accepting = false
        service.loop.unwatch(listener)
    }

    /// Watches the listener again, unless resting after running out of descriptors; the loop
    /// reports it at once if connections wait.
    private func resumeAccepting() {
        guard !accepting, !closed, acceptResumes == nil else { return }
        accepting = true
        service.loop.watch(listener) { [unowned self] in acceptConnections() }
    }

    /// Lets go of a connection that has not completed a request: its socket is shut down, which
    /// the library reads as the client leaving and closes it on its next pass. (The socket is
    /// the library's; shutting it down, unlike closing it, leaves its descriptor to the library.)
    ///
    /// The corresponding C function is `shutdown`.
    private func letGo(_ descriptor: CInt) {
        shutdown(descriptor, CInt(SHUT_RDWR))
    }

    /// A response ended on `connection`: it now waits for its next request.
    fileprivate func responseEnded(on connection: OpaquePointer) {
        admission.responseEnded(CMicroHTTPD_connection_descriptor(connection), at: service.loop.clock.now)
        resumeAccepting()
    }

    /// The library closed `connection`: its slot is free.
    fileprivate func connectionClosed(_ connection: OpaquePointer) {
        admission.closed(CMicroHTTPD_connection_descriptor(connection))
        resumeAccepting()
    }

    private func scheduleRun() {
        let milliseconds = CMicroHTTPD_timeout_milliseconds(library)
        runDue = milliseconds < 0 ? nil : service.loop.clock.now + .milliseconds(Double(min(milliseconds, 86_400_000)))
    }

    // MARK: - Requests

    /// libmicrohttpd's access handler: called once with the headers, then with each piece of
    /// the body, then once more with none.
    private func access(_ connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?,
                        upload: UnsafePointer<CChar>?, size: UnsafeMutablePointer<Int>,
                        request: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> MHD_Result {
        if let existing = request.pointee {
            let exchange = Unmanaged<HTTPExchange>.fromOpaque(existing).takeUnretainedValue()
            if size.pointee > 0 {
                // A body after the answer (a refused POST, a GET with a body) is read and dropped.
                if let upload, !exchange.answered {
                    exchange.receive(UnsafeRawBufferPointer(start: upload, count: size.pointee), limit: limits.maximumBodyBytes)
                }
                size.pointee = 0
                return .YES
            }
            // Answered already: a response is queued once.
            return exchange.answered ? .YES : answer(exchange, on: connection)
        }
        let method = method.map { String(cString: $0) } ?? ""
        let path = url.map { String(cString: $0) } ?? ""
        let exchange = HTTPExchange(method: method, path: path, route: HTTPRoute(method: method, path: path))
        request.pointee = Unmanaged.passRetained(exchange).toOpaque()
        if let refusal = refusalBeforeBody(exchange, on: connection) {
            exchange.answered = true
            admission.requestComplete(CMicroHTTPD_connection_descriptor(connection))
            return refusal
        }
        // A command, and the login form, wait for their body; everything else answers now.
        if case .command = exchange.route { return .YES }
        if exchange.route == .login { return .YES }
        return answer(exchange, on: connection)
    }

    /// The token, the host, the route's own refusal, and a command's content type and length:
    /// answered before the body is read.
    private func refusalBeforeBody(_ exchange: HTTPExchange, on connection: OpaquePointer) -> MHD_Result? {
        let route = exchange.route
        let header = { (name: String) in Self.value(connection, .HEADER_KIND, name) }
        var presented: [String] = []
        if let authorization = header("Authorization"), authorization.lowercased().hasPrefix("bearer ") {
            presented.append(String(authorization.dropFirst(7)).trimmingSpaces)
        }
        let session = Self.value(connection, .COOKIE_KIND, Self.cookieName)
        refreshToken()
        var linkToken: String?
        if route == .page, let query = Self.value(connection, .GET_ARGUMENT_KIND, "token") {
            linkToken = query
            presented.append(query)
        }
        // Who asks, read only when a token is shown: it is what guessing is counted by.
        let peer = presented.isEmpty ? nil : Self.peer(of: connection)
        if let token = policy.token, let peer, session.map(token.matchesSession) != true,
           let wait = wrongTokens.slowed(peer, at: service.loop.clock.now) {
            return refuseSlowed(connection, route: route, wait: wait)
        }
        switch policy.decide(route, presented: presented, session: session, host: header("Host")) {
        case .allowed:
            if let linkToken, let token = policy.token, token.matches(linkToken) {
                // The link's token becomes a session cookie, and the address bar loses it.
                return respond(connection, status: 303, type: "text/plain; charset=utf-8", body: "see /\n", headers: [
                    ("Location", "/"), ("Set-Cookie", sessionCookie(token)),
                ])
            }
        case .forbiddenHost:
            return refuse(connection, HTTPRefusal(status: 403, message: "this server answers only to localhost and loopback addresses; bind another address (with its token) to reach it by another name"))
        case .unauthorized:
            if let peer { noteWrongToken(exchange, from: peer) }
            if route == .page {
                return respond(connection, status: 401, type: "text/html; charset=utf-8", body: HTTPPages.login(wrongToken: linkToken != nil))
            }
            return refuse(connection, HTTPRefusal(status: 401, message: "this server needs its token: open the link shutter printed, or send 'Authorization: Bearer TOKEN'"),
                          headers: [("WWW-Authenticate", "Bearer realm=\"shutter\"")])
        }
        if case .refused(let refusal) = route { return refuse(connection, refusal) }
        if route == .login {
            let type = header("Content-Type")?.split(separator: ";").first.map { String($0).trimmingSpaces.lowercased() }
            guard type == "application/x-www-form-urlencoded" else {
                return refuse(connection, HTTPRefusal(status: 415, message: "the login form's body is 'application/x-www-form-urlencoded': token=…"))
            }
            return nil
        }
        guard case .command = route else { return nil }
        let type = header("Content-Type")?.split(separator: ";").first.map { String($0).trimmingSpaces.lowercased() }
        guard type == "application/json" else {
            return refuse(connection, HTTPRefusal(status: 415, message: "a command's body is JSON: send 'Content-Type: application/json'"))
        }
        if let length = header("Content-Length").flatMap({ Int($0.trimmingSpaces) }), length > limits.maximumBodyBytes {
            return refuse(connection, HTTPRefusal(status: 413, message: "a command's body is at most \(limits.maximumBodyBytes) bytes"))
        }
        return nil
    }

    /// Answers a request whose headers (and, for a command, body) have all come.
    private func answer(_ exchange: HTTPExchange, on connection: OpaquePointer) -> MHD_Result {
        exchange.answered = true
        admission.requestComplete(CMicroHTTPD_connection_descriptor(connection))
        switch exchange.route {
        case .page:
            return respond(connection, status: 200, type: "text/html; charset=utf-8", body: HTTPPages.liveView)
        case .favicon:
            return respond(connection, status: 200, type: "image/svg+xml", body: HTTPPages.favicon,
                           headers: [("Cache-Control", "public, max-age=86400")])
        case .stream, .snapshot:
            let width: Int?
            switch HTTPRoute.previewWidth(Self.value(connection, .GET_ARGUMENT_KIND, "width")) {
            case .success(let asked): width = asked
            case .failure(let refusal): return refuse(connection, refusal)
            }
            return exchange.route == .stream ? startPreviewStream(width: width, on: connection)
                : answerSnapshot(exchange, width: width, on: connection)
        case .thumbnail(let name):
            return answerThumbnail(name, exchange, on: connection)
        case .status:
            return reply(APIRequest(id: nil, command: .status), on: connection)
        case .command(let name):
            guard !exchange.bodyTooLarge else {
                return refuse(connection, HTTPRefusal(status: 413, message: "a command's body is at most \(limits.maximumBodyBytes) bytes"))
            }
            switch Self.request(name, body: exchange.body) {
            case .success(let request): return reply(request, on: connection)
            case .failure(let error):
                return respond(connection, status: 400, type: Self.json,
                               body: APIReply.failure(id: error.id, CommandRefusal(.invalidRequest, error.message)) + "\n")
            }
        case .events:
            return startStream(on: connection)
        case .photoList:
            return answerPhotoList(exchange, on: connection)
        case .photo(let name):
            return sendPhoto(name, on: connection)
        case .login:
            return answerLogin(exchange, on: connection)
        case .refused(let refusal):
            return refuse(connection, refusal)
        }
    }

    // MARK: - The token

    /// Wrong tokens shown lately: a guesser is slowed, and each is logged.
    private var wrongTokens = HTTPWrongTokens()

    /// Takes a new token written into the token file while the daemon runs (looked at once a
    /// second at most, when a request comes): the old token and every session made with it open
    /// nothing from then on. A file removed or damaged changes nothing until the next start.
    private func refreshToken() {
        guard policy.token != nil else { return }
        let now = service.loop.clock.now
        if let checked = tokenFileCheckedAt, now - checked < .seconds(1) { return }
        tokenFileCheckedAt = now
        guard let version = HTTPToken.fileVersion(at: tokenPath), version != tokenFile else { return }
        tokenFile = version
        guard let token = HTTPToken.stored(at: tokenPath), token != policy.token else { return }
        policy.token = token
        note("the HTTP token file \(tokenPath) holds a new token: the old one, and the sessions made with it, open nothing now", priority: .notice)
    }

    /// The cookie that keeps a browser's session: ``HTTPToken/session``, never the token.
    private func sessionCookie(_ token: HTTPToken) -> String {
        "\(Self.cookieName)=\(token.session); Path=/; HttpOnly; SameSite=Strict; Max-Age=\(30 * 86_400)"
    }

    /// `POST /login`: the form's token, checked; right, the session cookie and the page.
    private func answerLogin(_ exchange: HTTPExchange, on connection: OpaquePointer) -> MHD_Result {
        guard let token = policy.token else {
            return respond(connection, status: 303, type: "text/plain; charset=utf-8", body: "see /\n", headers: [("Location", "/")])
        }
        let peer = Self.peer(of: connection)
        if let wait = wrongTokens.slowed(peer, at: service.loop.clock.now) {
            return refuseSlowed(connection, route: .login, wait: wait)
        }
        let given = HTTPForm.value(of: "token", in: exchange.body) ?? ""
        guard token.matches(given) else {
            noteWrongToken(exchange, from: peer)
            return respond(connection, status: 401, type: "text/html; charset=utf-8", body: HTTPPages.login(wrongToken: true))
        }
        return respond(connection, status: 303, type: "text/plain; charset=utf-8", body: "see /\n", headers: [
            ("Location", "/"), ("Set-Cookie", sessionCookie(token)),
        ])
    }

    private func noteWrongToken(_ exchange: HTTPExchange, from peer: HTTPWrongTokens.Peer) {
        let count = wrongTokens.record(from: peer, at: service.loop.clock.now)
        note("a wrong token for \(exchange.method) \(exchange.path.prefix(80)) from \(Self.describe(peer)) (\(count) from there in the last minute)",
             priority: .warning)
    }

    /// Who `connection` comes from (``HTTPWrongTokens/Peer``).
    private static func peer(of connection: OpaquePointer) -> HTTPWrongTokens.Peer {
        var bytes = [UInt8](repeating: 0, count: 8)
        let count = Int(CMicroHTTPD_connection_peer(connection, &bytes))
        return Array(bytes.prefix(count))
    }

    /// An address as a log line shows it: `192.0.2.7`, or an IPv6 network `2001:db8:0:1::/64`.
    private static func describe(_ peer: HTTPWrongTokens.Peer) -> String {
        switch peer.count {
        case 4: return peer.map(String.init).joined(separator: ".")
        case 8: return stride(from: 0, to: 8, by: 2).map { String(UInt16(peer[$0]) << 8 | UInt16(peer[$0 + 1]), radix: 16) }.joined(separator: ":") + "::/64"
        default: return "an unknown address"
        }
    }

    /// 429 to a request that shows a token while guessing is slowed.
    private func refuseSlowed(_ connection: OpaquePointer, route: HTTPRoute, wait: Nanoseconds) -> MHD_Result {
        let seconds = String(max(1, Int(wait.milliseconds / 1000) + 1))
        if route == .page || route == .login {
            return respond(connection, status: 429, type: "text/html; charset=utf-8", body: HTTPPages.login(wrongToken: true, slowed: true),
                           headers: [("Retry-After", seconds)])
        }
        return refuse(connection, HTTPRefusal(status: 429, message: "\(HTTPWrongTokens.limit) wrong tokens in the last minute: tokens are not checked for \(seconds) s"),
                      headers: [("Retry-After", seconds)])
    }

    /// The socket's request for the command `name`, its fields from the JSON object `body`
    /// (empty: none). The path names the command; a `cmd` in the body must agree.
    static func request(_ name: String, body: [UInt8]) -> Result<APIRequest, APIRequestError> {
        var members: [String: JSONValue] = [:]
        if !body.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) {
            let value: JSONValue
            do {
                value = try JSONValue.parse(body)
            } catch {
                return .failure(APIRequestError(id: nil, message: error.description))
            }
            guard case .object(let given) = value else {
                return .failure(APIRequestError(id: nil, message: "the body is a JSON object such as {\"control\":\"zoom\",\"value\":2}, not \(value.kindName)"))
            }
            members = given
        }
        if let cmd = members["cmd"], cmd != .string(name) {
            return .failure(APIRequestError(id: members["id"], message: "the path names the command (\(name)): leave 'cmd' out"))
        }
        members["cmd"] = .string(name)
        return APIRequest.parse(.object(members))
    }

    /// Runs `request` through the daemon's command model and answers with its reply line.
    private func reply(_ request: APIRequest, on connection: OpaquePointer) -> MHD_Result {
        let result = service.execute(request)
        let status: Int
        switch result {
        case .refused(let refusal): status = refusal.kind.httpStatus
        // Accepted, not saved: the photo event follows on /events.
        case .captureAccepted: status = 202
        default: status = 200
        }
        return respond(connection, status: status, type: Self.json, body: APIReply.line(id: request.id, result) + "\n")
    }

    // MARK: - Photos

    /// Sends the regular file `name` of the output directory; refuses symbolic links and
    /// anything else (the name is already a plain file name, ``HTTPRoute/refusal(ofPhotoName:)``).
    ///
    /// The corresponding C functions are `openat` (with `O_NOFOLLOW`) and `MHD_create_response_from_fd`.
    private func sendPhoto(_ name: String, on connection: OpaquePointer) -> MHD_Result {
        guard let descriptor = HTTPPhotos.open(name, in: service.board.output.directory) else {
            return refuse(connection, .notFound("no photo \(name.prefix(80))"))
        }
        var info = stat()
        fstat(descriptor, &info)
        guard let response = MHD_create_response_from_fd(Int(info.st_size), descriptor) else {
            Glibc.close(descriptor)
            return .NO
        }
        MHD_add_response_header(response, "Content-Type", HTTPPhotos.contentType(of: name))
        MHD_add_response_header(response, "Cache-Control", "private, max-age=3600")
        MHD_add_response_header(response, "X-Content-Type-Options", "nosniff")
        let result = MHD_queue_response(connection, 200, response)
        MHD_destroy_response(response)
        return result
    }

    // MARK: - Event streams

    /// One viewer of `/events`: its bounded queue.
    final class EventStream: SuspendableResponse {
        var queue: APIOutputQueue

        init(connection: OpaquePointer, queueLimit: Int, server: HTTPServer) {
            queue = APIOutputQueue(eventLimit: queueLimit, eventPrefix: "data: ", terminator: "\n\n")
            super.init(connection: connection, server: server)
        }

        /// libmicrohttpd's content reader: what is queued, up to `maximum` bytes; nothing
        /// queued suspends the connection until an event resumes it (returning 0 unsuspended
        /// would make the library call again at once).
        override func read(into buffer: UnsafeMutablePointer<CChar>, maximum: Int) -> Int {
            var copied = 0
            while copied < maximum {
                let taken = queue.withNextBytes { bytes in
                    let count = min(bytes.count, maximum - copied)
                    UnsafeMutableRawPointer(buffer + copied).copyMemory(from: bytes.baseAddress!, byteCount: count)
                    return count
                }
                guard let taken, taken > 0 else { break }
                queue.consume(taken)
                copied += taken
            }
            if copied > 0 { return copied }
            if ended { return CMicroHTTPD_CONTENT_READER_END_OF_STREAM }
            suspendFromCallback(watchingSocket: true)
            return 0
        }
    }

    private func startStream(on connection: OpaquePointer) -> MHD_Result {
        if let refusal = streamRefusal(on: connection) { return refusal }
        let stream = EventStream(connection: connection, queueLimit: limits.subscriberQueueLimit, server: self)
        // A first comment, so the headers go out now and the viewer knows it is following.
        stream.queue.appendReply(": shutter events")
        return startStreaming(stream, blockSize: 4096, type: "text/event-stream", on: connection) {
            streams[ObjectIdentifier(stream)] = stream
            if nextHeartbeat == nil { nextHeartbeat = service.loop.clock.now + limits.heartbeat }
        }
    }

    /// A 503 when the streams have all the slots they may take (the rest are kept for requests).
    private func streamRefusal(on connection: OpaquePointer) -> MHD_Result? {
        guard !admission.beginStream(CMicroHTTPD_connection_descriptor(connection)) else { return nil }
        return refuse(connection, HTTPRefusal(status: 503, message: "\(admission.streamCapacity) viewers already follow /events or /stream, the most for http.maxClients \(limits.maximumClients): the other connections are kept for requests"),
                      headers: [("Retry-After", "5")])
    }

    /// Queues a response of unknown length whose body `stream` reads, after `register` (once the
    /// library has taken it); when the library destroys it (its connection closed), ``forget(_:)``.
    ///
    /// The corresponding C functions are `MHD_create_response_from_callback` and `MHD_queue_response`.
    private func startStreaming(_ stream: SuspendableResponse, blockSize: Int, type: String, on connection: OpaquePointer,
                                register: () -> Void) -> MHD_Result {
        let context = Unmanaged.passRetained(stream).toOpaque()
        let response = MHD_create_response_from_callback(CMicroHTTPD_SIZE_UNKNOWN, blockSize, { context, _, buffer, maximum in
            Unmanaged<SuspendableResponse>.fromOpaque(context!).takeUnretainedValue().read(into: buffer!, maximum: maximum)
        }, context, { context in
            let stream = Unmanaged<SuspendableResponse>.fromOpaque(context!).takeRetainedValue()
            stream.server?.forget(stream)
        })
        guard let response else {
            Unmanaged<SuspendableResponse>.fromOpaque(context).release()
            return .NO
        }
        register()
        MHD_add_response_header(response, "Content-Type", type)
        MHD_add_response_header(response, "Cache-Control", "no-store")
        MHD_add_response_header(response, "X-Accel-Buffering", "no")
        MHD_add_response_header(response, "X-Content-Type-Options", "nosniff")
        let result = MHD_queue_response(connection, 200, response)
        MHD_destroy_response(response)
        return result
    }

    /// A stream's response was destroyed: its connection has closed.
    fileprivate func forget(_ stream: SuspendableResponse) {
        stopWatchingSocket(of: stream)
        let key = ObjectIdentifier(stream)
        streams[key] = nil
        viewers[key] = nil
        resumes.removeAll { $0 === stream }
        if streams.isEmpty { nextHeartbeat = nil }
        updatePreviewWatching()
    }

    private func stopWatchingSocket(of response: SuspendableResponse) {
        if response.watched {
            service.loop.unwatch(response.descriptor)
            response.watched = false
        }
    }

    private func broadcast(_ line: String) {
        guard !closed else { return }
        for stream in streams.values where !stream.ended {
            stream.queue.appendEvent(line)
            wake(stream)
        }
    }

    /// Resumes a suspended response: now, or when the library's pass in progress returns.
    private func wake(_ response: SuspendableResponse) {
        guard response.suspended else { return }
        if running {
            if !resumes.contains(where: { $0 === response }) { resumes.append(response) }
        } else {
            resume(response)
            runDue = service.loop.clock.now
        }
    }

    /// Hands a suspended response back to the library, which polls its socket again (so the
    /// loop stops watching it first: the library may close it on its next pass); a parked
    /// request is asked for its answer again.
    ///
    /// The corresponding C function is `MHD_resume_connection`.
    private func resume(_ response: SuspendableResponse) {
        guard response.suspended else { return }
        stopWatchingSocket(of: response)
        response.suspended = false
        parked[ObjectIdentifier(response)] = nil
        MHD_resume_connection(response.connection)
    }

    /// Watches a suspended stream's socket: readable means the viewer closed (or sent what a
    /// stream does not take); either way the stream ends, so its slot is free at once.
    func watchWhileSuspended(_ response: SuspendableResponse) {
        guard response.descriptor >= 0, !response.watched else { return }
        response.watched = true
        service.loop.watch(response.descriptor, events: Int16(POLLIN)) { [unowned self, unowned response] _ in
            guard response.suspended else { return }
            response.ended = true
            wake(response)
        }
    }

    private func heartbeat(now: Instant) {
        // Only into an empty queue: a viewer that does not read is not sent more.
        for stream in streams.values where stream.queue.isEmpty && !stream.ended {
            stream.queue.appendReply(": keepalive")
            wake(stream)
        }
        nextHeartbeat = streams.isEmpty ? nil : now + limits.heartbeat
    }

    // MARK: - Previews

    /// Starts a `/stream` viewer, `width` the width it asked for: the newest preview at once if
    /// it was made while watched (one left from before anyone watched may be minutes old), else
    /// the next; then each newer one its socket has room for.
    private func startPreviewStream(width: Int?, on connection: OpaquePointer) -> MHD_Result {
        if let refusal = streamRefusal(on: connection) { return refusal }
        let viewer = PreviewViewer(connection: connection, feed: service.liveView, width: width, server: self)
        // A block of 64 KiB: a 640-pixel preview goes to the library in one or two reads.
        return startStreaming(viewer, blockSize: 64 * 1024, type: MJPEGPart.contentType, on: connection) {
            viewers[ObjectIdentifier(viewer)] = viewer
            updatePreviewWatching()
            viewer.skipPreviews(through: stalePreviews)
        }
    }

    /// `/snapshot`: the newest preview made while this server watched; none yet, the request
    /// waits for the next (up to ``Limits/snapshotWait``). Each poll keeps previews coming for
    /// ``Limits/snapshotLease``.
    private func answerSnapshot(_ exchange: HTTPExchange, width: Int?, on connection: OpaquePointer) -> MHD_Result {
        let now = service.loop.clock.now
        snapshotLeaseEnd = now + limits.snapshotLease
        snapshotWidth = width
        updatePreviewWatching()
        if let frame = service.liveView.latest(), frame.number > stalePreviews || exchange.waitedOut {
            return respond(connection, status: 200, type: "image/jpeg", bytes: frame.jpeg, headers: [
                ("X-Timestamp", JSONLine.seconds(frame.timestamp)), ("X-Frame", String(frame.number))])
        }
        if exchange.waitedOut {
            return refuse(connection, HTTPRefusal(status: 503, message: "no preview yet: the camera gave no frame in \(limits.snapshotWait) (see /api/status)"))
        }
        park(exchange, on: connection, until: now + limits.snapshotWait)
        return .YES
    }

    /// Counts this server as one watcher of the preview feed while it has `/stream` viewers or
    /// snapshot pollers, and watches the feed's ready descriptor meanwhile.
    private func updatePreviewWatching() {
        let wanted = !closed && (!viewers.isEmpty || snapshotLeaseEnd != nil)
        service.liveView.makePreviews(width: wanted ? widestAskedWidth : nil)
        guard wanted != watchingPreviews else { return }
        watchingPreviews = wanted
        let feed = service.liveView
        if wanted {
            stalePreviews = feed.latest()?.number ?? 0
            if previewBell == nil {
                previewBell = service.loop.mailbox.makeBell { [weak self] in self?.previewReady() }
            }
            feed.ringWhenPublished(previewBell)
            feed.startWatching()
        } else {
            feed.stopWatching()
            feed.ringWhenPublished(nil)
        }
    }

    /// The widest preview a viewer or the snapshot poller asked for, nil when none asked (a viewer
    /// that did not ask wants the board's width): one width for all, so one preview per frame.
    private var widestAskedWidth: Int? {
        let pollers = snapshotLeaseEnd == nil ? [] : [snapshotWidth]
        let asked = viewers.values.map(\.width) + pollers
        guard let widest = asked.compactMap({ $0 }).max() else { return nil }
        return asked.contains(where: { $0 == nil }) ? max(widest, service.board.preview.width) : widest
    }

    /// The feed published a preview: every viewer waiting for one, and every snapshot, gets it.
    private func previewReady() {
        guard watchingPreviews else { return }  // rung before the feed let go of the bell
        for viewer in viewers.values where viewer.suspended { wake(viewer) }
        for request in parked.values where request.exchange.route == .snapshot { wake(request) }
    }

    /// Suspends a request whose answer is not ready, from inside the access handler; it is
    /// resumed when the answer is ready or at `deadline`, and the library asks for it again.
    private func park(_ exchange: HTTPExchange, on connection: OpaquePointer, until deadline: Instant) {
        exchange.answered = false
        let request = ParkedRequest(connection: connection, exchange: exchange, deadline: deadline, server: self)
        request.suspendFromCallback(watchingSocket: false)
        parked[ObjectIdentifier(request)] = request
    }

    // MARK: - Thumbnails

    /// `/thumbs/NAME`: a 320-pixel JPEG of the photo, from the cache while the file is the
    /// same, else made on the thumbnail queue (TurboJPEG's scaled decode) while the request is
    /// parked: reading and decoding a photo never runs on the loop.
    private func answerThumbnail(_ name: String, _ exchange: HTTPExchange, on connection: OpaquePointer) -> MHD_Result {
        let headers = [("Cache-Control", "private, max-age=3600")]
        switch exchange.thumbnail {
        case .success(let jpeg)?: return respond(connection, status: 200, type: "image/jpeg", bytes: jpeg, headers: headers)
        case .failure(let refusal)?: return refuse(connection, refusal)
        case nil: break
        }
        if exchange.waitedOut {
            return refuse(connection, HTTPRefusal(status: 503, message: "the thumbnail took longer than \(limits.thumbnailWait)"))
        }
        guard let descriptor = HTTPPhotos.open(name, in: service.board.output.directory) else {
            return refuse(connection, .notFound("no photo \(name.prefix(80))"))
        }
        guard let version = HTTPPhotos.version(of: descriptor) else {
            Glibc.close(descriptor)
            return refuse(connection, .notFound("no photo \(name.prefix(80))"))
        }
        if let jpeg = thumbnails.thumbnail(of: name, version: version) {
            Glibc.close(descriptor)
            return respond(connection, status: 200, type: "image/jpeg", bytes: jpeg, headers: headers)
        }
        park(exchange, on: connection, until: service.loop.clock.now + limits.thumbnailWait)
        let server = LoopBound(self), waiting = LoopBound(exchange), mailbox = service.loop.mailbox
        thumbnailQueue.async {
            let made = HTTPPhotos.thumbnail(reading: descriptor, size: Int(version.size))
            // Back on the loop; dropped only when the loop is closing, when the request is
            // answered by the server's close.
            _ = mailbox.post {
                guard let server = server.object, let exchange = waiting.object else { return }
                server.thumbnailMade(made, of: name, version: version, for: exchange)
            }
        }
        return .YES
    }

    /// A thumbnail job finished: kept, and its request answered.
    private func thumbnailMade(_ made: Result<[UInt8], HTTPRefusal>, of name: String, version: ThumbnailCache.Version,
                               for exchange: HTTPExchange) {
        if case .success(let jpeg) = made { thumbnails.keep(jpeg, of: name, version: version) }
        guard let request = parked.values.first(where: { $0.exchange === exchange }) else { return }
        exchange.thumbnail = made
        wake(request)
    }

    // MARK: - The photo list

    /// The most photos one page of `/photos/` may ask for.
    static let photoPageLimit = 500

    /// `/photos/?offset=N&limit=M`: a page of the newest photos, from the last listing while it
    /// is current, else from a scan made off the loop while the request is parked; requests that
    /// come during a scan wait for that one.
    private func answerPhotoList(_ exchange: HTTPExchange, on connection: OpaquePointer) -> MHD_Result {
        let number = { (name: String) -> Int?? in
            Self.value(connection, .GET_ARGUMENT_KIND, name).map { Int($0).flatMap { $0 >= 0 ? $0 : nil } }
        }
        let offset = number("offset"), limit = number("limit")
        guard offset != .some(nil), limit != .some(nil) else {
            return refuse(connection, HTTPRefusal(status: 400, message: "offset and limit are whole numbers of photos, 0 or more"))
        }
        if let listing = exchange.photoListing ?? currentPhotoListing() {
            let page = HTTPPhotos.page(of: listing, offset: (offset ?? 0) ?? 0,
                                       limit: min(max(1, (limit ?? limits.photoListLimit) ?? 1), Self.photoPageLimit))
            return respond(connection, status: 200, type: Self.json, body: page + "\n")
        }
        if exchange.waitedOut {
            return refuse(connection, HTTPRefusal(status: 503, message: "listing the photos took longer than \(limits.thumbnailWait)"))
        }
        park(exchange, on: connection, until: service.loop.clock.now + limits.thumbnailWait)
        startPhotoScan()
        return .YES
    }

    /// The output directory's modification time (a photo or shot folder added or removed at
    /// its top changes it).
    private var outputDirectoryChanged: timespec? {
        var info = stat()
        return stat(service.board.output.directory, &info) == 0 ? info.st_mtim : nil
    }

    /// The last listing, if no photo was saved since it was made, the output directory has not
    /// changed, and it is younger than ``Limits/photoListAge``.
    private func currentPhotoListing() -> HTTPPhotos.Listing? {
        guard let made = photoListing, made.generation == photoGeneration,
              service.loop.clock.now - made.madeAt < limits.photoListAge else { return nil }
        let now = outputDirectoryChanged
        guard now?.tv_sec == made.directory?.tv_sec, now?.tv_nsec == made.directory?.tv_nsec else { return nil }
        return made.listing
    }

    private func startPhotoScan() {
        guard !photoScanRunning else { return }
        photoScanRunning = true
        let directory = service.board.output.directory
        let generation = photoGeneration, changed = outputDirectoryChanged, startedAt = service.loop.clock.now
        let server = LoopBound(self), mailbox = service.loop.mailbox
        runPhotoScan {
            let listing = HTTPPhotos.scan(directory)
            _ = mailbox.post {
                server.object?.photosScanned(listing, generation: generation, directory: changed, madeAt: startedAt)
            }
        }
    }

    /// A scan finished: kept, and every request waiting for it answered from it.
    private func photosScanned(_ listing: HTTPPhotos.Listing, generation: Int, directory: timespec?, madeAt: Instant) {
        photoScanRunning = false
        photoListing = (listing, generation, directory, madeAt)
        for request in parked.values where request.exchange.route == .photoList {
            request.exchange.photoListing = listing
            wake(request)
        }
    }

    // MARK: - Responses

    static let json = "application/json"
    static let cookieName = "shutter_session"

    private func refuse(_ connection: OpaquePointer, _ refusal: HTTPRefusal, headers: [(String, String)] = []) -> MHD_Result {
        var headers = headers
        if let allow = refusal.allow { headers.append(("Allow", allow)) }
        return respond(connection, status: refusal.status, type: Self.json, body: refusal.json + "\n", headers: headers)
    }

    /// Queues a response with a copy of `body`.
    ///
    /// The corresponding C functions are `MHD_create_response_from_buffer_copy` (through the
    /// shim) and `MHD_queue_response`.
    private func respond(_ connection: OpaquePointer, status: Int, type: String, body: String,
                         headers: [(String, String)] = []) -> MHD_Result {
        respond(connection, status: status, type: type, bytes: Array(body.utf8), headers: headers)
    }

    /// Queues a response with a copy of `bytes`.
    private func respond(_ connection: OpaquePointer, status: Int, type: String, bytes: [UInt8],
                         headers: [(String, String)] = []) -> MHD_Result {
        guard let response = bytes.withUnsafeBytes({ CMicroHTTPD_response_copying($0.count, $0.baseAddress) }) else { return .NO }
        MHD_add_response_header(response, "Content-Type", type)
        // Nothing is kept by a browser or proxy unless the caller says so (a thumbnail).
        if !headers.contains(where: { $0.0 == "Cache-Control" }) { MHD_add_response_header(response, "Cache-Control", "no-store") }
        MHD_add_response_header(response, "X-Content-Type-Options", "nosniff")
        for (name, value) in headers { MHD_add_response_header(response, name, value) }
        let result = MHD_queue_response(connection, UInt32(status), response)
        MHD_destroy_response(response)
        return result
    }

    /// A header, cookie or query argument of the request.
    ///
    /// The corresponding C function is `MHD_lookup_connection_value`.
    private static func value(_ connection: OpaquePointer, _ kind: MHD_ValueKind, _ key: String) -> String? {
        MHD_lookup_connection_value(connection, kind, key).map { String(cString: $0) }
    }
}

/// One request in progress: what it asked for, and the body received so far (bounded).
final class HTTPExchange {
    let method: String
    let path: String
    let route: HTTPRoute
    private(set) var body: [UInt8] = []
    private(set) var bodyTooLarge = false
    /// Whether a response is queued (the library takes one per request).
    var answered = false
    /// A parked request's deadline passed (or the server is stopping): answer with what there is.
    var waitedOut = false
    /// The thumbnail made for a `/thumbs/` request off the loop.
    var thumbnail: Result<[UInt8], HTTPRefusal>?
    /// The listing scanned off the loop for a `/photos/` request.
    var photoListing: HTTPPhotos.Listing?

    init(method: String, path: String, route: HTTPRoute) {
        self.method = method
        self.path = path
        self.route = route
    }

    /// Keeps a piece of the body, or only notes that the body is too large (read and dropped,
    /// so the connection can still be answered).
    func receive(_ bytes: UnsafeRawBufferPointer, limit: Int) {
        guard !bodyTooLarge else { return }
        guard body.count + bytes.count <= limit else {
            bodyTooLarge = true
            body = []
            return
        }
        body.append(contentsOf: bytes)
    }
}

extension String {
    /// Without leading and trailing spaces and tabs (Foundation-free, for header values).
    var trimmingSpaces: String {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return String(text)
    }

    /// Without leading and trailing white space of any kind: spaces, tabs, line breaks, no-break
    /// spaces (what a copy from a terminal or a web page brings along).
    var trimmingWhitespace: String {
        var text = Substring(self)
        while text.first?.isWhitespace == true { text.removeFirst() }
        while text.last?.isWhitespace == true { text.removeLast() }
        return String(text)
    }
}

extension HTTPServer: ServiceTransport {
    public var statusLinePart: String? { "; HTTP \(endpoint)" }

    /// Where Home Assistant can fetch the node's photos: live view's address when it serves
    /// photos without a token (loopback without `requireToken`, or `viewWithoutToken`); a
    /// wildcard address is replaced by the host's name.
    public var photoBaseURL: String? {
        guard !requiresToken || policy.viewWithoutToken else { return nil }
        let wildcard = endpoint.address == "0.0.0.0" || endpoint.address == "::"
        let host = wildcard ? ProcessInfo.processInfo.hostName : endpoint.description.dropLast(":\(endpoint.port)".count).description
        return "http://\(host):\(endpoint.port)"
    }
}
