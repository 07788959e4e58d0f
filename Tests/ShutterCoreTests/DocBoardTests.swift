import Foundation
import Testing
@testable import ShutterCore

/// One ```json block of a document, where it starts.
struct DocBlock: Sendable, CustomTestStringConvertible {
    /// The document, from the repository's root.
    var file: String
    /// The line of the opening fence.
    var line: Int
    var text: String

    var testDescription: String { "\(file):\(line)" }
}

/// The documentation's board examples, read out of the Markdown.
enum DocBlocks {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../..").standardizedFileURL

    /// The documents whose examples a reader copies into a board file.
    static var documents: [String] {
        let docs = (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Docs").path)) ?? []
        return ["README.md", "Boards/README.md", "Deploy/CAMERAS.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "Docs/\($0)" }
    }

    /// The fenced blocks of `file` whose info string is `info` (`""`: no info string).
    static func blocks(in file: String, info: String) -> [DocBlock] {
        guard let text = try? String(contentsOf: root.appendingPathComponent(file), encoding: .utf8) else { return [] }
        var found: [DocBlock] = []
        var open: (info: String, line: Int, lines: [String])?
        for (index, line) in text.components(separatedBy: "\n").enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if var block = open {
                if trimmed == "```" {
                    if block.info == info { found.append(DocBlock(file: file, line: block.line, text: block.lines.joined(separator: "\n"))) }
                    open = nil
                } else {
                    block.lines.append(line)
                    open = block
                }
            } else if trimmed.hasPrefix("```") {
                open = (String(trimmed.dropFirst(3)).trimmingCharacters(in: .whitespaces), index + 1, [])
            }
        }
        return found
    }

    /// Every ```json block of every document: each is a board or a fragment of one.
    static var json: [DocBlock] { documents.flatMap { blocks(in: $0, info: "json") } }

    /// Where a fragment goes: a board with the lines every example assumes (the simulator's),
    /// and nothing a fragment may give (camera, controls, gestures, output, mqtt, http, hooks).
    static let base = """
        "name": "doc-example", "chip": "simulator",
        "lines": [{"name": "half", "role": "half"}, {"name": "full", "role": "full"}, {"name": "secondary", "role": "secondary"},
                  {"name": "pad0", "role": "pad"}, {"name": "pad1", "role": "pad"}, {"name": "pad2", "role": "pad"},
                  {"name": "pad3", "role": "pad"}, {"name": "pad4", "role": "pad"}, {"name": "pad5", "role": "pad"}]
        """

    /// The board a block stands for: a whole board as it is (it starts with `{`), a fragment (its
    /// members, `"camera": {…}`) added to ``base``. A fragment that gives a member of the base is
    /// refused by the parser as a member given twice: such an example should be a whole board.
    static func board(_ block: DocBlock) -> String {
        let text = block.text.trimmingCharacters(in: .whitespacesAndNewlines)
        return text.hasPrefix("{") ? text : "{\(base),\n\(text)\n}"
    }
}

@Suite("Boards in the documentation")
struct DocBoardTests {
    /// A reader copies these into a board file: each must be one the daemon takes, as written.
    @Test("every ```json block of the documentation is a valid board or board fragment", arguments: DocBlocks.json)
    func blockIsAValidBoard(block: DocBlock) {
        do {
            _ = try Board.decode(Data(DocBlocks.board(block).utf8), file: "\(block.file):\(block.line)")
        } catch {
            Issue.record("\(error)")
        }
    }

    /// The examples are found at all: an extractor that finds nothing would pass every block.
    @Test("the documentation's board examples are found")
    func examplesAreFound() {
        let blocks = DocBlocks.json
        #expect(blocks.filter { $0.file == "Deploy/CAMERAS.md" }.count >= 4)
        #expect(blocks.filter { $0.file == "Boards/README.md" }.count >= 1)
        #expect(blocks.filter { $0.file == "README.md" }.count >= 1)
    }

    /// A board fragment in a fence without `json` would never be checked: each is labelled.
    @Test("no board fragment is left in an unlabelled block", arguments: DocBlocks.documents)
    func fragmentsAreLabelled(document: String) {
        for block in DocBlocks.blocks(in: document, info: "") {
            let text = block.text.trimmingCharacters(in: .whitespacesAndNewlines)
            let looksLikeMembers = text.hasPrefix("\"") && text.contains("\":")
            #expect(!looksLikeMembers, "\(block.file):\(block.line): a board fragment: open it with ```json so it is checked")
        }
    }
}
