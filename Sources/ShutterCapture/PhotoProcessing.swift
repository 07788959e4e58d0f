import CTurboJPEG
import CYUV
import ShutterCore

/// What happens to a frame's pixels between the ring and the JPEG: digital zoom's crop (scaled
/// back to the frame's size or not) and the photo effect a picker chose.
///
/// This is the boundary between frame acquisition (the ring, driver buffers) and the saved
/// photo: the capture path hands a frame and this to ``encodePhoto(_:processing:quality:encoder:)``,
/// which returns the JPEG and its size. The frame's bytes are only read, never changed, so a
/// frame still held in the ring (or a driver buffer) can be processed in place.
public struct PhotoProcessing: Hashable, Sendable {
    /// Digital zoom's centred crop; `nil` for the whole frame.
    public var crop: CropRect?
    /// Scale the crop back to the frame's size (the phone's behaviour, the default) instead of
    /// saving it at its own size (`digitalZoom: "crop"`).
    public var scaleToFrame: Bool
    /// The look applied before encoding.
    public var effect: PhotoEffect

    public init(crop: CropRect? = nil, scaleToFrame: Bool = true, effect: PhotoEffect = .none) {
        self.crop = crop
        self.scaleToFrame = scaleToFrame
        self.effect = effect
    }

    /// Whether the frame is encoded as it is (MJPEG frames are then saved as they came).
    public var isIdentity: Bool { crop == nil && effect == .none }
}

/// A JPEG and the size it declares.
public struct EncodedPhoto: Sendable {
    public var jpeg: [UInt8]
    public var width: Int
    public var height: Int
}

/// `frame` processed as `processing` says and encoded at `quality`.
///
/// Without an effect and without scaling, TurboJPEG encodes straight from the frame's planes
/// (a crop is only an offset). Otherwise the frame (or its crop) is brought to planar 4:2:0
/// with libyuv, scaled back to the frame's size with libyuv's bilinear filter, given its
/// effect on the chroma planes, and encoded from there. MJPEG frames are decoded first, so an
/// effect or a zoom on an MJPEG camera costs a decode and an encode.
///
/// - Throws: ``CaptureError/encoding(_:)`` for unsupported formats, short frames and encoder errors.
public func encodePhoto(_ frame: Frame, processing: PhotoProcessing, quality: Int,
                        encoder: JPEGEncoder) throws(CaptureError) -> EncodedPhoto {
    let format = frame.format
    let scales = processing.scaleToFrame && processing.crop != nil
    if processing.effect == .none, !scales {
        let jpeg = try encoder.encode(frame, crop: processing.crop, quality: quality)
        guard processing.crop != nil else { return EncodedPhoto(jpeg: jpeg, width: format.width, height: format.height) }
        // Planar formats are cropped on even sizes; say what was written.
        let size = try JPEGDecoder().size(of: jpeg)
        return EncodedPhoto(jpeg: jpeg, width: size.width, height: size.height)
    }
    var image = try YUVImage(frame, crop: processing.crop)
    if scales { image = image.scaled(width: format.width & ~1, height: format.height & ~1) }
    image.apply(processing.effect)
    return EncodedPhoto(jpeg: try encoder.encode(image, quality: quality), width: image.width, height: image.height)
}

/// A planar 4:2:0 image (I420) in memory of its own: what effects and scaling work on.
public struct YUVImage: Sendable {
    public var width: Int
    public var height: Int
    /// `width * height` luma bytes.
    public var y: [UInt8]
    /// `chromaWidth * chromaHeight` bytes each.
    public var u: [UInt8]
    public var v: [UInt8]

    public var chromaWidth: Int { (width + 1) / 2 }
    public var chromaHeight: Int { (height + 1) / 2 }

    /// A `width`×`height` image of one colour.
    public init(width: Int, height: Int, y: UInt8 = 0, u: UInt8 = 128, v: UInt8 = 128) {
        self.width = width
        self.height = height
        self.y = [UInt8](repeating: y, count: width * height)
        self.u = [UInt8](repeating: u, count: ((width + 1) / 2) * ((height + 1) / 2))
        self.v = [UInt8](repeating: v, count: ((width + 1) / 2) * ((height + 1) / 2))
    }

