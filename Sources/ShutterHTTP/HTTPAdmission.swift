import ShutterCore
import ShutterService

/// Who keeps the HTTP server's connection slots: a client that asks promptly always gets one.
///
/// A slot is cheap to take and slow to give back: a client that opens connections and sends a
/// header byte now and then (slowloris), or follows `/events` and never reads, would otherwise
/// hold every slot while the library waits out its silence timeout, and `/api/status` (or a
/// phone's capture) would wait in the listen backlog behind them. So the server accepts every
/// connection itself and asks this value first:
/// - A connection is *waiting* from its accept, and again from the end of each response, until
///   its next request has fully come (headers and body). Waiting costs the daemon nothing, so a
///   waiting connection is the one let go when a new one needs its slot (the one waiting
///   longest), and one that waits past ``requestDeadline`` is let go anyway: a real client sends
///   a request in one or two packets.
/// - A connection being answered keeps its slot: its request is complete, the library's timeout
///   bounds a response the client does not read.
/// - Streams (`/events`, `/stream`) are held for as long as the viewer likes, so they may take
///   only ``streamCapacity`` of the slots: the rest stay for requests.
/// - With every slot being answered or streaming, a new connection waits in the listen backlog
///   until a response ends or a connection closes (``hasRoom``).
///
/// Slots are not counted per peer address: every viewer behind a reverse proxy, and every
/// client on the rig itself, comes from one address, and would share one peer's few slots.
///
/// Connections are named by their socket descriptor, which the library keeps open until it has
/// reported the connection closed (``closed(_:)``).
struct HTTPAdmission {
    enum Phase: Equatable {
        /// No complete request since `since` (the accept, or the end of the last response).
        case waiting(since: Instant)
        /// A complete request being answered.
        case answering
        /// Following `/events` or `/stream`.
        case streaming
    }

    struct Connection {
        var phase: Phase
        /// Let go (its socket shut down), not yet closed by the library: its slot is free.
        var released = false
    }

    /// Connections at once (the board's `http.maxClients`).
    let capacity: Int
    /// Connections that may be streams.
    let streamCapacity: Int
    /// How long a connection may wait to complete its request.
    let requestDeadline: Nanoseconds
    private(set) var connections: [CInt: Connection] = [:]

    init(capacity: Int, requestDeadline: Nanoseconds) {
        self.capacity = max(1, capacity)
        // A quarter of the slots (at least one) is kept from streams.
        streamCapacity = max(1, self.capacity - max(1, self.capacity / 4))
        self.requestDeadline = requestDeadline
    }

    /// Connections holding a slot (not let go).
    var holding: Int { connections.values.count { !$0.released } }
    /// Streams holding a slot.
    var streaming: Int { connections.values.count { !$0.released && $0.phase == .streaming } }

    /// Whether a new connection may be taken now: a slot is free, or held by a connection
    /// waiting for its request. When none is, every slot is being answered or streaming, and
    /// the server leaves new connections in the listen backlog until one is.
    var hasRoom: Bool { holding < capacity || longestWaiting != nil }

    /// A connection accepted at `now` (when ``hasRoom``), in the place of the connection that has
    /// waited longest when every slot is held: that one is returned, to be let go.
    mutating func arrive(_ descriptor: CInt, at now: Instant) -> CInt? {
        var release: CInt?
        if holding >= capacity, let longest = longestWaiting {
            release = longest
            connections[longest]?.released = true
        }
        connections[descriptor] = Connection(phase: .waiting(since: now))
        return release
    }

    /// The connection's request has fully come: it is answered now.
    mutating func requestComplete(_ descriptor: CInt) {
        guard connections[descriptor]?.phase != .streaming else { return }
        connections[descriptor]?.phase = .answering
    }

    /// Whether the connection may become a stream (false: the streams' share is taken).
    mutating func beginStream(_ descriptor: CInt) -> Bool {
        guard let connection = connections[descriptor] else { return false }
        if connection.phase != .streaming {
            guard streaming < streamCapacity else { return false }
            connections[descriptor]?.phase = .streaming
        }
        return true
    }

    /// A response has ended; the connection (kept alive) waits for its next request from `now`.
    mutating func responseEnded(_ descriptor: CInt, at now: Instant) {
        connections[descriptor]?.phase = .waiting(since: now)
    }

    /// The library closed the connection.
    mutating func closed(_ descriptor: CInt) {
        connections[descriptor] = nil
    }

    /// The connections that have waited past the deadline at `now`, now let go.
    mutating func overdue(at now: Instant) -> [CInt] {
        let late = connections.filter {
            guard !$0.value.released, case .waiting(let since) = $0.value.phase else { return false }
            return now - since >= requestDeadline
        }.keys.sorted()
        for descriptor in late { connections[descriptor]?.released = true }
        return late
    }

    /// When the next waiting connection runs out of time.
    var nextDeadline: Instant? {
        connections.values.compactMap { connection -> Instant? in
            guard !connection.released, case .waiting(let since) = connection.phase else { return nil }
            return since + requestDeadline
        }.min()
    }

    /// The connection holding a slot that has waited longest for its request.
    private var longestWaiting: CInt? {
        connections.compactMap { entry -> (CInt, Instant)? in
            guard !entry.value.released, case .waiting(let since) = entry.value.phase else { return nil }
            return (entry.key, since)
        }.min { ($0.1, $0.0) < ($1.1, $1.0) }?.0
    }
}
