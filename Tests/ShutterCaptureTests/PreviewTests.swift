import CTurboJPEG
import Foundation
import Glibc
import Testing
import ShutterCore
import ShutterSystem
@testable import ShutterCapture

private func ms(_ value: Double) -> Instant { Instant(rawValue: Int64(value * 1_000_000)) }

/// The frame times of a camera at 30 fps from 1000 ms: `count` of them.
private func thirtyFPS(_ count: Int, from start: Double = 1000) -> [Instant] {
    (0..<count).map { ms(start + Double($0) * 1000 / 30) }
}

/// Whether `fd` is readable now (a poll that does not wait).
func isReadable(_ fd: CInt) -> Bool {
    var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    return poll(&entry, 1, 0) == 1 && entry.revents & Int16(POLLIN) != 0
}

/// A harness whose camera is `width`×`height` and whose previews are `settings`.
private func previewHarness(width: Int = 320, height: Int = 180, _ settings: PreviewSettings) throws -> Harness {
    let harness = try Harness { camera in
        camera.width = width
        camera.height = height
    }
    harness.service.previewSettings = settings
    harness.settle()
    return harness
}

extension Harness {
    /// One frame at `time`, taken in by the service, and the preview it may start made.
    func previewFrame(at time: Instant) {
        camera.emit(at: time)
        service.handleReadable()
        service.waitForPreviews()
    }
}

/// A `width`×`height` frame of one colour in `format`, its bytes owned.
private func uniformFrame(_ format: PixelFormat, width: Int, height: Int, y: UInt8, u: UInt8, v: UInt8) -> Frame {
    let layout = FrameFormat(width: width, height: height, pixelFormat: format)
    var bytes: [UInt8]
    switch format {
    case .yuyv: bytes = (0..<width * height / 2).flatMap { _ in [y, u, y, v] }
    case .uyvy: bytes = (0..<width * height / 2).flatMap { _ in [u, y, v, y] }
    case .yuv420:
        bytes = [UInt8](repeating: y, count: width * height) + [UInt8](repeating: u, count: width * height / 4)
            + [UInt8](repeating: v, count: width * height / 4)
    case .nv12: bytes = [UInt8](repeating: y, count: width * height) + (0..<width * height / 4).flatMap { _ in [u, v] }
    default: bytes = [UInt8](repeating: y, count: width * height)
    }
    return Frame(timestamp: ms(1000), sequence: 7, format: layout, bytes: bytes)
}

/// Makes one preview of `frame` with a fresh maker, into a fresh feed.
private func makePreview(of frame: Frame, _ settings: PreviewSettings,
                         processing: PhotoProcessing = PhotoProcessing()) throws -> (PreviewFrame?, PreviewStatistics) {
    let feed = PreviewFeed()
    #expect(feed.claim())
    PreviewMaker().make(from: Locked<Frame?>(frame), settings: settings, processing: processing, feed: feed)
    return (feed.latest(), feed.statistics)
}

@Suite("PreviewFeed and the capture service's previews")
struct PreviewFeedTests {
    @Test func watchedPreviewsComeAtMostAtTheBoardRateWithTheirFramesStamps() throws {
        let harness = try previewHarness(PreviewSettings(width: 160, quality: 70, fps: 15))
        let feed = harness.service.preview
        feed.startWatching()
        var previews: [PreviewFrame] = []
        for time in thirtyFPS(60) {
            harness.previewFrame(at: time)
            if let latest = feed.latest(), latest.number != previews.last?.number { previews.append(latest) }
        }
        // 60 frames at 30 fps are 2 s: 15 fps is every other frame, 30 previews.
        #expect(feed.statistics.encoded == 30)
        #expect(previews.count == 30)
        #expect(feed.statistics.skippedBusy == 0 && feed.statistics.failed == 0)
        for (earlier, later) in zip(previews, previews.dropFirst()) {
            #expect(later.number == earlier.number + 1)
            #expect(later.frameSequence == earlier.frameSequence + 2)
            #expect((later.timestamp - earlier.timestamp).rawValue >= PreviewSettings(fps: 15).interval.rawValue * 7 / 8)
        }
        #expect(previews.first?.timestamp == ms(1000))
        let decoder = try JPEGDecoder()
        for preview in previews {
            let size = try decoder.size(of: preview.jpeg)
            #expect(size.width == 160 && size.height == 90)
            #expect(preview.width == 160 && preview.height == 90)
        }
        // The bars move 8 pixels a frame: two previews of different frames differ.
        #expect(try decoder.decode(previews[0].jpeg).pixels != decoder.decode(previews[1].jpeg).pixels)
    }

