#if canImport(Glibc)
import Glibc
#endif
import ShutterGPIO

/// The secret a browser or script shows to use live view from anywhere but loopback: 128 random
/// bits as 32 hex digits, made on first start and kept in the state directory (mode 0600).
struct HTTPToken: Hashable, Sendable {
    /// 32 lowercase hex digits.
    let text: String

    init?(text: String) {
        guard text.utf8.count == 32, text.utf8.allSatisfy({ Self.hexDigits.contains($0) }) else { return nil }
        self.text = text
    }

    private static let hexDigits = Set("0123456789abcdef".utf8)

    /// A new token from the system's generator (getrandom(2) on Linux: cryptographically secure).
    static func random() -> HTTPToken {
        var generator = SystemRandomNumberGenerator()
        let bits = (generator.next() as UInt64, generator.next() as UInt64)
        func hex(_ value: UInt64) -> String {
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }
        return HTTPToken(text: hex(bits.0) + hex(bits.1))!
    }

    /// Whether `candidate` is this token, in time that does not depend on where they differ.
    func matches(_ candidate: String) -> Bool {
        let given = Array(candidate.utf8), own = Array(text.utf8)
        guard given.count == own.count else { return false }
        var difference: UInt8 = 0
        for index in own.indices { difference |= given[index] ^ own[index] }
        return difference == 0
    }

    /// What a token file holds.
    private enum Stored {
        case missing
        /// A file that holds no token (edited by hand, cut short).
        case damaged
        case token(HTTPToken)
    }

    /// The token kept at `path`, or a new one saved there when there is none (or it is damaged).
    ///
    /// Saved as the photo writer saves photos: a temporary file (0600) written and synced, then
    /// linked into place (so two daemons starting at once agree on one token) and the directory
    /// synced; a damaged file is replaced by renaming over it, and the log says so. A token file
    /// readable by others is narrowed to 0600.
    ///
    /// - Throws: ``HTTPServer/Failure`` naming the file and errno when it cannot be read or made.
    static func loadOrCreate(path: String) throws(HTTPServer.Failure) -> HTTPToken {
        let stored = try load(path: path)
        if case .token(let existing) = stored { return existing }
        try makeDirectory(directory(of: path))
        let token = random()
        let temporary = directory(of: path) + "/.http-token.\(getpid()).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure("cannot create", temporary) }
        let bytes = Array((token.text + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        let synced = fsync(descriptor)
        let saved = written == bytes.count && synced == 0
        let writeError = Errno.current
        close(descriptor)
        defer { unlink(temporary) }
        guard saved else { throw HTTPServer.Failure("cannot write the HTTP token to \(temporary): \(writeError)") }
        if case .damaged = stored {
            guard rename(temporary, path) == 0 else { throw failure("cannot replace the damaged", path) }
            Log.warning("shutter: the HTTP token file \(path) held no token; replaced it with a new one")
        } else if link(temporary, path) != 0 {
            // Another daemon made it first: use that one.
            if errno == EEXIST, case .token(let existing) = try load(path: path) { return existing }
            throw failure("cannot save", path)
        }
        let directoryDescriptor = open(directory(of: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryDescriptor >= 0 {
            fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
        return token
    }

    /// What the file at `path` holds.
    private static func load(path: String) throws(HTTPServer.Failure) -> Stored {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return .missing }
            throw failure("cannot read", path)
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw HTTPServer.Failure("\(path) is not a regular file; remove it (a new HTTP token is made)")
        }
        if info.st_mode & 0o077 != 0 { fchmod(descriptor, 0o600) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(descriptor, &buffer, buffer.count)
        guard count > 0 else { return .damaged }
        var text = String(decoding: buffer[..<count], as: UTF8.self)
        while text.last?.isWhitespace == true { text.removeLast() }
        return HTTPToken(text: text).map(Stored.token) ?? .damaged
    }

    /// Makes `path` and its missing parents (0700: the state directory holds the token).
    private static func makeDirectory(_ path: String) throws(HTTPServer.Failure) {
        var info = stat()
        if stat(path, &info) == 0 { return }
        let parent = directory(of: path)
        if parent != path { try makeDirectory(parent) }
        guard mkdir(path, 0o700) == 0 || errno == EEXIST else { throw failure("cannot create the directory of", path) }
    }

    private static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private static func failure(_ what: String, _ path: String) -> HTTPServer.Failure {
        HTTPServer.Failure("\(what) the HTTP token file \(path): \(Errno.current)")
    }
}
