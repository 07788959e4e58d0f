#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShutterCore

/// Tells systemd how the service is: `READY=1`, `STATUS=…`, `WATCHDOG=1`, `STOPPING=1`.
///
/// This speaks sd_notify(3)'s documented datagram protocol itself rather than linking libsystemd:
/// the protocol is one `sendto()` of `KEY=VALUE` lines to the `AF_UNIX` datagram socket named by
/// `NOTIFY_SOCKET` (a path, or `@name` in the abstract namespace), stable since systemd 209 and
/// documented as the interface for services that do not link the library. That keeps the binary
/// free of one more shared library at run time (the Pi image and the VM need nothing extra) and
/// keeps the call non-blocking (`MSG_DONTWAIT`), so a stalled manager cannot stall the loop.
public final class SystemdNotifier {
    private let descriptor: CInt
    private var address: sockaddr_un
    private let addressLength: socklen_t
    /// The socket path as given (for messages and tests).
    public let socketPath: String
    /// How often the loop must send `WATCHDOG=1`: half of `WatchdogSec`, as sd_watchdog_enabled(3) advises.
    public let watchdogInterval: Nanoseconds?

    /// The notifier for this process's environment, or nil when systemd did not ask for notifications.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> SystemdNotifier? {
        guard let path = environment["NOTIFY_SOCKET"], !path.isEmpty else { return nil }
        var interval: Nanoseconds?
        if let text = environment["WATCHDOG_USEC"], let usec = Int64(text), usec > 0 {
            // WATCHDOG_PID, when set, names the process that must ping; a child we spawned must not.
            if let pid = environment["WATCHDOG_PID"].flatMap({ Int32($0) }), pid != getpid() {
                interval = nil
            } else {
                interval = Nanoseconds.microseconds(usec / 2)
            }
        }
        return SystemdNotifier(path: path, watchdogInterval: interval)
    }

    public init?(path: String, watchdogInterval: Nanoseconds?) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            if !abstract { raw[bytes.count] = 0 }
        }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        self.descriptor = descriptor
        self.address = address
        // An abstract name's length is exact (no terminating NUL); a path's includes its NUL.
        addressLength = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1))
        socketPath = path
        self.watchdogInterval = watchdogInterval
    }

    deinit { close(descriptor) }

    /// Sends `state` (one or more `KEY=VALUE` lines); a failure is returned, never thrown:
    /// notification is advisory and must not stop the rig.
    ///
    /// The corresponding C function is `sd_notify`.
    @discardableResult
    public func notify(_ state: String) -> Bool {
        let sent = state.withCString { text in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(descriptor, text, strlen(text), Int32(MSG_DONTWAIT | MSG_NOSIGNAL), $0, addressLength)
                }
            }
        }
        return sent >= 0
    }

    /// A `STATUS=` text, one line (newlines would start new keys).
    public static func status(_ text: String) -> String {
        "STATUS=" + text.replacingEvery("\n", with: " ")
    }
}
