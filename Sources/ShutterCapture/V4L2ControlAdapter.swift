#if canImport(Glibc)
import Glibc
#endif
import ShutterCore

/// How a camera with V4L2's controls serves the system controls: a V4L2 device, and the
/// synthetic camera (its one control is V4L2's exposure bias).
///
/// What it can do is decided from the control list alone (so `shutter cameras` can list a
/// device it has not opened as a camera); with a camera, it sets them: zoom through
/// `V4L2_CID_ZOOM_ABSOLUTE`, else a digital crop; exposure bias through
/// `V4L2_CID_AUTO_EXPOSURE_BIAS`, else the manual exposure time scaled from the metered one.
public final class V4L2ControlAdapter: CameraControlAdapter {
    public enum Zoom: Hashable, Sendable {
        /// The camera's `V4L2_CID_ZOOM_ABSOLUTE`.
        case camera(CameraControl)
        /// A centred crop of each frame.
        case digital
    }

    public enum ExposureBias: Hashable, Sendable {
        /// The camera's `V4L2_CID_AUTO_EXPOSURE_BIAS` (units of 0.001 EV).
        case camera(CameraControl)
        /// Manual exposure time scaled by 2^EV from the metered one; `auto` is switched to manual
        /// first and back to auto for 0 EV.
        case manualExposure(absolute: CameraControl, auto: CameraControl?)
        /// Not possible on this camera, and why.
        case unavailable(reason: String)
    }

    public enum Focus: Hashable, Sendable {
        case camera(CameraControl)
        case unavailable(reason: String)
    }

    /// How zoom is described (a zoom control with a range, else digital).
    public let zoom: Zoom
    public let exposureBias: ExposureBias
    public let focus: Focus
    /// The camera's controls, as it listed them.
    private let controls: [CameraControl]
    /// The camera the controls are set on; `nil` for a description only.
    private let camera: (any Camera)?
    /// The zoom control ``setZoom(_:range:)`` sets: the camera's, when it can be written now.
    private let writableZoom: CameraControl?

    /// Whether this adapter switched the camera to manual exposure (for a bias without a bias control).
    private var manualExposureSet = false
    /// The exposure time auto exposure had chosen when the bias took over.
    private var meteredExposure: Int32?
    /// The read of the metered exposure the newest bias waits for: its number, and the bias to apply once it is back.
    private var exposureRead: (number: Int, bias: Double)?
    /// How many exposure reads were asked for; numbers an answer, so a late one is ignored.
    private var exposureReadsAsked = 0
    /// Answers to exposure reads, from the camera's control thread, for the loop to collect.
    private let exposureAnswers = Locked<[MeteredExposure]>([])

    /// The adapter for `camera`, with its controls.
    public convenience init(camera: any Camera) {
        self.init(controls: camera.controls, camera: camera)
    }

    /// What a camera with `controls` can serve; `camera` is what they are set on (`nil`: describe only).
    public init(controls: [CameraControl], camera: (any Camera)? = nil) {
        self.controls = controls
        self.camera = camera
        writableZoom = controls.first { $0.id == ControlID.zoomAbsolute && $0.isWritable }
        func find(_ id: UInt32) -> CameraControl? { controls.first { $0.id == id } }
        if let zoom = find(ControlID.zoomAbsolute), zoom.maximum > zoom.minimum {
            self.zoom = .camera(zoom)
        } else {
            self.zoom = .digital
        }
        if let bias = find(ControlID.autoExposureBias), bias.maximum > bias.minimum {
            exposureBias = .camera(bias)
        } else if let absolute = find(ControlID.exposureAbsolute), absolute.maximum > absolute.minimum {
            let auto = find(ControlID.exposureAuto)
            if let auto, auto.kind == .menu, !auto.menu.isEmpty, !auto.menu.contains(where: { $0.value == 1 }) {
                exposureBias = .unavailable(reason: "the camera's auto exposure has no manual mode")
            } else {
                exposureBias = .manualExposure(absolute: absolute, auto: auto)
            }
        } else {
            exposureBias = .unavailable(reason: "the camera has neither an exposure-bias control (V4L2_CID_AUTO_EXPOSURE_BIAS) nor a manual exposure time (V4L2_CID_EXPOSURE_ABSOLUTE)")
        }
        if let focus = find(ControlID.focusAbsolute), focus.maximum > focus.minimum {
            self.focus = .camera(focus)
        } else {
            self.focus = .unavailable(reason: "the camera has no focus control (V4L2_CID_FOCUS_ABSOLUTE)")
        }
    }

