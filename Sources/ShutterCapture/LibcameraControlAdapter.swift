import ShutterCore

/// How a libcamera camera serves the system controls and focus: zoom through `ScalerCrop` (the
/// ISP crops), exposure bias through `ExposureValue`, focus through `AfMode` and `LensPosition`.
///
/// What it can do is decided from the camera's controls as the configured mode states them.
public final class LibcameraControlAdapter: CameraControlAdapter {
    public enum Zoom: Hashable, Sendable {
        /// `ScalerCrop` within this maximum: the ISP crops, the photo keeps its full size.
        case scalerCrop(maximum: PixelRect)
        /// No ScalerCrop (vimc, USB webcams): a centred crop of each frame on the CPU.
        case digital
    }

    public enum ExposureBias: Hashable, Sendable {
        /// `ExposureValue` in EV over this range.
        case exposureValue(ClosedRange<Double>)
        case unavailable(reason: String)
    }

    public enum Focus: Hashable, Sendable {
        /// AfMode/AfTrigger/AfState autofocus, and LensPosition (dioptres) for manual focus.
        case autofocus(lens: ClosedRange<Double>)
        /// LensPosition only.
        case manual(lens: ClosedRange<Double>)
        case unavailable(reason: String)
    }

    public let zoom: Zoom
    public let exposureBias: ExposureBias
    public let focus: Focus
    private let camera: LibcameraCamera
    /// The camera's own autofocus, when it focuses itself.
    private let libcameraAutofocus: LibcameraAutofocus?

    /// The adapter for `camera` under the board's camera `settings`.
    public init(camera: LibcameraCamera, settings: CameraSettings = CameraSettings()) {
        self.camera = camera
        libcameraAutofocus = camera.hasAutofocus ? LibcameraAutofocus(camera: camera, settings: settings) : nil
        let controls = camera.libcameraControls
        func find(_ role: LibcameraControlInfo.Role) -> LibcameraControlInfo? { controls.first { $0.role == role } }
        if find(.scalerCrop) != nil, let maximum = camera.scalerCropMaximum, maximum.width > 0, maximum.height > 0 {
            zoom = .scalerCrop(maximum: maximum)
        } else {
            zoom = .digital
        }
        if let ev = find(.exposureValue), ev.maximum > ev.minimum {
            exposureBias = .exposureValue(ev.minimum...ev.maximum)
        } else {
            exposureBias = .unavailable(reason: "the camera has no ExposureValue control")
        }
        if let lens = find(.lensPosition), lens.maximum > lens.minimum {
            focus = find(.afMode) != nil && find(.afTrigger) != nil
                ? .autofocus(lens: lens.minimum...lens.maximum) : .manual(lens: lens.minimum...lens.maximum)
        } else {
            focus = .unavailable(reason: "the camera has no LensPosition control (fixed focus)")
        }
    }

    /// Whether a press runs an autofocus cycle.
    public var hasAutofocus: Bool {
        if case .autofocus = focus { return true }
        return false
    }

    public var zoomsDigitally: Bool { zoom == .digital }

    /// Sets `ScalerCrop` to the crop for `factor`, centred in the pipeline's own unzoomed crop;
    /// the board's range does not matter.
    ///
    /// Not centred in the maximum: that is the sensor mode's area, with the mode's aspect
    /// (Camera Module 3's 16:9), while the pipeline fits its own crop to the still's (a 4:3 still
    /// from that mode sees the 4:3 middle) and keeps whatever aspect a ScalerCrop has, so a crop
    /// of the mode's aspect would stretch the picture. A camera that has not said its crop yet
    /// (libcamera 0.0.3 before its first frame) gets the Raspberry Pi pipeline's own rule.
    public func setZoom(_ factor: Double, range: ClosedRange<Double>) throws(CaptureError) {
        guard case .scalerCrop(let maximum) = zoom else { return }
        let unzoomed = camera.scalerCropDefault
            ?? scalerCropFitted(maximum: maximum, width: camera.format.width, height: camera.format.height)
        try camera.setScalerCrop(scalerCrop(forZoom: factor, unzoomed: unzoomed))
    }

    /// Sets `ExposureValue`, which works on top of auto exposure: nothing needs metering first.
    public func setExposureBias(_ ev: Double, wake: @escaping @Sendable () -> Void) throws(CaptureError) {
        guard case .exposureValue(let range) = exposureBias else { return }
        try camera.setExposureValue(exposureValue(forBias: ev, range: range))
    }

    /// The lens's range in dioptres, when it can be driven.
    private var lens: ClosedRange<Double>? {
        switch focus {
        case .autofocus(let range), .manual(let range): range
        case .unavailable: nil
        }
    }

