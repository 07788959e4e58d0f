import Testing
@testable import ShutterCapture
import ShutterCore

@Suite("Synthetic camera scene")
struct SyntheticSceneTests {
    /// Frames the loop does not read for a while wait in a bounded queue, as a driver's filled
    /// buffers do: the oldest are kept, the rest dropped with their sequence numbers skipped.
    @Test func framesNotReadWaitInABoundedQueueAndTheRestAreDropped() throws {
        let camera = try SyntheticCamera(width: 64, height: 48, frameInterval: nil)
        try camera.start()
        for index in 0..<20 { camera.emit(at: Instant(rawValue: Int64(index + 1) * 33_000_000)) }
        let queued = try camera.readFrames()
        #expect(queued.map(\.sequence) == Array(0..<UInt32(SyntheticCamera.queueLimit)))
        #expect(queued.last?.timestamp == Instant(rawValue: Int64(SyntheticCamera.queueLimit) * 33_000_000))
        camera.emit(at: Instant(rawValue: 21 * 33_000_000))
        #expect(try camera.readFrames().map(\.sequence) == [20])
    }

    @Test("the label names the frame and its monotonic time to the microsecond")
    func label() {
        #expect(SyntheticScene.label(sequence: 42, seconds: 3806.6138671) == "#000042  3806.613867 s")
        #expect(SyntheticScene.label(sequence: 1_234_567, seconds: 5.000001) == "#1234567  5.000001 s")
    }

    @Test("a 320x240 frame has the band with its number burned in, line pairs and colour patches at the centre")
    func scene() throws {
        let camera = try SyntheticCamera(width: 320, height: 240, frameInterval: nil)
        try camera.start()
        camera.emit(at: .seconds(12.5))
        let frame = try #require(try camera.readFrames().first)
        func luma(_ x: Int, _ y: Int) -> UInt8 { frame.bytes[(y * 320 + x) * 2] }
        // The band: dark with bright dots where the glyphs are.
        let band = (0..<SyntheticScene.bandHeight(height: 240)).flatMap { y in (0..<320).map { luma($0, y) } }
        #expect(band.contains(235) && band.contains(16))
        #expect(Set(band).isSubset(of: [16, 235]))
        // The first glyph after '#' is the '0' of "#000000": its top row is " ### " at scale 2.
        let scale = SyntheticScene.textScale(height: 240)
        let zeroLeft = scale * 2 + 6 * scale
        #expect(luma(zeroLeft, scale * 2) == 16 && luma(zeroLeft + scale, scale * 2) == 235)
        // The chart box: 1-px vertical line pairs alternate bright and dark.
        let box = SyntheticScene.chartBox(width: 320, height: 240)
        #expect(luma(box.x, box.y + 2) == 235 && luma(box.x + 1, box.y + 2) == 16)
        // The first colour patch is red: V high, U low.
        let red = box.x + box.width / 2 + 6
        let pair = ((box.y + 4) * 320 + (red & ~1)) * 2
        #expect(frame.bytes[pair + 1] < 128 && frame.bytes[pair + 3] > 200)
    }

    @Test("exposure bias darkens the chart and the band's text as it does the bars")
    func exposure() throws {
        let camera = try SyntheticCamera(width: 320, height: 240, frameInterval: nil)
        try camera.start()
        try camera.setControl(ControlID.autoExposureBias, to: -1000)
        camera.emit(at: .seconds(1))
        let frame = try #require(try camera.readFrames().first)
        let box = SyntheticScene.chartBox(width: 320, height: 240)
        #expect(frame.bytes[((box.y + 2) * 320 + box.x) * 2] == 118)   // 235 / 2, rounded
        let band = (0..<SyntheticScene.bandHeight(height: 240)).map { frame.bytes[($0 * 320 + 20) * 2] }
        #expect(band.max()! <= 118)
    }

    @Test("small frames keep the bars alone")
    func smallFrames() {
        #expect(!SyntheticScene.applies(width: 320, height: 64))
        #expect(SyntheticScene.applies(width: 160, height: 120))
    }

    @Test("a label written into kept storage reads as a new one does, also after a longer one")
    func labelIntoKeptStorage() {
        var text = ""
        SyntheticScene.label(sequence: 1_234_567, seconds: 123_456.5, into: &text)
        #expect(text == "#1234567  123456.500000 s")
        SyntheticScene.label(sequence: 42, seconds: 3806.6138671, into: &text)
        #expect(text == SyntheticScene.label(sequence: 42, seconds: 3806.6138671))
    }

    @Test("frame memory is drawn into again only once no frame refers to it")
    func pooledFrames() throws {
        let camera = try SyntheticCamera(width: 320, height: 240, frameInterval: nil)
        try camera.start()
        camera.emit(at: .seconds(1))
        let held = try #require(try camera.readFrames().first)
        let heldBytes = held.bytes
        var buffers = Set<ObjectIdentifier>()
        var sequences: [UInt32] = []
        for second in 2...8 {
            camera.emit(at: .seconds(Double(second)))
            // One frame a read: an empty read would make every check below hold for nothing.
            let frames = try camera.readFrames()
            #expect(frames.count == 1, "read after emit \(second): \(frames.count) frames")
            for frame in frames {
                #expect(frame.buffer !== held.buffer, "frame \(frame.sequence) was drawn into a buffer a frame still holds")
                #expect(frame.bytes != heldBytes, "frame \(frame.sequence) shows what frame 0 shows")
                buffers.insert(ObjectIdentifier(frame.buffer))
                sequences.append(frame.sequence)
            }
        }
        #expect(sequences == Array(held.sequence + 1...held.sequence + 7), "the seven frames, in order")
        #expect(held.bytes == heldBytes, "the held frame was drawn over")
        // Seven frames, each let go before the next read but one: the memory is reused, not made anew.
        #expect(buffers.count <= 2, "\(buffers.count) buffers for 7 frames")
    }
}
