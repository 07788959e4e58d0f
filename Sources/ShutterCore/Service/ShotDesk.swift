/// The shots in flight: each one made here gets an id of its own, and is taken back by the photo
/// or failure that answers it (``answer(_:)``).
///
/// A value type, fed no clock: the service makes shots where it decides to take them. Two shots
/// of one instant are two shots (each answered by its own photo), as nothing is known by the
/// instant. The only rule about instants is the rig's: a node answers another node's shot of an
/// instant it is already taking a rig shot of with a refusal (``refusal(ofRigShotAt:)``), so the
/// rig gets one photo of each node per instant.
public struct ShotDesk: Sendable {
    /// The most shots remembered at once: every shot made is answered by one photo or failure,
    /// so shots leave as they came; the bound is for a camera replaced mid-press that never
    /// answers. Past it, the oldest is forgotten.
    public static let limit = 64

    private var nextID: UInt64 = ShotID.unnumbered.rawValue + 1
    /// Oldest first.
    public private(set) var inFlight: [Shot] = []

    public init() {}

    /// Makes a shot of the frame at `pressedAt` and keeps it until it is answered.
    public mutating func shot(pressedAt: Instant, request: JSONValue? = nil, rigShot: RigShot? = nil,
                              fileName: String? = nil, digest: Bool = false) -> Shot {
        let shot = Shot(id: ShotID(rawValue: nextID), pressedAt: pressedAt, request: request, rigShot: rigShot,
                        fileName: fileName, digest: digest)
        nextID += 1
        if inFlight.count >= Self.limit { inFlight.removeFirst(inFlight.count - Self.limit + 1) }
        inFlight.append(shot)
        return shot
    }

    /// The shot in flight answered by a photo or failure of `shot`, forgotten once taken; nil
    /// when it is not in flight (answered already, forgotten past ``limit``, or made by no desk).
    public mutating func answer(_ shot: ShotID) -> Shot? {
        guard let index = inFlight.firstIndex(where: { $0.id == shot }) else { return nil }
        return inFlight.remove(at: index)
    }

    /// Why this node cannot take another node's rig shot of `pressedAt`: it is taking a rig shot
    /// of that instant already, and the rig gets one photo of each node per instant. Nil when it can.
    public func refusal(ofRigShotAt pressedAt: Instant) -> String? {
        guard let taking = inFlight.first(where: { $0.pressedAt == pressedAt && $0.rigShot != nil })?.rigShot else { return nil }
        return "this node is taking shot \(taking.id) of the same instant; one photo answers one shot"
    }
}
