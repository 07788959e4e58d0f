import Foundation
import Testing
import ShutterCore
@testable import ShutterCapture

/// A frame of `format` filled with one YUV colour, or one RGB colour for RGB formats.
func solidFrame(_ pixelFormat: PixelFormat, width: Int = 64, height: Int = 48, yuv: (UInt8, UInt8, UInt8) = (81, 90, 240),
                rgb: (UInt8, UInt8, UInt8) = (255, 0, 0)) -> Frame {
    let format = FrameFormat(width: width, height: height, pixelFormat: pixelFormat)
    var bytes = [UInt8](repeating: 0, count: format.frameBytes!)
    let (y, u, v) = yuv
    switch pixelFormat {
    case .yuyv: for i in stride(from: 0, to: bytes.count, by: 4) { bytes[i] = y; bytes[i + 1] = u; bytes[i + 2] = y; bytes[i + 3] = v }
    case .uyvy: for i in stride(from: 0, to: bytes.count, by: 4) { bytes[i] = u; bytes[i + 1] = y; bytes[i + 2] = v; bytes[i + 3] = y }
    case .nv12:
        for i in 0..<(width * height) { bytes[i] = y }
        for i in stride(from: width * height, to: bytes.count, by: 2) { bytes[i] = u; bytes[i + 1] = v }
    case .yuv420:
        let quarter = (width / 2) * (height / 2)
        for i in 0..<(width * height) { bytes[i] = y }
        for i in 0..<quarter { bytes[width * height + i] = u; bytes[width * height + quarter + i] = v }
    case .rgb24: for i in stride(from: 0, to: bytes.count, by: 3) { bytes[i] = rgb.0; bytes[i + 1] = rgb.1; bytes[i + 2] = rgb.2 }
    case .bgr24: for i in stride(from: 0, to: bytes.count, by: 3) { bytes[i] = rgb.2; bytes[i + 1] = rgb.1; bytes[i + 2] = rgb.0 }
    case .grey: for i in bytes.indices { bytes[i] = 200 }
    default: break
    }
    return Frame(timestamp: .zero, sequence: 0, format: format, bytes: bytes)
}

@Suite("JPEGEncoder")
struct JPEGEncoderTests {
    /// Y 81, U 90, V 240 is BT.601 red.
    @Test(arguments: [PixelFormat.yuyv, .uyvy, .nv12, .yuv420, .rgb24, .bgr24])
    func encodesRedAtTheFrameSize(format: PixelFormat) throws {
        let jpeg = try JPEGEncoder().encode(solidFrame(format), quality: 93)
        let image = try JPEGDecoder().decode(jpeg)
        #expect(image.width == 64 && image.height == 48)
        let pixel = image.pixel(x: 32, y: 24)
        #expect(pixel.r > 220 && pixel.g < 40 && pixel.b < 40, "\(pixel)")
    }

    @Test func encodesGrey() throws {
        let image = try JPEGDecoder().decode(try JPEGEncoder().encode(solidFrame(.grey), quality: 80))
        #expect(abs(Int(image.pixel(x: 5, y: 5).g) - 200) < 4)
    }

    @Test(arguments: [PixelFormat.yuyv, .nv12, .rgb24])
    func cropsToTheRectangle(format: PixelFormat) throws {
        let crop = CropRect.digitalZoom(width: 64, height: 48, factor: 2)
        let jpeg = try JPEGEncoder().encode(solidFrame(format), crop: crop, quality: 90)
        let size = try JPEGDecoder().size(of: jpeg)
        #expect(size.width == 32 && size.height == 24)
    }

    @Test func refusesAShortFrame() {
        var frame = solidFrame(.yuyv)
        frame.bytes.removeLast(100)
        #expect(throws: CaptureError.self) { try JPEGEncoder().encode(frame, quality: 90) }
    }

