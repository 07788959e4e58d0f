#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import ShutterService
import ShutterSystem

/// What standard input is, for `shutter run` on the simulator board.
public enum SimulatorInputKind: Equatable, Sendable {
    /// A terminal: keys drive the lines.
    case terminal
    /// Already at its end (`</dev/null`, an empty file, a closed empty pipe): play the demo.
    case empty
    /// Anything else (a pipe, a file): a trace, read as it comes.
    case trace

    /// Looks at standard input without consuming it.
    ///
    /// The corresponding C functions are `isatty`, `fstat`, `ioctl(FIONREAD)` and `poll`.
    public static func of(_ descriptor: CInt = STDIN_FILENO) -> SimulatorInputKind {
        if isatty(descriptor) == 1 { return .terminal }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return .empty }   // closed: nothing to read
        var waiting: CInt = 0
        if ioctl(descriptor, UInt(FIONREAD), &waiting) == 0 {
            if waiting > 0 { return .trace }
            if (info.st_mode & S_IFMT) == S_IFREG { return .empty }
            // A pipe with nothing in it: at its end only when the writer is gone.
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&entry, 1, 0)
            return entry.revents & Int16(POLLHUP) != 0 ? .empty : .trace
        }
        // /dev/null answers no FIONREAD; a read of it is at its end at once.
        if (info.st_mode & S_IFMT) == S_IFCHR {
            var null = stat()
            if stat("/dev/null", &null) == 0, null.st_rdev == info.st_rdev { return .empty }
        }
        return .trace
    }
}
