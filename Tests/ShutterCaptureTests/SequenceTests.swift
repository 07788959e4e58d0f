import Foundation
import Testing
import ShutterCore
@testable import ShutterCapture

private func ms(_ value: Double) -> Instant { Instant(rawValue: Int64(value * 1_000_000)) }

@Suite("FileNameTemplate: {seq} continues after the photos already there")
struct SequenceTests {
    /// A rig restarted (a reload, a power cut) must not start again at 0001: names would no longer
    /// sort in the order the photos were taken, and with a template of `{seq}` alone the next
    /// photo would get a `-2` variant of an old one's name.
    @Test("a service continues after the highest {seq} in its output directory")
    func serviceContinues() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for name in ["IMG_20260314_150926_042_0007.jpg", "IMG_20260314_150927_500_0012-2.jpg", "IMG_20260314_150926_042_0003.jpg",
                     "IMG_x_0099.jpg", "holiday.jpg", "IMG_20260314_150926_042_0500.png"] {
            try makeFile(directory + "/" + name, Data([0]))
        }
        let service = try CaptureService(board: try simulatorBoard(directory: directory), factory: { (settings: CameraSettings) throws(CaptureError) -> any Camera in
            try SyntheticCamera(width: settings.width!, height: settings.height!, frameInterval: nil)
        }, clock: VirtualClock(start: ms(1000)))
        defer { service.shutdown() }
        service.settle()
        let camera = try #require(service.currentCamera as? SyntheticCamera)
        camera.emit(at: ms(1000))
        camera.emit(at: ms(1033))
        service.handleReadable()
        service.capture(pressedAt: ms(1010), now: ms(1040))
        service.waitForWrites()
        let photo = try #require(service.handleReadable().compactMap(\.photo).first)
        #expect(photo.path.hasSuffix("_0013.jpg"), "\(photo.path)")
    }

    @Test("a name is read back against its template", arguments: [
        ("IMG_%Y%m%d_%H%M%S_{ms}_{seq}.jpg", "IMG_20260314_150926_042_0007.jpg", 7 as Int?),
        ("IMG_%Y%m%d_%H%M%S_{ms}_{seq}.jpg", "IMG_20260314_150926_042_12345.jpg", 12345),  // past 9999 the number grows
        ("IMG_%Y%m%d_%H%M%S_{ms}_{seq}.jpg", "IMG_20260314_150926_042_0012-2.jpg", 12),    // PhotoWriter's variant
        ("IMG_%Y%m%d_%H%M%S_{ms}_{seq}.jpg", "IMG_2026031_150926_042_0007.jpg", nil),      // a digit short
        ("IMG_%Y%m%d_%H%M%S_{ms}_{seq}.jpg", "IMG_20260314_150926_042_007.jpg", nil),      // {seq} has at least 4 digits
        ("IMG_%Y%m%d_%H%M%S_{ms}_{seq}.jpg", "latest.jpg", nil),
        ("IMG_%Y%m%d_%H%M%S_{ms}_{seq}.jpg", ".shutter-tmp-12-34.jpg", nil),
        ("scan_{seq}.jpg", "scan_0042.jpg", 42),
        ("scan_{seq}.jpg", "scan_0042.jpeg", nil),
        ("%S{seq}.jpg", "0500012.jpg", 12),  // %S is two digits: 05, then 00012
        ("%D_{seq}.jpg", "03-14-26_0003.jpg", 3),           // %D's slashes are written as '-'
        ("%b-%d {seq}.jpg", "Mar-14 0009.jpg", 9),            // a month's name is any text
        ("100%% {seq}.jpg", "100% 0002.jpg", 2),
        ("photo.jpg", "photo.jpg", nil),                      // no {seq}: nothing to continue
    ])
    func parse(template: String, name: String, expected: Int?) {
        #expect(FileNameTemplate(template).sequence(in: name) == expected)
    }

    @Test("a name the template makes reads back as its number", arguments: [1, 9, 42, 9999, 10_000, 123_456])
    func roundTrip(sequence: Int) {
        let template = FileNameTemplate("IMG_%Y%m%d_%H%M%S_{ms}_{seq}.jpg")
        let name = template.name(at: WallTime(seconds: 1_773_500_966, milliseconds: 42), sequence: sequence, utc: true)
        #expect(template.sequence(in: name) == sequence)
    }

    @Test("the highest number among a directory's names, 0 for none")
    func highest() {
        let template = FileNameTemplate("scan_{seq}.jpg")
        #expect(template.highestSequence(among: ["scan_0002.jpg", "scan_0010.jpg", "scan_0009-3.jpg", "notes.txt"]) == 10)
        #expect(template.highestSequence(among: ["latest.jpg"]) == 0)
        #expect(template.highestSequence(among: []) == 0)
    }
}
