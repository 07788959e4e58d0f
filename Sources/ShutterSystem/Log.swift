#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Diagnostics on standard error: plain lines in a terminal, `<N>`-prefixed under journald.
///
/// systemd sets `JOURNAL_STREAM` (device:inode) for a service whose standard error goes to the
/// journal; the journal then reads a leading `<N>` as the line's syslog priority (sd-daemon(3)),
/// so `journalctl -p warning` finds failures. The prefix is only added when standard error *is*
/// that stream, so `shutter run 2>file` under systemd stays plain.
public enum Log {
    /// syslog priorities, as sd-daemon.h numbers them.
    public enum Priority: Int, Sendable {
        case error = 3, warning = 4, notice = 5, info = 6, debug = 7
    }

    /// Whether standard error is the journal's stream (checked once).
    public static let toJournal: Bool = isJournalStream(ProcessInfo.processInfo.environment["JOURNAL_STREAM"],
                                                        descriptor: STDERR_FILENO)

    /// Whether `descriptor` is the stream `JOURNAL_STREAM` ("device:inode") names.
    public static func isJournalStream(_ value: String?, descriptor: CInt) -> Bool {
        guard let value else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }

    /// `message` as it goes to standard error: with `<N>` under journald, plain otherwise.
    public static func format(_ message: String, priority: Priority, journal: Bool) -> String {
        guard journal else { return message }
        // Every line of a multi-line message needs its own prefix, or the journal files it at info.
        return message.split(separator: "\n", omittingEmptySubsequences: false)
            .map { "<\(priority.rawValue)>\($0)" }.joined(separator: "\n")
    }

    public static func write(_ message: String, priority: Priority) {
        Console.error(format(message, priority: priority, journal: toJournal))
    }

    public static func error(_ message: String) { write(message, priority: .error) }
    public static func warning(_ message: String) { write(message, priority: .warning) }
    public static func notice(_ message: String) { write(message, priority: .notice) }
    public static func info(_ message: String) { write(message, priority: .info) }
}
