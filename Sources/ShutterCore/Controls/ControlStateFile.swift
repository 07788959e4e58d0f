import Foundation

/// The small file that keeps each control's last value across restarts.
///
/// One JSON object, keys sorted so the file is stable: a slider's value is a
/// number, a picker's is `{"index": n}`. Written atomically (a temporary file in
/// the same directory, then a rename), so a power cut leaves the old file or
/// the new one, never half of one. Never used by `shutter replay`.
public enum ControlStateFile {
    /// The values stored at `path`; empty when the file is missing or unreadable,
    /// so a damaged state file never stops the rig (the board's initial values apply).
    public static func load(path: String) -> [String: ControlValue] {
        guard let data = FileManager.default.contents(atPath: path),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return [:] }
        var values: [String: ControlValue] = [:]
        for (id, raw) in object {
            if let nested = raw as? [String: Any], let index = nested["index"] as? Int {
                values[id] = .index(index)
            } else if let number = raw as? Double, number.isFinite {
                values[id] = .number(number)
            } else if let number = raw as? Int {
                values[id] = .number(Double(number))
            }
        }
        return values
    }

    /// Writes `values` to `path` atomically.
    ///
    /// - Throws: Foundation's error naming the file when the directory cannot be written.
    public static func save(_ values: [String: ControlValue], path: String) throws {
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
        let text = line.description + "\n"
        // `.atomic` writes a temporary file beside `path` and renames it over `path`.
        try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    }
}
