import CTurboJPEG
import Foundation
import Testing
import ShutterCore
@testable import ShutterCapture

/// A frame encoded whole and in strips, and what the strips are expected to be.
struct StripCase: Sendable, CustomTestStringConvertible {
    var format: PixelFormat
    var range: YUVRange
    var width: Int, height: Int
    var crop: CropRect?

    var testDescription: String { "\(format) \(range) \(width)x\(height)\(crop.map { " crop \($0)" } ?? "")" }

    /// The size the encoder writes: the crop's, on even columns (and even rows for 4:2:0
    /// sources) for Y'CbCr; packed RGB and grey are encoded as cropped.
    var encodedSize: (width: Int, height: Int) {
        let crop = crop ?? CropRect(x: 0, y: 0, width: width, height: height)
        if format == .rgb24 || format == .bgr24 || format == .grey { return (crop.width, crop.height) }
        return (crop.width & ~1, format == .yuyv || format == .uyvy ? crop.height : crop.height & ~1)
    }

    /// TurboJPEG's subsampling for the frame: 4:2:0, or one plane for grey.
    var subsampling: TJSAMP { format == .grey ? TJSAMP_GRAY : TJSAMP_420 }
}

/// The marker bytes after the scan header of `jpeg` (RSTn and EOI), in order.
private func markersAfterScanHeader(_ jpeg: [UInt8]) -> [UInt8] {
    guard let scan = JPEGMarkers.headerSegments(jpeg)?.last else { return [] }
    var markers: [UInt8] = []
    var index = scan.end
    while index + 1 < jpeg.count {
        if jpeg[index] == 0xFF, jpeg[index + 1] != 0x00 { markers.append(jpeg[index + 1]) }
        index += jpeg[index] == 0xFF ? 2 : 1
    }
    return markers
}

/// How many bytes of `a` and `b` differ (and the difference in length): a failure's message
/// names a count, where comparing megabyte arrays in `#expect` would print and diff them whole.
private func differingBytes(_ a: [UInt8], _ b: [UInt8]) -> Int {
    zip(a, b).reduce(abs(a.count - b.count)) { $0 + ($1.0 == $1.1 ? 0 : 1) }
}

/// The restart interval of `jpeg`'s DRI segment, if it has one.
private func restartInterval(_ jpeg: [UInt8]) -> Int? {
    guard let dri = JPEGMarkers.headerSegments(jpeg)?.first(where: { $0.marker == 0xDD }) else { return nil }
    return Int(jpeg[dri.start + 4]) << 8 | Int(jpeg[dri.start + 5])
}

@Suite("JPEG strips")
struct JPEGStripTests {
    static let frames: [StripCase] = [
        StripCase(format: .yuyv, range: .limited, width: 1280, height: 720),
        StripCase(format: .uyvy, range: .full, width: 1280, height: 720, crop: CropRect(x: 3, y: 5, width: 1201, height: 701)),
        StripCase(format: .nv12, range: .limited, width: 1920, height: 1080),
        StripCase(format: .nv12, range: .full, width: 1920, height: 1080, crop: CropRect(x: 17, y: 9, width: 1501, height: 841)),
        StripCase(format: .yuv420, range: .limited, width: 1280, height: 720, crop: CropRect(x: 6, y: 2, width: 1200, height: 698)),
        StripCase(format: .yuv420, range: .full, width: 1280, height: 720),
        // Packed, through tjCompress2 (vimc's frames, a libcamera RGB888 stream, RGB24 webcams).
        StripCase(format: .rgb24, range: .full, width: 1280, height: 720),
        StripCase(format: .bgr24, range: .full, width: 1280, height: 720, crop: CropRect(x: 5, y: 3, width: 1201, height: 701)),
        StripCase(format: .grey, range: .full, width: 1280, height: 720, crop: CropRect(x: 1, y: 1, width: 1277, height: 717)),
    ]