    /// The luma, blue-difference and red-difference values at `x`, `y`.
    public func pixel(x: Int, y row: Int) -> (y: UInt8, u: UInt8, v: UInt8) {
        let chroma = (row / 2) * chromaWidth + x / 2
        return (y[row * width + x], u[chroma], v[chroma])
    }

    /// `frame` (or its `crop`, on even coordinates) converted to I420 with libyuv.
    ///
    /// The image is full range (JPEG's), as the direct encoder makes it: limited-range YUV
    /// (``FrameFormat/yuvRange``) is expanded here, once, in the image's own planes; full-range
    /// YUV keeps its values; RGB is converted to full-range YCbCr; MJPEG is decoded first.
    ///
    /// - Throws: ``CaptureError/encoding(_:)`` for a crop outside the frame, short frames and unsupported formats.
    /// The corresponding C functions are `I420Copy`, `NV12ToI420`, `YUY2ToI420`, `UYVYToI420`,
    /// `RAWToJ420`, `RGB24ToJ420` and `I400ToI420`.
    public init(_ frame: Frame, crop requested: CropRect? = nil) throws(CaptureError) {
        let frame = try frame.resolved()  // a frame libv4lconvert makes is converted here, for this photo only
        let format = frame.format
        if format.pixelFormat.isJPEG {
            guard let fixed = JPEGMarkers.insertingHuffmanTablesIfMissing(frame.bytes), JPEGMarkers.isComplete(fixed) else {
                throw CaptureError.encoding("the camera sent a damaged MJPEG frame")
            }
            let rgb = try JPEGDecoder().decode(fixed)
            let decoded = Frame(timestamp: frame.timestamp, sequence: frame.sequence,
                                format: FrameFormat(width: rgb.width, height: rgb.height, pixelFormat: .rgb24), bytes: rgb.pixels)
            try self.init(decoded, crop: requested)
            return
        }
        let crop = requested ?? CropRect(x: 0, y: 0, width: format.width, height: format.height)
        guard crop.x >= 0, crop.y >= 0, crop.width >= 2, crop.height >= 2,
              crop.x + crop.width <= format.width, crop.y + crop.height <= format.height
        else { throw CaptureError.encoding("crop \(crop) is outside the \(format.width)x\(format.height) frame") }
        guard let needed = format.frameBytes else { throw CaptureError.encoding("pixel format \(format.pixelFormat) cannot be processed") }
        guard frame.byteCount >= needed else {
            throw CaptureError.encoding("short frame: \(frame.byteCount) bytes, \(format) needs \(needed)")
        }
        let x0 = crop.x & ~1, y0 = crop.y & ~1, w = crop.width & ~1, h = crop.height & ~1
        self.init(width: w, height: h)
        let stride = format.bytesPerLine, chromaStart = stride * format.height
        let cw = w / 2
        var result: Int32 = 0
        var (planeY, planeU, planeV) = (y, u, v)
        (y, u, v) = ([], [], [])  // one owner per plane while libyuv writes them
        frame.withUnsafeBytes { raw in  // the frame where it lies (for V4L2: the driver's buffer), no copy
            let base = raw.bindMemory(to: UInt8.self).baseAddress!
            planeY.withUnsafeMutableBufferPointer { yp in
                planeU.withUnsafeMutableBufferPointer { up in
                    planeV.withUnsafeMutableBufferPointer { vp in
                        let (dy, du, dv) = (yp.baseAddress!, up.baseAddress!, vp.baseAddress!)
                        switch format.pixelFormat {
                        case .yuv420:
                            let chromaStride = stride / 2, chromaRows = (format.height + 1) / 2
                            let offset = (y0 / 2) * chromaStride + x0 / 2
                            result = I420Copy(base + y0 * stride + x0, Int32(stride),
                                              base + chromaStart + offset, Int32(chromaStride),
                                              base + chromaStart + chromaStride * chromaRows + offset, Int32(chromaStride),
                                              dy, Int32(w), du, Int32(cw), dv, Int32(cw), Int32(w), Int32(h))
                        case .nv12:
                            result = NV12ToI420(base + y0 * stride + x0, Int32(stride), base + chromaStart + (y0 / 2) * stride + x0, Int32(stride),
                                                dy, Int32(w), du, Int32(cw), dv, Int32(cw), Int32(w), Int32(h))
                        case .yuyv:
                            result = YUY2ToI420(base + y0 * stride + x0 * 2, Int32(stride), dy, Int32(w), du, Int32(cw), dv, Int32(cw), Int32(w), Int32(h))
                        case .uyvy:
                            result = UYVYToI420(base + y0 * stride + x0 * 2, Int32(stride), dy, Int32(w), du, Int32(cw), dv, Int32(cw), Int32(w), Int32(h))
                        case .rgb24:  // bytes R, G, B: libyuv's RAW
                            result = RAWToJ420(base + y0 * stride + x0 * 3, Int32(stride), dy, Int32(w), du, Int32(cw), dv, Int32(cw), Int32(w), Int32(h))
                        case .bgr24:  // bytes B, G, R: libyuv's RGB24
                            result = RGB24ToJ420(base + y0 * stride + x0 * 3, Int32(stride), dy, Int32(w), du, Int32(cw), dv, Int32(cw), Int32(w), Int32(h))
                        case .grey:
                            result = I400ToI420(base + y0 * stride + x0, Int32(stride), dy, Int32(w), du, Int32(cw), dv, Int32(cw), Int32(w), Int32(h))
                        default:
                            result = -1
                        }
                    }
                }
            }
        }
        (y, u, v) = (planeY, planeU, planeV)
        guard result == 0 else { throw CaptureError.encoding("pixel format \(format.pixelFormat) cannot be processed") }
        if format.isLimitedRangeYUV {
            Self.map(&y, YUVRange.lumaToFull)
            Self.map(&u, YUVRange.chromaToFull)
            Self.map(&v, YUVRange.chromaToFull)
        }
    }

