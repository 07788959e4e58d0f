import CTurboJPEG
import CV4L2
import Testing
import ShutterCore
@testable import ShutterCapture

/// `frame` marked as limited range (a webcam's), its bytes unchanged.
private func limited(_ frame: Frame) -> Frame {
    var frame = frame
    frame.format.yuvRange = .limited
    return frame
}

/// The luma at the middle of `jpeg`, as TurboJPEG decodes its own planes (no colour conversion).
private func middleLuma(_ jpeg: [UInt8]) throws -> Int {
    let image = try decodeJPEGPlanes(jpeg)
    return Int(image.pixel(x: image.width / 2, y: image.height / 2).y)
}

@Suite("YUVRange")
struct YUVRangeTests {
    @Test func tablesMapTheLimitedEndsToTheFullEnds() {
        #expect(YUVRange.lumaToFull[16] == 0 && YUVRange.lumaToFull[235] == 255)
        #expect(YUVRange.lumaToFull[0] == 0 && YUVRange.lumaToFull[255] == 255)  // foot- and headroom clipped
        #expect(YUVRange.lumaToFull[126] == 128)  // round(110 × 255 / 219) = round(128.08)
        // Neutral stays neutral; the ends are ±127.5 from it, so 16 rounds to 1 and 240 clamps to 255.
        #expect(YUVRange.chromaToFull[128] == 128)
        #expect(YUVRange.chromaToFull[16] == 1 && YUVRange.chromaToFull[240] == 255)
        #expect(zip(YUVRange.lumaToFull, YUVRange.lumaToFull.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(zip(YUVRange.chromaToFull, YUVRange.chromaToFull.dropFirst()).allSatisfy { $0 <= $1 })
    }

    /// A webcam's black (Y 16) and white (Y 235) come out as JPEG's black and white, not as
    /// grey 16 and 235 (washed-out photos).
    @Test(arguments: [PixelFormat.yuyv, .uyvy, .nv12, .yuv420])
    func limitedBlackAndWhiteEncodeToFullBlackAndWhite(format: PixelFormat) throws {
        let encoder = try JPEGEncoder()
        let black = try JPEGDecoder().decode(try encoder.encode(limited(solidFrame(format, yuv: (16, 128, 128))), quality: 95))
        let white = try JPEGDecoder().decode(try encoder.encode(limited(solidFrame(format, yuv: (235, 128, 128))), quality: 95))
        let (b, w) = (black.pixel(x: 32, y: 24), white.pixel(x: 32, y: 24))
        #expect(b.r <= 2 && b.g <= 2 && b.b <= 2, "\(b)")
        #expect(w.r >= 253 && w.g >= 253 && w.b >= 253, "\(w)")
    }

    /// A crop of a limited-range frame is expanded too (the planes the encoder reads in place
    /// for full range are expanded into its own memory, crop and all).
    @Test(arguments: [PixelFormat.yuyv, .nv12, .yuv420])
    func limitedCropIsExpanded(format: PixelFormat) throws {
        let crop = CropRect.digitalZoom(width: 64, height: 48, factor: 2)
        let jpeg = try JPEGEncoder().encode(limited(solidFrame(format, yuv: (60, 128, 128))), crop: crop, quality: 95)
        #expect(abs(try middleLuma(jpeg) - Int(YUVRange.lumaToFull[60])) <= 1)
    }

    /// Effects and digital zoom's scale go through ``YUVImage``: expanded there, exactly once
    /// (Y 60 is 51 once expanded, 41 twice).
    @Test(arguments: [PhotoProcessing(effect: .mono), PhotoProcessing(crop: CropRect.digitalZoom(width: 64, height: 48, factor: 2))])
    func processedPhotosAreExpandedOnce(processing: PhotoProcessing) throws {
        let photo = try encodePhoto(limited(solidFrame(.yuyv, yuv: (60, 128, 128))), processing: processing, quality: 95,
                                    encoder: try JPEGEncoder())
        #expect(YUVRange.lumaToFull[60] == 51)
        #expect(abs(try middleLuma(photo.jpeg) - 51) <= 1)
    }

    /// Full-range frames are encoded byte for byte as before: from the planes as they are, which
    /// is what TurboJPEG makes of the frame's own planes (the NV12 chroma split as before).
    @Test(arguments: [PixelFormat.yuyv, .nv12, .yuv420])
    func fullRangeFramesAreUnchanged(format: PixelFormat) throws {
        let frame = solidFrame(format, width: 64, height: 48, yuv: (16, 90, 240))
        #expect(frame.format.yuvRange == .full)
        let encoder = try JPEGEncoder()
        let jpeg = try encoder.encode(frame, quality: 90)
        // The same planes handed to TurboJPEG directly, as today's encoder does.
        var y = [UInt8](repeating: 16, count: 64 * 48)
        let chromaRows = 24  // 4:2:0 for every layout: YUYV's chroma is averaged over two rows
        var u = [UInt8](repeating: 90, count: 32 * chromaRows), v = [UInt8](repeating: 240, count: 32 * chromaRows)
        let reference = try y.withUnsafeMutableBufferPointer { yp in
            try u.withUnsafeMutableBufferPointer { up in
                try v.withUnsafeMutableBufferPointer { vp in
                    try JPEGEncoder().compressPlanes(yp.baseAddress!, up.baseAddress!, vp.baseAddress!, width: 64, height: 48,
                                                     strides: (64, 32, 32), subsampling: TJSAMP_420,
                                                     quality: 90)
                }
            }
        }
        #expect(jpeg == reference)
    }

