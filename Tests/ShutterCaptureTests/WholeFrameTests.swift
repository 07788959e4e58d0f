import Testing
import ShutterCore
@testable import ShutterCapture

/// Which dequeued V4L2 frames may go into the ring: a damaged one never becomes a photo.
@Suite("Whole V4L2 frames")
struct WholeFrameTests {
    /// `V4L2_BUF_FLAG_ERROR` and `V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC` (linux/videodev2.h).
    static let errorFlag: UInt32 = 0x0000_0040
    static let monotonic: UInt32 = 0x0000_2000

    static let yuyv = FrameFormat(width: 16, height: 8, pixelFormat: .yuyv)
    static let mjpeg = FrameFormat(width: 16, height: 8, pixelFormat: .mjpeg)

    func isWhole(_ bytes: [UInt8], flags: UInt32 = monotonic, format: FrameFormat = yuyv) -> Bool {
        bytes.withUnsafeBytes { isWholeFrame(flags: flags, bytes: $0, format: format) }
    }

    @Test func anUncompressedFrameOfItsFullSizeIsWhole() {
        #expect(isWhole([UInt8](repeating: 16, count: 16 * 8 * 2)))
    }

    @Test func aFrameTheDriverFlagsAsDamagedIsDropped() {
        #expect(!isWhole([UInt8](repeating: 16, count: 16 * 8 * 2), flags: Self.monotonic | Self.errorFlag))
    }

    @Test func anUncompressedFrameShortOfItsSizeIsDropped() {
        #expect(!isWhole([UInt8](repeating: 16, count: 16 * 8 * 2 - 1)))
        #expect(!isWhole([]))
    }

    @Test func aJPEGCutBeforeItsEndIsDroppedAndAPaddedOneKept() throws {
        let encoder = try JPEGEncoder()
        let frame = Frame(timestamp: .zero, sequence: 0, format: Self.yuyv, bytes: [UInt8](repeating: 128, count: 16 * 8 * 2))
        let jpeg = try encoder.encode(frame, quality: 80)
        #expect(isWhole(jpeg, format: Self.mjpeg))
        // Webcams pad their buffers after the EOI.
        #expect(isWhole(jpeg + [0, 0, 0, 0], format: Self.mjpeg))
        #expect(!isWhole(Array(jpeg.dropLast(10)), format: Self.mjpeg))
        #expect(!isWhole(jpeg, flags: Self.monotonic | Self.errorFlag, format: Self.mjpeg))
    }
}