    /// A frame cut into strips (each prepared by its own worker: libyuv's split, the range
    /// expansion; a packed frame's rows read where they lie) and joined decodes to exactly the
    /// pixels of the frame encoded whole, in a file with a DRI of the layout's interval and RST0,
    /// RST1… between the strips.
    @Test(arguments: frames)
    func stripsDecodeToTheWholeFramesPixels(_ frameCase: StripCase) throws {
        var frame = noisyFrame(frameCase.format, width: frameCase.width, height: frameCase.height, seed: 21)
        frame.format.yuvRange = frameCase.range
        let whole = try JPEGEncoder(strips: 1).encode(frame, crop: frameCase.crop, quality: 90)
        let striped = try JPEGEncoder(strips: 4).encode(frame, crop: frameCase.crop, quality: 90)
        let size = frameCase.encodedSize
        let layout = try #require(JPEGStripLayout(width: size.width, height: size.height, subsampling: frameCase.subsampling, maxStrips: 4))
        #expect(layout.rows.count >= 3)
        #expect(restartInterval(whole) == nil && markersAfterScanHeader(whole) == [0xD9])
        #expect(restartInterval(striped) == layout.restartInterval)
        let restarts: [UInt8] = (0..<layout.rows.count - 1).map { UInt8(0xD0 + $0 % 8) }
        #expect(markersAfterScanHeader(striped) == restarts + [0xD9])
        let decoder = try JPEGDecoder()
        let (wholeImage, stripedImage) = (try decoder.decode(whole), try decoder.decode(striped))
        #expect(stripedImage.width == size.width && stripedImage.height == size.height)
        #expect(differingBytes(stripedImage.pixels, wholeImage.pixels) == 0)
    }

    /// Every subsampling TurboJPEG names, as Int32: TJSAMP is unsigned in libjpeg-turbo 2.x and
    /// signed in 3.x. (A closure in the test's own attribute crashes Swift 6.0.3's type checker.)
    static let subsamplings = [TJSAMP_444, TJSAMP_422, TJSAMP_420, TJSAMP_GRAY, TJSAMP_440, TJSAMP_411].map { Int32($0.rawValue) }

