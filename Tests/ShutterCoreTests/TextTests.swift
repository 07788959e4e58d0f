import Foundation
import Testing
@testable import ShutterCore

/// The string helpers that stand in for full Foundation's (which the daemon no longer links)
/// give what Foundation gives: the tests still import it, so they compare against it directly.
@Suite("Text")
struct TextTests {
    static let samples = ["", " ", "\t", "a", " a ", "\ta b\t", "\u{00A0}x\u{3000}", " \n x \n ", "\r\n", "  zoom  ",
                          "é ", " 😀 ", "a\u{2003}", "\u{200B}a"]

    @Test(arguments: samples)
    func trimmingWhitespaceIsFoundations(text: String) {
        #expect(text.trimmingWhitespace() == text.trimmingCharacters(in: .whitespaces))
        #expect(text.dropFirst(0).trimmingWhitespace() == text.trimmingCharacters(in: .whitespaces))
    }

    @Test func spaceOrTabIsFoundationsWhitespaces() {
        let differing = (0...0x10FFFF).compactMap(Unicode.Scalar.init).filter { $0.isSpaceOrTab != CharacterSet.whitespaces.contains($0) }
        #expect(differing.isEmpty, "\(differing.map { String($0.value, radix: 16) })")
    }

    @Test(arguments: [("a\nb\n", "\n", " "), ("a\r\nb", "\n", " "), ("{shot}-{node}-{shot}", "{shot}", "s1"),
                      ("aaa", "aa", "b"), ("abc", "", "x"), ("", "a", "b"), ("héllo", "é", "e"), ("x", "xy", "z")])
    func replacingEveryIsFoundations(text: String, target: String, replacement: String) {
        #expect(text.replacingEvery(target, with: replacement) == text.replacingOccurrences(of: target, with: replacement))
    }

    // Single-component relative paths ("a") are left out of the comparison: Foundation 6.3's
    // NSString traps on them; NSString's documented answer is the empty string, as here.
    @Test(arguments: ["", "/", "/a", "a/b", "a/b/", "/a/b//", "/a//b/c", "//a", "./x", "../x", "x.json",
                      "/usr/local/bin/shutter", ".build/release/shutter"])
    func parentPathIsNSStrings(path: String) {
        #expect(path.parentPath == (path as NSString).deletingLastPathComponent)
    }

    @Test func parentPathOfOneComponent() {
        #expect("a".parentPath == "")
        #expect("a/".parentPath == "")
        #expect("//".parentPath == "/")
    }
}