    @Test func theFeedRingsItsBellWhenAPreviewIsPublished() throws {
        let harness = try previewHarness(PreviewSettings(width: 160, fps: 30))
        let feed = harness.service.preview
        let mailbox = try LoopMailbox()
        var rings = 0
        feed.ringWhenPublished(mailbox.makeBell { rings += 1 })
        #expect(!isReadable(mailbox.pollDescriptor))
        feed.startWatching()
        harness.previewFrame(at: ms(1000))
        #expect(isReadable(mailbox.pollDescriptor))
        mailbox.runWaiting()
        #expect(rings == 1)
        #expect(!isReadable(mailbox.pollDescriptor))
        harness.previewFrame(at: ms(1033.4))
        mailbox.runWaiting()
        #expect(rings == 2)
        // Let go of: no more rings.
        feed.ringWhenPublished(nil)
        harness.previewFrame(at: ms(1066.8))
        #expect(!isReadable(mailbox.pollDescriptor))
    }

    @Test func nothingIsEncodedWhileNobodyWatches() throws {
        let harness = try previewHarness(PreviewSettings(width: 160, fps: 30))
        let feed = harness.service.preview
        let times = thirtyFPS(30)
        for time in times[0..<10] { harness.previewFrame(at: time) }
        #expect(feed.statistics == PreviewStatistics())
        #expect(feed.latest() == nil)
        feed.startWatching()
        feed.startWatching()
        for time in times[10..<20] { harness.previewFrame(at: time) }
        #expect(feed.statistics.encoded == 10)
        feed.stopWatching()
        #expect(feed.isWatched)  // one viewer is left
        feed.stopWatching()
        feed.stopWatching()  // one stop too many: ignored, the count stays at zero
        #expect(feed.watcherCount == 0)
        for time in times[20..<30] { harness.previewFrame(at: time) }
        #expect(feed.statistics.encoded == 10)
        #expect(feed.statistics.cpuTime > .zero)
        #expect(feed.latest()?.frameSequence == 19)
    }

    @Test func aBurstWhileWatchingSavesEveryPhotoAndThePreviewSkipsRatherThanQueues() throws {
        let harness = try previewHarness(PreviewSettings(width: 160, fps: 30))
        let feed = harness.service.preview
        feed.startWatching()
        // A preview that takes all the burst long: the queue is held back with one preview on it.
        harness.service.previewQueue.suspend()
        var presses = 0
        var events: [CaptureEvent] = []
        for time in thirtyFPS(12) {
            harness.camera.emit(at: time)
            events += harness.service.handleReadable()
            harness.service.capture(pressedAt: time + .milliseconds(1), now: time + .milliseconds(2))
            presses += 1
            if presses % 4 == 0 { harness.service.waitForWrites() }  // within the service's in-flight limit
        }
        harness.camera.emit(at: ms(1400))
        events += harness.finish()
        let photos = events.compactMap(\.photo)
        #expect(photos.count == presses)
        #expect(events.compactMap(\.failure).isEmpty)
        for photo in photos { #expect(FileManager.default.fileExists(atPath: photo.path)) }
        // The photos went by while the preview waited: the one due frame after it was skipped, none queued.
        #expect(feed.statistics.encoded == 0)
        #expect(feed.statistics.skippedBusy == 12)
        harness.service.previewQueue.resume()
        harness.service.waitForPreviews()
        #expect(feed.statistics.encoded == 1)
        #expect(feed.latest()?.frameSequence == 0)
        // Free again: the next frame due makes a preview.
        harness.previewFrame(at: ms(1433.4))
        #expect(feed.statistics.encoded == 2)
    }

    @Test func aReloadedServiceKeepsTheFeedAndItsViewers() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let feed = PreviewFeed()
        feed.startWatching()
        var board = try simulatorBoard(directory: directory)
        board.preview = PreviewSettings(width: 32, fps: 30)
        let camera = try SyntheticCamera(width: 64, height: 48, frameInterval: nil)
        let service = try CaptureService(board: board, camera: camera, clock: VirtualClock(start: ms(1000)), preview: feed)
        defer { service.shutdown() }
        service.settle()
        #expect(service.preview === feed)
        camera.emit(at: ms(1000))
        service.handleReadable()
        service.waitForPreviews()
        #expect(feed.latest()?.width == 32 && feed.latest()?.height == 24)
    }
}

