import CTurboJPEG
import CYUV
#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import ShutterCore

/// A rectangle of a frame, in pixels; digital zoom's crop.
public struct CropRect: Hashable, Sendable {
    public var x: Int, y: Int, width: Int, height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The centred crop for a digital zoom `factor` of a `width`×`height` frame, on even
    /// coordinates and sizes so chroma planes stay aligned; the whole frame for factors ≤ 1.
    public static func digitalZoom(width: Int, height: Int, factor: Double) -> CropRect {
        guard factor.isFinite, factor > 1 else { return CropRect(x: 0, y: 0, width: width, height: height) }
        let cropWidth = max(16, Int((Double(width) / factor).rounded()) & ~1)
        let cropHeight = max(16, Int((Double(height) / factor).rounded()) & ~1)
        return CropRect(x: ((width - cropWidth) / 2) & ~1, y: ((height - cropHeight) / 2) & ~1,
                        width: min(cropWidth, width), height: min(cropHeight, height))
    }
}

/// An image decoded to packed RGB, for checks and for MJPEG frames that must be processed.
public struct RGBImage: Sendable {
    public var width: Int
    public var height: Int
    /// `width * height * 3` bytes, rows top to bottom.
    public var pixels: [UInt8]

    /// The pixel at `x`, `y` as (r, g, b).
    public func pixel(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8) {
        let index = (y * width + x) * 3
        return (pixels[index], pixels[index + 1], pixels[index + 2])
    }
}

/// Encodes frames to JPEG with libjpeg-turbo's TurboJPEG API.
///
/// One encoder per thread: a TurboJPEG handle must not be used from two threads at once.
///
/// The encoder keeps its working memory from one frame to the next: the planes a YUYV or NV12
/// frame is split into (or a limited-range frame expanded into), and TurboJPEG's output buffer. Made fresh for every photo, they are a few
/// megabytes at 1920x1080 (the planes alone 4 MB for YUYV), which malloc hands out as new pages:
/// about a thousand page faults per photo. Keep one encoder for a series of photos (the capture
/// service keeps one on its encode worker); the JPEGs are the same either way.
///
/// An encoder made with `strips` above 1 encodes a large frame (Y'CbCr, RGB or grey) in that
/// many horizontal strips at once, each on its own core with an encoder of its own, joined with
/// restart markers into one baseline JPEG of the same pixels (``JPEGStripLayout``): a photo is
/// written sooner by about the number of cores, for the same work.
public final class JPEGEncoder {
    private let handle: tjhandle
    /// The most strips a frame is encoded in at once; 1 encodes every frame whole.
    public let strips: Int
    /// Encoders for the strips after the first, each with the thread it runs on (batch work,
    /// see ``BatchWorker``), made on the first frame cut in as many strips and kept.
    private var helpers: [(encoder: JPEGEncoder, worker: BatchWorker)] = []
    /// Plane memory kept between frames, grown to the largest frame split so far.
    private var planes: UnsafeMutablePointer<UInt8>?
    private var planeCapacity = 0
    /// TurboJPEG's output buffer (from `tjAlloc`), kept between frames, grown to the largest
    /// worst-case size (`tjBufSize`) asked for so far.
    private var output: UnsafeMutablePointer<UInt8>?
    private var outputCapacity = 0

    /// - Parameter strips: the most horizontal strips a frame is encoded in at once (see above);
    ///   ``photoStrips`` for photos, 1 (the default) to encode on the calling thread only.
    /// - Throws: ``CaptureError/encoding(_:)`` when TurboJPEG cannot start.
    ///
    /// The corresponding C function is `tjInitCompress`.
    public init(strips: Int = 1) throws(CaptureError) {
        guard let handle = tjInitCompress() else { throw CaptureError.encoding("tjInitCompress failed") }
        self.handle = handle
        self.strips = max(1, strips)
    }

