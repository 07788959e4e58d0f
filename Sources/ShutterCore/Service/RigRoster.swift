/// The nodes of a rig that a node believes online, by their availability messages: at most
/// ``capacity`` of them, and each forgotten after ``silenceLimit`` without a word from it.
///
/// Whoever may publish on the rig's topics can announce nodes: every node announced is one
/// that each shot waits for and names when it stays silent. A value type fed what the broker
/// says with the time; it says when it next needs the time (``nextDeadline``).
public struct RigRoster: Sendable {
    /// The most nodes a rig has, this one included: rigs have tens of cameras (the scale bench
    /// runs 50), and 256 names of at most 64 bytes keep a shot's bookkeeping and the status small.
    public static let capacity = 256
    /// How often a node says `online` again while it is connected, so that the others keep it.
    public static let announceInterval = Nanoseconds.seconds(60)
    /// A node heard from neither by an announcement nor by a result in this long is forgotten:
    /// three announcements missed, where a dead node's last will would have come long before.
    public static let silenceLimit = Nanoseconds.seconds(180)

    /// This node: always in the roster, never counted against it by its own announcements.
    public let own: String
    private var lastHeard: [String: Instant] = [:]

    public init(own: String) {
        self.own = own
    }

    /// What became of an announcement.
    public enum Announcement: Equatable, Sendable {
        case added
        case known
        /// The roster is full: the node is not remembered.
        case refused
    }

    /// Node `node` said `online` at `now`.
    public mutating func online(_ node: String, now: Instant) -> Announcement {
        guard node != own else { return .known }
        if lastHeard[node] != nil {
            lastHeard[node] = now
            return .known
        }
        guard lastHeard.count < Self.capacity - 1 else { return .refused }
        lastHeard[node] = now
        return .added
    }

    /// Node `node` said anything but `online` (`offline`, its last will).
    public mutating func offline(_ node: String) {
        lastHeard[node] = nil
    }

    /// Node `node` answered a shot at `now`: it is still there, if it is known.
    public mutating func heard(from node: String, now: Instant) {
        if lastHeard[node] != nil { lastHeard[node] = now }
    }

    /// Forgets the nodes silent for ``silenceLimit`` at `now`; returns how many.
    public mutating func expire(now: Instant) -> Int {
        guard let due = nextDeadline, now >= due else { return 0 }
        let before = lastHeard.count
        lastHeard = lastHeard.filter { now - $0.value < Self.silenceLimit }
        return before - lastHeard.count
    }

    /// Forgets every other node (the connection to the broker was lost).
    public mutating func removeAll() {
        lastHeard.removeAll()
    }

    /// When the node heard from longest ago falls silent for good.
    public var nextDeadline: Instant? { lastHeard.values.min().map { $0 + Self.silenceLimit } }

    /// The nodes online, this one included.
    public var nodes: Set<String> { Set(lastHeard.keys).union([own]) }

    public var count: Int { lastHeard.count + 1 }
}