    @Test func showsTheSyntheticBarsInOrder() throws {
        let camera = try SyntheticCamera(width: 320, height: 64, frameInterval: nil)
        try camera.start()
        camera.emit(at: Instant(rawValue: 1))
        let frame = try #require(try camera.readFrames().first)
        let image = try JPEGDecoder().decode(try JPEGEncoder().encode(frame, quality: 95))
        // 75 % bars: white, yellow, cyan, green, magenta, red, blue, black
        let expected: [(Bool, Bool, Bool)] = [(true, true, true), (true, true, false), (false, true, true), (false, true, false),
                                              (true, false, true), (true, false, false), (false, false, true), (false, false, false)]
        for bar in 0..<8 {
            let x = bar * 40 + 20
            #expect(SyntheticCamera.bar(atColumn: x, width: 320, sequence: frame.sequence) == bar)
            let p = image.pixel(x: x, y: 32)
            let on = (p.r > 128, p.g > 128, p.b > 128)
            #expect(on == expected[bar], "bar \(bar): \(p)")
        }
    }

    @Test func exposureBiasScalesTheSyntheticLumaByTwoToTheEV() throws {
        let camera = try SyntheticCamera(width: 320, height: 16, frameInterval: nil)
        try camera.start()
        func whiteLuma() throws -> UInt8 {
            camera.emit(at: Instant(rawValue: 1))
            let frame = try #require(try camera.readFrames().first)
            let x = (0..<320).first { SyntheticCamera.bar(atColumn: $0, width: 320, sequence: frame.sequence) == 0 }!
            return frame.bytes[(x & ~1) * 2]   // Y of the white bar, first row
        }
        #expect(try whiteLuma() == 180)
        try camera.setControl(ControlID.autoExposureBias, to: -1000)
        #expect(try whiteLuma() == 90)
        try camera.setControl(ControlID.autoExposureBias, to: 1000)
        #expect(try whiteLuma() == 235)   // clipped at video white
        #expect(camera.exposureBias == 1000)
        #expect(throws: CaptureError.self) { try camera.setControl(ControlID.zoomAbsolute, to: 2) }
    }
}

@Suite("JPEGMarkers")
struct JPEGMarkersTests {
    func sampleJPEG() throws -> [UInt8] { try JPEGEncoder().encode(solidFrame(.yuyv), quality: 90) }

    /// A webcam's MJPEG frame: the same JPEG with its DHT segments cut out.
    func strippingHuffmanTables(_ jpeg: [UInt8]) throws -> [UInt8] {
        let segments = try #require(JPEGMarkers.headerSegments(jpeg))
        var out = jpeg
        for segment in segments.reversed() where segment.marker == 0xC4 { out.removeSubrange(segment.start..<segment.end) }
        return out
    }

    @Test func insertsTheStandardTablesWhereMJPEGLeavesThemOut() throws {
        let original = try sampleJPEG()
        let stripped = try strippingHuffmanTables(original)
        #expect(stripped.count < original.count)
        let fixed = try #require(JPEGMarkers.insertingHuffmanTablesIfMissing(stripped))
        #expect(try #require(JPEGMarkers.headerSegments(fixed)).contains { $0.marker == 0xC4 })
        // libjpeg-turbo tolerates the missing tables, other decoders do not; with them back it must
        // decode to the same pixels.
        let image = try JPEGDecoder().decode(fixed)
        #expect(image.width == 64 && image.pixel(x: 10, y: 10).r > 220)
        let reference = try JPEGDecoder().decode(original)
        #expect(image.pixels == reference.pixels)
        #expect(JPEGMarkers.insertingHuffmanTablesIfMissing(original) == original)
    }

    @Test func mjpegFramesAreSavedAsTheyCome() throws {
        let stripped = try strippingHuffmanTables(try sampleJPEG())
        let frame = Frame(timestamp: .zero, sequence: 0, format: FrameFormat(width: 64, height: 48, pixelFormat: .mjpeg),
                          bytes: stripped + [0, 0, 0])
        let saved = try JPEGEncoder().encode(frame, quality: 50)
        #expect(try JPEGDecoder().size(of: saved) == (64, 48) ? true : false)
        let cropped = try JPEGEncoder().encode(frame, crop: CropRect(x: 16, y: 12, width: 32, height: 24), quality: 80)
        #expect(try JPEGDecoder().size(of: cropped).width == 32)
    }