    /// Strips for photos: the system's online cores, at most 8. The corresponding C function is `sysconf(_SC_NPROCESSORS_ONLN)`.
    public static let photoStrips = min(8, max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))))

    deinit {
        planes?.deallocate()
        if let output { tjFree(output) }
        tjDestroy(handle)
    }

    /// Plane memory of at least `count` bytes, kept for the next frame; its contents are whatever
    /// the last frame left (every caller writes the bytes it encodes).
    private func planeMemory(_ count: Int) -> UnsafeMutablePointer<UInt8> {
        if let planes, planeCapacity >= count { return planes }
        planes?.deallocate()
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: max(count, 1))
        planes = grown
        planeCapacity = max(count, 1)
        return grown
    }

    /// Calls `compress` with the kept output buffer, large enough for any `width`×`height` JPEG
    /// of `subsampling`, and its size; returns the JPEG it wrote. TurboJPEG is told not to
    /// reallocate the buffer (`TJFLAG_NOREALLOC`): the worst case fits, and the buffer stays ours.
    ///
    /// The corresponding C functions are `tjBufSize` and `tjAlloc`.
    private func compressed(width: Int, height: Int, subsampling: TJSAMP, _ call: String,
                            _ compress: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, UnsafeMutablePointer<UInt>, Int32) -> Int32)
        throws(CaptureError) -> [UInt8] {
        let bound = tjBufSize(Int32(width), Int32(height), Int32(subsampling.rawValue))
        // tjBufSize says -1 (as unsigned long) for bad arguments; tjAlloc takes an int.
        guard bound != UInt(bitPattern: -1), bound <= UInt(Int32.max) else {
            throw CaptureError.encoding("tjBufSize: no JPEG buffer for \(width)x\(height)")
        }
        if output == nil || outputCapacity < Int(bound) {
            if let output { tjFree(output) }
            output = nil
            outputCapacity = 0
            guard let grown = tjAlloc(Int32(bound)) else { throw CaptureError.encoding("tjAlloc(\(bound)) failed") }
            output = grown
            outputCapacity = Int(bound)
        }
        var buffer = output
        var size = UInt(outputCapacity)
        let result = compress(&buffer, &size, Self.stillFlags | TJFLAG_NOREALLOC)
        guard result == 0, let buffer else { throw failure(call) }
        return Array(UnsafeBufferPointer(start: buffer, count: Int(size)))
    }

    /// Stills take the accurate integer DCT: the fast one saves a few milliseconds per photo and
    /// costs visible error at high quality.
    static let stillFlags: Int32 = TJFLAG_ACCURATEDCT

    private func failure(_ call: String) -> CaptureError {
        .encoding("\(call): \(String(cString: tjGetErrorStr2(handle)))")
    }

    /// The frame (or its `crop`) as a JPEG at `quality`; MJPEG frames without a crop are returned
    /// as they are, with the standard Huffman tables added when missing. Limited-range YUV
    /// (``FrameFormat/yuvRange``) is expanded to JPEG's full range on the way, in the encoder's
    /// kept plane memory (the frame itself is only read).
    ///
    /// - Throws: ``CaptureError/encoding(_:)`` for unsupported formats, short frames and encoder errors.
    /// The corresponding C functions are `tjCompressFromYUVPlanes` and `tjCompress2`.
    public func encode(_ frame: Frame, crop requested: CropRect? = nil, quality: Int) throws(CaptureError) -> [UInt8] {
        if frame.needsResolving { return try encode(frame.resolved(), crop: requested, quality: quality) }
        let format = frame.format
        let crop = requested ?? CropRect(x: 0, y: 0, width: format.width, height: format.height)
        guard crop.x >= 0, crop.y >= 0, crop.width > 0, crop.height > 0,
              crop.x + crop.width <= format.width, crop.y + crop.height <= format.height
        else { throw CaptureError.encoding("crop \(crop) is outside the \(format.width)x\(format.height) frame") }
        let whole = crop == CropRect(x: 0, y: 0, width: format.width, height: format.height)
        if format.pixelFormat.isJPEG {
            guard let fixed = JPEGMarkers.insertingHuffmanTablesIfMissing(frame.bytes), JPEGMarkers.isComplete(fixed) else {
                throw CaptureError.encoding("the camera sent a damaged MJPEG frame")
            }
            if whole { return fixed }
            let image = try JPEGDecoder().decode(fixed)
            return try encodeRGB(image, crop: crop, quality: quality)
        }
        if let needed = format.frameBytes, frame.byteCount < needed {
            throw CaptureError.encoding("short frame: \(frame.byteCount) bytes, \(format) needs \(needed)")
        }
        // Every path below reads the frame where it lies (for a V4L2 camera: the driver's own
        // buffer, held out of its queue until this returns).
        return try frame.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws(CaptureError) -> [UInt8] in
            try encodeRaw(raw.bindMemory(to: UInt8.self).baseAddress!, format: format, crop: crop, quality: quality)
        }
    }

    /// Encodes an uncompressed frame of `format` at `source` (or its `crop`).
    private func encodeRaw(_ source: UnsafePointer<UInt8>, format: FrameFormat, crop: CropRect, quality: Int) throws(CaptureError) -> [UInt8] {
        let stride = format.bytesPerLine
        switch format.pixelFormat {
        case .yuyv, .uyvy:
            // The one conversion YUYV needs: TurboJPEG takes planes, not interleaved 4:2:2. libyuv
            // (SIMD) makes 4:2:0 planes of the crop (each chroma sample the mean of two rows), which
            // TurboJPEG then encodes as they are. 4:2:0 as phones, `fswebcam` (libjpeg's default)
            // and the effects path (``YUVImage``) write it: a quarter fewer blocks to transform and
            // code than 4:2:2, measured 137 → 108 ms for a 1920×1080 frame in the VM.
            let x0 = crop.x & ~1, w = crop.width & ~1, h = crop.height
            let chromaWidth = w / 2, chromaHeight = (h + 1) / 2
            // The planes go in the encoder's kept memory, one after another (see ``planeMemory(_:)``).
            let y = planeMemory(w * h + 2 * chromaWidth * chromaHeight)
            let u = y + w * h, v = u + chromaWidth * chromaHeight
            let start = source + crop.y * stride + x0 * 2
            let yuyv = format.pixelFormat == .yuyv, limited = format.isLimitedRangeYUV
            // Each strip splits its own rows (libyuv makes chroma row r/2 of source rows r and
            // r + 1, and strips start on even rows) and expands them where they lie.
            return try compressPlanes(y, u, v, width: w, height: h, strides: (w, chromaWidth, chromaWidth),
                                      subsampling: TJSAMP_420, quality: quality) { rows throws(CaptureError) in
                let chromaRow = rows.lowerBound / 2, chromaRows = (rows.count + 1) / 2
                let from = start + rows.lowerBound * stride
                let y = y + rows.lowerBound * w, u = u + chromaRow * chromaWidth, v = v + chromaRow * chromaWidth
                let split = yuyv
                    ? YUY2ToI420(from, Int32(stride), y, Int32(w), u, Int32(chromaWidth), v, Int32(chromaWidth), Int32(w), Int32(rows.count))
                    : UYVYToI420(from, Int32(stride), y, Int32(w), u, Int32(chromaWidth), v, Int32(chromaWidth), Int32(w), Int32(rows.count))
                guard split == 0 else { throw CaptureError.encoding("libyuv could not split the \(format.pixelFormat) frame (\(split))") }
                guard limited else { return }
                mapPlane(y, stride: w, into: y, stride: w, width: w, height: rows.count, table: YUVRange.lumaToFull)
                mapPlane(u, stride: chromaWidth, into: u, stride: chromaWidth, width: chromaWidth, height: chromaRows, table: YUVRange.chromaToFull)
                mapPlane(v, stride: chromaWidth, into: v, stride: chromaWidth, width: chromaWidth, height: chromaRows, table: YUVRange.chromaToFull)
            }
        case .nv12, .yuv420:
            // Straight from the frame's planes: TurboJPEG takes a pointer and a stride per plane,
            // so the crop is only an offset. YUV420 needs no copy at all; NV12's interleaved
            // chroma is split by libyuv (SIMD) into two small planes, its luma is not copied.
            // Limited range is the exception: the frame's bytes are only read, so the expanded
            // planes go in the encoder's kept memory (the crop of them only). Each strip
            // prepares its own rows.
            let x0 = crop.x & ~1, y0 = crop.y & ~1, w = crop.width & ~1, h = crop.height & ~1
            let chromaWidth = w / 2, chromaHeight = h / 2
            let chromaStart = stride * format.height
            let limited = format.isLimitedRangeYUV
            let luma = source + y0 * stride + x0
            let lumaBytes = limited ? w * h : 0
            if format.pixelFormat == .yuv420 {
                let chromaStride = stride / 2, chromaRows = (format.height + 1) / 2
                let offset = (y0 / 2) * chromaStride + x0 / 2
                let sourceU = source + chromaStart + offset, sourceV = source + chromaStart + chromaStride * chromaRows + offset
                guard limited else {
                    return try compressPlanes(luma, sourceU, sourceV, width: w, height: h, strides: (stride, chromaStride, chromaStride),
                                              subsampling: TJSAMP_420, quality: quality)
                }
                let y = planeMemory(lumaBytes + 2 * chromaWidth * chromaHeight)
                let u = y + lumaBytes, v = u + chromaWidth * chromaHeight
                return try compressPlanes(y, u, v, width: w, height: h, strides: (w, chromaWidth, chromaWidth),
                                          subsampling: TJSAMP_420, quality: quality) { rows throws(CaptureError) in
                    let chromaRow = rows.lowerBound / 2, chromaRows = rows.count / 2
                    mapPlane(luma + rows.lowerBound * stride, stride: stride, into: y + rows.lowerBound * w, stride: w,
                             width: w, height: rows.count, table: YUVRange.lumaToFull)
                    mapPlane(sourceU + chromaRow * chromaStride, stride: chromaStride, into: u + chromaRow * chromaWidth, stride: chromaWidth,
                             width: chromaWidth, height: chromaRows, table: YUVRange.chromaToFull)
                    mapPlane(sourceV + chromaRow * chromaStride, stride: chromaStride, into: v + chromaRow * chromaWidth, stride: chromaWidth,
                             width: chromaWidth, height: chromaRows, table: YUVRange.chromaToFull)
                }
            }
            let y = planeMemory(lumaBytes + 2 * chromaWidth * chromaHeight)
            let u = y + lumaBytes, v = u + chromaWidth * chromaHeight
            let sourceUV = source + chromaStart + (y0 / 2) * stride + x0
            return try compressPlanes(limited ? UnsafePointer(y) : luma, u, v, width: w, height: h,
                                      strides: (limited ? w : stride, chromaWidth, chromaWidth), subsampling: TJSAMP_420,
                                      quality: quality) { rows throws(CaptureError) in
                let chromaRow = rows.lowerBound / 2, chromaRows = rows.count / 2
                let u = u + chromaRow * chromaWidth, v = v + chromaRow * chromaWidth
                SplitUVPlane(sourceUV + chromaRow * stride, Int32(stride), u, Int32(chromaWidth), v, Int32(chromaWidth),
                             Int32(chromaWidth), Int32(chromaRows))
                guard limited else { return }
                mapPlane(luma + rows.lowerBound * stride, stride: stride, into: y + rows.lowerBound * w, stride: w,
                         width: w, height: rows.count, table: YUVRange.lumaToFull)
                mapPlane(u, stride: chromaWidth, into: u, stride: chromaWidth, width: chromaWidth, height: chromaRows, table: YUVRange.chromaToFull)
                mapPlane(v, stride: chromaWidth, into: v, stride: chromaWidth, width: chromaWidth, height: chromaRows, table: YUVRange.chromaToFull)
            }
        case .rgb24, .bgr24, .grey:
            let (pixelFormat, bytesPerPixel, subsampling): (TJPF, Int, TJSAMP) = switch format.pixelFormat {
            case .rgb24: (TJPF_RGB, 3, TJSAMP_420)
            case .bgr24: (TJPF_BGR, 3, TJSAMP_420)
            default: (TJPF_GRAY, 1, TJSAMP_GRAY)
            }
            return try compressPacked(source + crop.y * stride + crop.x * bytesPerPixel, width: crop.width, pitch: stride,
                                      height: crop.height, pixelFormat: pixelFormat, subsampling: subsampling, quality: quality)
        default:
            throw CaptureError.encoding("pixel format \(format.pixelFormat) cannot be encoded")
        }
    }

    /// `image` (or its crop) as a JPEG.
    public func encodeRGB(_ image: RGBImage, crop: CropRect? = nil, quality: Int) throws(CaptureError) -> [UInt8] {
        let crop = crop ?? CropRect(x: 0, y: 0, width: image.width, height: image.height)
        return try image.pixels.withUnsafeBufferPointerTyped { source throws(CaptureError) in
            let start = source.baseAddress!.advanced(by: (crop.y * image.width + crop.x) * 3)
            return try compressPacked(start, width: crop.width, pitch: image.width * 3, height: crop.height,
                                      pixelFormat: TJPF_RGB, subsampling: TJSAMP_420, quality: quality)
        }
    }

    /// Encodes packed pixels (RGB, BGR, grey) where they lie, in strips at once when this
    /// encoder has more than one (``strips``) and the frame is large enough
    /// (``JPEGStripLayout``): TurboJPEG converts and downsamples each MCU row on its own, so a
    /// strip of whole MCU rows encodes as those rows of the whole frame do. The corresponding C
    /// function is `tjCompress2`.
    private func compressPacked(_ start: UnsafePointer<UInt8>, width: Int, pitch: Int, height: Int,
                                pixelFormat: TJPF, subsampling: TJSAMP, quality: Int) throws(CaptureError) -> [UInt8] {
        if let layout = JPEGStripLayout(width: width, height: height, subsampling: subsampling, maxStrips: strips),
           let joined = try inStrips(layout, height: height, encode: { encoder, rows throws(CaptureError) in
               try encoder.compressPackedWhole(start + rows.lowerBound * pitch, width: width, pitch: pitch, height: rows.count,
                                               pixelFormat: pixelFormat, subsampling: subsampling, quality: quality)
           }) {
            return joined
        }
        return try compressPackedWhole(start, width: width, pitch: pitch, height: height, pixelFormat: pixelFormat,
                                       subsampling: subsampling, quality: quality)
    }

    private func compressPackedWhole(_ start: UnsafePointer<UInt8>, width: Int, pitch: Int, height: Int,
                                     pixelFormat: TJPF, subsampling: TJSAMP, quality: Int) throws(CaptureError) -> [UInt8] {
        try compressed(width: width, height: height, subsampling: subsampling, "tjCompress2") { output, size, flags in
            tjCompress2(handle, start, Int32(width), Int32(pitch), Int32(height), pixelFormat.rawValue,
                        output, size, Int32(subsampling.rawValue), Int32(quality), flags)
        }
    }

    /// Fills the rows of the planes a strip encodes (luma rows `rows`, and the chroma rows under
    /// them) from the frame: how a frame's conversion (libyuv's split, the range expansion) is
    /// done by each strip's worker for its own rows, or once for every row when the frame is
    /// encoded whole. Strips start on whole MCU rows, so on an even row.
    typealias PlanePreparation = (_ rows: Range<Int>) throws(CaptureError) -> Void

    /// Encodes three planes where they lie (no copy), in strips at once when this encoder has
    /// more than one (``strips``) and the frame is large enough (``JPEGStripLayout``), after
    /// `prepare` has filled each strip's rows. The corresponding C function is `tjCompressFromYUVPlanes`.
    func compressPlanes(_ y: UnsafePointer<UInt8>, _ u: UnsafePointer<UInt8>, _ v: UnsafePointer<UInt8>, width: Int, height: Int,
                        strides: (Int, Int, Int), subsampling: TJSAMP, quality: Int,
                        prepare: PlanePreparation? = nil) throws(CaptureError) -> [UInt8] {
        if let layout = JPEGStripLayout(width: width, height: height, subsampling: subsampling, maxStrips: strips) {
            // A strip starting at luma row r starts at chroma row r / (MCU height / 8): halved for
            // 4:2:0 and 4:4:0, the same row otherwise. Grey has one plane (u and v are not read).
            let chromaDivisor = (JPEGStripLayout.mcuSize(subsampling)?.height ?? 8) / 8
            let grey = subsampling == TJSAMP_GRAY
            if let joined = try inStrips(layout, height: height, encode: { encoder, rows throws(CaptureError) in
                try prepare?(rows)
                let chromaRow = rows.lowerBound / chromaDivisor
                return try encoder.compressWhole(y + rows.lowerBound * strides.0, grey ? u : u + chromaRow * strides.1,
                                                 grey ? v : v + chromaRow * strides.2, width: width, height: rows.count,
                                                 strides: strides, subsampling: subsampling, quality: quality)
            }) {
                return joined
            }
            // Strips TurboJPEG wrote so they cannot be joined (see `join`): every row is
            // prepared by now, so the frame is encoded whole from the same planes.
        } else {
            try prepare?(0..<height)
        }
        return try compressWhole(y, u, v, width: width, height: height, strides: strides, subsampling: subsampling, quality: quality)
    }

    /// Encodes the strips of `layout` at once, the first on the calling thread and each other on
    /// a kept helper encoder's queue, and joins them (``JPEGStrips/join(_:height:restartInterval:)``);
    /// `nil` when TurboJPEG wrote strips that cannot be joined (the caller then encodes whole).
    /// `encode` encodes the given rows with the given encoder, and is called once per strip.
    private func inStrips(_ layout: JPEGStripLayout, height: Int,
                          encode: @escaping (JPEGEncoder, Range<Int>) throws(CaptureError) -> [UInt8]) throws(CaptureError) -> [UInt8]? {
        let helpers = try stripHelpers(layout.rows.count - 1)
        let job = StripJob(layout: layout, encoders: [self] + helpers.map(\.encoder), encode: encode)
        // Threads of their own, not `concurrentPerform`: libdispatch on Linux starts a timer
        // that wakes the process once a second for good (its workqueue monitor,
        // `_dispatch_workq_init_once`) when a worker of a global concurrent queue first runs,
        // and an idle rig must not wake; and a strip's helper must not preempt whoever the
        // press woke (``BatchWorker``).
        let group = DispatchGroup()
        for (index, helper) in helpers.enumerated() { helper.worker.async(group: group) { job.run(strip: index + 1) } }
        job.run(strip: 0)
        group.wait()
        var jpegs: [[UInt8]] = []
        for result in job.finish() { jpegs.append(try result.get()) }
        return JPEGStrips.join(jpegs, height: height, restartInterval: layout.restartInterval)
    }

    /// `count` kept encoders with their workers, made when fewer are kept.
    private func stripHelpers(_ count: Int) throws(CaptureError) -> ArraySlice<(encoder: JPEGEncoder, worker: BatchWorker)> {
        while helpers.count < count {
            helpers.append((try JPEGEncoder(), BatchWorker(name: "shutter-strip")))
        }
        return helpers.prefix(count)
    }

    private func compressWhole(_ y: UnsafePointer<UInt8>, _ u: UnsafePointer<UInt8>, _ v: UnsafePointer<UInt8>, width: Int, height: Int,
                               strides: (Int, Int, Int), subsampling: TJSAMP, quality: Int) throws(CaptureError) -> [UInt8] {
        var planes: [UnsafePointer<UInt8>?] = [y, u, v]
        var pitches: [Int32] = [Int32(strides.0), Int32(strides.1), Int32(strides.2)]
        return try compressed(width: width, height: height, subsampling: subsampling, "tjCompressFromYUVPlanes") { output, size, flags in
            tjCompressFromYUVPlanes(handle, &planes, Int32(width), &pitches, Int32(height),
                                    Int32(subsampling.rawValue), output, size, Int32(quality), flags)
        }
    }
}