    public var zoomsDigitally: Bool { writableZoom == nil }

    /// Sets the zoom control to `factor` mapped from the board's `range` onto the control's.
    public func setZoom(_ factor: Double, range: ClosedRange<Double>) throws(CaptureError) {
        guard let control = writableZoom else { return }
        try set(control, control.mapped(factor, from: range))
    }

    /// Sets the exposure bias in EV through the camera's bias control, or its manual exposure time.
    ///
    /// 0 EV is the camera's plain auto exposure. A bias control works on top of auto exposure. A
    /// camera with only a manual exposure time gets the time auto exposure metered, read just
    /// before switching to manual, times 2^EV; back at 0 EV it meters itself again.
    public func setExposureBias(_ ev: Double, wake: @escaping @Sendable () -> Void) throws(CaptureError) {
        switch exposureBias {
        case .camera:
            guard let (control, value) = exposureValue(forEV: ev) else { return }
            try set(control, value)
        case .manualExposure(let absolute, let auto):
            if ev == 0 {
                let wasManual = manualExposureSet
                manualExposureSet = false
                exposureRead = nil  // a read still out is answered into nothing
                meteredExposure = nil
                if let auto, wasManual { try set(auto, Self.autoExposureMode(auto)) }
                return
            }
            if !manualExposureSet {
                // Auto exposure's choice is read first, off the loop; the bias applies once it is back.
                if exposureRead != nil {
                    exposureRead?.bias = ev
                } else if let camera {
                    readMeteredExposure(absolute, of: camera, bias: ev, wake: wake)
                }
                return
            }
            guard let (control, value) = exposureValue(forEV: ev, metered: meteredExposure) else { return }
            try set(control, value)
        case .unavailable:
            return
        }
    }

    /// Asks `camera` for the exposure time auto exposure chose; ``takeMeteredExposure()`` has it
    /// once `wake` is called. A USB camera answers over a control transfer, which must not hold up the loop.
    private func readMeteredExposure(_ absolute: CameraControl, of camera: any Camera, bias: Double, wake: @escaping @Sendable () -> Void) {
        exposureReadsAsked += 1
        let number = exposureReadsAsked, answers = exposureAnswers
        exposureRead = (number, bias)
        camera.readControl(absolute.id) { value in
            answers.withLock { $0.append(MeteredExposure(read: number, value: value)) }
            wake()
        }
    }

    public func takeMeteredExposure() -> MeteredExposure? {
        let answers = exposureAnswers.withLock { list in
            defer { list.removeAll() }
            return list
        }
        guard let read = exposureRead else { return nil }
        return answers.last { $0.read == read.number }
    }

    /// Auto exposure off, then the metered time scaled by the bias asked for last.
    public func applyMeteredExposure(_ metered: MeteredExposure) -> [CaptureError] {
        // Given up, or asked again, since the answer was taken: nothing to do, or a newer bias to apply.
        guard let current = exposureRead, current.number == metered.read else { return [] }
        exposureRead = nil
        guard case .manualExposure(_, let auto) = exposureBias else { return [] }
        meteredExposure = metered.value
        var failures: [CaptureError] = []
        do throws(CaptureError) {
            if let auto { try set(auto, 1) }  // V4L2_EXPOSURE_MANUAL
        } catch {
            failures.append(error)
        }
        manualExposureSet = true
        do throws(CaptureError) {
            if let (control, value) = exposureValue(forEV: current.bias, metered: meteredExposure) { try set(control, value) }
        } catch {
            failures.append(error)
        }
        return failures
    }

