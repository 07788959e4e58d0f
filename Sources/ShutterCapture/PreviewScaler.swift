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

    /// `frame` (or its `crop`, in the frame's pixels) scaled to `wanted` pixels across (``size(width:height:wanted:)``), written into
    /// `memory` (resized when its size is not the small frame's): a frame owning those bytes.
    ///
    /// YUYV and UYVY are scaled as 4-byte macro-pixels (`ARGBScale`: each of the four bytes
    /// filtered among its own kind, two pixels to a macro-pixel), planar and NV12 frames plane by
    /// plane. A box filter when shrinking (every source pixel counts: no aliasing of the chart's
    /// fine lines), bilinear otherwise.
    ///
    /// - Throws: ``CaptureError/encoding(_:)`` for another pixel format, a short frame or a libyuv failure.
    /// The corresponding C functions are `ARGBScale`, `I420Scale`, `NV12Scale` and `ScalePlane`.
    static func downscale(_ frame: Frame, crop: CropRect? = nil, toWidth wanted: Int, into memory: inout [UInt8]) throws(CaptureError) -> Frame {
        let small = try frame.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws(CaptureError) -> FrameFormat in
            try downscale(raw, format: frame.format, crop: crop, toWidth: wanted, into: &memory)
        }
        var reduced = Frame(timestamp: frame.timestamp, sequence: frame.sequence, format: small, bytes: memory)
        reduced.instant = frame.instant
        return reduced
    }

    /// The bytes at `raw`, laid out as `format`, scaled into `memory` as
    /// ``downscale(_:crop:toWidth:into:)`` does; returns the small frame's layout.
    ///
    /// A crop is read where it lies (its planes' rows from its corner, on even coordinates so
    /// chroma stays paired): only its pixels are scaled, as digital zoom's photo takes only them.
    static func downscale(_ raw: UnsafeRawBufferPointer, format: FrameFormat, crop requested: CropRect? = nil, toWidth wanted: Int,
                          into memory: inout [UInt8]) throws(CaptureError) -> FrameFormat {
        guard formats.contains(format.pixelFormat) else {
            throw CaptureError.encoding("no preview for pixel format \(format.pixelFormat)")
        }
        guard let needed = format.frameBytes, raw.count >= needed, format.width >= 2, format.height >= 2 else {
            throw CaptureError.encoding("short frame: \(raw.count) bytes, \(format) needs \(format.frameBytes ?? 0)")
        }
        let crop = requested ?? CropRect(x: 0, y: 0, width: format.width, height: format.height)
        guard crop.x >= 0, crop.y >= 0, crop.width >= 2, crop.height >= 2,
              crop.x + crop.width <= format.width, crop.y + crop.height <= format.height
        else { throw CaptureError.encoding("crop \(crop) is outside the \(format.width)x\(format.height) frame") }
        let x0 = crop.x & ~1, y0 = crop.y & ~1, W = crop.width & ~1, H = crop.height & ~1
        let (width, height) = size(width: W, height: H, wanted: wanted)
        let small = FrameFormat(width: width, height: height, pixelFormat: format.pixelFormat, yuvRange: format.yuvRange)
        let smallBytes = small.frameBytes!
        if memory.count != smallBytes { memory = [UInt8](repeating: 0, count: smallBytes) }
        let filter = width < W ? kFilterBox : kFilterBilinear
        let sourceStride = format.bytesPerLine, fullHeight = format.height
        let base = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let packed = format.pixelFormat == .yuyv || format.pixelFormat == .uyvy
        let source = base + y0 * sourceStride + (packed ? x0 * 2 : x0)
        let result = memory.withUnsafeMutableBufferPointer { target -> Int32 in
            let destination = target.baseAddress!
            switch format.pixelFormat {
            case .yuyv, .uyvy:
                return ARGBScale(source, Int32(sourceStride), Int32(W / 2), Int32(H),
                                 destination, Int32(width * 2), Int32(width / 2), Int32(height), filter)
            case .yuv420:
                let chromaStride = sourceStride / 2, chromaRows = (fullHeight + 1) / 2
                let chromaOffset = (y0 / 2) * chromaStride + x0 / 2
                let u = base + sourceStride * fullHeight, v = u + chromaStride * chromaRows
                let (cropU, cropV) = (u + chromaOffset, v + chromaOffset)
                let smallU = destination + width * height, smallV = smallU + (width / 2) * ((height + 1) / 2)
                return I420Scale(source, Int32(sourceStride), cropU, Int32(chromaStride), cropV, Int32(chromaStride), Int32(W), Int32(H),
                                 destination, Int32(width), smallU, Int32(width / 2), smallV, Int32(width / 2),
                                 Int32(width), Int32(height), filter)
            case .nv12:
                return NV12Scale(source, Int32(sourceStride), base + sourceStride * fullHeight + (y0 / 2) * sourceStride + x0, Int32(sourceStride), Int32(W), Int32(H),
                                 destination, Int32(width), destination + width * height, Int32(width),
                                 Int32(width), Int32(height), filter)
            default:  // grey
                ScalePlane(source, Int32(sourceStride), Int32(W), Int32(H), destination, Int32(width), Int32(width), Int32(height), filter)
                return 0
            }
        }
        guard result == 0 else { throw CaptureError.encoding("libyuv could not scale the \(format) frame to \(width)x\(height) (\(result))") }
        return small
    }

    /// Gives the small frame in `memory`, laid out as `format`, the photo `effect`'s look, in
    /// place: its chroma bytes go through the effect's tables for the frame's range (the photo
    /// applies the same tables after expanding to full range). Grey frames have no chroma to change.
    static func apply(_ effect: PhotoEffect, to memory: inout [UInt8], format: FrameFormat) {
        guard let tables = effect.chromaTables(for: format.isLimitedRangeYUV ? .limited : .full), let total = format.frameBytes,
              memory.count >= total else { return }
        let lumaBytes = format.bytesPerLine * format.height
        // Where the first blue-difference and red-difference bytes lie, how far apart each kind's bytes are, and how far they go.
        let (firstU, firstV, step, start, end): (Int, Int, Int, Int, Int)
        switch format.pixelFormat {
        case .yuyv: (firstU, firstV, step, start, end) = (1, 3, 4, 0, total)
        case .uyvy: (firstU, firstV, step, start, end) = (0, 2, 4, 0, total)
        case .nv12: (firstU, firstV, step, start, end) = (0, 1, 2, lumaBytes, total)
        case .yuv420:
            let planeBytes = (format.bytesPerLine / 2) * ((format.height + 1) / 2)
            mapBytes(&memory, from: lumaBytes, to: lumaBytes + planeBytes, step: 1, table: tables.u)
            mapBytes(&memory, from: lumaBytes + planeBytes, to: lumaBytes + 2 * planeBytes, step: 1, table: tables.v)
            return
        default: return
        }
        mapBytes(&memory, from: start + firstU, to: end, step: step, table: tables.u)
        mapBytes(&memory, from: start + firstV, to: end, step: step, table: tables.v)
    }

    /// Maps every `step`th byte of `memory` from `start` up to `end` through `table`.
    private static func mapBytes(_ memory: inout [UInt8], from start: Int, to end: Int, step: Int, table: [UInt8]) {
        table.withUnsafeBufferPointer { lookup in
            memory.withUnsafeMutableBufferPointer { bytes in
                for index in stride(from: start, to: min(end, bytes.count), by: step) { bytes[index] = lookup[Int(bytes[index])] }
            }
        }
    }
}
