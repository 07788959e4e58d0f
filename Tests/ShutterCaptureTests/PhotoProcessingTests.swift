import Foundation
import ShutterCore
import Testing
@testable import ShutterCapture

/// A `width`×`height` frame of four vertical stripes, luma 20, 80, 160, 230 from left to right,
/// with neutral chroma; in a YUV `format`.
func stripedFrame(_ pixelFormat: PixelFormat, width: Int = 64, height: Int = 48) -> Frame {
    let levels: [UInt8] = [20, 80, 160, 230]
    let format = FrameFormat(width: width, height: height, pixelFormat: pixelFormat)
    var bytes = [UInt8](repeating: 128, count: format.frameBytes!)
    for row in 0..<height {
        for column in 0..<width {
            let luma = levels[column * 4 / width]
            switch pixelFormat {
            case .yuyv: bytes[row * width * 2 + column * 2] = luma
            case .uyvy: bytes[row * width * 2 + column * 2 + 1] = luma
            default: bytes[row * width + column] = luma  // NV12, YU12: the luma plane comes first
            }
        }
    }
    return Frame(timestamp: .zero, sequence: 0, format: format, bytes: bytes)
}

/// The photo `frame` becomes with `processing`, decoded back to its planes.
func processed(_ frame: Frame, _ processing: PhotoProcessing) throws -> (photo: EncodedPhoto, planes: YUVImage) {
    let photo = try encodePhoto(frame, processing: processing, quality: 95, encoder: try JPEGEncoder())
    return (photo, try decodeJPEGPlanes(photo.jpeg))
}

@Suite("PhotoProcessing")
struct PhotoProcessingTests {
    static let yuvFormats: [PixelFormat] = [.yuyv, .uyvy, .nv12, .yuv420]
    static let allFormats: [PixelFormat] = yuvFormats + [.rgb24, .bgr24]

    /// The mean of a plane's values.
    func mean(_ plane: [UInt8]) -> Double { Double(plane.reduce(0) { $0 + Int($1) }) / Double(plane.count) }

    @Test(arguments: allFormats)
    func monoLeavesNeutralChromaAndKeepsLuma(_ format: PixelFormat) throws {
        let frame = solidFrame(format)  // a strongly coloured frame (red)
        let plain = try processed(frame, PhotoProcessing()).planes
        let (photo, mono) = try processed(frame, PhotoProcessing(effect: .mono))
        #expect(photo.width == 64 && photo.height == 48)
        #expect(abs(mean(plain.v) - 128) > 40, "the test frame is coloured")
        #expect(mono.u.allSatisfy { abs(Int($0) - 128) <= 1 } && mono.v.allSatisfy { abs(Int($0) - 128) <= 1 })
        #expect(abs(mean(mono.y) - mean(plain.y)) < 2, "mono keeps the brightness")
    }

    @Test(arguments: allFormats)
    func vividPushesChromaAwayFromGrey(_ format: PixelFormat) throws {
        let frame = solidFrame(format, yuv: (120, 110, 150), rgb: (150, 110, 100))
        let plain = try processed(frame, PhotoProcessing()).planes
        let vivid = try processed(frame, PhotoProcessing(effect: .vivid)).planes
        for (before, after) in [(mean(plain.u), mean(vivid.u)), (mean(plain.v), mean(vivid.v))] {
            #expect(abs(after - 128) > abs(before - 128) * 1.4, "\(before) → \(after)")
            #expect((after - 128).sign == (before - 128).sign)
        }
        #expect(abs(mean(vivid.y) - mean(plain.y)) < 2)
    }

    @Test(arguments: allFormats)
    func warmShiftsTowardsRedAndAwayFromBlue(_ format: PixelFormat) throws {
        let frame = solidFrame(format, yuv: (120, 128, 128), rgb: (120, 120, 120))
        let plain = try processed(frame, PhotoProcessing()).planes
        let warm = try processed(frame, PhotoProcessing(effect: .warm)).planes
        #expect(mean(warm.v) - mean(plain.v) > 10 && mean(plain.u) - mean(warm.u) > 10)
        let rgb = try JPEGDecoder().decode(try encodePhoto(frame, processing: PhotoProcessing(effect: .warm), quality: 95, encoder: try JPEGEncoder()).jpeg)
        let pixel = rgb.pixel(x: 32, y: 24)
        #expect(pixel.r > pixel.g && pixel.g > pixel.b, "warm grey is reddish-yellow: \(pixel)")
    }

