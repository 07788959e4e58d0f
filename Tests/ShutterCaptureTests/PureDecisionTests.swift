import Foundation
import Testing
import ShutterCore
@testable import ShutterCapture

private func ms(_ value: Double) -> Instant { Instant(rawValue: Int64(value * 1_000_000)) }

@Suite("chooseFrame: the zero-shutter-lag rule")
struct ChooseFrameTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var times: [Double]
        var press: Double
        var interval: Double? = nil
        var expected: FrameChoice
        var testDescription: String { "press \(press) ms among \(times) every \(interval.map { "\($0)" } ?? "?") ms → \(expected)" }
    }

    @Test(arguments: [
        Case(times: [0, 33, 66, 100], press: 40, expected: .frame(1)),
        Case(times: [0, 33, 66, 100], press: 60, expected: .frame(1)),  // frame 33's exposure covers 60
        Case(times: [0, 33, 66, 100], press: 100, expected: .frame(3)),
        Case(times: [0, 33, 66, 100], press: 101, expected: .next),  // interval unknown: wait for the next
        Case(times: [0, 33, 66, 100], press: -50, expected: .frame(0)),
        Case(times: [0, 10], press: 5, expected: .frame(0)),
        Case(times: [66, 0, 33], press: 30, expected: .frame(1)),  // order does not matter
        Case(times: [], press: 5, expected: .next),
        Case(times: [0, 33], press: 40, interval: 33, expected: .frame(1)),  // newer than every frame, still exposing
        Case(times: [0, 33], press: 70, interval: 33, expected: .next),  // exposure over: the next frame covers it
        Case(times: [0, 33, 66], press: 70, interval: 33, expected: .frame(2)),  // it arrived: take it at once
        Case(times: [0, 200], press: 150, interval: 33, expected: .frame(1)),  // dropped frames: the nearer start
        Case(times: [0, 200], press: 40, interval: 33, expected: .frame(0)),
    ])
    func choice(_ c: Case) {
        #expect(chooseFrame(times: c.times.map(ms), pressedAt: ms(c.press), interval: c.interval.map { .milliseconds($0) }) == c.expected)
    }

    @Test func theRingIsKeptOnceByTheStateMachine() {
        var machine = CaptureStateMachine(ringCapacity: 3, keepStreaming: true)
        machine.streamStarted(at: ms(0), warmupFrames: 0)
        var ring = HeldFrames()
        let format = FrameFormat(width: 16, height: 16, pixelFormat: .grey)
        for index in 0..<5 {
            let frame = Frame(timestamp: ms(Double(index) * 33), sequence: UInt32(index), format: format, bytes: [])
            if machine.frame(.init(timestamp: frame.timestamp, sequence: frame.sequence), at: frame.timestamp).keep {
                ring.append(frame)
                ring.keep(machine.held)
            }
        }
        #expect(ring.frames.map(\.sequence) == [2, 3, 4])
        #expect(ring.bracket(around: ms(70)) == .milliseconds(33))
        // The camera needs two buffers back: the oldest go, never the newest.
        machine.giveBack(oldest: 2)
        ring.keep(machine.held)
        #expect(ring.frames.map(\.sequence) == [4])
        machine.giveBack(oldest: 5)
        ring.keep(machine.held)
        #expect(ring.frames.map(\.sequence) == [4])
    }
}

