import ShutterCore

/// The `ScalerCrop` rectangle for a zoom factor: the ISP crops, the stream keeps its size.
///
/// The crop is centred in the sensor's maximum crop, `1/factor` of its width and height (the
/// aspect ratio stays), with even sizes and offsets as the ISPs want; factors below 1 are 1.
public func scalerCrop(forZoom factor: Double, maximum: PixelRect) -> PixelRect {
    let factor = max(1, factor.isFinite ? factor : 1)
    func even(_ value: Double) -> Int { max(2, Int(value / 2) * 2) }
    let width = min(maximum.width, even(Double(maximum.width) / factor))
    let height = min(maximum.height, even(Double(maximum.height) / factor))
    let x = maximum.x + ((maximum.width - width) / 2) & ~1
    let y = maximum.y + ((maximum.height - height) / 2) & ~1
    return PixelRect(x: x, y: y, width: width, height: height)
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