    /// This image resized to `width`×`height` with libyuv's bilinear filter (box when shrinking).
    ///
    /// The corresponding C function is `I420Scale`.
    public func scaled(width newWidth: Int, height newHeight: Int) -> YUVImage {
        var out = YUVImage(width: newWidth, height: newHeight)
        var (outY, outU, outV) = (out.y, out.u, out.v)
        out.y = []; out.u = []; out.v = []  // one owner per plane while libyuv writes them
        let filter = newWidth < width ? kFilterBox : kFilterBilinear
        y.withUnsafeBufferPointer { sy in
            u.withUnsafeBufferPointer { su in
                v.withUnsafeBufferPointer { sv in
                    outY.withUnsafeMutableBufferPointer { dy in
                        outU.withUnsafeMutableBufferPointer { du in
                            outV.withUnsafeMutableBufferPointer { dv in
                                _ = I420Scale(sy.baseAddress, Int32(width), su.baseAddress, Int32(chromaWidth), sv.baseAddress, Int32(chromaWidth),
                                              Int32(width), Int32(height),
                                              dy.baseAddress, Int32(newWidth), du.baseAddress, Int32(out.chromaWidth),
                                              dv.baseAddress, Int32(out.chromaWidth), Int32(newWidth), Int32(newHeight), filter)
                            }
                        }
                    }
                }
            }
        }
        (out.y, out.u, out.v) = (outY, outU, outV)
        return out
    }

    /// Applies `effect` to the chroma planes (luma is left alone: the exposure stays as shot),
    /// through the effect's tables for full-range chroma (``PhotoEffect/chromaTables(for:)``).
    public mutating func apply(_ effect: PhotoEffect) {
        guard let tables = effect.chromaTables(for: .full) else { return }
        Self.map(&u, tables.u)
        Self.map(&v, tables.v)
    }

