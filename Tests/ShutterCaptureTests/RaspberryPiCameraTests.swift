import CLibcameraLoader
import Foundation
import Testing
import ShutterCore
@testable import ShutterCapture

private func ms(_ value: Double) -> Instant { Instant(rawValue: Int64(value * 1_000_000)) }

/// A small Raspberry Pi camera (the fake's `raspberryPi` personality at 640x480, no autofocus):
/// placeholder ranges until configure, SensorTimestamp at the start of readout, 20 ms exposures.
private func smallPi(autofocus: Bool = false) -> FakeLibcameraScript {
    var script = FakeLibcameraScript()
    script.raspberryPi = true
    script.width = 640
    script.height = 480
    script.format = .yuv420
    script.hasAutofocus = autofocus
    script.frameDurationLimits = 33_333...2_000_000
    return script
}

/// The board's camera left at libcamera's own size (the simulator board names 64x48).
private func sensorSize(_ settings: inout CameraSettings) {
    settings.width = nil
    settings.height = nil
}

/// The faults a Raspberry Pi camera module showed that vimc and the plain fake could not: each
/// test here failed before its fix (see the commit that fixed it).
@Suite("A camera on libcamera's Raspberry Pi pipeline (the fake's raspberryPi personality)")
struct RaspberryPiCameraTests {
    // MARK: Ranges are read after configure

    @Test func zoomCropsWithinTheSensorNotThePlaceholder() throws {
        let harness = try LibcameraHarness(smallPi(), sensorSize)
        let sensor = PixelRect(x: 16, y: 24, width: 640, height: 480)
        #expect(harness.camera.scalerCropMaximum == sensor)
        harness.service.apply(controlID: "zoom", value: .number(2))
        harness.frames(from: 1000, until: { harness.camera.fakeAppliedScalerCrop != nil }, limit: harness.camera.requestCount + 2)
        #expect(harness.camera.fakeAppliedScalerCrop == scalerCrop(forZoom: 2, unzoomed: sensor))
        #expect(harness.service.digitalZoomCrop == nil, "the ISP crops: no second crop on the CPU")
    }

    @Test func zoomKeepsTheStillsAspectWhenTheSensorModesDiffers() throws {
        // A 4:3 still from Camera Module 3's 16:9 mode: the pipeline's own crop is the 4:3 middle
        // of the mode's area, (16, 24)/4608x2592, so a 2x zoom is the 4:3 middle of that.
        let harness = try fourByThreeStillFromTheSixteenByNineMode()
        harness.service.apply(controlID: "zoom", value: .number(2))
        harness.frames(from: 1000, until: { harness.camera.fakeAppliedScalerCrop != nil }, limit: harness.camera.requestCount + 2)
        let crop = try #require(harness.camera.fakeAppliedScalerCrop)
        #expect(crop.width * 768 == crop.height * 1024, "the crop \(crop) has the still's 4:3 aspect, not the mode's 16:9")
        #expect(crop == PixelRect(x: 1456, y: 672, width: 1728, height: 1296), "half of the default crop (592, 24)/3456x2592, centred")
    }

    /// A 1024x768 still (4:3) from Camera Module 3's 4608x2592 mode (16:9), autofocus left out.
    private func fourByThreeStillFromTheSixteenByNineMode() throws -> LibcameraHarness {
        var script = FakeLibcameraScript.cameraModule3
        script.hasAutofocus = false
        return try LibcameraHarness(script) {
            $0.width = 1024
            $0.height = 768
            $0.ringFrames = 2
        }
    }

    @Test func theUnzoomedCropIsThePipelinesOwnFittedToTheStill() throws {
        let harness = try fourByThreeStillFromTheSixteenByNineMode()
        harness.frames(1000)  // libcamera 0.0.3 states no default: the first frame's metadata says it
        #expect(harness.camera.scalerCropDefault == PixelRect(x: 592, y: 24, width: 3456, height: 2592))
        #expect(harness.camera.scalerCropMaximum == PixelRect(x: 16, y: 24, width: 4608, height: 2592))
    }

    @Test func theListingShowsTheModesRangesNeverAPlaceholder() throws {
        let camera = try LibcameraCamera(fake: smallPi(autofocus: true))
        #expect(camera.control(.lensPosition)?.maximum == 15)
        #expect(camera.control(.frameDurationLimits)?.maximum == 2_000_000)
        let listing = CameraCommands.describe(camera)
        #expect(!listing.contains("65535") && !listing.contains("0...32") && !listing.contains("120000"), "\(listing)")
        #expect(listing.contains("zoom: ScalerCrop within (16, 24)/640x480"), "\(listing)")
    }

    @Test func aLensPositionSliderSpansTheLensNotThePlaceholder() throws {
        let harness = try LibcameraHarness(smallPi(autofocus: true), sensorSize)
        let service = try harness.slideLensPosition(to: 5)
        defer { service.shutdown() }
        #expect(harness.camera.fakeApplied(.lensPosition) == 7.5, "half of the lens's 0...15, not of the placeholder 0...32")
    }