@Suite("isFrameAtPress: how the checks hold a photo to its press")
struct FrameAtPressTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var offset: Double
        var bracket: Double?
        var interval: Double?
        var expected: Bool
        var testDescription: String {
            "offset \(offset) ms, bracket \(bracket.map { "\($0)" } ?? "none"), interval \(interval.map { "\($0)" } ?? "none") → \(expected)"
        }
    }

    @Test(arguments: [
        Case(offset: -7, bracket: 33, interval: 33, expected: true),  // the frame exposing at the press
        Case(offset: 0, bracket: 33, interval: 33, expected: true),  // it started at the press
        Case(offset: -33, bracket: 33, interval: 33, expected: true),
        Case(offset: -40, bracket: 33, interval: 33, expected: false),  // an older frame than the one before
        Case(offset: 26, bracket: 33, interval: 33, expected: false),  // the frame after, when the one before covers the press
        Case(offset: 1, bracket: 33, interval: nil, expected: false),
        Case(offset: 50, bracket: 200, interval: 33, expected: true),  // dropped frames: the press in the gap, nearer the next
        Case(offset: 100, bracket: 200, interval: 33, expected: false),  // nearer the end of the earlier frame's exposure
        Case(offset: -100, bracket: 200, interval: 33, expected: true),  // and then the earlier frame is right
        Case(offset: -150, bracket: 200, interval: 33, expected: false),  // but not when the next frame is nearer
        Case(offset: -20, bracket: nil, interval: 33, expected: true),  // no frame after the press yet: the one exposing
        Case(offset: 1, bracket: nil, interval: 33, expected: false),
        Case(offset: -40, bracket: nil, interval: 33, expected: false),
        Case(offset: -20, bracket: nil, interval: nil, expected: false),  // nothing to hold it to
    ])
    func verdict(_ c: Case) {
        let verdict = isFrameAtPress(offset: .milliseconds(c.offset), bracket: c.bracket.map { .milliseconds($0) },
                                     interval: c.interval.map { .milliseconds($0) })
        #expect(verdict == c.expected)
    }

    /// For presses all through a stream (regular, and with frames dropped), the frame
    /// ``chooseFrame(times:pressedAt:interval:)`` takes passes, and the other frame around the
    /// press does not: the check tells the right frame from its neighbour.
    @Test(arguments: [[0.0, 33, 66, 100, 133], [0.0, 33, 233, 266]])
    func acceptsTheChosenFrameAndNotItsNeighbour(times: [Double]) throws {
        let interval = Nanoseconds.milliseconds(33)
        var chosenRefused: [Double] = [], neighbourAccepted: [Double] = []
        for press in stride(from: times[0] + 0.5, to: times[times.count - 1], by: 1.0) {
            guard case .frame(let index) = chooseFrame(times: times.map(ms), pressedAt: ms(press), interval: interval) else {
                Issue.record("no frame chosen at \(press) ms"); continue
            }
            let after = try #require(times.firstIndex { $0 > press }), before = after - 1
            let bracket = ms(times[after]) - ms(times[before])
            let other = index == before ? after : before
            if !isFrameAtPress(offset: ms(times[index]) - ms(press), bracket: bracket, interval: interval) { chosenRefused.append(press) }
            if isFrameAtPress(offset: ms(times[other]) - ms(press), bracket: bracket, interval: interval) { neighbourAccepted.append(press) }
        }
        #expect(chosenRefused == [])
        #expect(neighbourAccepted == [])
    }
}

@Suite("FileNameTemplate")
struct FileNameTemplateTests {
    // 2026-03-14 15:09:26 UTC
    let time = WallTime(seconds: 1_773_500_966, milliseconds: 7)

    @Test(arguments: [
        ("IMG_%Y%m%d_%H%M%S_{ms}_{seq}.jpg", 3, "IMG_20260314_150926_007_0003.jpg"),
        ("{seq}.jpg", 12345, "12345.jpg"),
        ("shot-%D.jpg", 1, "shot-03-14-26.jpg"),
        ("100%%-{ms}.jpg", 1, "100%-007.jpg"),
    ])
    func expansion(template: String, sequence: Int, expected: String) {
        #expect(FileNameTemplate(template).name(at: time, sequence: sequence, utc: true) == expected)
    }

