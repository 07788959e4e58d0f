import Testing
@testable import ShutterCore

/// Lines broken for a terminal's width: at spaces, never inside a word, continuations indented.
@Suite("Terminal text")
struct TerminalTextTests {
    /// The words of `lines` joined again, for comparing with the line they came from.
    func words(_ lines: [String]) -> [Substring] { lines.joined(separator: " ").split(separator: " ") }

    @Test func aLineThatFitsIsLeftAsItIs() {
        let line = "    4.387 s  controls shown: Zoom 1.0×"
        #expect(TerminalText.wrapped(line, width: 99, indent: 13) == [line])
    }

    @Test func anEventLineBreaksAtASpaceWithItsContinuationUnderItsText() {
        let line = "    0.047 s  cameraReady  device synthetic  card shutter synthetic camera  width 1280  height 720  pixelFormat YUYV  fps 30"
        let lines = TerminalText.wrapped(line, width: 99, indent: 13)
        #expect(lines == [
            "    0.047 s  cameraReady  device synthetic  card shutter synthetic camera  width 1280  height 720",
            "             pixelFormat YUYV  fps 30",
        ])
        #expect(words(lines) == line.split(separator: " "))
    }

    @Test func escapeSequencesTakeNoColumns() {
        let line = "    7.624 s  \u{1B}[7m ◉ PHOTO \u{1B}[0m /tmp/simt/photos/IMG_20261207_230914_490_0001.jpg (1280×720, 76 kB, frame -32.1 ms from the press)"
        #expect(TerminalText.columns(of: Substring(line)) == line.count - "\u{1B}[7m\u{1B}[0m".count)
        let lines = TerminalText.wrapped(line, width: 99, indent: 13)
        #expect(lines.count == 2)
        #expect(lines[1] == "             -32.1 ms from the press)")
        #expect(lines.allSatisfy { TerminalText.columns(of: Substring($0)) <= 99 })
    }

    @Test func theKeyListBreaksBetweenWordsAtEveryWidth() {
        let line = "shutter simulator, board simulator. Keys: l / space: light press (half press) · d: double light press (chooser) · f / enter: full click (photo) · b: hold for a burst · ← / ,: one step left (a finger to the next pad) · → / .: one step right · s: secondary button · q: quit"
        for width in [40, 79, 99, 119] {
            let lines = TerminalText.wrapped(line, width: width, indent: 2)
            #expect(lines.count > 1)
            #expect(lines.allSatisfy { $0.count <= width }, "width \(width)")
            #expect(lines.dropFirst().allSatisfy { $0.hasPrefix("  ") && !$0.hasPrefix("   ") }, "width \(width)")
            #expect(words(lines) == line.split(separator: " "), "width \(width): a word was cut")
        }
    }

    @Test func aWordLongerThanALineIsCutWhereItMust() {
        let path = "/" + String(repeating: "a", count: 50)
        let lines = TerminalText.wrapped("last \(path)", width: 30, indent: 2)
        #expect(lines.allSatisfy { $0.count <= 30 })
        #expect(lines.first == "last")
        #expect(lines.dropFirst().map { $0.dropFirst(2) }.joined() == path)
    }
}
