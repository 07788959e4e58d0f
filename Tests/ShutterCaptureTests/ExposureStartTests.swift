import CV4L2
import Testing
import ShutterCore
@testable import ShutterCapture

private func ms(_ value: Double) -> Instant { Instant(rawValue: Int64(value * 1_000_000)) }

/// A V4L2 buffer's flags: its timestamp type and timestamp source.
private func flags(_ type: Int32, source: Int32) -> UInt32 { UInt32(type) | UInt32(source) }

@Suite("exposureStart: a V4L2 buffer's timestamp as the start of its exposure")
struct ExposureStartTests {
    let interval = Nanoseconds.milliseconds(33)

    @Test func aStartOfExposureStampIsTakenAsItIs() {
        let start = exposureStart(stamped: ms(1000), flags: flags(V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC, source: V4L2_BUF_FLAG_TSTAMP_SRC_SOE),
                                  interval: interval, dequeuedAt: ms(1050))
        #expect(start == ms(1000))
    }

    @Test func anEndOfFrameStampIsMovedBackOneFrameInterval() {
        let start = exposureStart(stamped: ms(1000), flags: flags(V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC, source: V4L2_BUF_FLAG_TSTAMP_SRC_EOF),
                                  interval: interval, dequeuedAt: ms(1050))
        #expect(start == ms(967))
    }

    @Test func anEndOfFrameStampWithoutAKnownIntervalStaysWhereItIs() {
        let start = exposureStart(stamped: ms(1000), flags: flags(V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC, source: V4L2_BUF_FLAG_TSTAMP_SRC_EOF),
                                  interval: nil, dequeuedAt: ms(1050))
        #expect(start == ms(1000))
    }

    /// A stamp on another clock (copied from an output buffer, or of unknown kind) cannot be
    /// compared with GPIO edges whatever its source says: the dequeue time stands in for the end of
    /// the frame and is moved back one frame interval.
    @Test(arguments: [
        (V4L2_BUF_FLAG_TIMESTAMP_COPY, V4L2_BUF_FLAG_TSTAMP_SRC_SOE), (V4L2_BUF_FLAG_TIMESTAMP_COPY, V4L2_BUF_FLAG_TSTAMP_SRC_EOF),
        (V4L2_BUF_FLAG_TIMESTAMP_UNKNOWN, V4L2_BUF_FLAG_TSTAMP_SRC_SOE), (V4L2_BUF_FLAG_TIMESTAMP_UNKNOWN, V4L2_BUF_FLAG_TSTAMP_SRC_EOF),
    ])
    func aStampNotOnTheMonotonicClockFallsBackToTheDequeueTime(type: Int32, source: Int32) {
        let start = exposureStart(stamped: ms(5_000_000), flags: flags(type, source: source), interval: interval, dequeuedAt: ms(1050))
        #expect(start == ms(1017))
    }

    @Test func aMonotonicStampOfZeroFallsBackToTheDequeueTime() {
        let start = exposureStart(stamped: .zero, flags: flags(V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC, source: V4L2_BUF_FLAG_TSTAMP_SRC_SOE),
                                  interval: interval, dequeuedAt: ms(1050))
        #expect(start == ms(1017))
    }
}