/// One frame's strips being encoded at once (the first on the calling thread, each other on its
/// encoder's queue): how a strip is encoded, and a slot per strip for the JPEG it made.
private final class StripJob: @unchecked Sendable {
    // @unchecked: strip i uses only encoders[i] and results[i], and `encode` reads (and for
    // planes a strip prepares, writes) only strip i's rows of the frame for strip i. The caller
    // waits on a DispatchGroup for every worker, so `finish()` sees every slot written.
    private let layout: JPEGStripLayout
    private let encoders: [JPEGEncoder]
    private let encode: (JPEGEncoder, Range<Int>) throws(CaptureError) -> [UInt8]
    private let results: UnsafeMutableBufferPointer<Result<[UInt8], CaptureError>>

    init(layout: JPEGStripLayout, encoders: [JPEGEncoder], encode: @escaping (JPEGEncoder, Range<Int>) throws(CaptureError) -> [UInt8]) {
        self.layout = layout
        self.encoders = encoders
        self.encode = encode
        results = .allocate(capacity: layout.rows.count)
        results.initialize(repeating: .success([]))
    }

    deinit {
        results.deinitialize()
        results.deallocate()
    }

    /// Encodes strip `index` into its slot.
    func run(strip index: Int) {
        let encoder = encoders[index], rows = layout.rows[index]
        results[index] = Result { () throws(CaptureError) -> [UInt8] in try encode(encoder, rows) }
    }

