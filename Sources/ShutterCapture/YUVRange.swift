/// How a frame's Y'CbCr values span a byte: JPEG's full range, or video's limited (studio) range.
///
/// JPEG (JFIF) stores full range. Webcams (uvcvideo) and most V4L2 capture drivers deliver
/// limited range, which encoded as it is gives washed-out photos (black is grey 16, white 235):
/// the encoder and ``YUVImage`` expand such frames to full range first, with ``lumaToFull`` and
/// ``chromaToFull``.
public enum YUVRange: String, Hashable, Sendable, CustomStringConvertible {
    /// Y' 0...255, Cb and Cr 0...255 around 128: JPEG's range, and libcamera's sYCC still stream.
    case full
    /// Y' 16...235, Cb and Cr 16...240 around 128: what V4L2 calls `V4L2_QUANTIZATION_LIM_RANGE`.
    case limited

    public var description: String { rawValue }

    /// Limited-range luma to full range: Y' = round((Y − 16) × 255 / 219), clamped to 0...255
    /// (values outside 16...235, footroom and headroom, are clipped as a display would).
    public static let lumaToFull: [UInt8] = byteLookupTable { (Double($0) - 16) * 255 / 219 }

    /// Limited-range chroma to full range: C' = round((C − 128) × 255 / 224 + 128), clamped.
    public static let chromaToFull: [UInt8] = byteLookupTable { (Double($0) - 128) * 255 / 224 + 128 }
}

/// A 256-entry lookup table for a byte: `transform` of each value, rounded and clamped to 0...255
/// (the range expansion here, and the photo effects' curves).
func byteLookupTable(_ transform: (Int) -> Double) -> [UInt8] {
    (0..<256).map { UInt8(min(255, max(0, transform($0).rounded()))) }
}

/// Applies a 256-entry lookup `table` to `height` rows of `width` bytes from `source` into
/// `target` (which may be `source` itself, for memory the caller owns): how limited-range planes
/// become full range on the way to the encoder, without memory of their own.
func mapPlane(_ source: UnsafePointer<UInt8>, stride sourceStride: Int, into target: UnsafeMutablePointer<UInt8>, stride targetStride: Int,
              width: Int, height: Int, table: [UInt8]) {
    table.withUnsafeBufferPointer { lookup in
        let lookup = lookup.baseAddress!
        for row in 0..<height {
            let from = source + row * sourceStride, to = target + row * targetStride
            for column in 0..<width { to[column] = lookup[Int(from[column])] }
        }
    }
}
