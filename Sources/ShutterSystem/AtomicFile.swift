#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CShutterSystem

/// A file that appears at its name whole or not at all: a crash, a power cut or a full disk
/// leaves the old file (or none), never part of a new one.
///
/// The bytes go to a temporary file in the final name's directory (a rename or a link does not
/// cross file systems), created with `O_EXCL` so a name another writer holds is never taken
/// over, written whole and fsynced; then the file gets its name by a rename (which replaces
/// what is there) or a link (which refuses a name that exists: for files that must not be
/// replaced, such as a photo or a token two daemons may make at once), and the directory is
/// fsynced so that the name survives a power cut too. A failure removes the temporary file.
///
/// The photo writer, the HTTP token and the saved control values are written this way.
public struct AtomicFile: Sendable {
    /// A step that failed: the call, its errno, and the path it was made on (for a call relative
    /// to a directory's descriptor, the name in that directory).
    public struct Failure: Error, Hashable, Sendable, CustomStringConvertible {
        public var call: String
        public var errno: Errno
        public var path: String

        public init(call: String, errno: Errno, path: String) {
            self.call = call
            self.errno = errno
            self.path = path
        }

        public var description: String { "\(path): \(call) failed: \(errno)" }
    }

    /// Writes `count` bytes to a descriptor, like `write`; tests replace it to fill a disk.
    public typealias WriteFunction = @Sendable (CInt, UnsafeRawPointer, Int) -> Int
    /// `linkat` without flags (from a directory's descriptor and a name to another's); tests
    /// replace it to act as a file system without hard links (FAT) does.
    public typealias LinkFunction = @Sendable (CInt, String, CInt, String) -> CInt
    /// `renameat2` with `RENAME_NOREPLACE` (from a directory's descriptor and a name to
    /// another's); tests replace it to act as a file system without it does.
    public typealias RenameFunction = @Sendable (CInt, String, CInt, String) -> CInt

    /// The temporary file, written whole and synced; it keeps this name until ``discard()``.
    public let temporary: String

    /// Writes `bytes` to a new file at `temporary` and fsyncs and closes it; on a failure the
    /// file is removed (unless it could not be made: a name that exists is someone else's).
    ///
    /// - Parameters:
    ///   - mode: the new file's mode, less the umask.
    ///   - exclusive: whether a file at `temporary` is refused (`O_EXCL`); without it, one is
    ///     truncated and rewritten (for a temporary name only this process uses).
    ///   - write: `write` (tests replace it).
    /// - Throws: ``Failure`` naming `open`, `write`, `fsync` or `close` and `temporary`.
    ///
    /// The corresponding C functions are `open`, `write`, `fsync` and `close`.
    public init(temporary: String, bytes: [UInt8], mode: mode_t, exclusive: Bool = true,
                write: WriteFunction = { Glibc.write($0, $1, $2) }) throws(Failure) {
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | (exclusive ? O_EXCL : O_TRUNC)
        let descriptor: FileDescriptor
        do throws(Errno) {
            descriptor = try FileDescriptor.open(temporary, flags, mode: mode)
        } catch {
            throw Failure(call: "open", errno: error, path: temporary)
        }
        // The photo's bytes are written from where they are, never copied.
        var failure: Failure? = bytes.withUnsafeBytes { buffer in
            do throws(Errno) {
                try descriptor.writeAll(buffer, through: write)
            } catch {
                return Failure(call: "write", errno: error, path: temporary)
            }
            do throws(Errno) {
                try descriptor.sync()
            } catch {
                return Failure(call: "fsync", errno: error, path: temporary)
            }
            return nil
        }
        do throws(Errno) {
            try descriptor.close()
        } catch {
            if failure == nil { failure = Failure(call: "close", errno: error, path: temporary) }
        }
        if let failure {
            unlink(temporary)
            throw failure
        }
        self.temporary = temporary
    }

    /// Gives the file the name `name` (in `directory`, or relative to the working directory),
    /// replacing any file there. On a failure the temporary file is removed.
    ///
    /// - Throws: ``Failure`` naming `rename` and `name`.
    ///
    /// The corresponding C function is `renameat`.
    public func rename(to name: String, in directory: FileDescriptor = .currentDirectory) throws(Failure) {
        switch nothingOrErrno({ renameat(AT_FDCWD, temporary, directory.rawValue, name) }) {
        case .success:
            return
        case .failure(let errno):
            unlink(temporary)
            throw Failure(call: "rename", errno: errno, path: name)
        }
    }