    /// What the strips made, once every worker is done.
    func finish() -> [Result<[UInt8], CaptureError>] { Array(results) }
}

/// Decodes JPEG files to RGB: the checks' way of looking at a photo, and MJPEG digital zoom.
public final class JPEGDecoder {
    private let handle: tjhandle

    /// The corresponding C function is `tjInitDecompress`.
    public init() throws(CaptureError) {
        guard let handle = tjInitDecompress() else { throw CaptureError.encoding("tjInitDecompress failed") }
        self.handle = handle
    }

    deinit { tjDestroy(handle) }

    /// The width and height a JPEG declares. The corresponding C function is `tjDecompressHeader3`.
    public func size(of jpeg: [UInt8]) throws(CaptureError) -> (width: Int, height: Int) {
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        let result = jpeg.withUnsafeBufferPointer {
            tjDecompressHeader3(handle, $0.baseAddress, UInt($0.count), &width, &height, &subsampling, &colorspace)
        }
        guard result == 0 else { throw CaptureError.encoding("not a JPEG: \(String(cString: tjGetErrorStr2(handle)))") }
        return (Int(width), Int(height))
    }

    /// The whole image as RGB. The corresponding C function is `tjDecompress2`.
    public func decode(_ jpeg: [UInt8]) throws(CaptureError) -> RGBImage {
        let (width, height) = try size(of: jpeg)
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        let result = jpeg.withUnsafeBufferPointer { source in
            pixels.withUnsafeMutableBufferPointer { target in
                tjDecompress2(handle, source.baseAddress, UInt(source.count), target.baseAddress, Int32(width), 0,
                              Int32(height), TJPF_RGB.rawValue, 0)
            }
        }
        guard result == 0 else { throw CaptureError.encoding("decoding failed: \(String(cString: tjGetErrorStr2(handle)))") }
        return RGBImage(width: width, height: height, pixels: pixels)
    }
}

