import Testing
import ShutterCore
@testable import ShutterCapture

/// Reads the frames of the camera's first start that complete as FrameStartup (seven: see
/// ``SimulatedCameraModule``), one sensor interval at a time as the daemon's loop would, and
/// hands their requests back: the next frame is the first picture.
private func passConvergence(_ camera: SimulatedCamera, clock: VirtualClock) throws {
    var frames: [Frame] = []
    for _ in 0..<7 {
        clock.advance(by: .microseconds(camera.module.minimumFrameDurationMicroseconds))
        try camera.readFrames(into: &frames)
    }
    #expect(frames.isEmpty, "a convergence frame reached the ring")
}

/// Each of the synthetic picture's eight colour bars has its colour above and below the chart in
/// the middle third: rows read with the wrong stride shear the bars, chroma read from the wrong
/// place changes their colour.
private func expectUprightBars(in image: RGBImage, sourceLocation: SourceLocation = #_sourceLocation) {
    for (index, bar) in SyntheticCamera.barsYUV.enumerated() {
        // BT.601 full range, as the JPEG carries it.
        let y = Double(bar.y), u = Double(bar.u) - 128, v = Double(bar.v) - 128
        let expected = [y + 1.402 * v, y - 0.344 * u - 0.714 * v, y + 1.772 * u].map { Int(max(0, min(255, $0)).rounded()) }
        let x = (2 * index + 1) * image.width / 16
        for row in [image.height / 4, image.height * 3 / 4] {
            let got = image.pixel(x: x, y: row)
            let error = zip([Int(got.r), Int(got.g), Int(got.b)], expected).map { abs($0 - $1) }.max() ?? 0
            #expect(error <= 24, "bar \(index) at (\(x), \(row)): \(got), expected \(expected)", sourceLocation: sourceLocation)
        }
    }
}

/// A board's camera with a small ring: each module's buffers are full-resolution stills.
private func smallRing() -> CameraSettings {
    var settings = CameraSettings()
    settings.ringFrames = 2
    return settings
}

@Suite("A simulated camera module (SimulatedCamera over the libcamera fake's raspberrypi personality)")
struct SimulatedCameraTests {
    @Test(arguments: SimulatedCameraModule.allCases)
    func opensAtTheFullResolutionModeAndSaysWhichModuleItIs(_ module: SimulatedCameraModule) throws {
        let camera = try SimulatedCamera(module: module, settings: smallRing())
        defer { camera.close() }
        #expect(camera.format.width == module.sensorSize.width)
        #expect(camera.format.height == module.sensorSize.height)
        #expect(camera.format.pixelFormat == .yuv420)
        // EXIF's Model and Make, as rpicam-apps writes them on a Pi.
        #expect(camera.info.card == module.rawValue)
        #expect(camera.info.maker == "Raspberry Pi")
        #expect(camera.info.driver == "libcamera")
        #expect(camera.frameInterval == .microseconds(module.minimumFrameDurationMicroseconds))
        // Only the Camera Module 3 has a lens to drive.
        #expect((camera.libcamera.control(.afMode) != nil) == (module == .imx708))
    }

    @Test func framesArriveByThemselvesAtTheModesRateStampedOnTheSensorsCadence() throws {
        let clock = VirtualClock(start: .seconds(100))
        let camera = try SimulatedCamera(module: .imx708, settings: smallRing(), clock: clock)
        defer { camera.close() }
        try camera.start()
        #expect(camera.pollDescriptor != nil)
        var frames: [Frame] = []
        try camera.readFrames(into: &frames)
        #expect(frames.isEmpty, "no frame before the sensor's first")
        let interval = Nanoseconds.microseconds(69_669)
        try passConvergence(camera, clock: clock)
        clock.advance(by: interval * 3 + .milliseconds(1))
        try camera.readFrames(into: &frames)
        #expect(frames.count == 3)
        // SensorTimestamp is the start of readout; the frame's instant is its exposure's start, 20 ms before.
        let expected = (8...10).map { Instant.seconds(100) + interval * Int64($0) - .milliseconds(20) }
        #expect(frames.map(\.timestamp) == expected)
        #expect(frames.map(\.sequence) == [7, 8, 9])
    }

    /// IpaBase::start withholds frames while AGC and AWB converge only on the camera's first
    /// start (firstStart_), and pipeline_base.cpp completes them as FrameStartup (libcamera
    /// 0.5.1 on): none reaches the ring, and a later start's first frame is a picture at once.
    @Test func onlyTheFirstStartsConvergenceFramesAreWithheld() throws {
        let clock = VirtualClock(start: .seconds(100))
        let camera = try SimulatedCamera(module: .imx477, settings: smallRing(), clock: clock)
        defer { camera.close() }
        let interval = Nanoseconds.microseconds(SimulatedCameraModule.imx477.minimumFrameDurationMicroseconds)
        var frames: [Frame] = []
        try camera.start()
        try passConvergence(camera, clock: clock)
        clock.advance(by: interval)
        try camera.readFrames(into: &frames)
        #expect(frames.map(\.sequence) == [7])
        frames.removeAll()
        try camera.returnUnusedBuffers()
        camera.stop()
        try camera.start()
        clock.advance(by: interval + .milliseconds(1))
        try camera.readFrames(into: &frames)
        #expect(frames.count == 1, "the restart's first frame")
    }