    /// A Raspberry Pi camera module's YUV420 frame (the Pi boards' Filter picker): rows aligned to
    /// a stride wider than the width (PiSP aligns its stride; the HQ camera's 4056 columns), the
    /// padding holding whatever the ISP left there, which must not reach the photo.
    @Test func effectsReadAPaddedYUV420FrameByItsStride() throws {
        let (width, height, stride) = (64, 48, 96)
        let format = FrameFormat(width: width, height: height, pixelFormat: .yuv420, bytesPerLine: stride)
        var bytes = [UInt8](repeating: 255, count: try #require(format.frameBytes))
        let levels: [UInt8] = [20, 80, 160, 230]
        for row in 0..<height { for column in 0..<width { bytes[row * stride + column] = levels[column * 4 / width] } }
        let chroma = stride * height, chromaStride = stride / 2
        for plane in 0..<2 {
            for row in 0..<(height / 2) {
                for column in 0..<(width / 2) { bytes[chroma + plane * chromaStride * (height / 2) + row * chromaStride + column] = plane == 0 ? 90 : 170 }
            }
        }
        let frame = Frame(timestamp: .zero, sequence: 0, format: format, bytes: bytes)
        let (photo, mono) = try processed(frame, PhotoProcessing(effect: .mono))
        #expect(photo.width == width && photo.height == height)
        #expect(mono.u.allSatisfy { abs(Int($0) - 128) <= 2 } && mono.v.allSatisfy { abs(Int($0) - 128) <= 2 })
        for (index, level) in levels.enumerated() {
            #expect(abs(Int(mono.pixel(x: index * 16 + 8, y: 24).y) - Int(level)) <= 4, "stripe \(index)")
        }
        let warm = try processed(frame, PhotoProcessing(effect: .warm)).planes
        #expect(mean(warm.v) - mean(warm.u) > 80 + 20, "warm: V−U \(mean(warm.v) - mean(warm.u))")
    }

    @Test func greyFramesTakeEffectsToo() throws {
        let frame = solidFrame(.grey)
        let warm = try processed(frame, PhotoProcessing(effect: .warm)).planes
        #expect(warm.v.allSatisfy { $0 > 135 } && warm.y.allSatisfy { abs(Int($0) - 200) <= 2 })
    }

    @Test(arguments: yuvFormats)
    func zoomScalesTheCentredCropBackToTheFrameSize(_ format: PixelFormat) throws {
        // Zoom 2 takes columns 16..<48: the second and third stripes, each filling half the photo.
        let frame = stripedFrame(format)
        let crop = CropRect.digitalZoom(width: 64, height: 48, factor: 2)
        let (photo, image) = try processed(frame, PhotoProcessing(crop: crop))
        #expect(photo.width == 64 && photo.height == 48 && image.width == 64 && image.height == 48)
        for row in [0, 24, 47] {
            for column in [1, 8, 24] { #expect(abs(Int(image.pixel(x: column, y: row).y) - 80) <= 4, "(\(column), \(row))") }
            for column in [40, 56, 62] { #expect(abs(Int(image.pixel(x: column, y: row).y) - 160) <= 4, "(\(column), \(row))") }
        }
    }

    @Test(arguments: yuvFormats)
    func zoomCanSaveTheCropAtItsOwnSize(_ format: PixelFormat) throws {
        let frame = stripedFrame(format)
        let crop = CropRect.digitalZoom(width: 64, height: 48, factor: 2)
        let (photo, image) = try processed(frame, PhotoProcessing(crop: crop, scaleToFrame: false))
        #expect(photo.width == 32 && photo.height == 24)
        #expect(abs(Int(image.pixel(x: 4, y: 12).y) - 80) <= 4 && abs(Int(image.pixel(x: 28, y: 12).y) - 160) <= 4)
    }

    @Test func zoomAndAnEffectTogether() throws {
        let frame = solidFrame(.nv12, width: 1280, height: 720)
        let crop = CropRect.digitalZoom(width: 1280, height: 720, factor: 3)
        let (photo, image) = try processed(frame, PhotoProcessing(crop: crop, effect: .mono))
        #expect(photo.width == 1280 && photo.height == 720)
        #expect(image.u.allSatisfy { abs(Int($0) - 128) <= 1 })
    }

    @Test func mjpegFramesPassUntouchedWithoutAnEffectAndAreReencodedWithOne() throws {
        let jpeg = try JPEGEncoder().encode(solidFrame(.yuyv), quality: 90)
        let frame = Frame(timestamp: .zero, sequence: 0, format: FrameFormat(width: 64, height: 48, pixelFormat: .mjpeg), bytes: jpeg)
        #expect(try encodePhoto(frame, processing: PhotoProcessing(), quality: 93, encoder: try JPEGEncoder()).jpeg == jpeg)
        let (photo, mono) = try processed(frame, PhotoProcessing(effect: .mono))
        #expect(photo.jpeg != jpeg && photo.width == 64)
        #expect(mono.u.allSatisfy { abs(Int($0) - 128) <= 1 } && mono.v.allSatisfy { abs(Int($0) - 128) <= 1 })
        let zoomed = try processed(frame, PhotoProcessing(crop: CropRect.digitalZoom(width: 64, height: 48, factor: 2)))
        #expect(zoomed.photo.width == 64 && zoomed.photo.height == 48)
    }

    @Test func refusesACropOutsideTheFrame() {
        #expect(throws: CaptureError.self) {
            try encodePhoto(solidFrame(.nv12), processing: PhotoProcessing(crop: CropRect(x: 40, y: 0, width: 32, height: 24), effect: .mono),
                            quality: 90, encoder: try JPEGEncoder())
        }
    }

    @Test func scalingShrinksAndGrowsWithLibyuv() {
        var image = YUVImage(width: 4, height: 2, y: 50)
        image.y[2] = 250; image.y[3] = 250; image.y[6] = 250; image.y[7] = 250  // right half bright
        let grown = image.scaled(width: 8, height: 4)
        #expect(grown.width == 8 && grown.y.count == 32)
        #expect(grown.pixel(x: 0, y: 1).y < 80 && grown.pixel(x: 7, y: 1).y > 220)
        let shrunk = image.scaled(width: 2, height: 2)
        #expect(shrunk.pixel(x: 0, y: 0).y == 50 && shrunk.pixel(x: 1, y: 0).y == 250)
    }
}

@Suite("Photo effects from the board")
struct PhotoEffectBoardTests {
    func control(_ json: String) throws -> ControlSpec { try JSONDecoder().decode(ControlSpec.self, from: Data(json.utf8)) }

    @Test func aPickerNamesAnEffectPerItem() throws {
        let spec = try control(#"{"id": "filter", "kind": "picker", "titles": ["None", "Mono"], "effects": ["none", "mono"]}"#)
        #expect(spec.effects == [PhotoEffect.none, .mono])
        #expect(try control(#"{"id": "filter", "kind": "picker", "count": 2}"#).effects == nil)
    }

    @Test(arguments: [
        (#"{"id": "f", "kind": "picker", "titles": ["None", "Mono"], "effects": ["none"]}"#, "1 effects for 2 items"),
        (#"{"id": "f", "kind": "picker", "titles": ["None", "Sepia"], "effects": ["none", "sepia"]}"#, "is not one of"),
        (#"{"id": "f", "kind": "slider", "range": [0, 1], "effects": ["none", "mono"]}"#, "only a picker has effects"),
    ])
    func refusesBadEffects(json: String, message: String) {
        #expect { try control(json) } throws: { "\($0)".contains(message) }
    }

    @Test func theSimulatorsFilterPickerChangesThePhotos() throws {
        let harness = try Harness()
        let titles = ["None", "Mono", "Vivid", "Warm"]
        var chroma: [String: (u: Double, v: Double)] = [:]
        for (index, title) in titles.enumerated() {
            harness.service.apply(controlID: "filter", value: .index(index))
            #expect(harness.service.photoProcessing.effect.rawValue == title.lowercased())
            let time = 1000 + Double(index) * 100
            harness.frames(time)
            harness.service.capture(pressedAt: Instant(rawValue: Int64(time * 1_000_000)), now: Instant(rawValue: Int64((time + 1) * 1_000_000)))
            let photo = try #require(harness.finish().compactMap(\.photo).first)
            let planes = try decodeJPEGPlanes(try [UInt8](Data(contentsOf: URL(fileURLWithPath: photo.path))))
            // The synthetic bars: mean distance of chroma from neutral, over the whole photo.
            func spread(_ plane: [UInt8]) -> Double { Double(plane.reduce(0) { $0 + abs(Int($1) - 128) }) / Double(plane.count) }
            func mean(_ plane: [UInt8]) -> Double { Double(plane.reduce(0) { $0 + Int($1) }) / Double(plane.count) }
            chroma[title] = (spread(planes.u) + spread(planes.v), mean(planes.v) - mean(planes.u))
        }
        let none = try #require(chroma["None"]), mono = try #require(chroma["Mono"])
        let vivid = try #require(chroma["Vivid"]), warm = try #require(chroma["Warm"])
        #expect(none.u > 20 && mono.u < 2, "mono: \(mono.u), none: \(none.u)")
        #expect(vivid.u > none.u * 1.3, "vivid: \(vivid.u), none: \(none.u)")
        #expect(warm.v > none.v + 20, "warm: V−U \(warm.v), none: \(none.v)")
        #expect(harness.service.controlReport().contains { $0.id == "filter" && $0.how.contains("photo effect") })
    }
}