    @Test(arguments: [
        ("IMG.jpg", 1, "IMG.jpg"), ("IMG.jpg", 2, "IMG-2.jpg"), ("a.b.jpg", 3, "a.b-3.jpg"),
        ("noext", 2, "noext-2"), (".hidden", 2, ".hidden-2"),
    ])
    func variants(name: String, attempt: Int, expected: String) {
        #expect(FileNameTemplate.variant(of: name, attempt: attempt) == expected)
    }
}

@Suite("CropRect.digitalZoom")
struct DigitalZoomTests {
    @Test(arguments: [
        (1.0, CropRect(x: 0, y: 0, width: 1280, height: 720)),
        (0.5, CropRect(x: 0, y: 0, width: 1280, height: 720)),
        (2.0, CropRect(x: 320, y: 180, width: 640, height: 360)),
        (3.0, CropRect(x: 426, y: 240, width: 426, height: 240)),
    ])
    func centredEvenCrop(factor: Double, expected: CropRect) {
        let crop = CropRect.digitalZoom(width: 1280, height: 720, factor: factor)
        #expect(crop == expected)
        #expect(crop.x % 2 == 0 && crop.y % 2 == 0 && crop.width % 2 == 0 && crop.height % 2 == 0)
    }
}

@Suite("CameraControl mapping")
struct CameraControlTests {
    let zoom = CameraControl(id: ControlID.zoomAbsolute, name: "Zoom, Absolute", kind: .integer, minimum: 100,
                             maximum: 500, step: 10, defaultValue: 100, isWritable: true)

    @Test(arguments: [(1.0, Int32(100)), (8.0, 500), (4.5, 300), (0.0, 100), (20.0, 500), (2.0, 160)])
    func linearMapping(value: Double, expected: Int32) {
        #expect(zoom.mapped(value, from: 1...8) == expected)
    }
}

@Suite("chooseFormat")
struct ChooseFormatTests {
    let offered = [
        V4L2FormatInfo(pixelFormat: PixelFormat(fourcc: "BA81")!, description: "Bayer", isEmulated: false,
                       sizes: [FrameSize(width: 1920, height: 1080)]),
        V4L2FormatInfo(pixelFormat: .yuyv, description: "YUYV", isEmulated: false,
                       sizes: [FrameSize(width: 1920, height: 1080), FrameSize(width: 1280, height: 720)]),
        V4L2FormatInfo(pixelFormat: .rgb24, description: "RGB3", isEmulated: true,
                       sizes: [FrameSize(width: 1920, height: 1080)]),
    ]

    @Test func defaultsToTheBestNativeFormatAtItsLargestSize() throws {
        let (format, size) = try chooseFormat(offered: offered, settings: CameraSettings(), device: "/dev/video0")
        #expect(format == .yuyv)
        #expect(size == FrameSize(width: 1920, height: 1080))
    }

    @Test func prefersMJPEG() throws {
        let mjpeg = V4L2FormatInfo(pixelFormat: .mjpeg, description: "MJPEG", isEmulated: false, sizes: [FrameSize(width: 640, height: 480)])
        let (format, _) = try chooseFormat(offered: offered + [mjpeg], settings: CameraSettings(), device: "d")
        #expect(format == .mjpeg)
    }

