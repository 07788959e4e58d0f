import CV4L2
import Testing
import ShutterCore
@testable import ShutterCapture

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