    private func set(_ control: CameraControl, _ value: Int32) throws(CaptureError) {
        try camera?.setControl(control.id, to: value)
    }

    /// The auto-exposure control's value that lets the camera meter itself: aperture priority (3,
    /// what UVC webcams offer) or full auto (0), whichever its menu has, else its default.
    public static func autoExposureMode(_ auto: CameraControl) -> Int32 {
        let values = auto.menu.map(\.value)
        if values.isEmpty { return auto.defaultValue == 1 ? 3 : auto.defaultValue }
        return [3, 0, 2].first(where: values.contains) ?? auto.defaultValue
    }

    /// The exposure-control value for `ev` stops of bias: the bias control in 0.001 EV, or the
    /// exposure time `metered` (what auto exposure chose; the control's default when unknown)
    /// times 2^EV; `nil` when unavailable.
    public func exposureValue(forEV ev: Double, metered: Int32? = nil) -> (control: CameraControl, value: Int32)? {
        switch exposureBias {
        case .camera(let control):
            if control.kind == .integerMenu, !control.menu.isEmpty {
                // Integer-menu entries are in 0.001 EV; take the nearest.
                let target = ev * 1000
                let best = control.menu.min { abs((Double($0.name) ?? 0) - target) < abs((Double($1.name) ?? 0) - target) }!
                return (control, best.value)
            }
            return (control, control.clamped(ev * 1000))
        case .manualExposure(let absolute, _):
            var base = Double(metered ?? absolute.defaultValue)
            if base <= 0 { base = Double(max(absolute.minimum, 1)) }
            return (absolute, absolute.clamped(base * exp2(ev)))
        case .unavailable:
            return nil
        }
    }

    /// One line per system control for `shutter cameras` and `shutter check`.
    public var summary: [String] {
        var lines: [String] = []
        switch zoom {
        case .camera(let control): lines.append("zoom: camera zoom '\(control.name)' \(control.minimum)...\(control.maximum)")
        case .digital: lines.append("zoom: digital (centred crop; the camera has no V4L2_CID_ZOOM_ABSOLUTE)")
        }
        switch exposureBias {
        case .camera(let control): lines.append("exposure bias: camera control '\(control.name)' \(control.minimum)...\(control.maximum) (0.001 EV)")
        case .manualExposure(let absolute, _): lines.append("exposure bias: manual exposure '\(absolute.name)' scaled by 2^EV from the metered exposure")
        case .unavailable(let reason): lines.append("exposure bias: disabled: \(reason)")
        }
        switch focus {
        case .camera(let control): lines.append("focus: '\(control.name)' \(control.minimum)...\(control.maximum)")
        case .unavailable(let reason): lines.append("focus: none: \(reason)")
        }
        return lines
    }

    public func report(board: Board) -> [ControlReport] {
        board.controls.map { spec in
            switch spec.kind {
            case .systemZoom:
                switch zoom {
                case .camera(let control): return (spec.id, true, "camera zoom '\(control.name)'")
                case .digital: return (spec.id, true, "digital zoom (centred crop, saved at the \(board.camera.digitalZoom == .crop ? "crop's size" : "frame size"))")
                }
            case .lensPosition:
                return (spec.id, false, "disabled: manual focus needs a libcamera camera with LensPosition (V4L2 focus is not mapped)")
            case .systemExposureBias:
                switch exposureBias {
                case .camera(let control): return (spec.id, true, "camera control '\(control.name)'")
                case .manualExposure(let absolute, _): return (spec.id, true, "manual exposure '\(absolute.name)' scaled by 2^EV")
                case .unavailable(let reason): return (spec.id, false, "disabled: \(reason)")
                }
            case .slider, .picker:
                return boundReport(spec, board: board, controlNames: controls.map(\.name)) { name in
                    (controls.first { $0.name == name } ?? controls.first { $0.name.lowercased() == name.lowercased() })
                        .map { "camera control '\($0.name)' \($0.minimum)...\($0.maximum)" }
                }
            }
        }
    }
}