@Suite("PreviewPacer")
struct PreviewPacerTests {
    @Test func everyOtherFrameOfAJitteryCameraAtTwiceTheRate() {
        var pacer = PreviewPacer()
        let interval = PreviewSettings(fps: 15).interval
        var generator = SplitMix64(seed: 21)
        var taken: [Instant] = []
        for (index, time) in thirtyFPS(300).enumerated() {
            // ±3 ms of jitter, as a USB camera's stamps have.
            let jitter = Double(generator.next() % 6001) / 1000 - 3
            let stamped = time + .milliseconds(index == 0 ? 0 : jitter)
            if pacer.isDue(stamped, interval: interval) {
                pacer.took(stamped, interval: interval)
                taken.append(stamped)
            }
        }
        // 300 frames are 10 s: at most 15 a second (one more for the span's edges), and no fewer
        // than every other frame gives.
        #expect(taken.count <= 151)
        #expect(taken.count >= 148)
        // Over any second, at most 16.
        for (index, start) in taken.enumerated() {
            let inSecond = taken[index...].prefix { $0 - start < .seconds(1) }.count
            #expect(inSecond <= 16)
        }
    }

    @Test func aGapStartsTheScheduleAgain() {
        var pacer = PreviewPacer()
        let interval = Nanoseconds.milliseconds(100)
        #expect(pacer.isDue(ms(1000), interval: interval))
        pacer.took(ms(1000), interval: interval)
        #expect(!pacer.isDue(ms(1050), interval: interval))
        #expect(pacer.isDue(ms(1090), interval: interval))  // an eighth of an interval early counts
        pacer.took(ms(5000), interval: interval)
        #expect(pacer.nextDue == ms(5100))
        #expect(!pacer.isDue(ms(5050), interval: interval))
    }
}

@Suite("Preview frames of each format")
struct PreviewFormatTests {
    /// Mid grey (Y 128, no chroma) in every uncompressed format: each preview is 640 wide, the
    /// aspect kept, and decodes to grey.
    @Test(arguments: [PixelFormat.yuyv, .uyvy, .yuv420, .nv12, .grey])
    func uncompressedFramesAreScaledToTheWidth(format: PixelFormat) throws {
        let frame = uniformFrame(format, width: 1280, height: 720, y: 128, u: 128, v: 128)
        let (preview, statistics) = try makePreview(of: frame, PreviewSettings(width: 640, quality: 90, fps: 15))
        #expect(statistics.failed == 0, "\(statistics.lastFailure ?? "")")
        let made = try #require(preview)
        #expect(made.width == 640 && made.height == 360)
        #expect(made.frameSequence == 7 && made.timestamp == ms(1000) && made.number == 1)
        let image = try JPEGDecoder().decode(made.jpeg)
        #expect(image.width == 640 && image.height == 360)
        let (r, g, b) = image.pixel(x: 320, y: 180)
        #expect(abs(Int(r) - 128) <= 3 && abs(Int(g) - 128) <= 3 && abs(Int(b) - 128) <= 3)
    }

