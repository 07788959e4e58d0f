#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import ShutterGPIO

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

    /// The longest request line; a longer one (without a newline) closes the connection.
    public static let maximumLineBytes = 64 * 1024
    /// Event lines queued for one subscriber; beyond this the oldest are dropped.
    public static let subscriberQueueLimit = 256
    /// Reply bytes queued for a client that sends requests but does not read: reading from it
    /// pauses above this until it reads.
    public static let replyBacklogLimit = 256 * 1024
    /// Clients at once; more are accepted and closed at once with an error line.
    public static let maximumClients = 512

    public let path: String
    private let listener: CInt
    private unowned let daemon: Daemon
    private var sessions: [CInt: Session] = [:]
    private var readBuffer = [UInt8](repeating: 0, count: 16 * 1024)

    /// A connected client.
    final class Session {
        let descriptor: CInt
        /// Bytes of a request line still without its newline.
        var input: [UInt8] = []
        /// Lines waiting to be written, oldest first; `offset` bytes of the first are written.
        var output: [(bytes: [UInt8], isEvent: Bool)] = []
        var offset = 0
        var queuedEvents = 0
        var queuedBytes = 0
        var subscribed = false
        /// Event lines dropped since the client last read; told before the next line.
        var dropped = 0
        /// The client closed its sending side: answer what is queued, then close (a subscriber stays).
        var closing = false
        /// Close once what is queued is written (a line too long).
        var condemned = false

        init(descriptor: CInt) { self.descriptor = descriptor }
    }

    /// Creates the socket at `path` and starts accepting on the daemon's loop.
    ///
    /// - Throws: ``Failure`` when another daemon answers on `path`, `path` is not a socket, or its
    ///   directory cannot be written.
    public init(path: String, daemon: Daemon) throws(Failure) {
        self.path = path
        self.daemon = daemon
        listener = try UnixSocket.listen(at: path)
        daemon.loop.watch(listener) { [unowned self] in acceptClients() }
        daemon.observeLines { [unowned self] _, line in broadcast(line) }
    }

    /// Connected clients.
    public var clientCount: Int { sessions.count }
    /// Clients that receive events.
    public var subscriberCount: Int { sessions.values.filter(\.subscribed).count }

    /// Closes every client and the socket, and removes the socket file.
    public func close() {
        for descriptor in sessions.keys.sorted() { drop(descriptor) }
        daemon.loop.unwatch(listener)
        Glibc.close(listener)
        unlink(path)
    }

    private func acceptClients() {
        while true {
            let descriptor = accept(listener, nil, nil)
            if descriptor < 0 {
                // EAGAIN: none left. EMFILE and the like: try again on the next wake, never spin here.
                return
            }
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            guard sessions.count < Self.maximumClients else {
                let line = APIReply.failure(id: nil, "too many clients (\(Self.maximumClients)); try again later") + "\n"
                _ = line.withCString { send(descriptor, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
                Glibc.close(descriptor)
                continue
            }
            let session = Session(descriptor: descriptor)
            sessions[descriptor] = session
            daemon.loop.watch(descriptor, events: Int16(POLLIN)) { [unowned self] events in
                handle(events, on: descriptor)
            }
        }
    }

    private func handle(_ events: Int16, on descriptor: CInt) {
        guard let session = sessions[descriptor] else { return }
        if events & Int16(POLLOUT) != 0 { flush(session) }
        guard sessions[descriptor] != nil else { return }
        if events & Int16(POLLIN | POLLHUP | POLLERR) != 0, !session.closing { read(session) }
        else if events & Int16(POLLERR | POLLHUP) != 0 { drop(descriptor) }
    }

    private func read(_ session: Session) {
        let count = recv(session.descriptor, &readBuffer, readBuffer.count, 0)
        if count < 0 {
            if errno == EAGAIN || errno == EINTR { return }
            drop(session.descriptor)
            return
        }
        if count == 0 {
            // The client is done sending: a line it never finished is not a request.
            session.input.removeAll()
            session.closing = true
            finishIfDone(session)
            return
        }
        var start = 0
        let chunk = readBuffer[0..<count]
        while let newline = chunk[start...].firstIndex(of: UInt8(ascii: "\n")) {
            if session.input.isEmpty {
                request(chunk[start..<newline], from: session)
            } else {
                session.input.append(contentsOf: chunk[start..<newline])
                let line = session.input
                session.input.removeAll(keepingCapacity: true)
                request(line[...], from: session)
            }
            start = newline + 1
            if sessions[session.descriptor] == nil || session.closing { return }
        }
        session.input.append(contentsOf: chunk[start...])
        if session.input.count > Self.maximumLineBytes {
            session.input = []
            enqueue(APIReply.failure(id: nil, "request line longer than \(Self.maximumLineBytes) bytes; closing the connection"),
                    isEvent: false, to: session)
            session.closing = true
            session.condemned = true
            finishIfDone(session)
            return
        }
        // A client that sends requests and does not read its replies: stop reading until it does.
        if session.queuedBytes > Self.replyBacklogLimit { updateInterest(session) }
    }

    private func request(_ line: ArraySlice<UInt8>, from session: Session) {
        var line = line
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return }
        switch APIRequest.parse(line) {
        case .failure(let error):
            enqueue(APIReply.failure(id: error.id, error.message), isEvent: false, to: session)
        case .success(let request):
            let outcome = daemon.execute(request)
            enqueue(outcome.reply, isEvent: false, to: session)
            if outcome.subscribes { session.subscribed = true }
        }
    }

    private func broadcast(_ line: String) {
        for session in sessions.values where session.subscribed {
            enqueue(line, isEvent: true, to: session)
        }
    }

    private func enqueue(_ line: String, isEvent: Bool, to session: Session) {
        if isEvent, session.queuedEvents >= Self.subscriberQueueLimit {
            // The oldest event line that has not started going out makes room.
            let first = session.offset > 0 ? 1 : 0
            if let index = session.output[first...].firstIndex(where: { $0.isEvent }) {
                session.queuedBytes -= session.output[index].bytes.count
                session.output.remove(at: index)
                session.queuedEvents -= 1
                session.dropped += 1
            }
        }
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        session.output.append((bytes, isEvent))
        session.queuedBytes += bytes.count
        if isEvent { session.queuedEvents += 1 }
        flush(session)
    }

    /// Writes what the socket takes now; the rest waits for POLLOUT.
    private func flush(_ session: Session) {
        while !session.output.isEmpty || session.dropped > 0 {
            if session.offset == 0, session.dropped > 0 {
                // Told between whole lines, before the newer lines that survived.
                var notice = JSONLine()
                notice.add("event", "dropped")
                notice.add("count", session.dropped)
                var bytes = Array(notice.description.utf8)
                bytes.append(UInt8(ascii: "\n"))
                session.output.insert((bytes, false), at: 0)
                session.queuedBytes += bytes.count
                session.dropped = 0
            }
            let entry = session.output[0]
            let written = entry.bytes.withUnsafeBytes { raw in
                send(session.descriptor, raw.baseAddress! + session.offset, raw.count - session.offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN { break }
                drop(session.descriptor)
                return
            }
            session.offset += written
            if session.offset == entry.bytes.count {
                session.output.removeFirst()
                session.offset = 0
                session.queuedBytes -= entry.bytes.count
                if entry.isEvent { session.queuedEvents -= 1 }
            }
        }
        updateInterest(session)
        finishIfDone(session)
    }

    private func updateInterest(_ session: Session) {
        var events: Int16 = 0
        if !session.output.isEmpty { events |= Int16(POLLOUT) }
        if !session.closing, session.queuedBytes <= Self.replyBacklogLimit { events |= Int16(POLLIN) }
        daemon.loop.setEvents(events, for: session.descriptor)
    }

    private func finishIfDone(_ session: Session) {
        guard sessions[session.descriptor] != nil else { return }
        // A subscriber that closed its sending side still wants the events.
        if session.closing, session.output.isEmpty, !session.subscribed || session.condemned {
            drop(session.descriptor)
        } else if session.closing {
            updateInterest(session)
        }
    }

    private func drop(_ descriptor: CInt) {
        guard sessions.removeValue(forKey: descriptor) != nil else { return }
        daemon.loop.unwatch(descriptor)
        Glibc.close(descriptor)
    }
}
