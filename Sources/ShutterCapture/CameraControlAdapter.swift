import ShutterCore

/// How one camera serves the board's system controls: zoom, exposure bias and focus, and the
/// report of each board control that `shutter check` prints.
///
/// Each backend has its own: ``V4L2ControlAdapter`` (V4L2 devices, and the synthetic camera,
/// whose one control is V4L2's exposure bias) and ``LibcameraControlAdapter``. A camera makes
/// one with ``Camera/makeControlAdapter(settings:)``; the capture service makes one per camera it
/// adopts and calls it on the event loop only while the camera is there (no lifecycle job
/// queued), so an adapter keeps its camera's control state (a metered exposure) without locks.
public protocol CameraControlAdapter: AnyObject {
    /// Whether zoom is a centred crop of each frame on the CPU (the camera has no zoom it can
    /// set): the photo pipeline then crops, and a reopened camera has no zoom to be given back.
    var zoomsDigitally: Bool { get }

    /// Sets the zoom `factor` (1 = none), `range` being the board's zoom range; digital zoom sets
    /// nothing on the camera.
    func setZoom(_ factor: Double, range: ClosedRange<Double>) throws(CaptureError)

    /// Sets an exposure bias of `ev` stops (0 is the camera's plain auto exposure).
    ///
    /// A camera that must be asked what auto exposure metered first reads it off the loop and
    /// calls `wake` when the answer is in: ``takeMeteredExposure()`` then has it.
    func setExposureBias(_ ev: Double, wake: @escaping @Sendable () -> Void) throws(CaptureError)

    /// The answer to the metered-exposure read the newest bias waits for, once it has come; the
    /// service hands it to ``applyMeteredExposure(_:)`` when the camera is on the loop.
    func takeMeteredExposure() -> MeteredExposure?

    /// Switches to manual exposure at `metered` scaled by the bias asked for last, unless the
    /// bias was given up or asked again since; returns what failed, in order (each step is tried).
    func applyMeteredExposure(_ metered: MeteredExposure) -> [CaptureError]

    /// Drives the lens by hand from a `lensPosition` slider at `value` in `range` (autofocus
    /// stops; a camera without a lens to drive sets nothing).
    func setLensPosition(_ value: Double, range: ClosedRange<Double>) throws(CaptureError)

    /// Puts the camera in the board's focus mode from its next request (a camera with autofocus
    /// only: `onPrepare` sets its mode with each cycle's trigger).
    func applyFocusMode() throws(CaptureError)

    /// The camera's own autofocus, which a press may wait for; `nil` when the camera does not focus itself.
    var autofocus: (any CameraAutofocus)? { get }

    /// One line per system control, for `shutter cameras`.
    var summary: [String] { get }

    /// For each board control: whether this camera serves it, and how or why not (`shutter check`).
    func report(board: Board) -> [ControlReport]
}

/// One board control as ``CameraControlAdapter/report(board:)`` describes it.
public typealias ControlReport = (id: String, enabled: Bool, how: String)

extension CameraControlAdapter {
    public func takeMeteredExposure() -> MeteredExposure? { nil }
    public func applyMeteredExposure(_ metered: MeteredExposure) -> [CaptureError] { [] }
    public func setLensPosition(_ value: Double, range: ClosedRange<Double>) throws(CaptureError) {}
    public func applyFocusMode() throws(CaptureError) {}
    public var autofocus: (any CameraAutofocus)? { nil }

    /// The report of a `slider` or `picker` board control, for each backend: its photo effects, or
    /// the camera control its binding names (found with `find`, described by `describe`).
    func boundReport(_ spec: ControlSpec, board: Board, controlNames: [String], find: (String) -> String?) -> ControlReport {
        if let effects = spec.effects, board.camera.bindings[spec.id] == nil { return (spec.id, true, photoEffectReport(effects)) }
        guard let name = board.camera.bindings[spec.id] else { return (spec.id, true, "hooks and the API only: no photo effects, not bound to a camera control") }
        guard let described = find(name) else {
            return (spec.id, false, "disabled: the camera has no control '\(name)' (it has: \(controlNames.joined(separator: ", ")))")
        }
        return (spec.id, true, described)
    }
}

/// What auto exposure metered, read for an exposure bias on a camera with only a manual
/// exposure time (``V4L2ControlAdapter``).
public struct MeteredExposure: Hashable, Sendable {
    /// Which read it answers: a late answer, for a bias given up or asked again, is ignored.
    let read: Int
    /// The exposure time auto exposure chose, `nil` when it could not be read.
    let value: Int32?
}
