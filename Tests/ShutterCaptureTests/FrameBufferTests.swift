#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import ShutterCore
@testable import ShutterCapture

@Suite("ringCapacity: the ring bounded by frames and by bytes")
struct RingCapacityTests {
    @Test(arguments: [
        // ringFrames, ringMiB, frameBytes, held
        (4, 24, 1280 * 720 * 2, 4),        // 720p YUYV: 1.8 MB a frame, four fit
        (4, 24, 1920 * 1080 * 2, 4),       // 1080p YUYV: 4.1 MB, four fit in 24 MiB
        (8, 24, 1920 * 1080 * 2, 6),       // eight do not: six do
        (4, 24, 3840 * 2160 * 2, nil),     // 4K YUYV: 16.6 MB, only one: refused
        (4, 1, 3840 * 2160 * 2, nil),      // none: refused
        (4, 34, 3840 * 2160 * 2, 2),       // two are the least
        (16, 1024, 460_800, 16),           // the frame count bounds first
        (4, 24, 0, 4),                     // size unknown: the frame count alone
        (4, nil, 4608 * 2592 * 3 / 2, 4),  // no cap (the default): the frames the board asks for, 12 MP too
    ] as [(Int, Int?, Int, Int?)])
    func capacity(ringFrames: Int, ringMiB: Int?, frameBytes: Int, held: Int?) {
        #expect(ringCapacity(ringFrames: ringFrames, ringMiB: ringMiB, frameBytes: frameBytes) == held)
    }
}

/// The newest `capacity` frames, as the service's ring holds them (its state machine decides;
/// here a plain ring is enough).
struct TestRing {
    let capacity: Int
    private(set) var frames: [Frame] = []
    init(capacity: Int) { self.capacity = capacity }
    mutating func append(_ frame: Frame) {
        if frames.count == capacity { frames.removeFirst() }
        frames.append(frame)
    }
    mutating func removeAll() { frames.removeAll() }
}

/// A driver in memory for ``BufferQueue``: buffers it was given, filled in order.
final class FakeDriver: @unchecked Sendable {  // @unchecked: `storage` is only read through the mapping
    let queued = Locked<[Int]>([])
    let unmapped = Locked<Int>(0)
    let streaming = Locked<Bool>(false)
    let storage: UnsafeMutableRawBufferPointer
    let bufferBytes = 64

    init(buffers: Int) {
        storage = UnsafeMutableRawBufferPointer.allocate(byteCount: buffers * bufferBytes, alignment: 16)
    }

    deinit { storage.deallocate() }

    var calls: BufferQueueCalls {
        BufferQueueCalls(
            queue: { [queued] (index: Int) throws(CaptureError) in
                queued.withLock { list in
                    precondition(!list.contains(index), "buffer \(index) queued twice")
                    list.append(index)
                }
            },
            start: { [streaming] () throws(CaptureError) in streaming.withLock { $0 = true } },
            stop: { [queued, streaming] in
                streaming.withLock { $0 = false }
                queued.withLock { $0.removeAll() }
            })
    }

    func mapping(buffers: Int) -> MappedBuffers {
        let regions = (0..<buffers).map { MappedBuffers.Region(start: storage.baseAddress! + $0 * bufferBytes, length: bufferBytes) }
        return MappedBuffers(regions) { [unmapped] _ in unmapped.withLock { $0 += 1 } }
    }

    /// The oldest buffer queued, as `VIDIOC_DQBUF` gives it; `nil` when the driver has none (a stall).
    func dequeue() -> Int? {
        queued.withLock { list in list.isEmpty ? nil : list.removeFirst() }
    }
}

@Suite("BufferQueue: the driver's buffers are the ring")
struct BufferQueueTests {
    /// A queue over `buffers` fake buffers, streaming.
    func streaming(buffers: Int) throws -> (BufferQueue, FakeDriver) {
        let driver = FakeDriver(buffers: buffers)
        let queue = BufferQueue(calls: driver.calls, minimumQueued: V4L2Camera.minimumQueued)
        queue.adopt(driver.mapping(buffers: buffers))
        try queue.start()
        return (queue, driver)
    }

    /// One frame through the camera's steps: reclaim, dequeue, lend (or copy and requeue).
    func nextFrame(_ queue: BufferQueue, _ driver: FakeDriver, sequence: UInt32) throws -> Frame? {
        try queue.reclaim()
        guard let index = driver.dequeue() else { return nil }
        let format = FrameFormat(width: 4, height: 2, pixelFormat: .yuyv)
        if let lent = queue.lend(index, count: 16) {
            return Frame(timestamp: Instant(rawValue: Int64(sequence) * 33_000_000), sequence: sequence, format: format, buffer: lent)
        }
        let copy = Frame(timestamp: .zero, sequence: sequence, format: format, bytes: [UInt8](repeating: 0, count: 16))
        try queue.requeue(index)
        return copy
    }