    /// How much `vivid` multiplies chroma's distance from neutral.
    public static let vividGain = 1.6
    /// How far `warm` moves each chroma value (of 255).
    public static let warmShift = 14.0

    private static func map(_ plane: inout [UInt8], _ table: [UInt8]) {
        table.withUnsafeBufferPointer { lookup in
            plane.withUnsafeMutableBufferPointer { values in
                for index in values.indices { values[index] = lookup[Int(values[index])] }
            }
        }
    }
}

extension PhotoEffect {
    /// The lookup tables the effect maps blue-difference and red-difference values through, for
    /// chroma of `range`; `nil` for ``none``.
    ///
    /// The effect is defined on full-range chroma (the photo's): `mono` sets chroma to neutral
    /// (128); `vivid` multiplies its distance from neutral by ``YUVImage/vividGain``; `warm`
    /// moves blue-difference down and red-difference up by ``YUVImage/warmShift``. Limited-range
    /// tables expand, apply and narrow again, so a preview still in the camera's range gets the
    /// photo's look. Made once per effect and range: applying an effect allocates nothing.
    public func chromaTables(for range: YUVRange) -> (u: [UInt8], v: [UInt8])? {
        switch (self, range) {
        case (.none, _): return nil
        case (.mono, .full): return EffectTables.monoFull
        case (.vivid, .full): return EffectTables.vividFull
        case (.warm, .full): return EffectTables.warmFull
        case (.mono, .limited): return EffectTables.monoLimited
        case (.vivid, .limited): return EffectTables.vividLimited
        case (.warm, .limited): return EffectTables.warmLimited
        }
    }

    /// The effect on one full-range chroma value, unrounded: blue-difference when `red` is false.
    fileprivate func chroma(_ value: Double, red: Bool) -> Double {
        switch self {
        case .none: return value
        case .mono: return 128
        case .vivid: return 128 + (value - 128) * YUVImage.vividGain
        case .warm: return red ? value + YUVImage.warmShift : value - YUVImage.warmShift
        }
    }
}

/// The effects' chroma tables, made on first use.
private enum EffectTables {
    static let monoFull = tables(.mono, .full), vividFull = tables(.vivid, .full), warmFull = tables(.warm, .full)
    static let monoLimited = tables(.mono, .limited), vividLimited = tables(.vivid, .limited), warmLimited = tables(.warm, .limited)

    static func tables(_ effect: PhotoEffect, _ range: YUVRange) -> (u: [UInt8], v: [UInt8]) {
        func table(red: Bool) -> [UInt8] {
            byteLookupTable { value in
                guard range == .limited else { return effect.chroma(Double(value), red: red) }
                let full = min(255, max(0, (Double(value) - 128) * 255 / 224 + 128))
                return (min(255, max(0, effect.chroma(full, red: red))) - 128) * 224 / 255 + 128
            }
        }
        return (table(red: false), table(red: true))
    }
}

extension JPEGEncoder {
    /// `image` as a 4:2:0 JPEG at `quality`, straight from its planes.
    public func encode(_ image: YUVImage, quality: Int) throws(CaptureError) -> [UInt8] {
        try image.y.withUnsafeBufferPointerTyped { yp throws(CaptureError) in
            try image.u.withUnsafeBufferPointerTyped { up throws(CaptureError) in
                try image.v.withUnsafeBufferPointerTyped { vp throws(CaptureError) in
                    try compressPlanes(yp.baseAddress!, up.baseAddress!, vp.baseAddress!, width: image.width, height: image.height,
                                       strides: (image.width, image.chromaWidth, image.chromaWidth), subsampling: TJSAMP_420, quality: quality)
                }
            }
        }
    }
}

