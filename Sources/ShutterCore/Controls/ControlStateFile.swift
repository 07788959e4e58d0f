#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The small file that keeps each control's last value across restarts.
///
/// One JSON object, keys sorted so the file is stable: a slider's value is a
/// number, a picker's is `{"index": n}`. The daemon writes it whole or not at all
/// (its `ControlState`, through ShutterSystem's `AtomicFile`): Core reads and
/// encodes, and makes no system calls of its own. Never used by `shutter replay`.
public enum ControlStateFile {
    /// The values stored at `path`; empty when the file is missing or unreadable,
    /// so a damaged state file never stops the rig (the board's initial values apply).
    public static func load(path: String) -> [String: ControlValue] {
        guard let data = FileManager.default.contents(atPath: path),
              let object = try? JSONDecoder().decode([String: StoredValue].self, from: data)
        else { return [:] }
        return object.compactMapValues(\.value)
    }

    /// One entry of the file: `{"index": n}` or a finite number; nil for anything else, which
    /// is skipped rather than failing the whole file.
    private struct StoredValue: Decodable {
        let value: ControlValue?

        private enum Key: CodingKey { case index }

        init(from decoder: any Decoder) {
            if let nested = try? decoder.container(keyedBy: Key.self),
               let index = try? nested.decode(Int.self, forKey: .index) {
                value = .index(index)
            } else if let number = try? decoder.singleValueContainer().decode(Double.self), number.isFinite {
                value = .number(number)
            } else {
                value = nil
            }
        }
    }

    /// What the file holds for `values`: one line of JSON.
    public static func text(of values: [String: ControlValue]) -> String {
        var line = JSONLine()
        for id in values.keys.sorted() {
            switch values[id]! {
            case .number(let number):
                // Swift's shortest round-trip form, so a value reads back bit for bit.
                line.add(id, json: number.isFinite ? String(number) : "null")
            case .index(let index):
                var nested = JSONLine()
                nested.add("index", index)
                line.add(id, nested)
            }
        }
        return line.description + "\n"
    }
}
