#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import ShutterService
import ShutterSystem

/// The secret a browser or script shows to use live view from anywhere but loopback: 128 random
/// bits as 32 hex digits, made on first start and kept in the state directory (mode 0600).
struct HTTPToken: Hashable, Sendable {
    /// 32 lowercase hex digits.
    let text: String
    /// What a browser's cookie holds once it has shown the token: HMAC-SHA-256 of a fixed text
    /// under the token, as 64 hex digits. Not the token itself: browsers send a host's cookies
    /// to every port of it, so another service on the rig sees the cookie, and it opens only
    /// this server; a new token (the file removed, the daemon restarted) ends every session.
    /// Made once with the token, since every request with a cookie compares against it.
    let session: String

    init?(text: String) {
        guard text.utf8.count == 32, text.utf8.allSatisfy({ Self.hexDigits.contains($0) }) else { return nil }
        self.text = text
        session = SHA256.hex(of: SHA256.hmac(key: Array(text.utf8), message: Array("shutter live view session".utf8)))
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
    /// What a person pasted may bring spaces, a line break or a no-break space around it:
    /// those are not part of any token, so they are let go first.
    func matches(_ candidate: String) -> Bool { Self.same(candidate.trimmingWhitespace, text) }

    private static func same(_ candidate: String, _ secret: String) -> Bool {
        let given = Array(candidate.utf8), own = Array(secret.utf8)
        guard given.count == own.count else { return false }
        var difference: UInt8 = 0
        for index in own.indices { difference |= given[index] ^ own[index] }
        return difference == 0
    }

    /// Whether `candidate` is this token's ``session``, in time that does not depend on where they differ.
    func matchesSession(_ candidate: String) -> Bool { Self.same(candidate, session) }

    /// What a token file holds.
    private enum Stored {
        case missing
        /// A file that holds no token (edited by hand, cut short).
        case damaged
        case token(HTTPToken)
    }

    /// The token kept at `path`, or a new one saved there when there is none (or it is damaged).
    ///
    /// Saved as an `AtomicFile`, as photos are: a temporary file (0600) written and synced, then
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
        let file: AtomicFile
        do throws(AtomicFile.Failure) {
            file = try AtomicFile(temporary: temporary, bytes: Array((token.text + "\n").utf8), mode: 0o600)
        } catch let error where error.call == "open" {
            throw failure("cannot create", temporary, error.errno)
        } catch {
            throw HTTPServer.Failure("cannot write the HTTP token to \(temporary): \(error.errno)")
        }
        defer { file.discard() }
        if case .damaged = stored {
            do throws(AtomicFile.Failure) {
                try file.rename(to: path)
            } catch {
                throw failure("cannot replace the damaged", path, error.errno)
            }
            Log.warning("shutter: the HTTP token file \(path) held no token; replaced it with a new one")
        } else {
            let linked: Bool
            do throws(AtomicFile.Failure) {
                linked = try file.link(as: path)
            } catch {
                throw failure("cannot save", path, error.errno)
            }
            if !linked {
                // Another daemon made it first: use that one.
                if case .token(let existing) = try load(path: path) { return existing }
                throw failure("cannot save", path, .fileExists)
            }
        }
        // The token is saved; a directory that cannot be synced costs only its name on a power cut.
        try? AtomicFile.syncDirectory(directory(of: path))
        return token
    }

    /// Which file a path names and when it was last written: a token file replaced (a new
    /// inode) or rewritten in place (a new time or size) has a new version.
    struct FileVersion: Equatable, Sendable {
        var device: UInt64
        var inode: UInt64
        var modifiedSeconds: Int64
        var modifiedNanoseconds: Int64
        var size: Int64
    }

    /// The version of the file at `path`, or nil when there is none.
    ///
    /// The corresponding C function is `stat`.
    static func fileVersion(at path: String) -> FileVersion? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileVersion(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), modifiedSeconds: Int64(info.st_mtim.tv_sec),
                           modifiedNanoseconds: Int64(info.st_mtim.tv_nsec), size: Int64(info.st_size))
    }

    /// The token the file at `path` holds, or nil (missing, damaged, unreadable).
    static func stored(at path: String) -> HTTPToken? {
        guard case .token(let token)? = try? load(path: path) else { return nil }
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
        return HTTPToken(text: String(decoding: buffer[..<count], as: UTF8.self).trimmingWhitespace).map(Stored.token) ?? .damaged
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

    private static func failure(_ what: String, _ path: String, _ errno: Errno = .current) -> HTTPServer.Failure {
        HTTPServer.Failure("\(what) the HTTP token file \(path): \(errno)")
    }
}

/// Wrong tokens shown to the HTTP server in the last minute, per client address: past
/// ``limit`` from one address, that address's tokens are not checked until its oldest wrong one
/// is a minute old, so a guesser gets ``limit`` tries a minute (a 128-bit token is not guessed
/// that way; the bound keeps the journal and the loop quiet too). Other addresses, and a browser
/// that already has its session cookie, are not slowed. An IPv6 client counts by its /64.
struct HTTPWrongTokens {
    /// An IPv4 address, or an IPv6 address's first 8 bytes.
    typealias Peer = [UInt8]

    static let limit = 10
    static let window = Nanoseconds.seconds(60)
    /// Addresses remembered at most; the one whose last wrong token is oldest is forgotten first.
    static let peerLimit = 256
    /// For each address, the times of its last ``limit`` wrong tokens, oldest first.
    private(set) var times: [Peer: [Instant]] = [:]

    /// Records a wrong token from `peer` at `now`; returns how many it showed in the last minute.
    mutating func record(from peer: Peer, at now: Instant) -> Int {
        var recent = (times[peer] ?? []).filter { now - $0 < Self.window }
        recent.append(now)
        if recent.count > Self.limit { recent.removeFirst(recent.count - Self.limit) }
        if times[peer] == nil, times.count >= Self.peerLimit {
            times.removeValue(forKey: times.min { ($0.value.last ?? now) < ($1.value.last ?? now) }!.key)
        }
        times[peer] = recent
        return recent.count
    }

    /// How long `peer`'s tokens are not checked from `now`, or nil when they are.
    func slowed(_ peer: Peer, at now: Instant) -> Nanoseconds? {
        guard let recent = times[peer], recent.count >= Self.limit, let oldest = recent.first, now - oldest < Self.window else { return nil }
        return Nanoseconds(rawValue: Self.window.rawValue - (now - oldest).rawValue)
    }
}

/// A form's fields, as a browser posts them (`application/x-www-form-urlencoded`).
enum HTTPForm {
    /// The value of the first field named `name` in `body`, decoded (`+` is a space, `%XX` a
    /// byte), or nil when there is none or it is not UTF-8.
    static func value(of name: String, in body: [UInt8]) -> String? {
        for field in body.split(separator: UInt8(ascii: "&")) {
            let parts = field.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let key = decode(parts[0]), key == name else { continue }
            return parts.count > 1 ? decode(parts[1]) : ""
        }
        return nil
    }

    private static func decode(_ bytes: ArraySlice<UInt8>) -> String? {
        var decoded: [UInt8] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "+") {
                decoded.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), index + 2 < bytes.endIndex,
                      let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) {
                decoded.append(high << 4 | low)
                index += 2
            } else {
                decoded.append(byte)
            }
            index += 1
        }
        return String(validating: decoded, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