/// A JPEG decoded to its own YCbCr planes (no colour conversion), for checks on what an effect
/// wrote. 4:2:0 JPEGs (what shutter encodes) come back as they are; 4:2:2 (YUYV frames encoded
/// directly) has its chroma halved vertically by libyuv; greyscale gets neutral chroma.
///
/// - Throws: ``CaptureError/encoding(_:)`` when it is not a JPEG of those kinds or does not decode.
/// The corresponding C functions are `tjDecompressToYUVPlanes` and `I422ToI420`.
public func decodeJPEGPlanes(_ jpeg: [UInt8]) throws(CaptureError) -> YUVImage {
    guard let handle = tjInitDecompress() else { throw CaptureError.encoding("tjInitDecompress failed") }
    defer { tjDestroy(handle) }
    var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
    let header = jpeg.withUnsafeBufferPointer {
        tjDecompressHeader3(handle, $0.baseAddress, UInt($0.count), &width, &height, &subsampling, &colorspace)
    }
    guard header == 0 else { throw CaptureError.encoding("not a JPEG: \(String(cString: tjGetErrorStr2(handle)))") }
    let kinds = [TJSAMP_420, TJSAMP_422, TJSAMP_GRAY].map { Int32($0.rawValue) }
    guard kinds.contains(subsampling) else { throw CaptureError.encoding("not a 4:2:0, 4:2:2 or grey JPEG (subsampling \(subsampling))") }
    let planeCount = subsampling == Int32(TJSAMP_GRAY.rawValue) ? 1 : 3
    var sizes: [(width: Int32, height: Int32)] = (0..<3).map { component in
        (tjPlaneWidth(Int32(component), width, subsampling), tjPlaneHeight(Int32(component), height, subsampling))
    }
    if planeCount == 1 { sizes[1] = (1, 1); sizes[2] = (1, 1) }
    var planes = sizes.map { [UInt8](repeating: 128, count: Int($0.width * $0.height)) }
    var (p0, p1, p2) = (planes[0], planes[1], planes[2])
    planes = []  // one owner per plane while TurboJPEG writes them
    let result = jpeg.withUnsafeBufferPointer { source in
        p0.withUnsafeMutableBufferPointer { yp in
            p1.withUnsafeMutableBufferPointer { up in
                p2.withUnsafeMutableBufferPointer { vp in
                    var pointers: [UnsafeMutablePointer<UInt8>?] = [yp.baseAddress, up.baseAddress, vp.baseAddress]
                    var strides: [Int32] = sizes.map(\.width)
                    return tjDecompressToYUVPlanes(handle, source.baseAddress, UInt(source.count), &pointers, width, &strides, height, 0)
                }
            }
        }
    }
    guard result == 0 else { throw CaptureError.encoding("decoding failed: \(String(cString: tjGetErrorStr2(handle)))") }
    var image = YUVImage(width: Int(width), height: Int(height))
    image.y = p0
    if subsampling == Int32(TJSAMP_420.rawValue) {
        (image.u, image.v) = (p1, p2)
    } else if subsampling == Int32(TJSAMP_422.rawValue) {
        var (u, v) = (image.u, image.v)
        var discard = [UInt8](repeating: 0, count: Int(width * height))
        let chromaWidth = Int32(image.chromaWidth)
        p0.withUnsafeBufferPointer { sy in
            p1.withUnsafeBufferPointer { su in
                p2.withUnsafeBufferPointer { sv in
                    discard.withUnsafeMutableBufferPointer { dy in
                        u.withUnsafeMutableBufferPointer { du in
                            v.withUnsafeMutableBufferPointer { dv in
                                _ = I422ToI420(sy.baseAddress, width, su.baseAddress, sizes[1].width, sv.baseAddress, sizes[2].width,
                                               dy.baseAddress, width, du.baseAddress, chromaWidth, dv.baseAddress, chromaWidth, width, height)
                            }
                        }
                    }
                }
            }
        }
        (image.u, image.v) = (u, v)
    }
    return image
}

/// What `shutter check` says of a picker that drives photo effects.
func photoEffectReport(_ effects: [PhotoEffect]) -> String {
    "photo effect per item (\(effects.map(\.rawValue).joined(separator: ", "))), applied to the saved photo before encoding"
}