    @Test func refusesAnUnofferedSizeListingTheOffered() {
        var settings = CameraSettings()
        settings.width = 800
        settings.height = 600
        #expect(throws: CaptureError.unsupportedSize(device: "d", requested: "800x600 in YUYV", supported: ["1920x1080", "1280x720"])) {
            try chooseFormat(offered: offered, settings: settings, device: "d")
        }
    }

    @Test func refusesAnUnofferedFormatListingTheOffered() {
        var settings = CameraSettings()
        settings.pixelFormat = "NV12"
        #expect(throws: CaptureError.unsupportedFormat(device: "d", requested: "NV12", supported: ["BA81", "YUYV", "RGB3"])) {
            try chooseFormat(offered: offered, settings: settings, device: "d")
        }
    }

    @Test func acceptsAnySizeInAStepwiseRange() throws {
        let stepwise = V4L2FormatInfo(pixelFormat: .nv12, description: "NV12", isEmulated: false,
                                      sizes: [FrameSize(width: 4056, height: 3040), FrameSize(width: 64, height: 64)], isStepwise: true)
        var settings = CameraSettings()
        settings.width = 2028
        settings.height = 1520
        let (format, size) = try chooseFormat(offered: [stepwise], settings: settings, device: "d")
        #expect(format == .nv12 && size == FrameSize(width: 2028, height: 1520))
        settings.width = 8000
        #expect(throws: CaptureError.self) { try chooseFormat(offered: [stepwise], settings: settings, device: "d") }
    }

    /// A webcam: MJPEG up to 1280x720, YUYV up to 1920x1080 but slow at large sizes.
    let webcam = [
        V4L2FormatInfo(pixelFormat: .mjpeg, description: "Motion-JPEG", isEmulated: false,
                       sizes: [FrameSize(width: 1280, height: 720), FrameSize(width: 640, height: 480)],
                       fastestInterval: [FrameSize(width: 1280, height: 720): .milliseconds(1000.0 / 30),
                                         FrameSize(width: 640, height: 480): .milliseconds(1000.0 / 30)]),
        V4L2FormatInfo(pixelFormat: .yuyv, description: "YUYV 4:2:2", isEmulated: false,
                       sizes: [FrameSize(width: 1920, height: 1080), FrameSize(width: 1280, height: 720), FrameSize(width: 640, height: 480)],
                       fastestInterval: [FrameSize(width: 1920, height: 1080): .milliseconds(200),
                                         FrameSize(width: 1280, height: 720): .milliseconds(100),
                                         FrameSize(width: 640, height: 480): .milliseconds(1000.0 / 30)]),
    ]

    struct SizeCase: Sendable, CustomTestStringConvertible {
        var width: Int, height: Int
        var fps: Double?
        var expected: PixelFormat
        var testDescription: String { "\(width)x\(height) at \(fps.map { "\($0)" } ?? "any") fps → \(expected)" }
    }

    @Test(arguments: [
        SizeCase(width: 1920, height: 1080, expected: .yuyv),  // only YUYV has it: no failure for MJPEG's lack
        SizeCase(width: 1280, height: 720, expected: .mjpeg),  // MJPEG is faster there
        SizeCase(width: 640, height: 480, expected: .mjpeg),  // equal rates: the preferred format
        SizeCase(width: 1280, height: 720, fps: 5, expected: .mjpeg),  // both reach 5 fps: preferred
    ])
    func withoutAPixelFormatTheSizeAtTheBestRate(_ c: SizeCase) throws {
        var settings = CameraSettings()
        settings.width = c.width
        settings.height = c.height
        settings.fps = c.fps
        let (format, size) = try chooseFormat(offered: webcam, settings: settings, device: "d")
        #expect(format == c.expected)
        #expect(size == FrameSize(width: c.width, height: c.height))
    }

    @Test func aFasterFormatWinsOverThePreferredOne() throws {
        var offered = webcam
        offered[0].fastestInterval[FrameSize(width: 640, height: 480)] = .milliseconds(100)
        var settings = CameraSettings()
        settings.width = 640
        settings.height = 480
        #expect(try chooseFormat(offered: offered, settings: settings, device: "d").0 == .yuyv)
        settings.fps = 10  // both reach the rate asked for: the preferred one
        #expect(try chooseFormat(offered: offered, settings: settings, device: "d").0 == .mjpeg)
    }

    @Test func fallsBackToLibv4l2Conversion() throws {
        let (format, _) = try chooseFormat(offered: [offered[0], offered[2]], settings: CameraSettings(), device: "d")
        #expect(format == .rgb24)
    }
}

@Suite("CameraSettings decoding")
struct CameraSettingsTests {
    func decode(_ json: String) throws -> CameraSettings {
        try JSONDecoder().decode(CameraSettings.self, from: Data(json.utf8))
    }

