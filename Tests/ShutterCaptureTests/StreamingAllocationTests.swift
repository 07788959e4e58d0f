import Foundation
import Testing
import ShutterCore
@testable import ShutterCapture

private func ms(_ value: Double) -> Instant { Instant(rawValue: Int64(value * 1_000_000)) }

/// malloc-count's count of the calling thread's allocations (Deploy/vm/malloc-count.c
/// preloaded), found once with dlsym: a test counts exactly what the code it runs allocates,
/// whatever the runner's other threads do meanwhile. `nil` when the tests run without it.
nonisolated(unsafe) private let threadAllocations: (@convention(c) () -> UInt)? = {
    // RTLD_DEFAULT: the symbol wherever it is, here in the preloaded library.
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_count_this_thread") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) () -> UInt).self)
}()

/// Heap allocations while streaming, counted by malloc-count. `Tests/allocation-tests.sh` runs
/// them (it builds malloc-count.so and preloads it) and fails when they are skipped; a plain
/// `swift test` skips them.
@Suite("Streaming allocates nothing per frame",
       .enabled(if: threadAllocations != nil,
                "needs Deploy/vm/malloc-count.c preloaded: run Tests/allocation-tests.sh (SWIFT_SCRATCH=.build-dev for that scratch path)"))
struct StreamingAllocationTests {
    /// The fake libcamera camera delivering and the service's way of reading (one array kept,
    /// `readFrames(into:)`): no allocation at all in 1000 frames once warm (the backend's request
    /// queues included), counted on this thread. A fresh array per read
    /// (`readFrames() -> [Frame]`) is one allocation a frame.
    @Test func libcameraReadsIntoAKeptArrayWithoutAllocating() throws {
        let allocations = try #require(threadAllocations)
        let camera = try LibcameraCamera(fake: FakeLibcameraScript())
        defer { camera.close() }
        try camera.start()
        var batch: [Frame] = []
        var time = Int64(1_000_000_000)
        var kept: UInt = 0, fresh: UInt = 0
        for index in 0..<2200 {
            let before = allocations()
            _ = camera.deliverFakeFrame(at: Instant(rawValue: time))
            time += 33_000_000
            if index < 1200 {
                batch.removeAll(keepingCapacity: true)
                try camera.readFrames(into: &batch)
                batch.removeAll(keepingCapacity: true)
            } else {
                _ = try camera.readFrames()
            }
            let spent = allocations() - before
            if index >= 1200 { fresh += spent } else if index >= 200 { kept += spent }  // the first 200 warm up
        }
        #expect(kept == 0)
        #expect(fresh >= 1000)
    }

    /// The whole streaming path as the loop runs it, on the synthetic camera: each frame read
    /// by the capture service, into the ring, through the capture state machine, with the
    /// frame memory lent from the camera's pool. No allocation at all in 1000 frames once warm,
    /// counted on this thread (the loop's, here).
    @Test func theCaptureServiceStreamsWithoutAllocating() throws {
        let allocations = try #require(threadAllocations)
        let harness = try Harness()
        harness.settle()
        try #require(harness.service.isStreaming)
        let camera = harness.camera  // the test's own lookup stays out of the count
        var time = 2000.0
        var warm: UInt = 0, streaming: UInt = 0
        for index in 0..<1200 {
            let before = allocations()
            camera.emit(at: ms(time))
            harness.clock.advance(to: ms(time + 1))
            _ = harness.service.handleReadable()
            let spent = allocations() - before
            if index >= 200 { streaming += spent } else { warm += spent }  // the ring fills, the pool grows
            time += 1000.0 / 30
        }
        #expect(streaming == 0, "\(streaming) allocations in 1000 frames once warm (\(warm) while warming up)")
        #expect(harness.service.oldestFrameAt != nil, "the ring held the frames")
    }

    /// A preview of a zoomed, filtered view costs no allocation beyond a plain preview of a frame
    /// the crop's size: the
    /// crop is read where it lies into the kept small buffer, the effect is applied to it in
    /// place from tables made once. (libyuv's scalers themselves take a row buffer from malloc
    /// for each plane they scale, `align_buffer_64`: one a frame for YUYV, two for NV12, three
    /// for I420, with or without a crop.) 125 previews once warm in each uncompressed format and range.
    @Test func aCroppedPreviewWithAnEffectAllocatesNoMoreThanAPlainOne() throws {
        let allocations = try #require(threadAllocations)
        let layouts = [PixelFormat.yuyv, .uyvy, .nv12, .yuv420].flatMap { format in
            [YUVRange.full, .limited].map { FrameFormat(width: 640, height: 360, pixelFormat: format, yuvRange: $0) }
        }
        let bytes = [UInt8](repeating: 100, count: 640 * 360 * 2)  // a frame where it lies, as a driver's buffer
        let crop = CropRect.digitalZoom(width: 640, height: 360, factor: 2.5)
        let effects: [PhotoEffect] = [.mono, .vivid, .warm]
        var plain: UInt = 0, processed: UInt = 0
        try bytes.withUnsafeBytes { raw in
            for layout in layouts {  // a camera's format stays: its small buffers are made once, at the first preview
                var small: [UInt8] = [], zoomed: [UInt8] = []
                for index in 0..<150 {
                    var before = allocations()
                    // A frame the crop's size: libyuv takes the same path for the same ratio.
                    let cropSized = FrameFormat(width: crop.width, height: crop.height, pixelFormat: layout.pixelFormat, yuvRange: layout.yuvRange)
                    _ = try PreviewScaler.downscale(raw, format: cropSized, toWidth: 160, into: &small)
                    if index >= 25 { plain += allocations() - before }
                    before = allocations()
                    let zoomedLayout = try PreviewScaler.downscale(raw, format: layout, crop: crop, toWidth: 160, into: &zoomed)
                    PreviewScaler.apply(effects[index % 3], to: &zoomed, format: zoomedLayout)
                    if index >= 25 { processed += allocations() - before }
                }
            }
        }
        #expect(processed == plain, "\(processed) allocations with crop and effect, \(plain) without")
    }
}
