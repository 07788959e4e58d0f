import ShutterCore

/// The `ScalerCrop` rectangle for a zoom factor: the ISP crops, the stream keeps its size.
///
/// The crop is centred in `unzoomed`, the crop the pipeline takes at zoom 1 (see
/// ``LibcameraCamera/scalerCropDefault``), `1/factor` of its width and height: the aspect ratio
/// stays, and the pipeline keeps whatever aspect it is given. Even sizes and offsets, as the ISPs
/// want; factors below 1 are 1.
public func scalerCrop(forZoom factor: Double, unzoomed: PixelRect) -> PixelRect {
    let factor = max(1, factor.isFinite ? factor : 1)
    func even(_ value: Double) -> Int { max(2, Int(value / 2) * 2) }
    let width = min(unzoomed.width, even(Double(unzoomed.width) / factor))
    let height = min(unzoomed.height, even(Double(unzoomed.height) / factor))
    let x = unzoomed.x + ((unzoomed.width - width) / 2) & ~1
    let y = unzoomed.y + ((unzoomed.height - height) / 2) & ~1
    return PixelRect(x: x, y: y, width: width, height: height)
}

/// The crop a camera that states no default takes unzoomed, as libcamera's Raspberry Pi pipeline
/// takes its own: the largest rectangle of the still's aspect (`width` x `height`) centred in
/// `maximum` (vc4.cpp and pisp.cpp: `boundedToAspectRatio`, then `centeredTo` the mode's centre).
/// A camera whose still has the maximum's aspect gets the maximum itself.
public func scalerCropFitted(maximum: PixelRect, width: Int, height: Int) -> PixelRect {
    guard width > 0, height > 0 else { return maximum }
    // Size::boundedToAspectRatio, in 64-bit products as libcamera computes it.
    let across = Int64(maximum.width) * Int64(height), down = Int64(width) * Int64(maximum.height)
    let size = across > down
        ? (width: Int(down / Int64(height)), height: maximum.height)
        : (width: maximum.width, height: Int(across / Int64(width)))
    // Size::centeredTo(Rectangle::center()).
    let centre = (x: maximum.x + maximum.width / 2, y: maximum.y + maximum.height / 2)
    return PixelRect(x: centre.x - size.width / 2, y: centre.y - size.height / 2, width: size.width, height: size.height)
}

/// `ExposureValue` for an exposure bias of `ev` stops: the bias itself (libcamera's unit is EV),
/// clamped to the camera's range; 0 is plain auto exposure.
public func exposureValue(forBias ev: Double, range: ClosedRange<Double>) -> Double {
    guard ev.isFinite else { return 0 }
    return min(max(ev, range.lowerBound), range.upperBound)
}

/// `LensPosition` (dioptres: 0 is infinity, larger is closer) for a slider at `value` in `range`:
/// linear onto the lens's range.
public func lensPosition(for value: Double, in range: ClosedRange<Double>, lens: ClosedRange<Double>) -> Double {
    let span = range.upperBound - range.lowerBound
    let fraction = span > 0 ? min(max((value - range.lowerBound) / span, 0), 1) : 0
    return lens.lowerBound + fraction * (lens.upperBound - lens.lowerBound)
}