    @Test func defaults() throws {
        let settings = try decode("{}")
        #expect(settings.keepStreaming && settings.warmupFrames == 4 && settings.ringFrames == 4)
        #expect(settings.orientation == 1 && settings.digitalZoom == .scale && settings.quality == 93)
    }

    @Test func newFields() throws {
        let settings = try decode(#"{"keepStreaming": false, "warmupFrames": 8, "ringFrames": 6, "orientation": 3, "digitalZoom": "crop", "bindings": {"filter": "Saturation"}}"#)
        #expect(!settings.keepStreaming && settings.warmupFrames == 8 && settings.ringFrames == 6)
        #expect(settings.orientation == 3 && settings.digitalZoom == .crop && settings.bindings == ["filter": "Saturation"])
        #expect(try decode(#"{"fps": 29.97}"#).fps == 29.97)
        #expect(try decode("{}").fps == nil)
        #expect(try decode("{}").ringMiB == nil, "no cap: the ring is sized in frames")
        #expect(try decode(#"{"ringMiB": 8}"#).ringMiB == 8)
    }

    @Test(arguments: [
        #"{"ringFrame": 4}"#, #"{"ringFrames": 1}"#, #"{"orientation": 9}"#, #"{"digitalZoom": "zoom"}"#, #"{"device": ""}"#,
        #"{"fps": 0}"#, #"{"fps": -5}"#, #"{"fps": 5000}"#, #"{"ringMiB": 0}"#, #"{"ringMiB": 4096}"#,
    ])
    func refused(json: String) {
        #expect(throws: (any Error).self) { try decode(json) }
    }

    @Test func boardErrorNamesTheField() throws {
        let text = try String(contentsOfFile: packageRoot + "/Boards/simulator.json", encoding: .utf8)
            .replacingOccurrences(of: #""quality": 93"#, with: #""quality": 93, "orientaton": 1"#)
        #expect(throws: BoardError.self) { try Board.decode(Data(text.utf8), file: "sim.json") }
        do {
            _ = try Board.decode(Data(text.utf8), file: "sim.json")
        } catch {
            #expect(error.description.contains("camera.orientaton: unknown key 'orientaton' (did you mean 'orientation'?)"))
        }
    }
}

/// The package's root directory, for reading `Boards/`.
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

@Suite("FrameIntervalMeter: the interval of a camera that does not say it")
struct FrameIntervalMeterTests {
    @Test func isTheMedianOfTheRecentIntervals() {
        var meter = FrameIntervalMeter()
        meter.frame(at: ms(0))
        #expect(meter.interval == nil, "one frame has no interval")
        for time in [900.0, 1800, 1900, 2800] { meter.frame(at: ms(time)) }  // 900, 900, 100, 900
        #expect(meter.interval == .milliseconds(900))
    }

    @Test func forgetsIntervalsOlderThanItsWindow() {
        var meter = FrameIntervalMeter()
        var time = 0.0
        for _ in 0...FrameIntervalMeter.window { time += 1000; meter.frame(at: ms(time)) }
        #expect(meter.interval == .seconds(1))
        for _ in 0..<(FrameIntervalMeter.window / 2 + 1) { time += 33; meter.frame(at: ms(time)) }
        #expect(meter.interval == .milliseconds(33), "a new rate wins once it is most of the window")
    }

    @Test func ignoresTimesThatDoNotMoveForwardAndRestartsAfterAStop() {
        var meter = FrameIntervalMeter()
        meter.frame(at: ms(0)); meter.frame(at: ms(100))
        meter.frame(at: ms(50))  // out of order: ignored, and not the new reference
        meter.frame(at: ms(200))
        #expect(meter.interval == .milliseconds(100))
        meter.streamStopped()
        meter.frame(at: ms(10_000))  // the gap across the stop is no interval
        #expect(meter.interval == .milliseconds(100))
    }
}
