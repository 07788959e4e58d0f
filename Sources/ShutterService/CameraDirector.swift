import ShutterCapture
import ShutterCore

/// Carries out what the recognizer's events mean for the camera.
///
/// The recognizer decides *that* a photo is due and stamps the press; the daemon makes the
/// ``Shot`` of it there, and the capture service picks the frame from its instant and saves it
/// off the event loop. Nothing here blocks: every call on the service returns at once.
public final class CameraDirector {
    public let service: CaptureService
    /// Whether the recognizer was last told a photo can be taken.
    public private(set) var available: Bool

    public init(service: CaptureService) {
        self.service = service
        available = service.isReady
    }

    /// Takes the photo of `shot` (a press, a release, a burst's slot, a remote capture, a rig's
    /// shot), decided at `now`; its photo or failure comes back from ``readable()`` carrying it.
    public func take(_ shot: Shot, now: Instant) {
        service.capture(shot, now: now)
    }

    /// Acts on one recognizer event, but for the photos it decides: those come as shots (``take(_:now:)``).
    ///
    /// - Parameter currentControl: for a double light press, the control current when it came
    ///   (it may give the lens back from the focus slider).
    public func handle(_ event: ShutterEvent, currentControl: @autoclosure () -> String? = nil) {
        switch event {
        case .prepare(.began, _, _):
            service.prepare()
        case .controlsActive:
            // Shown by a light press: the camera starts, but the lens stays with whoever drives it.
            service.prepare(halfPress: false)
        case .doubleLightPress:
            service.doubleLightPress(currentControl: currentControl())
        case .prepare(.ended, _, _):
            service.standby()
        case .controlsInactive(let reason, _) where reason != .capture:
            service.standby()
        case .controlValue(let control, let value, _, _):
            service.apply(controlID: control, value: value)
        default:
            break
        }
    }

    /// Collects what the service finished and whether its readiness changed.
    public func readable() -> (events: [CaptureEvent], availabilityChanged: Bool) {
        let events = service.handleReadable()
        let ready = service.isReady
        defer { available = ready }
        return (events, ready != available)
    }

    /// The board with the controls the camera cannot serve disabled, as `shutter check` reports them.
    public static func boardWithCameraLimits(_ board: Board, service: CaptureService) -> (Board, [String]) {
        var board = board
        var notes: [String] = []
        for report in service.controlReport() where !report.enabled {
            if let index = board.controls.firstIndex(where: { $0.id == report.id }), board.controls[index].enabled {
                board.controls[index].enabled = false
                notes.append("control '\(report.id)' \(report.how)")
            }
        }
        return (board, notes)
    }
}