    /// `AfMode` manual and `LensPosition` mapped from the slider's `range` onto the lens's; an
    /// autofocus cycle that ran is over.
    public func setLensPosition(_ value: Double, range: ClosedRange<Double>) throws(CaptureError) {
        guard let lens else { return }
        libcameraAutofocus?.lensMovedByHand()
        try camera.setLensPosition(ShutterCapture.lensPosition(for: value, in: range, lens: lens))
    }

    /// The board's focus mode, on a camera that focuses itself (see ``LibcameraAutofocus/applyMode()``).
    public func applyFocusMode() throws(CaptureError) {
        try libcameraAutofocus?.applyMode()
    }

    public var autofocus: (any CameraAutofocus)? { libcameraAutofocus }

    /// One line per system control for `shutter cameras`.
    public var summary: [String] {
        var lines: [String] = []
        switch zoom {
        case .scalerCrop(let maximum): lines.append("zoom: ScalerCrop within \(maximum) (the ISP crops; photos keep their size)")
        case .digital: lines.append("zoom: digital (centred crop; the camera has no ScalerCrop)")
        }
        switch exposureBias {
        case .exposureValue(let range): lines.append("exposure bias: ExposureValue \(range.lowerBound.shortDescription)...\(range.upperBound.shortDescription) EV")
        case .unavailable(let reason): lines.append("exposure bias: disabled: \(reason)")
        }
        switch focus {
        case .autofocus(let lens): lines.append("focus: autofocus (AfMode continuous, or AfTrigger on prepare), LensPosition \(lens.lowerBound.shortDescription)...\(lens.upperBound.shortDescription) dioptres")
        case .manual(let lens): lines.append("focus: manual only, LensPosition \(lens.lowerBound.shortDescription)...\(lens.upperBound.shortDescription) dioptres")
        case .unavailable(let reason): lines.append("focus: none: \(reason)")
        }
        return lines
    }

    /// How a focus slider `control` shares the lens with the board's `autofocus` (``ManualFocus``), for `shutter check`.
    static func howTheSliderShares(autofocus: AutofocusMode, endsOn: ManualFocusEnd, control: String) -> String {
        let end = endsOn == .doubleLightPress ? "a double light press on '\(control)'" : "the next half press (prepare)"
        switch autofocus {
        case .manual:
            return "(autofocus manual: the lens stays where the slider puts it, from its initial value on)"
        case .continuous, .onPrepare:
            return "(moving it switches \(autofocus == .continuous ? "continuous autofocus" : "autofocus on prepare") to manual focus "
                + "until \(end); its initial value is not applied while autofocus drives the lens)"
        }
    }

    public func report(board: Board) -> [ControlReport] {
        let controls = camera.libcameraControls
        return board.controls.map { spec in
            switch spec.kind {
            case .systemZoom:
                switch zoom {
                case .scalerCrop(let maximum): return (spec.id, true, "ScalerCrop within \(maximum) (the ISP crops, photos keep their size)")
                case .digital: return (spec.id, true, "digital zoom (the camera has no ScalerCrop; centred crop, saved at the \(board.camera.digitalZoom == .crop ? "crop's size" : "frame size"))")
                }
            case .lensPosition:
                switch focus {
                case .autofocus(let lens):
                    return (spec.id, true, "LensPosition \(lens.lowerBound.shortDescription)...\(lens.upperBound.shortDescription) dioptres "
                            + Self.howTheSliderShares(autofocus: board.camera.autofocus, endsOn: board.camera.manualFocusEnds, control: spec.id))
                case .manual(let lens):
                    return (spec.id, true, "LensPosition \(lens.lowerBound.shortDescription)...\(lens.upperBound.shortDescription) dioptres (the camera has no autofocus: the slider alone moves the lens)")
                case .unavailable(let reason): return (spec.id, false, "disabled: \(reason)")
                }
            case .systemExposureBias:
                switch exposureBias {
                case .exposureValue(let range): return (spec.id, true, "ExposureValue \(range.lowerBound.shortDescription)...\(range.upperBound.shortDescription) EV (0 = plain auto exposure)")
                case .unavailable(let reason): return (spec.id, false, "disabled: \(reason)")
                }
            case .slider, .picker:
                return boundReport(spec, board: board, controlNames: controls.map(\.name)) { name in
                    controls.first { $0.name.lowercased() == name.lowercased() }
                        .map { "camera control '\($0.name)' \($0.minimum.shortDescription)...\($0.maximum.shortDescription)" }
                }
            }
        }
    }
}
