/// Lines laid out for a terminal of a given width: a long line is broken at spaces, never
/// inside a word, so that the terminal itself never wraps it mid-word.
public enum TerminalText {
    /// `line` as lines of at most `width` columns, broken at runs of spaces (dropped at the
    /// break), each continuation indented by `indent` columns so it reads as part of the line
    /// above (an event's text under its text, past the time stamp).
    ///
    /// A word longer than a whole line (a long path) is broken where it must be. Escape
    /// sequences (inverse video) take no columns.
    public static func wrapped(_ line: String, width: Int, indent: Int) -> [String] {
        let indent = max(0, min(indent, width / 2))
        let width = max(width, indent + 8)
        var lines: [String] = []
        var current = "", used = 0
        var spaces = ""
        var placedWord = false
        func breakLine() {
            lines.append(current)
            current = String(repeating: " ", count: indent)
            used = indent
            placedWord = false
        }
        for token in tokens(of: line) {
            if token.isSpace {
                // The leading spaces of the first line are its layout (a right-aligned stamp).
                if lines.isEmpty && !placedWord { current += token.text; used += token.columns } else { spaces = token.text }
                continue
            }
            if placedWord && used + spaces.count + token.columns > width { breakLine(); spaces = "" }
            current += spaces
            used += spaces.count
            spaces = ""
            var word = Substring(token.text), columns = token.columns
            // Longer than what is left of an empty line: as much as fits, then the rest below.
            while used + columns > width {
                let (head, headColumns) = prefix(of: word, columns: width - used)
                guard !head.isEmpty else { break }
                current += head
                word = word.dropFirst(head.count)
                columns -= headColumns
                placedWord = true
                breakLine()
            }
            current += word
            used += columns
            placedWord = true
        }
        lines.append(current)
        return lines
    }

    /// The columns `text` takes on a terminal: its characters, less escape sequences.
    public static func columns(of text: Substring) -> Int {
        var count = 0, inEscape = false, afterEscape = false
        for character in text {
            if afterEscape {
                afterEscape = false
                inEscape = character == "["
                continue
            }
            if inEscape {
                // A control sequence ends at its final byte, 0x40-0x7E.
                if let ascii = character.asciiValue, (0x40...0x7E).contains(ascii) { inEscape = false }
                continue
            }
            if character == "\u{1B}" { afterEscape = true; continue }
            count += 1
        }
        return count
    }

    private struct Token {
        var text: String
        var columns: Int
        var isSpace: Bool
    }

    /// `line` as runs of spaces and of other characters.
    private static func tokens(of line: String) -> [Token] {
        var tokens: [Token] = []
        var index = line.startIndex
        while index < line.endIndex {
            let isSpace = line[index] == " "
            var end = index
            while end < line.endIndex, (line[end] == " ") == isSpace { end = line.index(after: end) }
            let text = line[index..<end]
            tokens.append(Token(text: String(text), columns: isSpace ? text.count : columns(of: text), isSpace: isSpace))
            index = end
        }
        return tokens
    }

    /// The longest head of `word` that takes at most `columns` columns, and the columns it takes.
    private static func prefix(of word: Substring, columns: Int) -> (Substring, Int) {
        var end = word.startIndex, taken = 0
        while end < word.endIndex {
            let next = word.index(after: end)
            let width = self.columns(of: word[end..<next])
            if taken + width > columns { break }
            taken += width
            end = next
        }
        return (word[..<end], taken)
    }
}