    /// The range only concerns Y'CbCr: MJPEG is passed through, RGB and grey encoded as they
    /// are, whatever a format says.
    @Test(arguments: [PixelFormat.rgb24, .grey])
    func nonYCbCrFormatsIgnoreTheRange(format: PixelFormat) throws {
        let frame = solidFrame(format)
        #expect(try JPEGEncoder().encode(limited(frame), quality: 90) == (try JPEGEncoder().encode(frame, quality: 90)))
    }

    @Test func mjpegIsPassedThrough() throws {
        let jpeg = try JPEGEncoder().encode(solidFrame(.yuyv), quality: 90)
        let frame = Frame(timestamp: .zero, sequence: 0,
                          format: FrameFormat(width: 64, height: 48, pixelFormat: .mjpeg, yuvRange: .limited), bytes: jpeg)
        #expect(try JPEGEncoder().encode(frame, quality: 90) == jpeg)
    }
}

@Suite("negotiatedYUVRange")
struct NegotiatedYUVRangeTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var pixelFormat: PixelFormat
        var colorspace: UInt32
        var quantization: UInt32
        var ycbcrEncoding: UInt32 = CV4L2_YCBCR_ENC_DEFAULT
        /// Whether `priv` says the extended fields (`ycbcr_enc`, `quantization`) are filled in.
        var extended = true
        var libcameraCompat = false
        var expected: YUVRange
        var testDescription: String {
            "\(pixelFormat) colorspace \(colorspace) quantization \(quantization)\(extended ? "" : " (no PRIV_MAGIC)")\(libcameraCompat ? " libcamerify" : "") → \(expected)"
        }
    }

    static let cases: [Case] = [
        // DEFAULT: the kernel's V4L2_MAP_QUANTIZATION_DEFAULT (limited for Y'CbCr but the JPEG colorspace).
        Case(pixelFormat: .yuyv, colorspace: CV4L2_COLORSPACE_SMPTE170M, quantization: CV4L2_QUANTIZATION_DEFAULT, expected: .limited),
        Case(pixelFormat: .yuyv, colorspace: CV4L2_COLORSPACE_SRGB, quantization: CV4L2_QUANTIZATION_DEFAULT, expected: .limited),
        Case(pixelFormat: .nv12, colorspace: CV4L2_COLORSPACE_REC709, quantization: CV4L2_QUANTIZATION_DEFAULT, expected: .limited),
        Case(pixelFormat: .yuyv, colorspace: CV4L2_COLORSPACE_DEFAULT, quantization: CV4L2_QUANTIZATION_DEFAULT, expected: .limited),
        Case(pixelFormat: .yuyv, colorspace: CV4L2_COLORSPACE_JPEG, quantization: CV4L2_QUANTIZATION_DEFAULT, expected: .full),
        Case(pixelFormat: .yuv420, colorspace: CV4L2_COLORSPACE_JPEG, quantization: CV4L2_QUANTIZATION_DEFAULT, expected: .full),
        // An explicit quantization wins over the colorspace.
        Case(pixelFormat: .yuyv, colorspace: CV4L2_COLORSPACE_SMPTE170M, quantization: CV4L2_QUANTIZATION_FULL_RANGE,
             ycbcrEncoding: CV4L2_YCBCR_ENC_601, expected: .full),
        Case(pixelFormat: .uyvy, colorspace: CV4L2_COLORSPACE_JPEG, quantization: CV4L2_QUANTIZATION_LIM_RANGE, expected: .limited),
        // Extended fields not filled in: taken as DEFAULT.
        Case(pixelFormat: .yuyv, colorspace: CV4L2_COLORSPACE_SMPTE170M, quantization: CV4L2_QUANTIZATION_FULL_RANGE,
             extended: false, expected: .limited),
        // Not Y'CbCr: encoded as it is.
        Case(pixelFormat: .mjpeg, colorspace: CV4L2_COLORSPACE_JPEG, quantization: CV4L2_QUANTIZATION_DEFAULT, expected: .full),
        Case(pixelFormat: .rgb24, colorspace: CV4L2_COLORSPACE_SRGB, quantization: CV4L2_QUANTIZATION_LIM_RANGE, expected: .full),
        Case(pixelFormat: .grey, colorspace: CV4L2_COLORSPACE_SRGB, quantization: CV4L2_QUANTIZATION_DEFAULT, expected: .full),
        // libcamerify's fixed sRGB/DEFAULT answer for libcamera's sYCC stream.
        Case(pixelFormat: .yuyv, colorspace: CV4L2_COLORSPACE_SRGB, quantization: CV4L2_QUANTIZATION_DEFAULT,
             libcameraCompat: true, expected: .full),
    ]

    @Test(arguments: cases)
    func mapsTheNegotiatedFormat(_ entry: Case) {
        var pix = v4l2_pix_format()
        pix.width = 640
        pix.height = 480
        pix.pixelformat = entry.pixelFormat.rawValue
        pix.colorspace = entry.colorspace
        pix.priv = entry.extended ? CV4L2_PIX_FMT_PRIV_MAGIC : 0
        pix.ycbcr_enc = entry.ycbcrEncoding
        pix.quantization = entry.quantization
        #expect(negotiatedYUVRange(pix, libcameraCompat: entry.libcameraCompat) == entry.expected)
    }
}
