#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An open file's descriptor, with the few calls shutter makes on one, each retrying `EINTR` and
/// throwing the ``Errno`` it failed with.
///
/// A plain value, as swift-system's: it does not close itself; whoever opened it closes it.
public struct FileDescriptor: RawRepresentable, Hashable, Sendable {
    public let rawValue: CInt

    public init(rawValue: CInt) { self.rawValue = rawValue }

    /// Not a descriptor: where a path is taken relative to the working directory (`AT_FDCWD`).
    public static let currentDirectory = FileDescriptor(rawValue: AT_FDCWD)

    /// Opens `path` (relative to `directory` when it is not absolute) with `flags` (`O_CLOEXEC`
    /// is the caller's to give) and, for a file it creates, `mode` less the umask.
    ///
    /// The corresponding C function is `openat`.
    @inlinable
    public static func open(_ path: String, _ flags: CInt, mode: mode_t = 0,
                            in directory: FileDescriptor = .currentDirectory) throws(Errno) -> FileDescriptor {
        FileDescriptor(rawValue: try valueOrErrno { openat(directory.rawValue, path, flags, mode) }.get())
    }

    /// Opens the directory at `path` for what is done through a directory's descriptor (its
    /// fsync, `openat`, `linkat`), close-on-exec.
    ///
    /// The corresponding C function is `open` (`O_RDONLY | O_DIRECTORY`).
    @inlinable
    public static func openDirectory(_ path: String) throws(Errno) -> FileDescriptor {
        try open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    }

    /// Reads up to `buffer.count` bytes; returns how many (0 at the end).
    ///
    /// The corresponding C function is `read`.
    @inlinable
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try valueOrErrno { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }.get()
    }

    /// Writes up to `buffer.count` bytes; returns how many.
    ///
    /// The corresponding C function is `write`.
    @inlinable
    public func write(_ buffer: UnsafeRawBufferPointer) throws(Errno) -> Int {
        try valueOrErrno { Glibc.write(rawValue, buffer.baseAddress, buffer.count) }.get()
    }

    /// Writes all of `buffer`, again after each short write, through `write` (a function like
    /// the C one, which tests replace to fill a disk). A write that takes nothing is an I/O error.
    ///
    /// The corresponding C function is `write`.
    @inlinable
    public func writeAll(_ buffer: UnsafeRawBufferPointer,
                         through write: (CInt, UnsafeRawPointer, Int) -> Int = { Glibc.write($0, $1, $2) }) throws(Errno) {
        guard let base = buffer.baseAddress else { return }
        var offset = 0
        while offset < buffer.count {
            let written = try valueOrErrno { write(rawValue, base + offset, buffer.count - offset) }.get()
            if written == 0 { throw Errno.ioError }
            offset += written
        }
    }

    /// Waits until what was written is on the disk (with the metadata to find it).
    ///
    /// The corresponding C function is `fsync`.
    @inlinable
    public func sync() throws(Errno) {
        try nothingOrErrno { fsync(rawValue) }.get()
    }

    /// Closes the descriptor. `EINTR` is no failure and is not retried: Linux has closed the
    /// descriptor by then, and a second close could close one another thread just opened.
    ///
    /// The corresponding C function is `close`.
    @inlinable
    public func close() throws(Errno) {
        if case .failure(let errno) = nothingOrErrno(retryOnInterrupt: false, { Glibc.close(rawValue) }), errno != .interrupted {
            throw errno
        }
    }
}