    /// Every subsampling TurboJPEG names, at sizes that are not whole MCUs: the planes a decoded
    /// JPEG gives (the thumbnail path) encode in strips to the pixels of the whole encode.
    @Test(arguments: Self.subsamplings)
    func everySubsamplingJoins(_ subsamplingValue: Int32) throws {
        let subsampling = TJSAMP(rawValue: .init(truncatingIfNeeded: subsamplingValue))
        let (width, height) = (1030, 770)
        var offsets: [Int] = [], strides: [Int] = [], total = 0
        for plane in 0..<(subsampling == TJSAMP_GRAY ? 1 : 3) {
            let planeWidth = Int(tjPlaneWidth(Int32(plane), Int32(width), Int32(subsampling.rawValue)))
            offsets.append(total)
            strides.append(planeWidth)
            total += planeWidth * Int(tjPlaneHeight(Int32(plane), Int32(height), Int32(subsampling.rawValue)))
        }
        var state: UInt32 = 5
        let memory = (0..<total).map { _ -> UInt8 in
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: state >> 24)
        }
        let planes = DecodedPlanes(width: width, height: height, subsampling: subsampling, offsets: offsets, strides: strides)
        let whole = try JPEGEncoder(strips: 1).encode(planes, in: memory, quality: 85)
        let striped = try JPEGEncoder(strips: 3).encode(planes, in: memory, quality: 85)
        let layout = try #require(JPEGStripLayout(width: width, height: height, subsampling: subsampling, maxStrips: 3))
        #expect(markersAfterScanHeader(striped).count == layout.rows.count)
        let decoder = try JPEGDecoder()
        #expect(differingBytes(try decoder.decode(striped).pixels, try decoder.decode(whole).pixels) == 0)
    }

    /// The layout: whole MCU rows in every strip but the last, the rows covered once, no more
    /// strips than asked, none below the least size, and an interval the DRI field can hold.
    @Test func layouts() throws {
        let hd = try #require(JPEGStripLayout(width: 1920, height: 1080, subsampling: TJSAMP_420, maxStrips: 4))
        #expect(hd.rows == [0..<272, 272..<544, 544..<816, 816..<1080])  // 68 MCU rows, 17 each
        #expect(hd.restartInterval == 17 * 120)
        let p720 = try #require(JPEGStripLayout(width: 1280, height: 720, subsampling: TJSAMP_420, maxStrips: 8))
        #expect(p720.rows.count == 7)  // 921,600 pixels: seven strips of at least 2^17
        let vga = try #require(JPEGStripLayout(width: 720, height: 480, subsampling: TJSAMP_420, maxStrips: 8))
        #expect(vga.rows == [0..<240, 240..<480])
        #expect(JPEGStripLayout(width: 480, height: 360, subsampling: TJSAMP_420, maxStrips: 4) == nil)
        #expect(JPEGStripLayout(width: 1920, height: 1080, subsampling: TJSAMP_420, maxStrips: 1) == nil)
        // Wide: 2048 MCUs a row, so an interval holds at most 31 MCU rows: more strips than asked.
        let wide = try #require(JPEGStripLayout(width: 16384, height: 4096, subsampling: TJSAMP_GRAY, maxStrips: 2))
        #expect(wide.restartInterval == 31 * 2048 && wide.rows.count == 17)
        // One MCU row of more than 65535 MCUs cannot be an interval: encoded whole.
        #expect(JPEGStripLayout(width: 600_000, height: 16, subsampling: TJSAMP_GRAY, maxStrips: 2) == nil)
        for (width, height, subsampling) in [(1920, 1080, TJSAMP_420), (1277, 719, TJSAMP_422), (4608, 2592, TJSAMP_420), (1030, 770, TJSAMP_411)] {
            let layout = try #require(JPEGStripLayout(width: width, height: height, subsampling: subsampling, maxStrips: 4))
            let mcu = try #require(JPEGStripLayout.mcuSize(subsampling))
            #expect(layout.rows.first?.lowerBound == 0 && layout.rows.last?.upperBound == height)
            #expect(zip(layout.rows, layout.rows.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound })
            #expect(layout.rows.dropLast().allSatisfy { $0.count == layout.rows[0].count && $0.count % mcu.height == 0 })
            #expect(layout.rows.count <= 4 && layout.restartInterval <= 0xFFFF)
            #expect(layout.restartInterval == layout.rows[0].count / mcu.height * ((width + mcu.width - 1) / mcu.width))
        }
    }

    /// Strips that cannot be one file are refused (the encoder then encodes the frame whole):
    /// other tables, a scan with restart markers or a DRI of its own, a progressive frame.
    @Test func joinRefusesStripsThatAreNotOneBaselineScan() throws {
        let frame = noisyFrame(.yuv420, width: 320, height: 64, seed: 3)
        let top = try JPEGEncoder().encode(frame, crop: CropRect(x: 0, y: 0, width: 320, height: 32), quality: 90)
        let bottom = try JPEGEncoder().encode(frame, crop: CropRect(x: 0, y: 32, width: 320, height: 32), quality: 90)
        let joined = try #require(JPEGStrips.join([top, bottom], height: 64, restartInterval: 40))
        let image = try JPEGDecoder().decode(joined)
        let wholeImage = try JPEGDecoder().decode(try JPEGEncoder().encode(frame, quality: 90))
        #expect(image.height == 64 && differingBytes(image.pixels, wholeImage.pixels) == 0)

        let otherQuality = try JPEGEncoder().encode(frame, crop: CropRect(x: 0, y: 32, width: 320, height: 32), quality: 80)
        #expect(JPEGStrips.join([top, otherQuality], height: 64, restartInterval: 40) == nil)
        let scanEnd = try #require(JPEGMarkers.headerSegments(bottom)?.last?.end)
        var withRestart = bottom
        withRestart.insert(contentsOf: [0xFF, 0xD0], at: scanEnd + 100)
        #expect(JPEGStrips.join([top, withRestart], height: 64, restartInterval: 40) == nil)
        let frameHeader = try #require(JPEGMarkers.headerSegments(top)?.first { $0.marker == 0xC0 })
        var progressive = top
        progressive[frameHeader.start + 1] = 0xC2
        #expect(JPEGStrips.join([progressive, bottom], height: 64, restartInterval: 40) == nil)
        let withDRI = Array(top[..<frameHeader.start]) + [0xFF, 0xDD, 0, 4, 0, 20] + top[frameHeader.start...]
        #expect(JPEGStrips.join([withDRI, bottom], height: 64, restartInterval: 40) == nil)
        #expect(JPEGStrips.join([top, bottom], height: 64, restartInterval: 0) == nil)
    }

    /// Photos are encoded in a strip per core (at most 8); the live view's encoder whole.
    @Test func photosTakeAStripPerCore() throws {
        let photoEncoder = try EncodeWorkerEncoder().encoder()
        #expect(photoEncoder.strips == JPEGEncoder.photoStrips)
        #expect(JPEGEncoder.photoStrips == min(8, ProcessInfo.processInfo.processorCount))
        #expect(try JPEGEncoder().strips == 1)
    }
}
