import Testing
@testable import ShutterCapture
import ShutterCore
@testable import ShutterNode
@testable import ShutterService

/// The events as `shutter run` tells them in a terminal: in words, stamped as `monitor`
/// stamps its lines, a photo as a flash line.
@Suite("Terminal overlay: events in words")
struct TerminalOverlayTests {
    private static func at(_ milliseconds: Int64) -> Instant { Instant(rawValue: milliseconds * 1_000_000) }

    @Test func aPhotoIsAFlashLineNamingItsFile() {
        let photo = Photo(at: Self.at(2000), path: "photos/IMG_0001.jpg", shot: Shot(pressedAt: Self.at(1040)), frameAt: Self.at(1033),
                          width: 1280, height: 720, bytes: 126_976, frameSequence: 1, bracket: nil,
                          encodeTime: .zero, writeTime: .zero)
        let text = TerminalOverlay.text(of: ServiceEvent(.capture(.photo(photo), request: nil)), since: Self.at(500))
        #expect(text == "    1.500 s  \u{1B}[7m ◉ PHOTO \u{1B}[0m photos/IMG_0001.jpg (1280×720, 124 kB, frame -7 ms from the press)")
    }

    @Test(arguments: [
        (ShutterEvent.lightPress(source: .half, pressedAt: .zero, releasedAt: .zero, at: .zero), "light press (half)"),
        (.controlsInactive(reason: .idle, at: .zero), "controls hidden (idle)"),
        (.capture(phase: .began, action: .primary, pressedAt: .zero, releasedAt: nil, photo: true, reason: nil, at: .zero),
         "capture began (primary): photo"),
        (.capture(phase: .cancelled, action: .primary, pressedAt: .zero, releasedAt: nil, photo: false, reason: .edgesLost, at: .zero),
         "capture cancelled (primary), edgesLost"),
        (.burst(phase: .ended, pressedAt: .zero, shot: 12, at: .zero), "burst ended after 12 shots"),
        (.swipe(phase: .ended, position: 0.394, delta: 0, velocity: 20, flick: true, at: .zero), "swipe ended at 39 %, a flick"),
        (.lineStuck(line: "pad3", at: .zero), "line pad3 stuck: ignored until it releases"),
    ])
    func aGestureEventInWords(event: ShutterEvent, words: String) {
        #expect(TerminalOverlay.text(of: ServiceEvent(.gesture(event)), since: .zero) == "    0.000 s  " + words)
    }

    @Test func aLostEdgeCountSaysWhatHappened() {
        let event = ServiceEvent(.edgesLost(count: 3, resynchronised: true, at: Self.at(12_345)))
        #expect(TerminalOverlay.text(of: event, since: .zero) == "   12.345 s  3 edges lost (the kernel's queue overflowed); lines read again")
    }
}