    /// Gives the file the name `name` too (in `directory`, or relative to the working
    /// directory) unless a file has that name already. The temporary name stays until ``discard()``.
    ///
    /// - Parameters:
    ///   - renamingWithoutLinks: on a file system without hard links (FAT: `EPERM`, `ENOTSUP`),
    ///     renames the file to `name` unless `name` exists, in one step (``renameUnlessTaken(to:in:rename:)``);
    ///     the temporary name is gone then.
    ///   - link: `linkat` (tests replace it).
    ///   - rename: `renameat2` with `RENAME_NOREPLACE` (tests replace it).
    /// - Returns: `false` when `name` exists (nothing is changed then).
    /// - Throws: ``Failure`` naming `link` (or the rename's call) and `name`.
    ///
    /// The corresponding C functions are `linkat`, and `renameat2` without links.
    public func link(as name: String, in directory: FileDescriptor = .currentDirectory, renamingWithoutLinks: Bool = false,
                     link: LinkFunction = { Glibc.linkat($0, $1, $2, $3, 0) },
                     rename: RenameFunction = { CShutterSystem_renameNoReplace($0, $1, $2, $3) }) throws(Failure) -> Bool {
        switch nothingOrErrno({ link(AT_FDCWD, temporary, directory.rawValue, name) }) {
        case .success:
            return true
        case .failure(let errno) where errno == .fileExists:
            return false
        case .failure(let errno) where renamingWithoutLinks && Self.meansNoLinks(errno):
            return try renameUnlessTaken(to: name, in: directory, rename: rename)
        case .failure(let errno):
            throw Failure(call: "link", errno: errno, path: name)
        }
    }

    /// Renames the file to `name` unless a file has that name: `renameat2` with
    /// `RENAME_NOREPLACE` checks and renames in one step (vfat, exfat, ext4, tmpfs have it), so
    /// two writers never both take a name, as a check followed by a rename would let them. A
    /// file system without it (`EINVAL`) gets an empty file created at `name` with `O_EXCL`,
    /// which only one writer can make, and the file renamed over that.
    ///
    /// - Returns: `false` when `name` exists (nothing is changed then).
    /// - Throws: ``Failure`` naming `renameat2`, `open` or `rename` and `name`; the temporary
    ///   file stays for the caller's ``discard()``.
    ///
    /// The corresponding C functions are `renameat2`, and `openat` and `renameat` without it.
    func renameUnlessTaken(to name: String, in directory: FileDescriptor,
                           rename: RenameFunction) throws(Failure) -> Bool {
        switch nothingOrErrno({ rename(AT_FDCWD, temporary, directory.rawValue, name) }) {
        case .success:
            return true
        case .failure(let errno) where errno == .fileExists:
            return false
        case .failure(let errno) where errno.rawValue == EINVAL || errno.rawValue == ENOSYS:
            break
        case .failure(let errno):
            throw Failure(call: "renameat2", errno: errno, path: name)
        }
        // The name is claimed by the one writer whose exclusive create makes it; the photo
        // then replaces that empty file in one step.
        switch valueOrErrno({ openat(directory.rawValue, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644) }) {
        case .success(let claimed):
            Glibc.close(claimed)
        case .failure(let errno) where errno == .fileExists:
            return false
        case .failure(let errno):
            throw Failure(call: "open", errno: errno, path: name)
        }
        switch nothingOrErrno({ renameat(AT_FDCWD, temporary, directory.rawValue, name) }) {
        case .success:
            return true
        case .failure(let errno):
            unlinkat(directory.rawValue, name, 0)
            throw Failure(call: "rename", errno: errno, path: name)
        }
    }

    /// Whether a link's `errno` says the file system has no hard links (FAT).
    static func meansNoLinks(_ errno: Errno) -> Bool {
        errno.rawValue == EPERM || errno.rawValue == ENOTSUP || errno.rawValue == EOPNOTSUPP
    }

    /// Removes the temporary name: the file stays under the name ``link(as:in:renamingWithoutLinks:link:)``
    /// gave it, or is gone.
    ///
    /// The corresponding C function is `unlink`.
    public func discard() {
        unlink(temporary)
    }

    /// Makes the names given in the directory at `path` last through a power cut.
    ///
    /// - Throws: ``Failure`` naming `open` or `fsync` and `path`.
    ///
    /// The corresponding C functions are `open` and `fsync`.
    public static func syncDirectory(_ path: String) throws(Failure) {
        let directory: FileDescriptor
        do throws(Errno) {
            directory = try FileDescriptor.openDirectory(path)
        } catch {
            throw Failure(call: "open", errno: error, path: path)
        }
        defer { try? directory.close() }
        do throws(Errno) {
            try directory.sync()
        } catch {
            throw Failure(call: "fsync", errno: error, path: path)
        }
    }

    /// Replaces the file at `path` with `bytes`, whole: a temporary file beside it (named
    /// `.<name>.<pid>-<random>.tmp`, so a crash's left-over never blocks the next save) is
    /// renamed over it, and the directory synced.
    ///
    /// - Parameter mode: the file's mode, less the umask.
    /// - Throws: ``Failure`` naming the call that failed; the file at `path` is then as it was.
    public static func replace(_ path: String, with bytes: [UInt8], mode: mode_t) throws(Failure) {
        let (directory, name) = split(path)
        let temporary = (directory.map { $0 == "/" ? "/" : $0 + "/" } ?? "") + ".\(name).\(getpid())-\(UInt32.random(in: 0...UInt32.max)).tmp"
        let file = try AtomicFile(temporary: temporary, bytes: bytes, mode: mode)
        try file.rename(to: path)
        try syncDirectory(directory ?? ".")
    }

    /// The directory part of `path` (`nil` for a bare name) and the name in it.
    static func split(_ path: String) -> (directory: String?, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (nil, path) }
        let directory = slash == path.startIndex ? "/" : String(path[..<slash])
        return (directory, String(path[path.index(after: slash)...]))
    }
}