    @Test func streamingIdleLendsEveryFrameAndKeepsTheDriverFed() throws {
        let ringFrames = 4
        let (queue, driver) = try streaming(buffers: ringFrames + V4L2Camera.spareBuffers)
        var ring = TestRing(capacity: ringFrames)
        for sequence in 1...50 as ClosedRange<UInt32> {
            let frame = try #require(try nextFrame(queue, driver, sequence: sequence), "the driver ran out of buffers at frame \(sequence)")
            #expect(frame.buffer.isLent, "frame \(sequence) was copied")
            ring.append(frame)
            #expect(queue.queuedCount >= V4L2Camera.minimumQueued)
        }
        #expect(queue.lentCount == ringFrames + 1)  // the ring, and the buffer its newest frame dropped (back at the next dequeue)
        try queue.reclaim()
        #expect(queue.lentCount == ringFrames)
    }

    @Test func aPhotoKeepsItsBufferOutOfTheQueueUntilItIsWritten() throws {
        let (queue, driver) = try streaming(buffers: 2 + V4L2Camera.spareBuffers)
        var ring = TestRing(capacity: 2)
        for sequence in 1...3 as ClosedRange<UInt32> { ring.append(try #require(try nextFrame(queue, driver, sequence: sequence))) }
        var photo: Frame? = ring.frames.last  // the press's frame, handed to the encoder
        let held = ObjectIdentifier(photo!.buffer)
        for sequence in 4...20 as ClosedRange<UInt32> {
            let frame = try #require(try nextFrame(queue, driver, sequence: sequence))
            #expect(frame.buffer.isLent && ObjectIdentifier(frame.buffer) != held, "frame \(sequence) was written into the buffer a photo is encoded from")
            ring.append(frame)
        }
        // Twenty frames later the photo's buffer still holds its frame: never given to the driver.
        #expect(photo?.sequence == 3 && photo.map { ObjectIdentifier($0.buffer) } == held)
        #expect(queue.lentCount == 3 + 1)
        photo = nil
        try queue.reclaim()
        #expect(queue.lentCount == 2)
    }

    @Test func aBurstOfPhotosNeverStarvesTheDriver() throws {
        let (queue, driver) = try streaming(buffers: 2 + V4L2Camera.spareBuffers)
        var ring = TestRing(capacity: 2)
        var photos: [Frame] = []
        var copies = 0
        for sequence in 1...30 as ClosedRange<UInt32> {
            let frame = try #require(try nextFrame(queue, driver, sequence: sequence), "stalled at frame \(sequence)")
            if !frame.buffer.isLent { copies += 1 }
            ring.append(frame)
            if sequence % 2 == 0, photos.count < 8 { photos.append(frame) }  // eight photos still encoding
            #expect(queue.queuedCount >= V4L2Camera.minimumQueued - 1)
        }
        #expect(copies > 0, "with eight photos held, frames had to be copied rather than lent")
        photos.removeAll()
        ring.removeAll()
        try queue.reclaim()
        #expect(queue.lentCount == 0)
    }

    @Test func droppedFramesKeepTheCountOfQueuedBuffersTrue() throws {
        let (queue, driver) = try streaming(buffers: 2 + V4L2Camera.spareBuffers)
        var ring = TestRing(capacity: 2)
        for sequence in 1...12 as ClosedRange<UInt32> {
            if sequence % 3 == 0 {
                // A damaged or error-flagged frame: dequeued, dropped, its buffer queued again.
                try queue.reclaim()
                let index = try #require(driver.dequeue())
                try queue.discard(index)
            } else {
                ring.append(try #require(try nextFrame(queue, driver, sequence: sequence)))
            }
            #expect(queue.queuedCount == driver.queued.withLock { $0.count }, "after frame \(sequence)")
        }
    }

    @Test func aRestartQueuesEveryBufferButTheOnesStillHeld() throws {
        let buffers = 2 + V4L2Camera.spareBuffers
        let (queue, driver) = try streaming(buffers: buffers)
        var ring = TestRing(capacity: 2)
        for sequence in 1...4 as ClosedRange<UInt32> { ring.append(try #require(try nextFrame(queue, driver, sequence: sequence))) }
        let photo = ring.frames.last!
        queue.stop()
        ring.removeAll()  // the service forgets the ring when the stream stops
        try queue.start()
        #expect(driver.queued.withLock { $0.count } == buffers - 1)
        #expect(queue.lentCount == 1)
        _ = photo
    }

    @Test func closingKeepsAPhotosBufferMappedUntilItIsWritten() throws {
        let (queue, driver) = try streaming(buffers: 5)
        var photo: Frame? = try nextFrame(queue, driver, sequence: 1)
        queue.stop()
        #expect(queue.forget())
        #expect(driver.unmapped.withLock { $0 } == 0, "unmapped under a photo being encoded")
        #expect(photo?.bytes.count == 16)
        photo = nil
        #expect(driver.unmapped.withLock { $0 } == 5)
    }
}

/// Memory lent to a frame as a driver lends its buffer: the image's bytes in the first pages of
/// an anonymous mapping, then `tailPages` pages never written. Whether a tail page has been read
/// shows in `mincore` (a read maps the zero page there): reading the frame in place reads the
/// image's bytes only, while a copy of the buffer (`bytes`, `array`) reads all of `count`.
final class LentMapping {
    let base: UnsafeMutableRawPointer
    let length: Int
    let imageBytes: Int
    let tailStart: Int
    let tailPages: Int
    private let page = Int(sysconf(Int32(_SC_PAGESIZE)))

    init(image: Frame, tailPages: Int) throws {
        imageBytes = image.byteCount
        tailStart = (imageBytes + page - 1) / page * page
        self.tailPages = tailPages
        length = tailStart + tailPages * page
        let mapped = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        try #require(mapped != MAP_FAILED, "mmap: errno \(errno)")
        base = try #require(mapped)
        // One zero page per 4 KiB read, never a huge zero page covering the tail.
        _ = madvise(base, length, MADV_NOHUGEPAGE)
        image.withUnsafeBytes { base.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    }

    deinit { munmap(base, length) }

    /// How many pages of the tail have been read (or written).
    func residentTailPages() -> Int {
        var flags = [UInt8](repeating: 0, count: tailPages)
        guard mincore(base + tailStart, tailPages * page, &flags) == 0 else { return -1 }
        return flags.filter { $0 & 1 != 0 }.count
    }
}

@Suite("FrameBuffer")
struct FrameBufferTests {
    /// The encoder and the photo processing read a lent buffer where it lies: the frame hands out
    /// the lent memory itself (pointer identity), and after encoding — whole, and zoomed with an
    /// effect — no page of the buffer past the image has been read, which a copy of the buffer
    /// (`bytes`/`array` copy all `count` bytes) would have done. The control at the end makes
    /// such a copy and sees every tail page read. (A copy of exactly the image's bytes would not
    /// show here.)
    @Test func encodingReadsALentBufferInPlace() throws {
        let source = solidFrame(.yuyv, width: 64, height: 48)
        // Each path gets memory of its own, so one path's copy cannot hide behind another's.
        func lent() throws -> (frame: Frame, memory: LentMapping) {
            let memory = try LentMapping(image: source, tailPages: 64)
            let frame = Frame(timestamp: .zero, sequence: 0, format: source.format,
                              buffer: FrameBuffer(lending: UnsafeRawPointer(memory.base), count: memory.length, keeper: memory))
            #expect(frame.buffer.isLent)
            #expect(memory.residentTailPages() == 0)
            return (frame, memory)
        }
        let whole = try lent()
        #expect(whole.frame.withUnsafeBytes { $0.baseAddress } == UnsafeRawPointer(whole.memory.base),
                "the frame's bytes are not the lent memory")
        #expect(try JPEGEncoder().encode(whole.frame, quality: 90) == JPEGEncoder().encode(source, quality: 90))
        #expect(whole.memory.residentTailPages() == 0, "encoding read the buffer past the image: a copy")
        // Zoom and effects read the lent buffer in place too.
        let zoomed = try lent()
        let processing = PhotoProcessing(crop: CropRect.digitalZoom(width: 64, height: 48, factor: 2), effect: .mono)
        #expect(try encodePhoto(zoomed.frame, processing: processing, quality: 90, encoder: JPEGEncoder()).jpeg
            == encodePhoto(source, processing: processing, quality: 90, encoder: JPEGEncoder()).jpeg)
        #expect(zoomed.memory.residentTailPages() == 0, "zoom and effect read the buffer past the image: a copy")
        // The control: a copy of the buffer reads every tail page, and mincore sees it.
        #expect(zoomed.frame.bytes.count == zoomed.memory.length)
        #expect(zoomed.memory.residentTailPages() == zoomed.memory.tailPages)
    }
}
