import ShutterCore
import ShutterSystem

/// The service as a transport (the API socket, HTTP, MQTT) sees it: commands in, events and
/// status out, the board, the live view, and the loop everything runs on.
///
/// A transport holds the port, never the service's parts: it does not reach into the camera,
/// the recognizer or another transport, so each can be read, tested and replaced alone. Every
/// member is used on the loop's thread.
public protocol ServicePort: AnyObject {
    /// The loop the transport watches its descriptors on, reads the clock from, and posts to
    /// from other threads (its ``EventLoop/mailbox``).
    var loop: EventLoop { get }
    /// The board the service runs now: a reload (SIGHUP) replaces it.
    var board: Board { get }
    /// The live view's previews and photo thumbnails.
    var liveView: LiveView { get }
    /// Runs one command of the command model and returns its result; the same for every transport.
    func execute(_ request: APIRequest) -> CommandResult
    /// Registers a receiver of every event, its line as standard output prints it. Receivers hear
    /// each event in the order they registered.
    func observeEvents(_ observer: @escaping (ServiceEvent) -> Void)
    /// The service's state now, for `status`, with each attached transport's part.
    func status(now: Instant) -> ServiceStatus
    /// Makes `transport` part of the loop's turn until the service finishes (see ``ServiceTransport``);
    /// `keepsRunning`: the service serves it after the simulator's input has ended.
    func attach(_ transport: any ServiceTransport, keepsRunning: Bool)
    /// Tells every observer one of the rig's events (a shot taken, missed or complete, the broker).
    func announce(_ event: RigEvent)
    /// Another node's shot of `pressedAt` (on this node's clock): its frame is taken from the
    /// ring into the photo named `fileName`, and the rig's `shot` event is announced; or nothing
    /// is taken and the reason is returned (too old, too far ahead, capture unavailable, the
    /// instant already shot for the rig).
    func takeRigShot(_ shot: RigShot, pressedAt: Instant, fileName: String, maxAge: Nanoseconds) -> String?
    /// The rig's transport, asked at each decision that starts a shot for the whole rig and told
    /// each photo or failure of a rig shot; nil: the board has no rig.
    var rigParticipant: (any RigParticipant)? { get set }
}

/// The rig's side of a shot, as the service asks it on the loop.
public protocol RigParticipant: AnyObject {
    /// A press on this node, or a `capture` asked for with `"rig": true`: names the rig's shot of
    /// `pressedAt`, sends it to the rig and announces it, before the camera sees the press.
    func originate(pressedAt: Instant) -> RigShot
    /// The name of this node's photo of `shot`, in the output directory.
    func fileName(of shot: RigShot) -> String
    /// This node's photo or failure of its part in `shot`.
    func answered(_ shot: RigShot, with outcome: ShotOutcome)
}

/// What came of one shot on this node, as the rig reports it.
public enum ShotOutcome: Sendable {
    /// The photo: its frame's time (start of exposure, on the loop's clock), file, size and digest.
    case photo(frameAt: Instant, path: String, bytes: Int, sha256: String?)
    /// No photo. `missesTheShot`: the instant could not be taken here (a rig shot refused on
    /// arrival is reported so), not a failure of the camera.
    case failed(reason: String, missesTheShot: Bool, at: Instant)
}

/// A transport as the service drives it: its deadline joins the loop's, it runs after the
/// gestures and photos of each wake-up (clients' requests never go before a press), it adds its
/// part to `status`, and it is closed when the service finishes.
public protocol ServiceTransport: AnyObject {
    /// When it next needs the loop without input; nil: only on input.
    var nextDeadline: Instant? { get }
    /// Does what falls due at `now`.
    func advance(to now: Instant)
    /// Closes its sockets and clients; it is not advanced again.
    func close()
    /// Adds its part to the service's status (connected clients, the rig).
    func report(into status: inout ServiceStatus)
    /// Its part of systemd's one-line status (`; API /run/shutter.sock`), or nil.
    var statusLinePart: String? { get }
    /// Whether an event line went to a reader waiting on this transport since it was last
    /// asked: the loop then gives that reader its CPU before going on.
    func takeEventLineWritten() -> Bool
}

extension ServiceTransport {
    public func report(into status: inout ServiceStatus) {}
    public var statusLinePart: String? { nil }
    public func takeEventLineWritten() -> Bool { false }
}
