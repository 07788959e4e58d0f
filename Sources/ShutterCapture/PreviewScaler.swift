import CYUV
import ShutterCore

/// Downscales uncompressed frames for the live view with libyuv (SIMD), from where the frame lies
/// into a small buffer: no full-size copy, no colour conversion. The small frame keeps the
/// camera's layout and range, so the photo encoder takes it as it takes a full frame.
enum PreviewScaler {
    /// The formats a preview can be made from without libv4lconvert.
    static let formats: Set<PixelFormat> = [.yuyv, .uyvy, .yuv420, .nv12, .grey]

    /// The preview size of a `width`×`height` frame at `wanted` pixels across: no wider than the
    /// frame, even sizes (chroma pairs), the frame's aspect.
    static func size(width: Int, height: Int, wanted: Int) -> (width: Int, height: Int) {
        let newWidth = max(2, min(wanted, width) & ~1)
        let newHeight = max(2, Int((Double(height) * Double(newWidth) / Double(width)).rounded()) & ~1)
        return (newWidth, newHeight)
    }

    /// `frame` scaled to `wanted` pixels across (``size(width:height:wanted:)``), written into
    /// `memory` (resized when its size is not the small frame's): a frame owning those bytes.
    ///
    /// YUYV and UYVY are scaled as 4-byte macro-pixels (`ARGBScale`: each of the four bytes
    /// filtered among its own kind, two pixels to a macro-pixel), planar and NV12 frames plane by
    /// plane. A box filter when shrinking (every source pixel counts: no aliasing of the chart's
    /// fine lines), bilinear otherwise.
    ///
    /// - Throws: ``CaptureError/encoding(_:)`` for another pixel format, a short frame or a libyuv failure.
    /// The corresponding C functions are `ARGBScale`, `I420Scale`, `NV12Scale` and `ScalePlane`.
    static func downscale(_ frame: Frame, toWidth wanted: Int, into memory: inout [UInt8]) throws(CaptureError) -> Frame {
        let small = try frame.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws(CaptureError) -> FrameFormat in
            try downscale(raw, format: frame.format, toWidth: wanted, into: &memory)
        }
        var reduced = Frame(timestamp: frame.timestamp, sequence: frame.sequence, format: small, bytes: memory)
        reduced.instant = frame.instant
        return reduced
    }

    /// The bytes at `raw`, laid out as `format`, scaled into `memory` as
    /// ``downscale(_:toWidth:into:)`` does; returns the small frame's layout.
    static func downscale(_ raw: UnsafeRawBufferPointer, format: FrameFormat, toWidth wanted: Int,
                          into memory: inout [UInt8]) throws(CaptureError) -> FrameFormat {
        guard formats.contains(format.pixelFormat) else {
            throw CaptureError.encoding("no preview for pixel format \(format.pixelFormat)")
        }
        guard let needed = format.frameBytes, raw.count >= needed, format.width >= 2, format.height >= 2 else {
            throw CaptureError.encoding("short frame: \(raw.count) bytes, \(format) needs \(format.frameBytes ?? 0)")
        }
        let (width, height) = size(width: format.width, height: format.height, wanted: wanted)
        let small = FrameFormat(width: width, height: height, pixelFormat: format.pixelFormat, yuvRange: format.yuvRange)
        let smallBytes = small.frameBytes!
        if memory.count != smallBytes { memory = [UInt8](repeating: 0, count: smallBytes) }
        let filter = width < format.width ? kFilterBox : kFilterBilinear
        let sourceStride = format.bytesPerLine, W = format.width, H = format.height
        let result: Int32 = {
            let source = raw.bindMemory(to: UInt8.self).baseAddress!
            return memory.withUnsafeMutableBufferPointer { target -> Int32 in
                let destination = target.baseAddress!
                switch format.pixelFormat {
                case .yuyv, .uyvy:
                    return ARGBScale(source, Int32(sourceStride), Int32(W / 2), Int32(H),
                                     destination, Int32(width * 2), Int32(width / 2), Int32(height), filter)
                case .yuv420:
                    let chromaStride = sourceStride / 2, chromaRows = (H + 1) / 2
                    let u = source + sourceStride * H, v = u + chromaStride * chromaRows
                    let smallU = destination + width * height, smallV = smallU + (width / 2) * ((height + 1) / 2)
                    return I420Scale(source, Int32(sourceStride), u, Int32(chromaStride), v, Int32(chromaStride), Int32(W), Int32(H),
                                     destination, Int32(width), smallU, Int32(width / 2), smallV, Int32(width / 2),
                                     Int32(width), Int32(height), filter)
                case .nv12:
                    return NV12Scale(source, Int32(sourceStride), source + sourceStride * H, Int32(sourceStride), Int32(W), Int32(H),
                                     destination, Int32(width), destination + width * height, Int32(width),
                                     Int32(width), Int32(height), filter)
                default:  // grey
                    ScalePlane(source, Int32(sourceStride), Int32(W), Int32(H), destination, Int32(width), Int32(width), Int32(height), filter)
                    return 0
                }
            }
        }()
        guard result == 0 else { throw CaptureError.encoding("libyuv could not scale the \(format) frame to \(width)x\(height) (\(result))") }
        return small
    }
}