    @Test func aColouredYUYVFrameKeepsItsColour() throws {
        // The synthetic camera's blue bar: the macro-pixel scaling must not swap luma and chroma.
        let blue = SyntheticCamera.barsYUV[6]
        let frame = uniformFrame(.yuyv, width: 1280, height: 720, y: blue.y, u: blue.u, v: blue.v)
        let (preview, _) = try makePreview(of: frame, PreviewSettings(width: 320))
        let image = try JPEGDecoder().decode(try #require(preview).jpeg)
        let (r, g, b) = image.pixel(x: 160, y: 90)
        #expect(b > 150 && r < 60 && g < 60, "\(r) \(g) \(b)")
    }

    @Test func aNarrowFrameIsNotEnlarged() throws {
        let frame = uniformFrame(.yuyv, width: 320, height: 240, y: 128, u: 128, v: 128)
        let (preview, _) = try makePreview(of: frame, PreviewSettings(width: 640))
        #expect(preview?.width == 320 && preview?.height == 240)
    }

    @Test func aFormatWithoutAPreviewFailsThePreviewNotTheProcess() throws {
        let frame = Frame(timestamp: ms(1000), sequence: 1, format: FrameFormat(width: 64, height: 48, pixelFormat: .rgb24),
                          bytes: [UInt8](repeating: 0, count: 64 * 48 * 3))
        let (preview, statistics) = try makePreview(of: frame, PreviewSettings())
        #expect(preview == nil)
        #expect(statistics.failed == 1)
        #expect(statistics.lastFailure?.contains("RGB3") == true)
        let short = Frame(timestamp: ms(1000), sequence: 1, format: FrameFormat(width: 64, height: 48, pixelFormat: .yuyv), bytes: [1, 2, 3])
        #expect(try makePreview(of: short, PreviewSettings()).1.failed == 1)
    }

    /// A JPEG of the synthetic camera's frame at `width`×`height`, as an MJPEG camera would send it.
    private func mjpegFrame(width: Int, height: Int) throws -> Frame {
        let camera = try SyntheticCamera(width: width, height: height, frameInterval: nil)
        try camera.start()
        defer { camera.stop() }
        camera.emit(at: ms(1000))
        var frames: [Frame] = []
        try camera.readFrames(into: &frames)
        let jpeg = try JPEGEncoder().encode(try #require(frames.first), quality: 90)
        return Frame(timestamp: ms(1000), sequence: 3, format: FrameFormat(width: width, height: height, pixelFormat: .mjpeg), bytes: jpeg)
    }

    @Test(arguments: [(1280, 720, 640, 640, 360), (1920, 1080, 640, 720, 405), (1920, 1080, 480, 480, 270), (640, 480, 100, 160, 120)])
    func mjpegFramesAreDecodedAtTheSmallestScaleAtLeastTheWidth(width: Int, height: Int, wanted: Int, expectedWidth: Int, expectedHeight: Int) throws {
        let frame = try mjpegFrame(width: width, height: height)
        let (preview, statistics) = try makePreview(of: frame, PreviewSettings(width: wanted))
        #expect(statistics.failed == 0, "\(statistics.lastFailure ?? "")")
        let made = try #require(preview)
        #expect(made.width == expectedWidth && made.height == expectedHeight)
        let size = try JPEGDecoder().size(of: made.jpeg)
        #expect(size.width == expectedWidth && size.height == expectedHeight)
        #expect(made.jpeg != frame.bytes)
    }

    @Test func aSmallMJPEGFrameIsPassedThrough() throws {
        let frame = try mjpegFrame(width: 640, height: 360)
        let (preview, _) = try makePreview(of: frame, PreviewSettings(width: 640))
        #expect(preview?.jpeg == frame.bytes)
        #expect(preview?.width == 640 && preview?.height == 360 && preview?.frameSequence == 3)
    }

    @Test func aDamagedMJPEGFrameFailsThePreview() throws {
        var bytes = try mjpegFrame(width: 640, height: 360).bytes
        bytes.removeLast(bytes.count / 2)
        let frame = Frame(timestamp: ms(1000), sequence: 1, format: FrameFormat(width: 640, height: 360, pixelFormat: .mjpeg), bytes: bytes)
        #expect(try makePreview(of: frame, PreviewSettings(width: 640)).1.failed == 1)
    }

    @Test func theRingFrameIsLetGoOnceThePreviewIsMade() throws {
        let frame = uniformFrame(.yuyv, width: 640, height: 360, y: 128, u: 128, v: 128)
        weak var buffer = frame.buffer
        let feed = PreviewFeed()
        _ = feed.claim()
        let handed = Locked<Frame?>(frame)
        PreviewMaker().make(from: handed, settings: PreviewSettings(width: 160), feed: feed)
        #expect(handed.withLock { $0 == nil })
        _ = consume frame
        #expect(buffer == nil)
    }
}

@Suite("Thumbnails")
struct ThumbnailTests {
    @Test(arguments: [(200, 320, 180), (100, 160, 90), (640, 640, 360), (641, 800, 450), (2000, 1280, 720), (1, 160, 90)])
    func theLargestReductionThatKeepsTheWidth(wanted: Int, width: Int, height: Int) throws {
        let photo = try JPEGEncoder().encode(uniformFrame(.yuyv, width: 1280, height: 720, y: 100, u: 128, v: 128), quality: 90)
        let thumbnail = try makeThumbnail(ofJPEG: photo, width: wanted, quality: 75)
        #expect(thumbnail.width == width && thumbnail.height == height)
        let size = try JPEGDecoder().size(of: thumbnail.jpeg)
        #expect(size.width == width && size.height == height)
        if wanted < 1280 { #expect(thumbnail.jpeg.count < photo.count) }
    }

    @Test func badInputIsRefused() throws {
        let photo = try JPEGEncoder().encode(uniformFrame(.grey, width: 64, height: 48, y: 100, u: 0, v: 0), quality: 90)
        #expect(throws: CaptureError.self) { _ = try makeThumbnail(ofJPEG: photo, width: 0) }
        #expect(throws: CaptureError.self) { _ = try makeThumbnail(ofJPEG: photo, width: 32, quality: 101) }
        #expect(throws: CaptureError.self) { _ = try makeThumbnail(ofJPEG: [0xff, 0xd8, 1, 2, 3], width: 32) }
        // Grey photos have one plane: still a thumbnail.
        #expect(try makeThumbnail(ofJPEG: photo, width: 32).width == 32)
    }
}

@Suite("Previews of a libcamera camera")
struct LibcameraPreviewTests {
    @Test func aViewfinderStreamIsWhatThePreviewShows() throws {
        var script = FakeLibcameraScript()
        script.hasAutofocus = false
        let harness = try LibcameraHarness(script) { $0.viewfinder = FrameDimensions(width: 32, height: 24) }
        #expect(harness.camera.viewfinderFormat?.pixelFormat == .yuv420)  // as asked
        harness.service.previewSettings = PreviewSettings(width: 640, fps: 30)
        harness.service.preview.startWatching()
        harness.frames(1000)
        harness.service.waitForPreviews()
        // The still stream is 64x48: a 32x24 preview came from the viewfinder.
        let preview = try #require(harness.service.preview.latest(), "\(harness.service.preview.statistics)")
        #expect(preview.width == 32 && preview.height == 24)
        #expect(try JPEGDecoder().size(of: preview.jpeg) == (32, 24) ? true : false)
        harness.service.shutdown()
    }

    @Test func withoutAViewfinderTheStillStreamIsScaled() throws {
        var script = FakeLibcameraScript()
        script.hasAutofocus = false
        let harness = try LibcameraHarness(script)
        #expect(harness.camera.viewfinderFormat == nil)
        harness.service.previewSettings = PreviewSettings(width: 32, fps: 30)
        harness.service.preview.startWatching()
        harness.frames(1000)
        harness.service.waitForPreviews()
        let preview = try #require(harness.service.preview.latest(), "\(harness.service.preview.statistics)")
        #expect(preview.width == 32 && preview.height == 24)
        harness.service.shutdown()
    }
}

@Suite("Previews show what the photo will be")
struct PreviewMatchesPhotoTests {
    /// A plane's means over an 8×4 grid of blocks: the picture's layout and colour, without the
    /// chart's single-pixel lines that two different downscales (and JPEG) render differently.
    func blockMeans(_ plane: [UInt8], width: Int) -> [Double] {
        let height = plane.count / width
        return (0..<4).flatMap { by in
            (0..<8).map { bx in
                let rows = (by * height / 4)..<((by + 1) * height / 4), columns = (bx * width / 8)..<((bx + 1) * width / 8)
                let sum = rows.reduce(0) { total, row in columns.reduce(total) { $0 + Int(plane[row * width + $1]) } }
                return Double(sum) / Double(rows.count * columns.count)
            }
        }
    }

    /// The mean absolute difference of two same-sized planes' ``blockMeans(_:width:)``.
    func difference(_ a: [UInt8], _ b: [UInt8], width: Int) -> Double {
        zip(blockMeans(a, width: width), blockMeans(b, width: width)).reduce(0) { $0 + abs($1.0 - $1.1) } / 32
    }

    /// The largest distance of a plane's values from neutral chroma.
    func colourfulness(_ plane: [UInt8]) -> Int { plane.map { abs(Int($0) - 128) }.max() ?? 0 }

    /// The preview of one frame and the photo of that same frame, at `zoom` and the picker's `filter` item.
    func previewAndPhoto(zoom: Double, filter: Int, _ tweak: @escaping (inout CameraSettings) -> Void = { _ in })
        throws -> (preview: YUVImage, photo: YUVImage) {
        let harness = try Harness { camera in
            camera.width = 320
            camera.height = 180
            tweak(&camera)
        }
        harness.service.previewSettings = PreviewSettings(width: 80, quality: 95, fps: 30)
        harness.settle()
        harness.service.setZoom(zoom)
        harness.service.apply(controlID: "filter", value: .index(filter))
        harness.service.preview.startWatching()
        harness.camera.emit(at: ms(1000))
        harness.service.handleReadable()
        harness.service.capture(pressedAt: ms(1000), now: ms(1001))
        harness.service.waitForPreviews()
        let photo = try #require(harness.finish().compactMap(\.photo).first)
        let preview = try #require(harness.service.preview.latest(), "\(harness.service.preview.statistics)")
        #expect(preview.frameSequence == 0)
        let photoPlanes = try decodeJPEGPlanes(Array(try Data(contentsOf: URL(fileURLWithPath: photo.path))))
        let previewPlanes = try decodeJPEGPlanes(preview.jpeg)
        return (previewPlanes, photoPlanes.scaled(width: previewPlanes.width, height: previewPlanes.height))
    }

    @Test func atFourTimesZoomInMonoThePreviewIsThePhotoDownscaled() throws {
        let (preview, photo) = try previewAndPhoto(zoom: 4, filter: 1)
        #expect(preview.width == 80 && preview.height == 44)
        // The same picture (the middle of the chart), not the uncropped frame's bars.
        #expect(difference(preview.y, photo.y, width: preview.width) < 6, "luma differs by \(difference(preview.y, photo.y, width: preview.width)) on average")
        // Black and white, as the photo.
        #expect(colourfulness(photo.u) <= 2 && colourfulness(photo.v) <= 2)
        #expect(colourfulness(preview.u) <= 2 && colourfulness(preview.v) <= 2,
                "preview chroma reaches \(colourfulness(preview.u)), \(colourfulness(preview.v)) from neutral")
    }

    /// Vivid, warm and none, at zooms the preview shrinks (the 4x crop of this camera is the
    /// preview's own size) and one it enlarges. Luma is allowed more here than at 4x: a YUYV
    /// preview scales the two luma samples of a pair apart, so the chart's single-pixel lines
    /// come out striped where the photo's scale greys them (about 6 on average; the uncropped
    /// frame differs by 40 and more).
    @Test(arguments: [(2.0, 2), (3.0, 3), (1.0, 0), (8.0, 1)])
    func otherZoomsAndEffectsMatchThePhoto(zoom: Double, filter: Int) throws {
        let (preview, photo) = try previewAndPhoto(zoom: zoom, filter: filter)
        #expect(difference(preview.y, photo.y, width: preview.width) < 10, "luma differs by \(difference(preview.y, photo.y, width: preview.width)) on average")
        #expect(difference(preview.u, photo.u, width: preview.chromaWidth) < 4, "Cb differs by \(difference(preview.u, photo.u, width: preview.chromaWidth)) on average")
        #expect(difference(preview.v, photo.v, width: preview.chromaWidth) < 4, "Cr differs by \(difference(preview.v, photo.v, width: preview.chromaWidth)) on average")
    }

    @Test func aCropSavedAtItsOwnSizeIsPreviewedAsTheCrop() throws {
        let (preview, photo) = try previewAndPhoto(zoom: 4, filter: 0) { $0.digitalZoom = .crop }
        #expect(difference(preview.y, photo.y, width: preview.width) < 6, "luma differs by \(difference(preview.y, photo.y, width: preview.width)) on average")
    }
}

@Suite("Previews of each format take the photo's crop and effect")
struct PreviewProcessingFormatTests {
    /// ``stripedFrame(_:width:height:)``'s luma stripes with every chroma sample Cb 90, Cr 170
    /// (a reddish colour an effect visibly changes), in `range`; MJPEG is the YUYV frame encoded.
    func colouredStripes(_ pixelFormat: PixelFormat, range: YUVRange) throws -> Frame {
        let source = pixelFormat == .mjpeg ? PixelFormat.yuyv : pixelFormat
        let striped = stripedFrame(source, width: 128, height: 96)
        var bytes = striped.bytes
        let lumaBytes = 128 * 96
        switch source {
        case .yuyv: for index in stride(from: 1, to: bytes.count, by: 2) { bytes[index] = index % 4 == 1 ? 90 : 170 }
        case .uyvy: for index in stride(from: 0, to: bytes.count, by: 2) { bytes[index] = index % 4 == 0 ? 90 : 170 }
        case .nv12: for index in lumaBytes..<bytes.count { bytes[index] = (index - lumaBytes) % 2 == 0 ? 90 : 170 }
        default:
            for index in lumaBytes..<bytes.count { bytes[index] = index < lumaBytes + lumaBytes / 4 ? 90 : 170 }
        }
        let format = FrameFormat(width: 128, height: 96, pixelFormat: source, yuvRange: range)
        let frame = Frame(timestamp: ms(1000), sequence: 5, format: format, bytes: bytes)
        guard pixelFormat == .mjpeg else { return frame }
        let jpeg = try JPEGEncoder().encode(frame, quality: 95)
        return Frame(timestamp: ms(1000), sequence: 5, format: FrameFormat(width: 128, height: 96, pixelFormat: .mjpeg), bytes: jpeg)
    }

    /// Each plane's mean over its middle, where the crop's edges and JPEG's blocks do not reach.
    func middleMeans(_ image: YUVImage) -> (y: Double, u: Double, v: Double) {
        func mean(_ plane: [UInt8], _ width: Int, _ height: Int) -> Double {
            let rows = (height / 4)..<(height * 3 / 4), columns = (width / 4)..<(width * 3 / 4)
            let sum = rows.reduce(0) { total, row in columns.reduce(total) { $0 + Int(plane[row * width + $1]) } }
            return Double(sum) / Double(rows.count * columns.count)
        }
        return (mean(image.y, image.width, image.height), mean(image.u, image.chromaWidth, image.chromaHeight),
                mean(image.v, image.chromaWidth, image.chromaHeight))
    }

    @Test(arguments: [PixelFormat.yuyv, .uyvy, .nv12, .yuv420, .mjpeg], [PhotoEffect.vivid, .warm, .mono])
    func aPreviewIsThePhotoDownscaled(format: PixelFormat, effect: PhotoEffect) throws {
        for range in format == .mjpeg ? [YUVRange.full] : [.full, .limited] {
            let frame = try colouredStripes(format, range: range)
            let processing = PhotoProcessing(crop: CropRect.digitalZoom(width: 128, height: 96, factor: 2), effect: effect)
            let (made, statistics) = try makePreview(of: frame, PreviewSettings(width: 32, quality: 95), processing: processing)
            let preview = try decodeJPEGPlanes(try #require(made, "\(statistics.lastFailure ?? "")").jpeg)
            let photo = try decodeJPEGPlanes(encodePhoto(frame, processing: processing, quality: 95, encoder: JPEGEncoder()).jpeg)
                .scaled(width: preview.width, height: preview.height)
            let (p, q) = (middleMeans(preview), middleMeans(photo))
            // The crop holds only the two middle stripes (80 and 160): the whole frame's mean would be lower.
            #expect(abs(p.y - q.y) < 4 && abs(p.u - q.u) < 3 && abs(p.v - q.v) < 3, "\(range): preview \(p), photo \(q)")
        }
    }
}