    @Test func completeness() throws {
        let jpeg = try sampleJPEG()
        #expect(JPEGMarkers.isComplete(jpeg))
        #expect(JPEGMarkers.isComplete(jpeg + [0, 0]))
        #expect(!JPEGMarkers.isComplete(Array(jpeg.dropLast(10))))
        #expect(!JPEGMarkers.isComplete([0xFF, 0xD8, 0xFF, 0xD9]))
        #expect(!JPEGMarkers.isComplete([]))
    }

    @Test func exifGoesAfterJFIFAndReplacesAnOldBlock() throws {
        let jpeg = try sampleJPEG()
        let once = try #require(JPEGMarkers.insertingAPP1(jpeg, payload: Array("Exif\0\0first".utf8)))
        let twice = try #require(JPEGMarkers.insertingAPP1(once, payload: Array("Exif\0\0second".utf8)))
        let segments = try #require(JPEGMarkers.headerSegments(twice))
        #expect(segments.map(\.marker).prefix(2) == [0xE0, 0xE1])
        #expect(segments.filter { $0.marker == 0xE1 }.count == 1)
        #expect(try JPEGDecoder().decode(twice).width == 64)
    }
}

@Suite("ExifWriter")
struct ExifWriterTests {
    @Test func writesTheFieldsAndStaysDecodable() throws {
        let metadata = PhotoMetadata(taken: WallTime(seconds: 1_773_500_966, milliseconds: 42), cameraCard: "vivid",
                                     boardName: "gpio-sim", orientation: 6, offsetMs: -12.5, width: 64, height: 48)
        let payload = try ExifWriter.app1Payload(for: metadata, utc: true)
        #expect(Array(payload.prefix(6)) == Array("Exif\0\0".utf8))
        let text = String(decoding: payload.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
        for needle in ["vivid", "gpio-sim", "shutter", "2026:03:14 15:09:26", "042", "offset -12.5 ms"] {
            #expect(text.contains(needle), "missing \(needle)")
        }
        let jpeg = try ExifWriter.adding(metadata, to: try JPEGEncoder().encode(solidFrame(.yuyv), quality: 90))
        #expect(try JPEGDecoder().decode(jpeg).height == 48)
    }

    @Test func theCameraNamesItselfAndTheBoardDescribesThePhoto() throws {
        var metadata = PhotoMetadata(taken: WallTime(seconds: 1_773_500_966, milliseconds: 42), cameraCard: "HD Pro Webcam C920",
                                     boardName: "my rig", orientation: 1, offsetMs: 3, width: 64, height: 48)
        metadata.cameraMake = "Logitech"
        let tags = ExifWriter.read(try ExifWriter.app1Payload(for: metadata, utc: true))
        #expect(tags[0x010F] == "Logitech")  // Make
        #expect(tags[0x0110] == "HD Pro Webcam C920")  // Model
        #expect(tags[0x010E] == "my rig")  // ImageDescription
        #expect(tags[0x0131]?.contains("my rig") == true)  // Software
        #expect(tags[0x9003] == "2026:03:14 15:09:26")  // DateTimeOriginal
        #expect(tags[0x9011] == "+00:00")  // OffsetTimeOriginal
    }

    /// An offline rig (no NTP, no RTC) still has a clock that counts from its last boot or the
    /// last saved time: a date that may be off is worth more than none, and the photo event and
    /// UserComment say it may be off.
    @Test func anUnsynchronisedClockStillRecordsTheDate() throws {
        var metadata = PhotoMetadata(taken: WallTime(seconds: 1_773_500_966, milliseconds: 42), cameraCard: "vivid",
                                     boardName: "rig", orientation: 1, offsetMs: 3, width: 64, height: 48)
        metadata.clockSynchronized = false
        let tags = ExifWriter.read(try ExifWriter.app1Payload(for: metadata, utc: true))
        #expect(tags[0x0132] == "2026:03:14 15:09:26")  // DateTime
        #expect(tags[0x9003] == "2026:03:14 15:09:26")  // DateTimeOriginal
        #expect(tags[0x9291] == "042")  // SubSecTimeOriginal
        #expect(tags[0x9011] == "+00:00")  // OffsetTimeOriginal
        #expect(tags[0x9010] == "+00:00")  // OffsetTime
        #expect(tags[0x010F] == nil)  // no maker reported: no Make
        #expect(tags[0x9286]?.contains("clock not synchronised") == true)  // UserComment says the date may be off
    }

    @Test func exifVersion231InSRGB() throws {
        let metadata = PhotoMetadata(taken: WallTime(seconds: 1_773_500_966, milliseconds: 42), cameraCard: "vivid",
                                     boardName: "rig", orientation: 1, offsetMs: 3, width: 64, height: 48)
        let payload = try ExifWriter.app1Payload(for: metadata, utc: true)
        let data = ExifWriter.readData(payload)
        #expect(data[0x9000] == Array("0231".utf8))  // ExifVersion: 2.31 has the OffsetTime tags
        #expect(ExifWriter.read(payload)[0xA001] == "sRGB")  // ColorSpace 1
    }

    /// As rpicam-apps writes them: ExposureTime in seconds (microseconds over 1000000), ISO 100 ×
    /// AnalogueGain; the lens position (dioptres) as SubjectDistance 1/LensPosition metres; the
    /// colour temperature, which has no EXIF tag, in UserComment.
    @Test func theCamerasExposureGoesIn() throws {
        var metadata = PhotoMetadata(taken: WallTime(seconds: 1_773_500_966, milliseconds: 42), cameraCard: "imx708",
                                     boardName: "rig", orientation: 1, offsetMs: 3, width: 64, height: 48)
        metadata.exposure = FrameExposure(exposureTime: .microseconds(16_667), analogueGain: 2.5, lensPosition: 2,
                                          colourTemperature: 5200)
        let payload = try ExifWriter.app1Payload(for: metadata, utc: true)
        let tags = ExifWriter.read(payload), data = ExifWriter.readData(payload)
        #expect(data[0x829A] == rational(16_667, 1_000_000))  // ExposureTime
        #expect(tags[0x8827] == "250")  // ISOSpeedRatings
        #expect(data[0x9206] == rational(500, 1000))  // SubjectDistance 0.5 m
        #expect(tags[0x9286]?.contains("colour temperature 5200 K") == true)
    }

    /// rpicam-apps' image/jpeg.cpp writes ISO as 100 × AnalogueGain × DigitalGain (DigitalGain 1
    /// when not reported): the Raspberry Pi AGC puts the exposure beyond the sensor's gain in DigitalGain.
    @Test func isoCountsTheDigitalGain() throws {
        var metadata = PhotoMetadata(taken: WallTime(seconds: 1_773_500_966, milliseconds: 42), cameraCard: "imx477",
                                     boardName: "rig", orientation: 1, offsetMs: 3, width: 64, height: 48)
        metadata.exposure = FrameExposure(exposureTime: .microseconds(66_666), analogueGain: 16, digitalGain: 1.5)
        #expect(ExifWriter.read(try ExifWriter.app1Payload(for: metadata, utc: true))[0x8827] == "2400")  // 100 × 16 × 1.5
        metadata.exposure.digitalGain = nil
        #expect(ExifWriter.read(try ExifWriter.app1Payload(for: metadata, utc: true))[0x8827] == "1600")
    }

    @Test func lensAtInfinityAndNothingReported() throws {
        var metadata = PhotoMetadata(taken: WallTime(seconds: 1_773_500_966, milliseconds: 42), cameraCard: "vivid",
                                     boardName: "rig", orientation: 1, offsetMs: 3, width: 64, height: 48)
        var data = ExifWriter.readData(try ExifWriter.app1Payload(for: metadata, utc: true))
        for tag: UInt16 in [0x829A, 0x8827, 0x9206] { #expect(data[tag] == nil, "tag \(tag)") }  // V4L2: none reported
        metadata.exposure.lensPosition = 0
        data = ExifWriter.readData(try ExifWriter.app1Payload(for: metadata, utc: true))
        #expect(data[0x9206] == rational(0xFFFF_FFFF, 1))  // EXIF's infinity
    }

    /// A RATIONAL as libexif stores it in an Intel-order block.
    private func rational(_ numerator: UInt32, _ denominator: UInt32) -> [UInt8] {
        withUnsafeBytes(of: numerator.littleEndian, Array.init) + withUnsafeBytes(of: denominator.littleEndian, Array.init)
    }
}

/// A frame of `format` whose every byte differs from its neighbours (a linear congruential
/// sequence from `seed`), so a plane left over from an earlier frame would show in the JPEG.
func noisyFrame(_ pixelFormat: PixelFormat, width: Int, height: Int, seed: UInt32) -> Frame {
    let format = FrameFormat(width: width, height: height, pixelFormat: pixelFormat)
    var state = seed
    let bytes = (0..<format.frameBytes!).map { _ -> UInt8 in
        state = state &* 1_664_525 &+ 1_013_904_223
        return UInt8(truncatingIfNeeded: state >> 24)
    }
    return Frame(timestamp: .zero, sequence: seed, format: format, bytes: bytes)
}

@Suite("JPEGEncoder kept from photo to photo")
struct JPEGEncoderReuseTests {
    /// One encoder (as the capture service keeps on its encode worker) makes the same JPEGs as a
    /// fresh encoder per frame, whatever the frame before it: larger, smaller, another format,
    /// or cropped.
    @Test(arguments: [1, 4])
    func aKeptEncoderWritesTheSameBytesAsAFreshOne(strips: Int) throws {
        let frames: [(Frame, CropRect?)] = [
            (noisyFrame(.yuyv, width: 320, height: 240, seed: 1), nil),
            (noisyFrame(.yuyv, width: 96, height: 64, seed: 2), nil),         // smaller: the kept planes are larger
            (noisyFrame(.yuyv, width: 640, height: 360, seed: 3), nil),       // larger: the planes and output grow
            (noisyFrame(.nv12, width: 1280, height: 720, seed: 8), nil),      // in strips, when the encoder cuts
            (noisyFrame(.nv12, width: 160, height: 120, seed: 4), nil),
            (noisyFrame(.uyvy, width: 320, height: 240, seed: 5), CropRect(x: 10, y: 6, width: 100, height: 80)),
            (noisyFrame(.rgb24, width: 64, height: 48, seed: 6), nil),
            (noisyFrame(.yuyv, width: 320, height: 240, seed: 7), nil),       // the first size again, other pixels
        ]
        let kept = try JPEGEncoder(strips: strips)
        for (frame, crop) in frames {
            let reused = try kept.encode(frame, crop: crop, quality: 90)
            let fresh = try JPEGEncoder(strips: strips).encode(frame, crop: crop, quality: 90)
            #expect(reused == fresh, "\(frame.format) crop \(String(describing: crop))")
        }
    }

    /// The service's path: two photos in a row through ``encodePhoto(_:processing:quality:encoder:)``
    /// with one encoder, at two sizes, match fresh encoders byte for byte.
    @Test func twoPhotosInARowAtDifferentSizesMatchFreshEncoders() throws {
        let encoder = EncodeWorkerEncoder()
        for frame in [noisyFrame(.yuyv, width: 1280, height: 720, seed: 11), noisyFrame(.yuyv, width: 1920, height: 1080, seed: 12)] {
            let reused = try encodePhoto(frame, processing: PhotoProcessing(), quality: 90, encoder: try encoder.encoder())
            let fresh = try encodePhoto(frame, processing: PhotoProcessing(), quality: 90, encoder: try JPEGEncoder(strips: JPEGEncoder.photoStrips))
            #expect(reused.jpeg == fresh.jpeg)
            #expect(try encoder.encoder() === encoder.encoder())
        }
    }
}