/// A JPEG decoded at a reduced scale into planar Y'CbCr, as the file's subsampling has it.
struct DecodedPlanes {
    var width: Int
    var height: Int
    var subsampling: TJSAMP
    /// Where each plane starts in the decoder's memory, and its row stride; one plane for grey.
    var offsets: [Int]
    var strides: [Int]
}

extension JPEGDecoder {
    /// The size TurboJPEG decodes a `width`×`height` JPEG to at the largest reduction that keeps
    /// at least `wanted` pixels across (1/2, 3/8, 1/4…); the full size when none does.
    /// The corresponding C function is `tjGetScalingFactors`.
    public static func scaledSize(width: Int, height: Int, atLeast wanted: Int) -> (width: Int, height: Int) {
        var count: Int32 = 0
        guard let factors = tjGetScalingFactors(&count) else { return (width, height) }
        // TJSCALED: the scaled size, rounded up, as the decoder makes it.
        func scaled(_ size: Int, _ factor: tjscalingfactor) -> Int {
            (size * Int(factor.num) + Int(factor.denom) - 1) / Int(factor.denom)
        }
        var best = (width: width, height: height)
        for index in 0..<Int(count) {
            let factor = factors[index]
            guard factor.num < factor.denom else { continue }  // reductions only
            let candidate = (width: scaled(width, factor), height: scaled(height, factor))
            if candidate.width >= wanted, candidate.width < best.width { best = candidate }
        }
        return best
    }

