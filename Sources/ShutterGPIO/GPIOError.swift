import ShutterCore
import ShutterSystem

/// A chip as the system lists it: what a user can put in a board's `chip` field.
public struct ChipSummary: Hashable, Sendable, CustomStringConvertible {
    public var path: String
    public var name: String
    public var label: String
    public var lineCount: Int

    public var description: String { "\(path) (name '\(name)', label '\(label)', \(lineCount) lines)" }
}

/// Why the GPIO lines could not be opened or read, with what to do about it.
public enum GPIOError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No chip matches the board's selector; `available` are the chips that exist.
    case chipNotFound(ChipSelector, available: [ChipSummary])
    /// The chip exists but opening it failed.
    case cannotOpenChip(path: String, Errno)
    /// No line on the chip has that name or offset; `available` are the chip's line names.
    case lineNotFound(board: String, LineSelector, chip: String, lineCount: Int, available: [String])
    /// Another program holds the line.
    case lineBusy(board: String, LineSelector, chip: String, consumer: String)
    /// Requesting the lines failed for another reason.
    case requestFailed(line: String?, chip: String, Errno)
    /// Reading edges failed.
    case readFailed(chip: String, Errno)
    /// Setting an output line (LED, buzzer) failed.
    case writeFailed(line: String, chip: String, Errno)

    public var description: String {
        switch self {
        case .chipNotFound(let selector, let available):
            let list = available.isEmpty ? "no GPIO chips exist on this machine (is this a Raspberry Pi? is gpio-sim loaded?)"
                : "the chips are:\n" + available.map { "  \($0)" }.joined(separator: "\n")
            return "\(selector) not found; \(list)"
        case .cannotOpenChip(let path, let errno) where errno == .permissionDenied || errno == .notPermitted:
            return "cannot open \(path): permission denied. Add the user to the group that owns it "
                + "(`sudo usermod -aG gpio $USER` on Raspberry Pi OS, then log in again) "
                + "or install Deploy/udev/99-shutter.rules"
        case .cannotOpenChip(let path, let errno):
            return "cannot open \(path): \(errno)"
        case .lineNotFound(let board, let selector, let chip, let count, let available):
            let names = available.filter { !$0.isEmpty }
            let list = names.isEmpty ? "its \(count) lines have no names; use an offset 0...\(max(count - 1, 0))"
                : "its lines are named " + names.joined(separator: ", ")
            switch selector {
            case .name(let name): return "line '\(board)': no line named '\(name)' on \(chip); \(list)"
            case .offset(let offset): return "line '\(board)': offset \(offset) is not on \(chip), which has \(count) lines (0...\(max(count - 1, 0)))"
            }
        case .lineBusy(let board, let selector, let chip, let consumer):
            let holder = consumer.isEmpty ? "another program" : "'\(consumer)'"
            return "line '\(board)' (\(selector) on \(chip)) is busy: held by \(holder). Stop that program, or choose another line"
        case .requestFailed(let line, let chip, let errno):
            return "requesting \(line.map { "line '\($0)'" } ?? "the lines") on \(chip) failed: \(errno)"
        case .readFailed(let chip, let errno):
            return "reading edges from \(chip) failed: \(errno)"
        case .writeFailed(let line, let chip, let errno):
            return "setting output line '\(line)' on \(chip) failed: \(errno)"
        }
    }
}
