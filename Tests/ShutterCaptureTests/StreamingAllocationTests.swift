import Foundation
import Testing
import ShutterCore
@testable import ShutterCapture

/// malloc-count's live counter (Deploy/vm/malloc-count.c preloaded with $MALLOC_COUNT_LIVE set),
/// mapped once: reading it allocates nothing. `nil` when the tests run without it.
nonisolated(unsafe) private let allocationCounter: UnsafePointer<UInt64>? = {
    // nonisolated(unsafe): the mapping is made once and only read.
    guard let base = ProcessInfo.processInfo.environment["MALLOC_COUNT_LIVE"] else { return nil }
    let descriptor = open("\(base).\(getpid())", O_RDONLY)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    guard let map = mmap(nil, 8, PROT_READ, MAP_SHARED, descriptor, 0), map != MAP_FAILED else { return nil }
    return UnsafePointer(map.assumingMemoryBound(to: UInt64.self))
}()

/// Heap allocations while streaming, counted by malloc-count. `Tests/allocation-tests.sh` runs
/// them (it builds malloc-count.so and preloads it) and fails when they are skipped; a plain
/// `swift test` skips them.
@Suite("Streaming allocates nothing per frame", .serialized,  // one test at a time: the counter is the whole process's
       .enabled(if: allocationCounter != nil,
                "needs Deploy/vm/malloc-count.c preloaded: run Tests/allocation-tests.sh (SWIFT_SCRATCH=.build-dev for that scratch path)"))
struct StreamingAllocationTests {
    /// The fake libcamera camera delivering and the service's way of reading (one array kept,
    /// `readFrames(into:)`): no allocation in 1000 frames once warm (the backend's request queues
    /// included). A fresh array per read (the
    /// old `readFrames() -> [Frame]`) is one allocation a frame.
    @Test func libcameraReadsIntoAKeptArrayWithoutAllocating() throws {
        let counter = try #require(allocationCounter)
        let camera = try LibcameraCamera(fake: FakeLibcameraScript())
        defer { camera.close() }
        try camera.start()
        var batch: [Frame] = []
        var time = Int64(1_000_000_000)
        var kept: UInt64 = 0, fresh: UInt64 = 0
        for index in 0..<2200 {
            let before = counter.pointee
            _ = camera.deliverFakeFrame(at: Instant(rawValue: time))
            time += 33_000_000
            if index < 1200 {
                batch.removeAll(keepingCapacity: true)
                try camera.readFrames(into: &batch)
                batch.removeAll(keepingCapacity: true)
            } else {
                _ = try camera.readFrames()
            }
            let spent = counter.pointee - before
            if index >= 1200 { fresh += spent } else if index >= 200 { kept += spent }  // the first 200 warm up
        }
        // The counter is the whole process's: the test runner's other threads may allocate a few
        // times meanwhile, so "none" is "far fewer than one a frame".
        #expect(kept < 50)
        #expect(fresh >= 1000)
    }

    /// A preview of a zoomed, filtered view costs no allocation beyond a plain preview of a frame
    /// the crop's size: the
    /// crop is read where it lies into the kept small buffer, the effect is applied to it in
    /// place from tables made once. (libyuv's scalers themselves take a row buffer from malloc
    /// for each plane they scale, `align_buffer_64`: one a frame for YUYV, two for NV12, three
    /// for I420, with or without a crop.) 125 previews once warm in each uncompressed format and range.
    @Test func aCroppedPreviewWithAnEffectAllocatesNoMoreThanAPlainOne() throws {
        let counter = try #require(allocationCounter)
        let layouts = [PixelFormat.yuyv, .uyvy, .nv12, .yuv420].flatMap { format in
            [YUVRange.full, .limited].map { FrameFormat(width: 640, height: 360, pixelFormat: format, yuvRange: $0) }
        }
        let bytes = [UInt8](repeating: 100, count: 640 * 360 * 2)  // a frame where it lies, as a driver's buffer
        let crop = CropRect.digitalZoom(width: 640, height: 360, factor: 2.5)
        let effects: [PhotoEffect] = [.mono, .vivid, .warm]
        var plain: UInt64 = 0, processed: UInt64 = 0
        try bytes.withUnsafeBytes { raw in
            for layout in layouts {  // a camera's format stays: its small buffers are made once, at the first preview
                var small: [UInt8] = [], zoomed: [UInt8] = []
                for index in 0..<150 {
                    var before = counter.pointee
                    // A frame the crop's size: libyuv takes the same path for the same ratio.
                    let cropSized = FrameFormat(width: crop.width, height: crop.height, pixelFormat: layout.pixelFormat, yuvRange: layout.yuvRange)
                    _ = try PreviewScaler.downscale(raw, format: cropSized, toWidth: 160, into: &small)
                    if index >= 25 { plain += counter.pointee - before }
                    before = counter.pointee
                    let zoomedLayout = try PreviewScaler.downscale(raw, format: layout, crop: crop, toWidth: 160, into: &zoomed)
                    PreviewScaler.apply(effects[index % 3], to: &zoomed, format: zoomedLayout)
                    if index >= 25 { processed += counter.pointee - before }
                }
            }
        }
        // The counter is the whole process's: a few of the runner's own allocations may fall in.
        #expect(processed < plain + 50, "\(processed) allocations with crop and effect, \(plain) without")
    }
}