    /// Decodes `jpeg` at the reduced scale ``scaledSize(width:height:atLeast:)`` gives for `wanted`
    /// into planes in `memory` (grown when too small, kept by the caller for the next frame): no
    /// colour conversion, and a fraction of a full decode's work (the IDCT makes the smaller
    /// image directly). The corresponding C function is `tjDecompressToYUVPlanes`.
    /// - Throws: ``CaptureError/encoding(_:)`` for a damaged JPEG or a subsampling TurboJPEG cannot name.
    func decodePlanes(_ jpeg: UnsafeRawBufferPointer, atLeast wanted: Int, into memory: inout [UInt8]) throws(CaptureError) -> DecodedPlanes {
        let source = jpeg.bindMemory(to: UInt8.self)
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        guard tjDecompressHeader3(handle, source.baseAddress, UInt(source.count), &width, &height, &subsampling, &colorspace) == 0 else {
            throw CaptureError.encoding("not a JPEG: \(String(cString: tjGetErrorStr2(handle)))")
        }
        guard subsampling >= 0 else { throw CaptureError.encoding("the JPEG's subsampling is not one TurboJPEG can decode to planes") }
        let size = Self.scaledSize(width: Int(width), height: Int(height), atLeast: wanted)
        let planeCount = subsampling == Int32(TJSAMP_GRAY.rawValue) ? 1 : 3
        var offsets: [Int] = [], strides: [Int] = [], total = 0
        for plane in 0..<planeCount {
            let planeWidth = Int(tjPlaneWidth(Int32(plane), Int32(size.width), subsampling))
            let planeHeight = Int(tjPlaneHeight(Int32(plane), Int32(size.height), subsampling))
            offsets.append(total)
            strides.append(planeWidth)
            total += planeWidth * planeHeight
        }
        if memory.count < total { memory = [UInt8](repeating: 0, count: total) }
        var pitches = strides.map { Int32($0) }
        let result = memory.withUnsafeMutableBufferPointer { target -> Int32 in
            var planes: [UnsafeMutablePointer<UInt8>?] = offsets.map { target.baseAddress! + $0 }
            return tjDecompressToYUVPlanes(handle, source.baseAddress, UInt(source.count), &planes, Int32(size.width), &pitches,
                                           Int32(size.height), 0)
        }
        guard result == 0 else { throw CaptureError.encoding("decoding failed: \(String(cString: tjGetErrorStr2(handle)))") }
        // TJSAMP is an unsigned enum in libjpeg-turbo 2.x (Debian 12, 13) and a signed one in 3.x
        // (Debian sid: TJSAMP_UNKNOWN is -1): its raw value is taken as whichever it is.
        return DecodedPlanes(width: size.width, height: size.height, subsampling: TJSAMP(rawValue: .init(truncatingIfNeeded: subsampling)),
                             offsets: offsets, strides: strides)
    }
}

