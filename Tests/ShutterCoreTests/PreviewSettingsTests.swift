import Foundation
import Testing
@testable import ShutterCore

private func board(preview: String?) -> String {
    let section = preview.map { #", "preview": \#($0)"# } ?? ""
    return #"{"name": "test", "chip": "simulator", "lines": [{"name": "full", "role": "full"}]\#(section)}"#
}

@Suite("Board preview section")
struct PreviewSettingsTests {
    @Test func defaultsWithoutTheSection() throws {
        let parsed = try Board.decode(Data(board(preview: nil).utf8), file: "rig.json")
        #expect(parsed.preview == PreviewSettings(width: 640, quality: 70, fps: 15))
        #expect(parsed.preview.interval == Nanoseconds(rawValue: 66_666_666))
    }

    @Test func readsEveryField() throws {
        let parsed = try Board.decode(Data(board(preview: #"{"width": 480, "quality": 55, "fps": 30}"#).utf8), file: "rig.json")
        #expect(parsed.preview == PreviewSettings(width: 480, quality: 55, fps: 30))
    }

    @Test(arguments: [
        (#"{"width": 8}"#, "preview.width"), (#"{"width": 5000}"#, "preview.width"),
        (#"{"quality": 0}"#, "preview.quality"), (#"{"quality": 101}"#, "preview.quality"),
        (#"{"fps": 0}"#, "preview.fps"), (#"{"fps": 61}"#, "preview.fps"),
        (#"{"fps": "fast"}"#, "preview.fps"), (#"{"height": 480}"#, "preview.height"),
        (#"{"maxWidth": 8}"#, "preview.maxWidth"), (#"{"maxWidth": 5000}"#, "preview.maxWidth"),
    ])
    func refusesBadValuesNamingTheField(section: String, field: String) {
        #expect {
            _ = try Board.decode(Data(board(preview: section).utf8), file: "rig.json")
        } throws: { error in
            guard let error = error as? BoardError else { return false }
            return error.path == field && error.file == "rig.json"
        }
    }

    @Test func readsTheViewersBound() throws {
        let parsed = try Board.decode(Data(board(preview: #"{"maxWidth": 960}"#).utf8), file: "rig.json")
        #expect(parsed.preview.maxWidth == 960)
        #expect(PreviewSettings().maxWidth == 1280)
    }

    /// A viewer's width snaps up to one of a few widths, never past the bound (or the board's
    /// own width, when that is wider): many viewers share one preview size.
    @Test(arguments: [
        (1, 640, 1280, 320), (320, 640, 1280, 320), (321, 640, 1280, 480), (390, 640, 1280, 480),
        (1170, 640, 1280, 1280), (2340, 640, 1280, 1280), (1_000_000, 640, 1280, 1280),
        (2340, 640, 1920, 1920), (700, 640, 800, 800), (1400, 1500, 1280, 1500), (1000, 1500, 1280, 1280), (3000, 640, 4096, 3840),
    ])
    func aViewersWidthSnapsWithinTheBound(asked: Int, width: Int, maxWidth: Int, made: Int) {
        #expect(PreviewSettings(width: width, maxWidth: maxWidth).viewerWidth(asking: asked) == made)
    }
}
