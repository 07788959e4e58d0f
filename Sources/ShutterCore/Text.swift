// The few string operations the daemon took from Foundation, which FoundationEssentials leaves
// out (full Foundation maps about 6 MiB of libraries, ICU's among them, into every process).

extension StringProtocol {
    /// The text without the spaces and tabs at either end: what Foundation's
    /// `trimmingCharacters(in: .whitespaces)` returns.
    func trimmingWhitespace() -> String {
        let scalars = Substring(self).unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.isSpaceOrTab }),
              let last = scalars.lastIndex(where: { !$0.isSpaceOrTab })
        else { return "" }
        return String(scalars[first...last])
    }
}

extension Unicode.Scalar {
    /// Foundation's `.whitespaces`: the tab, Unicode's space separators (category Zs: U+0020,
    /// U+00A0, U+3000, ...) and the zero width space U+200B.
    var isSpaceOrTab: Bool { self == "\t" || self == "\u{200B}" || properties.generalCategory == .spaceSeparator }
}

extension String {
    /// Every occurrence of `target` replaced by `replacement`, left to right, as Foundation's
    /// `replacingOccurrences(of:with:)` does: a literal match of the bytes, without Unicode's
    /// equivalence (so the `\n` of a `\r\n`, one `Character`, is found). An empty `target`
    /// changes nothing.
    public func replacingEvery(_ target: String, with replacement: String) -> String {
        let text = Array(utf8), pattern = Array(target.utf8)
        guard !pattern.isEmpty, text.count >= pattern.count else { return self }
        var result: [UInt8] = []
        result.reserveCapacity(text.count)
        var index = 0
        while index < text.count {
            if index + pattern.count <= text.count, text[index..<index + pattern.count].elementsEqual(pattern) {
                result.append(contentsOf: replacement.utf8)
                index += pattern.count
            } else {
                result.append(text[index])
                index += 1
            }
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// The path without its last component, as `NSString.deletingLastPathComponent` gives it:
    /// `/a/b/c` → `/a/b`, `a/b/` → `a`, `/a` → `/`, `a` → `` (empty), `/` → `/`; runs of slashes
    /// count as one.
    public var parentPath: String {
        var components = split(separator: "/")
        let absolute = hasPrefix("/")
        guard !components.isEmpty else { return absolute ? "/" : "" }
        components.removeLast()
        let joined = components.joined(separator: "/")
        return absolute ? "/" + joined : joined
    }
}
