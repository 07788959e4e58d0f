#if canImport(Glibc)
import Glibc
#endif
import ShutterCore

/// How a camera can serve the system controls, decided from its control list alone.
public struct ControlPlan: Hashable, Sendable {
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

    public var zoom: Zoom
    public var exposureBias: ExposureBias
    public var focus: Focus

    public init(controls: [CameraControl]) {
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
}

