import ShutterCore

/// What one API client is owed, oldest first: replies, event lines, and one notice for the event
/// lines it lost by not reading.
///
/// Bounded whatever the client does. At most `eventLimit` event lines wait: one more drops the
/// oldest that has not started going out, and every drop since the client last took a line is
/// told as one `{"event": "dropped", "count": N}`, put before the next line to go out and merged
/// with any notice still waiting whole. Replies are never dropped (each answers a request); the
/// server bounds them by not running a client's requests while ``replyBytes`` is over its limit.
public struct APIOutputQueue {
    /// A line waiting, and what it is.
    private struct Entry {
        enum Kind { case reply, event, dropped(count: Int) }
        var bytes: [UInt8]
        var kind: Kind
        var isEvent: Bool { if case .event = kind { true } else { false } }
    }

    private var entries: [Entry] = []
    /// Bytes of the first entry already written.
    private var offset = 0
    /// Event lines dropped and not yet in a notice.
    private var untoldDrops = 0
    public let eventLimit: Int

    /// Event lines waiting.
    public private(set) var eventCount = 0
    /// Bytes of replies waiting.
    public private(set) var replyBytes = 0
    /// Every byte waiting.
    public private(set) var byteCount = 0

    /// How an event line (and a drop notice) is framed: the socket sends the line and a newline;
    /// server-sent events put `data: ` before it and end it with a blank line.
    public let eventPrefix: [UInt8]
    public let terminator: [UInt8]

    public init(eventLimit: Int, eventPrefix: String = "", terminator: String = "\n") {
        self.eventLimit = eventLimit
        self.eventPrefix = Array(eventPrefix.utf8)
        self.terminator = Array(terminator.utf8)
    }

    /// Whether nothing is owed, not even a notice.
    public var isEmpty: Bool { entries.isEmpty && untoldDrops == 0 }

    public mutating func appendReply(_ line: String) {
        append(Entry(bytes: framed(line), kind: .reply))
    }

    public mutating func appendEvent(_ line: String) {
        if eventCount >= eventLimit {
            // The oldest event line not in flight makes room; a line in flight is finished first.
            let first = offset > 0 ? 1 : 0
            if first < entries.count, let index = entries[first...].firstIndex(where: \.isEvent) {
                byteCount -= entries[index].bytes.count
                entries.remove(at: index)
                eventCount -= 1
                untoldDrops += 1
            }
        }
        append(Entry(bytes: framed(line, prefix: eventPrefix), kind: .event))
    }

    /// Calls `body` with the bytes to write next (the rest of the line in flight), or returns
    /// nil when nothing is owed. Untold drops become the next line when no line is in flight.
    public mutating func withNextBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result? {
        if offset == 0, untoldDrops > 0 {
            var count = untoldDrops
            untoldDrops = 0
            if case .dropped(let waiting)? = entries.first?.kind {
                // A notice not yet started: one notice says both.
                count += waiting
                byteCount -= entries[0].bytes.count
                entries.removeFirst()
            }
            var notice = JSONLine()
            notice.add("event", "dropped")
            notice.add("count", count)
            let entry = Entry(bytes: framed(notice.description, prefix: eventPrefix), kind: .dropped(count: count))
            entries.insert(entry, at: 0)
            byteCount += entry.bytes.count
        }
        guard let first = entries.first else { return nil }
        let start = offset
        return first.bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[start...])) }
    }

    /// Records that `count` bytes from ``withNextBytes(_:)`` were written.
    public mutating func consume(_ count: Int) {
        guard !entries.isEmpty else { return }
        offset += count
        guard offset >= entries[0].bytes.count else { return }
        let entry = entries.removeFirst()
        offset = 0
        byteCount -= entry.bytes.count
        switch entry.kind {
        case .reply: replyBytes -= entry.bytes.count
        case .event: eventCount -= 1
        case .dropped: break
        }
    }

    /// Forgets everything owed (the client has gone).
    public mutating func removeAll() {
        entries.removeAll()
        offset = 0
        untoldDrops = 0
        eventCount = 0
        replyBytes = 0
        byteCount = 0
    }

    private mutating func append(_ entry: Entry) {
        entries.append(entry)
        byteCount += entry.bytes.count
        switch entry.kind {
        case .reply: replyBytes += entry.bytes.count
        case .event: eventCount += 1
        case .dropped: break
        }
    }

    private func framed(_ line: String, prefix: [UInt8] = []) -> [UInt8] {
        var bytes = prefix
        bytes.append(contentsOf: line.utf8)
        bytes.append(contentsOf: terminator)
        return bytes
    }
}