    @Test func everyFrameShowsThePictureNotAFill() throws {
        let clock = VirtualClock(start: .seconds(100))
        let camera = try SimulatedCamera(module: .imx219, settings: smallRing(), clock: clock)
        defer { camera.close() }
        try camera.start()
        try passConvergence(camera, clock: clock)
        var frames: [Frame] = []
        // More frames than requests: every request's buffers carry the picture.
        for _ in 0..<(camera.libcamera.requestCount + 2) {
            clock.advance(by: .microseconds(47_192))
            try camera.readFrames(into: &frames)
            frames.removeAll()
            try camera.returnUnusedBuffers()
        }
        clock.advance(by: .microseconds(47_192))
        try camera.readFrames(into: &frames)
        let frame = try #require(frames.first)
        let width = camera.format.width
        let lumaRow: [UInt8] = frame.withUnsafeBytes { Array($0[0..<width]) }
        // The colour bars: the left bar (light grey) is brighter than the right one (black).
        #expect(Set(lumaRow).count >= 6, "a row crosses the eight bars")
        #expect(lumaRow[width / 16] > lumaRow[width - width / 16])
    }

    /// The Pi 5's back end pads YUV420 rows to 64-byte alignment, the luma's twice the chroma's
    /// (fake.cpp's FakeCamera.layout cites pisp.cpp), in one buffer: the HQ camera's 4056
    /// pixels are 4096 bytes apart. A photo that took the rows as `width` apart would shear the
    /// bars and take its chroma from the wrong place; each bar keeps its colour.
    @Test(arguments: [(SimulatedCameraModule.imx477, 4096), (.imx219, 3328), (.imx708, 4608)])
    func rowsPaddedAsThePiSPBackEndPadsThemMakeAStraightPhoto(_ module: SimulatedCameraModule, bytesPerLine: Int) throws {
        let clock = VirtualClock(start: .seconds(100))
        let camera = try SimulatedCamera(module: module, settings: smallRing(), clock: clock)
        defer { camera.close() }
        #expect(camera.format.bytesPerLine == bytesPerLine)
        try camera.start()
        try passConvergence(camera, clock: clock)
        var frames: [Frame] = []
        clock.advance(by: .microseconds(module.minimumFrameDurationMicroseconds) + .milliseconds(1))
        try camera.readFrames(into: &frames)
        let frame = try #require(frames.first)
        let image = try JPEGDecoder().decode(JPEGEncoder().encode(frame, quality: 95))
        #expect(image.width == module.sensorSize.width && image.height == module.sensorSize.height)
        expectUprightBars(in: image)
    }

    /// The pipeline keeps the viewfinder format asked for (YUV420) and pads its rows as the
    /// still's (320 pixels: 384 bytes, twice the 192-byte chroma stride); the live view's
    /// downscale of it keeps the bars upright and coloured.
    @Test func theViewfinderComesInTheFormatAskedForAndShowsThePictureToo() throws {
        let clock = VirtualClock(start: .seconds(100))
        var settings = smallRing()
        settings.viewfinder = FrameDimensions(width: 320, height: 180)
        let camera = try SimulatedCamera(module: .imx708, settings: settings, clock: clock)
        defer { camera.close() }
        try camera.start()
        try passConvergence(camera, clock: clock)
        var frames: [Frame] = []
        clock.advance(by: .microseconds(69_669))
        try camera.readFrames(into: &frames)
        let finder = try #require(frames.first?.viewfinder)
        #expect(finder.format.width == 320 && finder.format.height == 180)
        #expect(finder.format.pixelFormat == .yuv420 && finder.format.bytesPerLine == 384)
        var memory: [UInt8] = []
        let layout = try PreviewScaler.downscale(UnsafeRawBufferPointer(start: finder.start, count: finder.count), format: finder.format,
                                                 toWidth: 160, into: &memory)
        let small = Frame(timestamp: .zero, sequence: 0, format: layout, bytes: memory)
        expectUprightBars(in: try JPEGDecoder().decode(JPEGEncoder().encode(small, quality: 95)))
    }

    @Test func aBoardsFrameRateIsKeptWithinTheModesRange() throws {
        var slow = smallRing()
        slow.fps = 5
        let camera = try SimulatedCamera(module: .imx477, settings: slow)
        #expect(camera.sensorInterval == .milliseconds(200))
        camera.close()
        var fast = smallRing()
        fast.fps = 60
        let clamped = try SimulatedCamera(module: .imx477, settings: fast)
        #expect(clamped.sensorInterval == .microseconds(100_000), "the HQ camera's full-resolution mode runs at 10 fps at most")
        clamped.close()
    }

    @Test func theModuleStandsInForWhatTheBoardNames() {
        var settings = CameraSettings()
        #expect(SimulatedCameraModule.standingIn(for: settings) == .imx708)
        settings.device = "libcamera"
        #expect(SimulatedCameraModule.standingIn(for: settings) == .imx708)
        settings.device = "IMX477"
        #expect(SimulatedCameraModule.standingIn(for: settings) == .imx477)
        settings.device = "/dev/video0"
        #expect(SimulatedCameraModule.standingIn(for: settings) == .imx708)
        settings.device = "synthetic"
        #expect(SimulatedCameraModule.standingIn(for: settings) == nil)
    }
}
