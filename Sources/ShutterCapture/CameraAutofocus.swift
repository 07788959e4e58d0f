import ShutterCore

/// A camera's own autofocus, as the capture service meets it: whether a press waits for the lens,
/// which frame serves it, and how each photo was focused.
///
/// Only a camera that focuses itself has one (``LibcameraAutofocus``, through
/// ``CameraControlAdapter/autofocus``): the camera alone knows which of its requests carried an
/// autofocus trigger. Used on the event loop, while the camera is there.
public protocol CameraAutofocus: AnyObject {
    /// Asks for an autofocus cycle at `now` ahead of a shot (`onPrepare`; a light press, or a
    /// press without one), unless one runs or has locked: returns whether the camera must be sent
    /// the trigger (``sendTrigger()``, once the camera is on the loop).
    func requestCycle(at now: Instant) -> Bool

    /// Sends the trigger ``requestCycle(at:)`` asked for; a failure ends the cycle.
    func sendTrigger() throws(CaptureError)

    /// Whether `shot` waits for the lens: it is then held here until a frame serves it
    /// (``frameArrived(_:now:)``); otherwise its photo's focus is noted for ``focusOfShot(_:frame:served:)``.
    func holdsPress(_ shot: Shot) -> Bool

    /// Takes in what `frame` said of focus; returns the held shots it serves now, with how
    /// they were focused, or `nil` when they wait on.
    func frameArrived(_ frame: Frame, now: Instant) -> (presses: [Shot], focus: ShotFocus)?

    /// How the photo of `shot` from `frame` was focused (`served` when ``frameArrived(_:now:)``
    /// served it); the shot is taken, so the next one focuses again.
    func focusOfShot(_ shot: Shot, frame: Frame, served: ShotFocus?) -> ShotFocus

    /// How many presses wait for the lens.
    var heldCount: Int { get }

    /// Lets go of every held shot (to be failed: the camera is going) and of the cycle.
    func releaseHeld() -> [Shot]

    /// The light press ended without a shot: the next shot focuses again, unless a press still
    /// waits on this cycle.
    func standby()
}

/// How a photo's focus ended and how long its autofocus cycle ran, as the `photo` event reports them.
public struct ShotFocus: Hashable, Sendable {
    public var outcome: FocusOutcome
    /// How many frames answered the cycle's trigger up to the one that ended it (locked, failed
    /// or timed out); `nil` when no cycle ran for the photo (continuous or manual focus).
    public var frames: Int?

    public init(outcome: FocusOutcome, frames: Int? = nil) {
        self.outcome = outcome
        self.frames = frames
    }
}

/// How a photo's focus ended, as the `photo` event reports it.
public enum FocusOutcome: String, Hashable, Sendable {
    /// The autofocus cycle locked before the frame was taken (or, with continuous autofocus,
    /// the frame's AfState was Focused).
    case locked
    /// The autofocus cycle reported failure; the frame was taken as the lens stood.
    case failed
    /// The lens had not locked within `focusTimeoutFrames` (or `focusTimeoutMs`); the frame was taken anyway.
    case timeout
    /// Continuous autofocus was still moving the lens for this frame (AfState Scanning).
    case scanning
    /// No autofocus (fixed-focus camera, V4L2, manual focus).
    case none

    /// The outcome a frame's own AfState says, under continuous autofocus.
    public init(continuous state: AfState?) {
        switch state {
        case .focused: self = .locked
        case .failed: self = .failed
        case .scanning: self = .scanning
        case .idle, nil: self = .none
        }
    }
}
