import ShutterCore

/// The remote captures waiting for their photo: the `id` of each accepted `capture` request,
/// by the instant its press was stamped, until its `photo` or `captureFailed` event names it.
///
/// Every accepted press ends in one of those two events, so entries leave as they came; the
/// bound is for a camera that is replaced mid-press and never reports it: the oldest is forgotten.
struct CaptureRequests {
    private var waiting: [(pressedAt: Instant, id: JSONValue)] = []
    /// The most requests remembered at once.
    static let limit = 64

    /// Remembers that the press stamped `pressedAt` was request `id`.
    mutating func remember(_ id: JSONValue, pressedAt: Instant) {
        if waiting.count == Self.limit { waiting.removeFirst() }
        waiting.append((pressedAt, id))
    }

    /// The request whose press was stamped `pressedAt`, forgotten once taken.
    mutating func take(pressedAt: Instant) -> JSONValue? {
        guard let index = waiting.firstIndex(where: { $0.pressedAt == pressedAt }) else { return nil }
        return waiting.remove(at: index).id
    }
}