    @Test func controlsSetWhileStoppedGoToTheStartAndShowInTheFirstFrame() throws {
        let harness = try LibcameraHarness(smallPi(), {
            sensorSize(&$0)
            $0.keepStreaming = false
            $0.warmupFrames = 0
        })
        harness.service.apply(controlID: "zoom", value: .number(2))  // while the camera is stopped
        harness.service.capture(pressedAt: ms(1000), now: ms(1000))
        harness.service.waitForCamera()  // the start, on the lifecycle queue
        _ = harness.service.handleReadable()
        #expect(harness.camera.fakeStartControlCount >= 1, "Camera::start() carried the zoom")
        harness.frames(1010)
        #expect(harness.camera.fakeAppliedScalerCrop == scalerCrop(forZoom: 2, unzoomed: PixelRect(x: 16, y: 24, width: 640, height: 480)),
                "from the first frame, not behind every request queued at start")
    }

    // MARK: The sensor's own size

    @Test func theDefaultStillSizeIsTheSensorsFullSize() throws {
        var settings = CameraSettings()
        settings.device = "fake"
        let camera = try LibcameraCamera(fake: .cameraModule3, settings: settings)
        #expect(camera.format.width == 4608 && camera.format.height == 2592, "not StreamFormats' 3840x2400")
        #expect(camera.offeredFormats().first?.sizes.first == FrameSize(width: 3840, height: 2400), "the listed sizes are a crop")
        camera.close()
    }

    // MARK: The IPA's own timing

    /// af.cpp's Af::triggerScan takes an AfTrigger start only while the algorithm is idle: one
    /// sent mid-scan neither restarts the scan nor makes a second cycle, and the lens locks on
    /// the frame it would have without it.
    @Test func anAutofocusTriggerSentMidScanIsIgnoredAsTheIPAIgnoresIt() throws {
        func focusedFrame(triggeringAgainMidScan: Bool) throws -> (sequence: UInt32, cycles: Int) {
            var script = smallPi(autofocus: true)
            script.autofocusScanFrames = 6
            let harness = try LibcameraHarness(script) { sensorSize(&$0); $0.autofocus = .onPrepare }
            harness.frames(1000)
            harness.service.prepare()
            var time = 1000.0, sequence: UInt32 = 0
            while harness.camera.focusState(ofFrame: sequence) != .scanning, time < 2000 {
                time += 33
                sequence += 1
                harness.frames(time)
            }
            #expect(harness.camera.focusState(ofFrame: sequence) == .scanning)
            if triggeringAgainMidScan { try harness.camera.triggerAutofocus() }
            let focused = harness.framesUntilFocused(after: time)
            return (focused.sequence, harness.camera.fakeAutofocusTriggers)
        }
        let once = try focusedFrame(triggeringAgainMidScan: false)
        let twice = try focusedFrame(triggeringAgainMidScan: true)
        #expect(once.cycles == 1 && twice.cycles == 1)
        #expect(twice.sequence == once.sequence, "the scan was restarted by the second trigger")
    }

    // MARK: Cached buffers

    @Test func everyBufferARequestCarriesIsSynchronisedForTheCPU() throws {
        // The ISP writes both streams' buffers behind the CPU's cache: the live view reads the
        // viewfinder's as the photo reads the still's, so each is bracketed the same way.
        let harness = try LibcameraHarness(smallPi()) {
            sensorSize(&$0)
            $0.viewfinder = FrameDimensions(width: 320, height: 240)
        }
        harness.frames(from: 1000, until: { false }, limit: harness.camera.requestCount * 3)
        for request in 0..<harness.camera.requestCount {
            let syncs = harness.camera.fakeBufferSyncs(request: request)
            #expect(syncs.count == 2, "the still's one buffer (its three planes) and the viewfinder's")
            #expect(syncs.first.map { $0.starts > 0 } == true, "request \(request) was read")
            #expect(syncs.allSatisfy { $0 == syncs[0] }, "request \(request): every buffer synced alike: \(syncs)")
        }
    }

    // MARK: Exposure-start timing

    @Test func aPressInsideALongExposureTakesTheFrameBeingExposed() throws {
        var script = smallPi()
        script.exposureTimeMicroseconds = 30_000
        let harness = try LibcameraHarness(script, sensorSize)
        // Readout starts at 1000, 1033, 1066: exposures 970...1000, 1003...1033, 1036...1066.
        harness.frames(1000, 1033, 1066)
        harness.service.capture(pressedAt: ms(1010), now: ms(1067))
        let photo = try #require(harness.finish().compactMap(\.photo).first)
        #expect(photo.frameAt == ms(1003), "the frame whose exposure (1003...1033) covers the press at 1010")
    }

    @Test func framesCarryTheirExposureMetadata() throws {
        let camera = try LibcameraCamera(fake: smallPi())
        try camera.start()
        #expect(camera.deliverFakeFrame(at: ms(1000)))
        let frame = try #require(try camera.readFrames().first)
        #expect(frame.exposure.exposureTime == .milliseconds(20))
        #expect(frame.exposure.analogueGain == 2)
        #expect(frame.exposure.digitalGain == 1, "ipa_base.cpp reports the AGC's DigitalGain with every frame")
        #expect(frame.exposure.colourTemperature == 4500)
        #expect(frame.timestamp == ms(980), "the start of exposure: SensorTimestamp (readout) minus ExposureTime")
        camera.close()
    }

    // MARK: An exposure bias eases in

    /// Frames every 33 ms from 1000 past the AGC's start-up frames (it adapts at once in its first
    /// ten), then `exposure` set to +1 EV: the time of the last frame before the change.
    private func changeBias(_ harness: LibcameraHarness, to ev: Double = 1) -> Double {
        harness.frames(from: 1000, until: { false }, limit: 15)
        harness.service.apply(controlID: "exposure", value: .number(ev))
        return 1000 + 14 * 33
    }

    @Test func anExposureValueChangeEasesInOverAboutTenFrames() throws {
        let harness = try LibcameraHarness(smallPi(), sensorSize)
        let last = changeBias(harness)
        var totals: [Double] = []
        for index in 1...30 {
            harness.frames(last + Double(index) * 33)
            totals.append(try #require(harness.service.ringFrames.last?.exposure.totalExposure))
        }
        let before = 20_000.0 * 2  // the script's 20 ms at analogue gain 2
        let moved = try #require(totals.firstIndex { $0 > before * 1.02 }, "\(totals)")
        let settled = try #require(totals.firstIndex { abs($0 / (before * 2) - 1) <= 0.02 }, "\(totals)")
        #expect(totals[moved] < before * 1.5, "a fifth of the way in the first frame (agc_channel.cpp's speed 0.2), not a jump: \(totals)")
        #expect(settled - moved >= 7, "within 2% of +1 EV some nine frames after it began to show: \(totals)")
        #expect(abs(totals.last! / (before * 2) - 1) <= 0.02, "\(totals)")
    }

    /// Delivers a frame every 33 ms after `start` while a press waits, up to `limit` (ms).
    private func framesWhileAPressWaits(_ harness: LibcameraHarness, after start: Double, until limit: Double) {
        var time = start
        while harness.service.pendingCount > 0, time < limit {
            time += 33
            harness.frames(time)
        }
    }

    @Test func aPressSoonAfterABiasChangeWaitsUntilTheExposureSettles() throws {
        let harness = try LibcameraHarness(smallPi(), sensorSize)
        let last = changeBias(harness)
        harness.frames(last + 33, last + 66)
        harness.service.capture(pressedAt: ms(last + 70), now: ms(last + 70))
        framesWhileAPressWaits(harness, after: last + 66, until: last + 1000)
        let photo = try #require(harness.finish().compactMap(\.photo).first)
        #expect(photo.exposureSettling == .settled)
        #expect(abs(try #require(photo.exposureBias) - 1) <= ExposureSettling.tolerance, "the bias reached: \(String(describing: photo.exposureBias))")
        let total = try #require(photo.exposure.totalExposure)
        #expect(abs(total / 80_000 - 1) <= 0.04, "twice the exposure before the change: \(total)")
        #expect(photo.frameAt > ms(last + 33 * 8), "not the frame after the press, still part of the way")
        let json = CaptureEvent.photo(photo).json.description
        for key in ["\"exposure\": \"settled\"", "\"exposureTimeUs\"", "\"analogueGain\"", "\"digitalGain\"", "\"exposureBias\""] {
            #expect(json.contains(key), "\(key) in \(json)")
        }
        let (text, _) = try exifOfFile(photo.path)
        let iso = Double(try #require(text[0x8827].flatMap { Int($0) }))
        #expect(abs(iso - 100 * photo.exposure.analogueGain! * photo.exposure.digitalGain!) <= 1, "ISO 100 × AnalogueGain × DigitalGain")
    }

    @Test func theWaitForTheExposureIsBounded() throws {
        let harness = try LibcameraHarness(smallPi()) {
            sensorSize(&$0)
            $0.exposureSettleMs = 100
        }
        let last = changeBias(harness)
        harness.frames(last + 33)
        harness.service.capture(pressedAt: ms(last + 40), now: ms(last + 40))
        framesWhileAPressWaits(harness, after: last + 33, until: last + 1000)
        let photo = try #require(harness.finish().compactMap(\.photo).first)
        #expect(photo.exposureSettling == .timeout)
        #expect(photo.frameAt <= ms(last + 100 + 33), "taken once the bound after the change passed")
        let bias = try #require(photo.exposureBias)
        #expect(bias > -0.01 && bias < 0.9, "part of the way: \(bias)")
    }

    @Test func aPressWithoutABiasChangeTakesTheRingFrameAtOnce() throws {
        let harness = try LibcameraHarness(smallPi(), sensorSize)
        harness.frames(1000, 1033, 1066)
        harness.service.capture(pressedAt: ms(1040), now: ms(1067))
        let photo = try #require(harness.finish().compactMap(\.photo).first)
        #expect(photo.frameAt == ms(1013), "the frame covering the press")
        #expect(photo.exposureSettling == .settled && photo.exposureBias == 0)
    }

    // MARK: The frame interval, measured

    @Test func aMeasuredFrameIntervalReachesTheStallLimit() throws {
        var script = FakeLibcameraScript()
        script.hasAutofocus = false
        script.frameDurationLimits = nil
        let harness = try LibcameraHarness(script)
        #expect(harness.service.stallLimit == .seconds(1))
        harness.frames(1000, 1500, 2000, 2500)  // a half-second exposure, no board fps
        #expect(harness.service.stallLimit == .milliseconds(2500), "five measured intervals")
    }

    @Test func oneShortIntervalDoesNotShrinkTheStallLimit() throws {
        var script = FakeLibcameraScript()
        script.hasAutofocus = false
        script.frameDurationLimits = nil
        let harness = try LibcameraHarness(script)
        // vimc under emulation: ~900 ms apart, then one frame 100 ms after the last (measured in
        // the Debian 13 VM: intervals 808-1332 ms, and a 1 s stall limit fired between two frames).
        harness.frames(1000, 1900, 2800, 3700, 3800)
        #expect(harness.service.stallLimit == .milliseconds(4500), "five times the median interval, not the last")
    }

    // MARK: The ring, in frames

    @Test func aTwelveMegapixelRingHoldsTheBoardsFrames() throws {
        var settings = CameraSettings()
        settings.device = "fake"
        let camera = try LibcameraCamera(fake: .cameraModule3, settings: settings)
        #expect(camera.bytesPerFrame == 4608 * 2592 * 3 / 2)
        #expect(camera.ringCapacity == settings.ringFrames && camera.ringCapacity >= 3)
        camera.close()
    }

    @Test func aRingMiBThatCannotHoldTwoFramesIsRefused() {
        var settings = CameraSettings()
        settings.device = "fake"
        settings.ringMiB = 24  // 17.9 MB a frame: one frame
        #expect { try LibcameraCamera(fake: .cameraModule3, settings: settings) } throws: { error in
            "\(error)".contains("ringMiB")
        }
    }

    // MARK: A Raspberry Pi 4's CMA

    /// The HQ camera on a Raspberry Pi 4 whose display and GPU hold 120 MiB of the 320 MiB of CMA
    /// it reserves: 200 MiB left for the camera's requests and the vc4 pipeline's own buffers.
    private func hqOnPi4(ringFrames: Int? = nil, cmaMiB: Int?) -> (FakeLibcameraScript, CameraSettings) {
        var script = FakeLibcameraScript.hqCamera
        script.cmaBudget = 200 << 20
        var settings = CameraSettings()
        settings.device = "fake"
        settings.cmaMiB = cmaMiB
        if let ringFrames { settings.ringFrames = ringFrames }
        return (script, settings)
    }

    @Test func theHQCameraOnAPi4OpensWithThePi4BoardsDefault() throws {
        let board = try Board.load(path: packageRoot + "/Boards/raspberry-pi-4.json")
        let (script, settings) = hqOnPi4(cmaMiB: board.camera.cmaMiB)
        let camera = try LibcameraCamera(fake: script, settings: settings)
        defer { camera.close() }
        try camera.start()  // the pipeline's own raw and ISP buffers fit beside the requests
        #expect(camera.requestCount * camera.bytesPerFrame <= (board.camera.cmaMiB ?? 0) << 20, "\(camera.requestCount) requests")
        #expect(camera.requestCount >= 4 && camera.ringCapacity >= 2)
        #expect(camera.deliverFakeFrame(at: ms(1000)))
        #expect(try camera.readFrames().count == 1)
    }

    @Test func aCameraBeyondThePi4sCMASaysSoAndWhatToChange() throws {
        // Eight requests (142 MiB) are allocated, but the pipeline's own 88 MiB do not fit at start.
        let (script, settings) = hqOnPi4(cmaMiB: nil)
        let camera = try LibcameraCamera(fake: script, settings: settings)
        defer { camera.close() }
        #expect { try camera.start() } throws: { error in
            let text = "\(error)"
            return text.contains("CMA") && text.contains("cmaMiB") && text.contains("cma-512") && (error as? CaptureError)?.errno == ENOMEM
        }
        // Sixteen requests (282 MiB) do not even configure.
        let (many, manySettings) = hqOnPi4(ringFrames: 12, cmaMiB: nil)
        #expect { try LibcameraCamera(fake: many, settings: manySettings) } throws: { error in
            "\(error)".contains("CMA") && "\(error)".contains("FrameBufferAllocator")
        }
    }

    @Test func aCMABudgetBelowFourRequestsIsRefused() {
        let (script, settings) = hqOnPi4(cmaMiB: 60)  // three requests of 17.8 MiB (4056 pixels, 4096-byte rows)
        #expect { try LibcameraCamera(fake: script, settings: settings) } throws: { error in
            "\(error)".contains("cmaMiB 60") && "\(error)".contains("at least 72")
        }
    }

    // MARK: No full frame copied on the loop

    @Test func planesInSeparateBuffersAreLentNotCopied() throws {
        let harness = try LibcameraHarness(smallPi(), sensorSize)
        #expect(harness.camera.format == FrameFormat(width: 640, height: 480, pixelFormat: .yuv420))
        harness.frames(1000, 1033)
        #expect(harness.camera.lendsRequests, "three planes in three buffers are lent as they lie")
        harness.service.capture(pressedAt: ms(1033), now: ms(1034))
        let photo = try #require(harness.finish().compactMap(\.photo).first)
        let image = try JPEGDecoder().decode([UInt8](try #require(FileManager.default.contents(atPath: photo.path))))
        #expect(image.width == 640 && image.height == 480)
        let grey = image.pixel(x: 320, y: 240)
        #expect(abs(Int(grey.r) - 128) < 8 && abs(Int(grey.g) - 128) < 8 && abs(Int(grey.b) - 128) < 8, "the fake's 0x80 frame: \(grey)")
    }

    // MARK: Frame durations

    /// Through the C interface: shutter gives FrameDurationLimits only to Camera::start.
    @Test func aFrameDurationInARequestShowsThreeFramesLaterOneGivenToStartAtOnce() throws {
        try loadLibcamera()
        var config = smallPi().config
        let camera = try #require(shutter_lc_open_fake(&config))
        defer { shutter_lc_close(camera) }
        var still = shutter_lc_stream_config()
        #expect(shutter_lc_configure(camera, &still, nil, 4) == 0)
        var asked: Int64 = 0
        #expect(shutter_lc_set_frame_rate(camera, 20, &asked) == 0 && asked == 50_000_000)
        #expect(shutter_lc_start(camera) == 0)
        var frames: [(sequence: UInt32, timestamp: Int64, duration: Int64)] = []
        /// Takes the frames completed, handing each request back (with the controls set since).
        func take() {
            var done = shutter_lc_completed()
            while shutter_lc_next(camera, &done) == 1 {
                frames.append((done.sequence, done.sensor_timestamp, done.frame_duration_us))
                _ = shutter_lc_release(camera, done.request)
            }
        }
        #expect(shutter_lc_fake_deliver(camera, ms(1000).rawValue, 0x80) == 0)
        var done = shutter_lc_completed()
        #expect(shutter_lc_next(camera, &done) == 1)
        frames.append((done.sequence, done.sensor_timestamp, done.frame_duration_us))
        // The request handed back now follows the three queued at start: frame 4 carries 100 ms.
        #expect(shutter_lc_fake_request_frame_duration(camera, 100_000) == 0)
        _ = shutter_lc_release(camera, done.request)
        for _ in 0..<9 {
            #expect(shutter_lc_fake_deliver(camera, Int64(SHUTTER_LC_FAKE_AT_CADENCE), 0x80) == 0)
            take()
        }
        #expect(frames.map(\.sequence) == Array(0..<10))
        // imx708's VBLANK delay is 3: frame 7 is the first 100 ms long.
        #expect(frames.map(\.duration) == [Int64](repeating: 50_000, count: 7) + [Int64](repeating: 100_000, count: 3))
        let spacing = zip(frames.dropFirst(), frames).map { ($0.timestamp - $1.timestamp) / 1_000 }
        #expect(spacing == [Int64](repeating: 50_000, count: 7) + [Int64](repeating: 100_000, count: 2))
    }

    // MARK: Autofocus tracks its own request

    @Test func aSecondShotWaitsForItsOwnFocusCycle() throws {
        var script = FakeLibcameraScript()
        script.autofocusScanFrames = 2
        let harness = try LibcameraHarness(script) { $0.autofocus = .onPrepare }
        // The first shot: prepare, the lens locks, the photo says so.
        harness.frames(1000)
        harness.service.prepare()
        let time = harness.framesUntilFocused(after: 1000).time
        harness.service.capture(pressedAt: ms(time), now: ms(time + 1))
        // The photo may be collected by the next frame's read or by finish: both are looked at.
        let first = harness.frames(time + 33) + harness.finish()
        #expect(try #require(first.compactMap(\.photo).first).focus == .locked)
        // The second: the requests queued before its trigger still say Focused (the last cycle's).
        let second = time + 100
        harness.service.prepare()
        harness.service.capture(pressedAt: ms(second), now: ms(second))
        var triggerFrame: Double?
        var events: [CaptureEvent] = []
        for index in 0..<40 where harness.service.pendingCount > 0 {
            let at = second + 10 + Double(index) * 33
            events += harness.frames(at)
            if triggerFrame == nil, harness.camera.fakeAutofocusTriggers == 2 { triggerFrame = at }
        }
        let photo = try #require((events + harness.finish()).compactMap(\.photo).first)
        let trigger = try #require(triggerFrame, "the second trigger reached the camera")
        #expect(photo.focus == .locked)
        #expect(photo.frameAt >= ms(trigger + 2 * 33), "a frame of the new cycle, after its two Scanning frames")
    }

    @Test func continuousAutofocusTakesTheRingFrameAtOnce() throws {
        var script = FakeLibcameraScript()
        script.autofocusScanFrames = 2
        let harness = try LibcameraHarness(script)  // camera.autofocus defaults to continuous
        harness.frames(from: 1000, until: { harness.camera.fakeApplied(.afMode) == 2 }, limit: 2)
        #expect(harness.camera.fakeApplied(.afMode) == 2, "AfModeContinuous from the start")
        harness.frames(1066, 1100, 1133)
        // A press without a light press: the frame whose exposure covers it, from the ring, at once.
        harness.service.capture(pressedAt: ms(1110), now: ms(1134))
        #expect(harness.service.pendingCount == 0, "never waits for a new cycle")
        let photo = try #require(harness.finish().compactMap(\.photo).first)
        #expect(photo.frameAt == ms(1100))
        #expect(photo.focus == .locked, "the frame's own AfState: Focused after two Scanning frames")
        #expect(harness.camera.fakeAutofocusTriggers == 0, "no AfTrigger: the lens keeps itself in focus")
    }

    @Test func continuousAutofocusSaysWhenTheLensWasStillMoving() throws {
        var script = FakeLibcameraScript()
        script.autofocusScanFrames = 10
        let harness = try LibcameraHarness(script)
        harness.frames(1000, 1033)
        harness.service.capture(pressedAt: ms(1040), now: ms(1041))
        let photo = try #require(harness.finish().compactMap(\.photo).first)
        #expect(photo.focus == .scanning)
    }

    @Test func continuousAutofocusScansAgainWhenTheSceneChanges() throws {
        let harness = try LibcameraHarness(smallPi(autofocus: true), sensorSize)  // continuous by default
        func time(ofFrame n: Int) -> Double { 1000 + Double(n) * 33 }
        func frames(_ range: Range<Int>) -> [AfState?] {
            range.map { n in
                harness.frames(time(ofFrame: n))
                return harness.camera.focusState(ofFrame: UInt32(n))
            }
        }
        /// The focus of a photo pressed inside frame `n`'s exposure (20 ms before its readout).
        func focusOfPhoto(inFrame n: Int) throws -> FocusOutcome {
            harness.service.capture(pressedAt: ms(time(ofFrame: n) - 10), now: ms(time(ofFrame: n) + 1))
            let photo = try #require(harness.finish().compactMap(\.photo).first)
            #expect(photo.frameAt == ms(time(ofFrame: n) - 20))
            return photo.focus
        }
        #expect(frames(0..<10).last == .focused, "the first scan is over")
        harness.camera.changeFakeScene()
        var states = frames(10..<30)
        #expect(try focusOfPhoto(inFrame: 29) == .scanning)
        states += frames(30..<80)
        #expect(try focusOfPhoto(inFrame: 79) == .locked)
        // af.cpp with imx708's tuning: phase detection out for 6 frames (dropout_frames), then the
        // changed scene still for 10 (retrigger_delay) before the scan starts; the scan is 49 frames.
        #expect(states.prefix(14).allSatisfy { $0 == .focused }, "\(states)")
        #expect(states[14..<63].allSatisfy { $0 == .scanning }, "\(states)")
        #expect(states[63...].allSatisfy { $0 == .focused }, "\(states)")
    }

    @Test func manualFocusNeverTriggers() throws {
        let harness = try LibcameraHarness(FakeLibcameraScript()) { $0.autofocus = .manual }
        harness.frames(1000)
        harness.service.prepare()
        harness.frames(1033, 1066)
        harness.service.capture(pressedAt: ms(1040), now: ms(1067))
        let photo = try #require(harness.finish().compactMap(\.photo).first)
        #expect(photo.focus == .none && photo.frameAt == ms(1033))
        #expect(harness.camera.fakeApplied(.afMode) == 0, "AfModeManual")
        #expect(harness.camera.fakeAutofocusTriggers == 0)
    }

    @Test func theFocusTimeoutStartsWhenTheTriggerReachesTheCamera() throws {
        var script = FakeLibcameraScript()
        script.autofocusScanFrames = 2
        // 150 ms: less than the requests queued ahead of the trigger take (about 7 x 33 ms).
        let harness = try LibcameraHarness(script) {
            $0.autofocus = .onPrepare
            $0.focusTimeoutMs = 150
        }
        harness.frames(1000)
        harness.service.prepare()
        harness.service.capture(pressedAt: ms(1001), now: ms(1001))
        let events = harness.frames(from: 1033, until: { harness.service.pendingCount == 0 }, limit: 40)
        let photo = try #require((events + harness.finish()).compactMap(\.photo).first)
        #expect(photo.focus == .locked, "the lens locked 66 ms after the trigger reached it, within 150 ms")
    }
}

// MARK: - Who drives the lens

/// The focus slider and the board's autofocus mode on a Camera Module 3: the slider takes the lens
/// by hand only when touched, says so, and gives it back at the board's chosen gesture.
@Suite("CaptureService: the focus slider and the board's autofocus mode")
struct FocusSliderTests {
    /// A Pi camera with autofocus at its own size, the board's autofocus `mode` and a focus slider.
    private func harness(_ mode: AutofocusMode) throws -> LibcameraHarness {
        try LibcameraHarness(smallPi(autofocus: true), focusSlider: true) {
            sensorSize(&$0)
            $0.autofocus = mode
        }
    }

    /// Frames every 33 ms from `start` until the fake camera has applied AfMode `mode`.
    @discardableResult
    private func framesUntil(afMode mode: Double, in harness: LibcameraHarness, from start: Double) -> [CaptureEvent] {
        harness.frames(from: start, until: { harness.camera.fakeApplied(.afMode) == mode }, limit: harness.camera.requestCount + 2)
    }

    private func focusModeLines(_ events: [CaptureEvent]) -> [String] {
        events.map(\.json.description).filter { $0.contains(#""event": "focusMode""#) }
    }

    @Test func touchingTheSliderUnderContinuousAutofocusTakesTheLensAndSaysSo() throws {
        let harness = try harness(.continuous)
        framesUntil(afMode: 2, in: harness, from: 1000)
        harness.service.apply(controlID: "focus", value: .number(5))
        let events = harness.service.handleReadable() + framesUntil(afMode: 0, in: harness, from: 1500)
        #expect(harness.camera.fakeApplied(.afMode) == 0, "AfModeManual")
        #expect(harness.camera.fakeApplied(.lensPosition) == 7.5)
        let said = focusModeLines(events)
        #expect(said.count == 1 && said.first?.contains(#""mode": "manual""#) == true, "\(said)")
        #expect(said.first?.contains("until the next half press") == true, "\(said)")
    }

    @Test func aHalfPressGivesTheLensBackToContinuousAutofocus() throws {
        let harness = try harness(.continuous)
        framesUntil(afMode: 2, in: harness, from: 1000)
        harness.service.apply(controlID: "focus", value: .number(5))
        framesUntil(afMode: 0, in: harness, from: 1500)
        harness.service.prepare()
        let events = harness.service.handleReadable() + framesUntil(afMode: 2, in: harness, from: 2500)
        #expect(harness.camera.fakeApplied(.afMode) == 2, "AfModeContinuous again")
        let said = focusModeLines(events)
        #expect(said.count == 1 && said.first?.contains(#""mode": "continuous""#) == true, "\(said)")
    }

    @Test func underOnPrepareAPressAfterTheSliderKeepsTheLensWhereTheSliderPutIt() throws {
        let harness = try harness(.onPrepare)
        harness.service.apply(controlID: "focus", value: .number(5))
        framesUntil(afMode: 0, in: harness, from: 1000)
        #expect(harness.camera.fakeApplied(.lensPosition) == 7.5)
        // A full press without a half press: no focus cycle undoes the slider, the ring's frame is taken.
        let press = 1000 + Double(harness.camera.requestCount + 2) * 33
        harness.frames(press - 20, press + 13)
        harness.service.capture(pressedAt: ms(press), now: ms(press + 14))
        #expect(harness.service.pendingCount == 0, "no wait for a focus cycle")
        let photo = try #require(harness.finish().compactMap(\.photo).first)
        #expect(photo.focus == .none)
        #expect(harness.camera.fakeAutofocusTriggers == 0)
        #expect(harness.camera.fakeApplied(.lensPosition) == 7.5)
        // The next half press focuses again.
        harness.service.prepare()
        harness.frames(from: press + 46, until: { harness.camera.fakeAutofocusTriggers == 1 }, limit: harness.camera.requestCount + 2)
        #expect(harness.camera.fakeAutofocusTriggers == 1)
    }

    @Test func withDoubleLightPressOnlyADoubleLightPressOnTheSliderGivesTheLensBack() throws {
        let harness = try LibcameraHarness(smallPi(autofocus: true), focusSlider: true) {
            sensorSize(&$0)
            $0.manualFocusEnds = .doubleLightPress
        }
        framesUntil(afMode: 2, in: harness, from: 1000)
        harness.service.apply(controlID: "focus", value: .number(5))
        let taken = harness.service.handleReadable() + framesUntil(afMode: 0, in: harness, from: 1500)
        #expect(focusModeLines(taken).first?.contains("until a double light press on 'focus'") == true, "\(focusModeLines(taken))")
        // A half press, and a double light press on another control, keep the slider's focus.
        harness.service.prepare()
        harness.service.doubleLightPress(currentControl: "zoom")
        let kept = harness.service.handleReadable() + harness.frames(from: 2500, until: { false }, limit: harness.camera.requestCount + 2)
        #expect(harness.camera.fakeApplied(.afMode) == 0)
        #expect(focusModeLines(kept).isEmpty, "\(focusModeLines(kept))")
        harness.service.doubleLightPress(currentControl: "focus")
        let given = harness.service.handleReadable() + framesUntil(afMode: 2, in: harness, from: 3500)
        #expect(harness.camera.fakeApplied(.afMode) == 2)
        #expect(focusModeLines(given).first?.contains("a double light press on 'focus' gave the lens back to continuous autofocus") == true,
                "\(focusModeLines(given))")
    }

    @Test func checkSaysHowTheSliderSharesTheLens() throws {
        let harness = try harness(.continuous)
        let how = try #require(harness.service.controlReport().first { $0.id == "focus" }).how
        #expect(how == "LensPosition 0...15 dioptres (moving it switches continuous autofocus to manual focus until the next half press (prepare); "
                + "its initial value is not applied while autofocus drives the lens)")
    }

}

/// An `onPrepare` focus cycle in the Camera Module 3's full-resolution mode (14 fps), as long as
/// a triggered PDAF cycle on imx708 runs.
@Suite("CaptureService: a focus cycle at full resolution")
struct FullResolutionFocusTests {
    @Test func aTwentyFrameScanAtFourteenFramesASecondLocks() throws {
        var script = smallPi(autofocus: true)
        script.autofocusScanFrames = 20  // imx708.json's pdaf_frames: a triggered PDAF cycle's length
        let harness = try LibcameraHarness(script) {
            sensorSize(&$0)
            $0.autofocus = .onPrepare
        }
        let interval = 1000.0 / 14  // Camera Module 3's full-resolution mode
        harness.frames(1000)
        harness.service.prepare()
        harness.service.capture(pressedAt: ms(1001), now: ms(1001))
        var events: [CaptureEvent] = []
        var time = 1000.0
        for _ in 0..<60 where harness.service.pendingCount > 0 {
            time += interval
            events += harness.frames(time)
        }
        events += harness.finish()
        let photo = try #require(events.compactMap(\.photo).first)
        #expect(photo.focus == .locked, "a 20-frame cycle at 14 fps takes 1.4 s")
        let line = try #require(events.first { $0.photo != nil }).json.description
        #expect(line.contains(#""focusFrames": 21"#), "20 Scanning frames answered the trigger, then the Focused one: \(line)")
    }
}

/// Fault 5: a 12 MP frame is 18 MB; none may be copied on the event loop, and a request the ring
/// lets go of goes back to libcamera at once.
@Suite("No full frame copied on the event loop")
struct NoFrameCopiedOnTheLoopTests {
    @Test func photosHoldingRequestsMakeTheRingGiveBackItsOldestNotCopy() throws {
        let harness = try LibcameraHarness(smallPi(), sensorSize)
        let total = harness.camera.requestCount
        // Photos still encoding hold four frames (as a burst does): more than the spares.
        var photos: [Frame] = []
        var time = 1000.0
        for _ in 0..<4 {
            harness.frames(time)
            photos.append(try #require(harness.service.ringFrames.last))
            time += 33
        }
        for _ in 0..<(3 * total) {
            harness.frames(time)  // a request is queued for each: the camera never runs dry
            #expect(harness.camera.buffersWanted == 0, "two requests stay queued at \(time)")
            time += 33
        }
        #expect(harness.camera.framesCopied == 0)
        #expect(harness.service.ringFrames.allSatisfy { $0.buffer.isLent })
        #expect(harness.service.ringFrames.count >= 1 && harness.service.ringFrames.count < harness.camera.ringCapacity,
                "the ring gave back its oldest: \(harness.service.ringFrames.count) held")
        photos.removeAll()
        // Written: the ring fills to its size again.
        for _ in 0..<harness.camera.ringCapacity {
            harness.frames(time)
            time += 33
        }
        #expect(harness.service.ringFrames.count == harness.camera.ringCapacity)
    }

    @Test func aRequestTheRingLetsGoOfIsQueuedAtOnce() throws {
        let harness = try LibcameraHarness(smallPi(), sensorSize)
        let total = harness.camera.requestCount, ring = harness.camera.ringCapacity
        var time = 1000.0
        // Fill the ring, then every request but the ring's is queued, at every read: never one short.
        for index in 0..<(2 * total) {
            harness.frames(time)
            time += 33
            #expect(harness.camera.queuedRequests == total - min(index + 1, ring), "after the frame at \(time - 33)")
        }
    }
}
