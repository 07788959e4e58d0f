import Testing
import ShutterCore
@testable import ShutterCapture

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
        clock.advance(by: interval * 3 + .milliseconds(1))
        try camera.readFrames(into: &frames)
        #expect(frames.count == 3)
        // SensorTimestamp is the start of readout; the frame's instant is its exposure's start, 20 ms before.
        let expected = (1...3).map { Instant.seconds(100) + interval * Int64($0) - .milliseconds(20) }
        #expect(frames.map(\.timestamp) == expected)
        #expect(frames.map(\.sequence) == [0, 1, 2])
    }

    @Test func everyFrameShowsThePictureNotAFill() throws {
        let clock = VirtualClock(start: .seconds(100))
        let camera = try SimulatedCamera(module: .imx219, settings: smallRing(), clock: clock)
        defer { camera.close() }
        try camera.start()
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

    @Test func theViewfinderShowsThePictureToo() throws {
        let clock = VirtualClock(start: .seconds(100))
        var settings = smallRing()
        settings.viewfinder = FrameDimensions(width: 640, height: 360)
        let camera = try SimulatedCamera(module: .imx708, settings: settings, clock: clock)
        defer { camera.close() }
        try camera.start()
        var frames: [Frame] = []
        clock.advance(by: .microseconds(69_669))
        try camera.readFrames(into: &frames)
        let finder = try #require(frames.first?.viewfinder)
        #expect(finder.format.width == 640 && finder.format.height == 360)
        let lumaRow = Array(UnsafeRawBufferPointer(start: finder.start, count: 640))
        #expect(Set(lumaRow).count >= 6, "a row crosses the eight bars")
        #expect(lumaRow[40] > lumaRow[600])
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
