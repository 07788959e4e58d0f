/// Which shot a photo or failure answers: given out by a ``ShotDesk``, unique in the process.
public struct ShotID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// The id of a shot no desk gave out: a command's single photo, a test's press. The desk's ids start above it.
    public static let unnumbered = ShotID(rawValue: 0)

    public var description: String { String(rawValue) }
}

/// One photo asked for: made where the decision to take it is made (a press, a burst's slot, a
/// remote `capture`, another node's rig shot), carried through the capture service with its
/// frame, and returned in the photo or failure that answers it. Everything the answer needs
/// travels with it, so nothing is looked up by the instant.
public struct Shot: Hashable, Sendable {
    public var id: ShotID
    /// The instant whose frame is taken: a press's edge, a release, a burst's slot, a rig shot's
    /// instant on this node's clock.
    public var pressedAt: Instant
    /// The `id` of the remote `capture` request that asked for it, as the request gave it: the
    /// `photo` or `captureFailed` event that answers it says `"request": id`.
    public var request: JSONValue?
    /// The rig's shot it takes part in: one this node originated (a press, or a `capture` with
    /// `"rig": true`), or another node's.
    public var rigShot: RigShot?
    /// The photo's file name in the output directory instead of the board's template (a rig's
    /// shot: `<shot>/<node>.jpg`); one folder below it is made when missing.
    public var fileName: String?
    /// Whether the photo's SHA-256 is computed as it is written (a rig shot's result carries it).
    public var digest: Bool

    public init(id: ShotID = .unnumbered, pressedAt: Instant, request: JSONValue? = nil, rigShot: RigShot? = nil,
                fileName: String? = nil, digest: Bool = false) {
        self.id = id
        self.pressedAt = pressedAt
        self.request = request
        self.rigShot = rigShot
        self.fileName = fileName
        self.digest = digest
    }

    /// Whether the shot wants the frame of its instant and no other, even one another press
    /// saved already: a rig's shot, whose photo must be of the rig's instant.
    public var takesSavedFrame: Bool { rigShot != nil }
}
