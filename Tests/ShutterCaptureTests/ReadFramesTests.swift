import Foundation
import Testing
import ShutterCore
@testable import ShutterCapture
@testable import ShutterSystem

extension Camera {
    /// The frames ready now, in an array of their own: the old shape of the read, for tests that
    /// look at one batch. The capture path keeps one array and reads with `readFrames(into:)`.
    func readFrames() throws(CaptureError) -> [Frame] {
        var frames: [Frame] = []
        try readFrames(into: &frames)
        return frames
    }
}

private func ms(_ value: Double) -> Instant { Instant(rawValue: Int64(value * 1_000_000)) }

private func frame(_ sequence: UInt32) -> Frame {
    Frame(timestamp: Instant(rawValue: Int64(sequence) * 33_000_000), sequence: sequence,
          format: FrameFormat(width: 2, height: 1, pixelFormat: .grey), bytes: [0, 0])
}

@Suite("appendAllOrNone: a read appends all of its frames or none")
struct AppendAllOrNoneTests {
    @Test func aBodyThatThrowsHalfwayLeavesTheArrayAsItWas() {
        var frames = [frame(7)]
        #expect(throws: CaptureError.deviceVanished(device: "/dev/video0")) {
            try frames.appendAllOrNone { (appended: inout [Frame]) throws(CaptureError) in
                appended.append(frame(8))
                appended.append(frame(9))
                throw CaptureError.deviceVanished(device: "/dev/video0")
            }
        }
        #expect(frames.map(\.sequence) == [7])
    }

    @Test func aBodyThatReturnsKeepsWhatItAppendedAfterWhatWasThere() {
        var frames = [frame(7)]
        frames.appendAllOrNone { (appended: inout [Frame]) in
            appended.append(frame(8))
            appended.append(frame(9))
        }
        #expect(frames.map(\.sequence) == [7, 8, 9])
    }
}

@Suite("readFrames(into:) appends to the caller's array")
struct ReadFramesIntoTests {
    @Test func libcameraAppendsOldestFirstAfterTheFramesAlreadyThere() throws {
        let camera = try LibcameraCamera(fake: FakeLibcameraScript())
        defer { camera.close() }
        try camera.start()
        #expect(camera.deliverFakeFrame(at: ms(1000)))
        #expect(camera.deliverFakeFrame(at: ms(1033)))
        var frames = [frame(99)]
        try camera.readFrames(into: &frames)
        #expect(frames.map(\.sequence) == [99, 0, 1])
        #expect(frames.dropFirst().map(\.timestamp) == [ms(1000), ms(1033)])
    }

    @Test func theSyntheticCameraAppendsAndAppendsNothingWhenTheReadFails() throws {
        let camera = try SyntheticCamera(width: 64, height: 48, frameInterval: nil)
        defer { camera.close() }
        try camera.start()
        camera.emit(at: ms(1000))
        camera.emit(at: ms(1033))
        var frames = [frame(99)]
        try camera.readFrames(into: &frames)
        #expect(frames.map(\.timestamp) == [frame(99).timestamp, ms(1000), ms(1033)])
        camera.emit(at: ms(1066))
        camera.failNextRead(with: .deviceVanished(device: "synthetic"))
        #expect(throws: CaptureError.self) { try camera.readFrames(into: &frames) }
        #expect(frames.count == 3)
    }

    /// AfState is kept in slots by sequence: a frame's state is read back while it is recent, and
    /// a frame older than the slots reads as unknown, not as the newer frame in its slot.
    @Test func focusStateIsKeptForRecentFramesOnly() throws {
        var script = FakeLibcameraScript()
        script.autofocusScanFrames = 1000
        let camera = try LibcameraCamera(fake: script)
        defer { camera.close() }
        try camera.start()
        try camera.triggerAutofocus()
        var frames: [Frame] = []
        var time = 1000.0
        while frames.count < LibcameraCamera.focusSlots + 2 {
            while camera.deliverFakeFrame(at: ms(time)) { time += 33 }
            var batch: [Frame] = []
            try camera.readFrames(into: &batch)
            frames.append(contentsOf: batch.map { Frame(timestamp: $0.timestamp, sequence: $0.sequence, format: $0.format, bytes: []) })
        }
        let newest = try #require(frames.last?.sequence)
        #expect(camera.focusState(ofFrame: newest) != nil)
        #expect(camera.focusState(ofFrame: newest - UInt32(LibcameraCamera.focusSlots)) == nil)
    }
}

@Suite("The synthetic camera's timer frames")
struct SyntheticCameraTimerTests {
    /// A sensor stamps each frame with its start on a fixed period, however late the frame is
    /// read; a late timer firing drops a frame (its sequence number skipped) but never stretches
    /// the spacing, or a press near a frame's end finds no frame within one interval of it.
    @Test func framesAreStampedOnTheSensorsPeriodAndASkippedSlotSkipsASequenceNumber() throws {
        let interval = Nanoseconds.milliseconds(5)
        let camera = try SyntheticCamera(width: 64, height: 48, frameInterval: interval)
        defer { camera.close() }
        try camera.start()
        var frames: [Frame] = []
        let deadline = monotonicNow() + .seconds(5)
        while frames.count < 24, monotonicNow() < deadline {
            usleep(7_000)  // slower than the frames at times, so some reads find several
            try camera.readFrames(into: &frames)
        }
        #expect(frames.count >= 24)
        for (earlier, later) in zip(frames, frames.dropFirst()) {
            let gap = later.timestamp.rawValue - earlier.timestamp.rawValue
            let slots = Int64(later.sequence &- earlier.sequence)
            #expect(slots >= 1 && gap == slots * interval.rawValue,
                    "frames \(earlier.sequence) and \(later.sequence) are \(gap) ns apart")
        }
    }

    /// A loop that reads late finds the oldest ``SyntheticCamera/queueLimit`` frames and a gap,
    /// as a driver with that many buffers leaves them; the frame clock, polled as a device's
    /// descriptor, is readable once the next frame is due and quiet after a read.
    @Test func aLateReaderFindsTheOldestFramesAndAGapAndTheClockSaysWhenTheNextIsDue() throws {
        let interval = Nanoseconds.milliseconds(4)
        let camera = try SyntheticCamera(width: 64, height: 48, frameInterval: interval)
        defer { camera.close() }
        #expect(camera.pollDescriptor == nil)
        try camera.start()
        let clock = try #require(camera.pollDescriptor)
        usleep(100_000)  // some 25 frames' slots
        var frames: [Frame] = []
        try camera.readFrames(into: &frames)
        #expect(frames.count == SyntheticCamera.queueLimit)
        #expect(frames.map(\.sequence) == (0..<UInt32(SyntheticCamera.queueLimit)).map { $0 })
        var entry = pollfd(fd: clock, events: Int16(POLLIN), revents: 0)
        #expect(poll(&entry, 1, 0) == 0, "read: quiet until the next frame")
        #expect(poll(&entry, 1, 1000) == 1, "the next frame's slot makes it readable")
        var next: [Frame] = []
        try camera.readFrames(into: &next)
        let first = try #require(next.first)
        let last = try #require(frames.last)
        #expect(first.sequence > last.sequence + 1, "the frames nobody had room for are a gap")
        let slots = Int64(first.sequence - last.sequence)
        #expect(first.timestamp.rawValue - last.timestamp.rawValue == slots * interval.rawValue)
        camera.stop()
        #expect(camera.pollDescriptor == nil)
    }
}
