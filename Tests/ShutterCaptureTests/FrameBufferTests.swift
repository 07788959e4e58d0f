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
        (4, 24, 3840 * 2160 * 2, 1),       // 4K YUYV: 16.6 MB, only one
        (4, 1, 3840 * 2160 * 2, 1),        // never fewer than one
        (16, 1024, 460_800, 16),           // the frame count bounds first
        (4, 24, 0, 4),                     // size unknown: the frame count alone
    ])
    func capacity(ringFrames: Int, ringMiB: Int, frameBytes: Int, held: Int) {
        #expect(ringCapacity(ringFrames: ringFrames, ringMiB: ringMiB, frameBytes: frameBytes) == held)
    }
}

@Suite("FrameBuffer: a driver buffer lent to frames")
struct FrameBufferTests {
    /// A lent buffer and a counter of how often it was handed back.
    func lentFrame(sequence: UInt32, storage: UnsafeMutableRawBufferPointer, returns: Locked<[UInt32]>) -> Frame {
        let buffer = FrameBuffer(lending: UnsafeRawPointer(storage.baseAddress!), count: storage.count) {
            returns.withLock { $0.append(sequence) }
        }
        return Frame(timestamp: Instant(rawValue: Int64(sequence) * 33_000_000), sequence: sequence,
                     format: FrameFormat(width: 4, height: 2, pixelFormat: .yuyv), buffer: buffer)
    }

    @Test func theRingHandsBackTheOldestWhenANewFrameArrives() {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: 16, alignment: 8)
        defer { storage.deallocate() }
        let returns = Locked<[UInt32]>([])
        var ring = FrameRing(capacity: 2)
        for sequence in 1...4 as ClosedRange<UInt32> {
            ring.append(lentFrame(sequence: sequence, storage: storage, returns: returns))
        }
        #expect(returns.withLock { $0 } == [1, 2])
        ring.removeAll()
        #expect(returns.withLock { $0 } == [1, 2, 3, 4])
    }

    @Test func aFrameTakenForAPhotoStaysOutUntilThePhotoIsDone() {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: 16, alignment: 8)
        defer { storage.deallocate() }
        let returns = Locked<[UInt32]>([])
        var ring = FrameRing(capacity: 2)
        ring.append(lentFrame(sequence: 1, storage: storage, returns: returns))
        var photo: Frame? = ring.frames.first   // the press's frame, handed to the encoder
        for sequence in 2...4 as ClosedRange<UInt32> {
            ring.append(lentFrame(sequence: sequence, storage: storage, returns: returns))
        }
        #expect(returns.withLock { $0 } == [2], "frame 1 is still being encoded")
        #expect(photo?.buffer.isLent == true && photo?.byteCount == 16)
        photo = nil
        #expect(returns.withLock { $0 } == [2, 1])
    }

    @Test func loweringTheCapacityHandsBackTheOldest() {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: 16, alignment: 8)
        defer { storage.deallocate() }
        let returns = Locked<[UInt32]>([])
        var ring = FrameRing(capacity: 4)
        for sequence in 1...4 as ClosedRange<UInt32> {
            ring.append(lentFrame(sequence: sequence, storage: storage, returns: returns))
        }
        ring.capacity = 1
        #expect(returns.withLock { $0 } == [1, 2, 3])
        #expect(ring.frames.map(\.sequence) == [4])
    }

    @Test func encodingReadsALentBufferInPlace() throws {
        // A YUYV frame in memory the test owns, as a driver's buffer would be: encoded without
        // first becoming an array.
        let source = solidFrame(.yuyv, width: 64, height: 48)
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: source.byteCount, alignment: 16)
        defer { storage.deallocate() }
        source.withUnsafeBytes { storage.copyMemory(from: $0) }
        let returned = Locked<Int>(0)
        var frame: Frame? = Frame(timestamp: .zero, sequence: 0, format: source.format,
                                  buffer: FrameBuffer(lending: UnsafeRawPointer(storage.baseAddress!), count: storage.count) {
                                      returned.withLock { $0 += 1 }
                                  })
        let lent = try JPEGEncoder().encode(frame!, quality: 90)
        let copied = try JPEGEncoder().encode(source, quality: 90)
        #expect(lent == copied)
        frame = nil
        #expect(returned.withLock { $0 } == 1)
    }
}
