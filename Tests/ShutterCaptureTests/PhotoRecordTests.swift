import Foundation
import Testing
import ShutterCore
@testable import ShutterCapture
import ShutterTestSupport

private func ms(_ value: Double) -> Instant { Instant(rawValue: Int64(value * 1_000_000)) }

/// A synthetic camera whose frames carry the exposure a libcamera camera reports.
final class ExposingCamera: ForwardingCamera, @unchecked Sendable {
    static let exposure = FrameExposure(exposureTime: .microseconds(10_000), analogueGain: 4, lensPosition: 1.25, colourTemperature: 4100)

    override func readFrames(into frames: inout [Frame]) throws(CaptureError) {
        let first = frames.count
        try inner.readFrames(into: &frames)
        for index in first..<frames.count { frames[index].exposure = Self.exposure }
    }
}

/// The EXIF block of a JPEG file, by tag: its text and its bytes.
func exifOfFile(_ path: String) throws -> (text: [UInt16: String], data: [UInt16: [UInt8]]) {
    let jpeg = [UInt8](try #require(FileManager.default.contents(atPath: path)))
    let segment = try #require(JPEGMarkers.headerSegments(jpeg)?.first { $0.marker == 0xE1 })
    let payload = Array(jpeg[(segment.start + 4)..<segment.end])
    return (ExifWriter.read(payload), ExifWriter.readData(payload))
}

@Suite("CaptureService: what a photo records")
struct PhotoRecordTests {
    @Test("an unsynchronised clock: the photo still has its date, and the event says the clock was not synchronised")
    func unsynchronisedClock() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let service = try CaptureService(board: try simulatorBoard(directory: directory), factory: { (settings: CameraSettings) throws(CaptureError) -> any Camera in
            ExposingCamera(try SyntheticCamera(width: settings.width!, height: settings.height!, frameInterval: nil))
        }, clock: VirtualClock(start: ms(1000)))
        defer { service.shutdown() }
        service.clockIsSynchronized = { false }
        service.settle()
        let camera = try #require((service.currentCamera as? ExposingCamera)?.inner)
        camera.emit(at: ms(1000))
        camera.emit(at: ms(1033))
        service.handleReadable()
        service.capture(pressedAt: ms(1010), now: ms(1040))
        service.waitForWrites()
        let event = try #require(service.handleReadable().first { $0.photo != nil })
        #expect(event.json.description.contains(#""clockSynchronized": false"#))
        let (text, data) = try exifOfFile(try #require(event.photo).path)
        #expect(text[0x9003]?.count == 19)  // DateTimeOriginal "YYYY:MM:DD HH:MM:SS"
        #expect(text[0x9291]?.count == 3)   // SubSecTimeOriginal
        #expect(text[0x9286]?.contains("clock not synchronised") == true)
        // The frame's exposure, carried from the camera to the file.
        #expect(data[0x829A] == [0x10, 0x27, 0, 0, 0x40, 0x42, 0x0F, 0])  // ExposureTime 10000/1000000
        #expect(text[0x8827] == "400")                                    // ISO 100 × AnalogueGain 4
        #expect(data[0x9206] == [0x20, 0x03, 0, 0, 0xE8, 0x03, 0, 0])     // SubjectDistance 800/1000 m
        #expect(text[0x9286]?.contains("colour temperature 4100 K") == true)
    }

    @Test("a synchronised clock says so in the photo event")
    func synchronisedClock() {
        let photo = Photo(at: ms(2000), path: "/tmp/IMG_0001.jpg", shot: Shot(pressedAt: ms(1040)), frameAt: ms(1033), width: 64, height: 48,
                          bytes: 1000, frameSequence: 1, bracket: nil, encodeTime: .zero, writeTime: .zero)
        #expect(CaptureEvent.photo(photo).json.description.contains(#""clockSynchronized": true, "focus": "none""#))
    }
}