extension JPEGEncoder {
    /// Encodes planes ``JPEGDecoder/decodePlanes(_:atLeast:into:)`` made, where they lie in `memory`.
    func encode(_ planes: DecodedPlanes, in memory: [UInt8], quality: Int) throws(CaptureError) -> [UInt8] {
        try memory.withUnsafeBufferPointerTyped { base throws(CaptureError) -> [UInt8] in
            let start = base.baseAddress!
            let y = start + planes.offsets[0]
            let u = planes.offsets.count > 1 ? start + planes.offsets[1] : y, v = planes.offsets.count > 2 ? start + planes.offsets[2] : y
            let strides = (planes.strides[0], planes.strides.count > 1 ? planes.strides[1] : 0, planes.strides.count > 2 ? planes.strides[2] : 0)
            return try compressPlanes(y, u, v, width: planes.width, height: planes.height, strides: strides,
                                      subsampling: planes.subsampling, quality: quality)
        }
    }
}

/// A small copy of a JPEG photo for a listing (`/photos/`): decoded at the largest TurboJPEG
/// reduction that keeps at least `width` pixels across (so never wider than twice that unless
/// the photo is), and encoded again at `quality`. A photo no wider than `width` is re-encoded at
/// its own size.
///
/// - Parameters:
///   - jpeg: the photo file's bytes.
///   - width: the least width wanted (≥ 1).
///   - quality: JPEG quality, 1...100.
/// - Returns: the thumbnail's JPEG and its size.
/// - Throws: ``CaptureError/encoding(_:)`` for a damaged JPEG or a bad width or quality.
/// The corresponding C functions are `tjDecompressToYUVPlanes` and `tjCompressFromYUVPlanes`.
public func makeThumbnail(ofJPEG jpeg: [UInt8], width: Int, quality: Int = 80) throws(CaptureError) -> (jpeg: [UInt8], width: Int, height: Int) {
    guard width >= 1 else { throw CaptureError.encoding("a thumbnail needs a width of at least 1 pixel, not \(width)") }
    guard (1...100).contains(quality) else { throw CaptureError.encoding("quality \(quality) is outside 1...100") }
    var memory: [UInt8] = []
    let decoder = try JPEGDecoder()
    let planes = try jpeg.withUnsafeBufferPointerTyped { (bytes: UnsafeBufferPointer<UInt8>) throws(CaptureError) -> DecodedPlanes in
        try decoder.decodePlanes(UnsafeRawBufferPointer(bytes), atLeast: width, into: &memory)
    }
    let encoded = try JPEGEncoder().encode(planes, in: memory, quality: quality)
    return (encoded, planes.width, planes.height)
}

extension DecodedPlanes {
    /// How many luma pixels one chroma sample spans, across and down, for this subsampling.
    private var chromaSpan: (x: Int, y: Int) {
        switch subsampling {
        case TJSAMP_420: return (2, 2)
        case TJSAMP_422: return (2, 1)
        case TJSAMP_440: return (1, 2)
        case TJSAMP_411: return (4, 1)
        default: return (1, 1)
        }
    }

    /// These planes' `crop`, its corner on whole chroma samples: the same memory, read from the crop's corner.
    func cropped(to crop: CropRect) -> DecodedPlanes {
        let span = chromaSpan
        let x = crop.x / span.x * span.x, y = crop.y / span.y * span.y
        var cropped = self
        cropped.width = min(crop.width, width - x)
        cropped.height = min(crop.height, height - y)
        for plane in offsets.indices {
            let (px, py) = plane == 0 ? (x, y) : (x / span.x, y / span.y)
            cropped.offsets[plane] = offsets[plane] + py * strides[plane] + px
        }
        return cropped
    }

    /// Gives the decoded planes in `memory` the photo `effect`'s look, in place (a JPEG's chroma is full range).
    func apply(_ effect: PhotoEffect, to memory: inout [UInt8]) {
        guard offsets.count == 3, let tables = effect.chromaTables(for: .full) else { return }
        let planeBytes = offsets[2] - offsets[1]  // the two chroma planes are the same size
        Self.map(&memory, from: offsets[1], count: planeBytes, table: tables.u)
        Self.map(&memory, from: offsets[2], count: planeBytes, table: tables.v)
    }

    private static func map(_ memory: inout [UInt8], from start: Int, count: Int, table: [UInt8]) {
        table.withUnsafeBufferPointer { lookup in
            memory.withUnsafeMutableBufferPointer { bytes in
                for index in start..<min(start + count, bytes.count) { bytes[index] = lookup[Int(bytes[index])] }
            }
        }
    }
}
