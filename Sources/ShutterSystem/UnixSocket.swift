#if canImport(Glibc)
import Glibc
#endif
import CShutterSystem

/// Unix stream sockets for the API: small typed calls over the C ones, errno kept.
public enum UnixSocket {
    /// A socket call that failed: which one, on which path, and errno.
    public struct Failure: Error, CustomStringConvertible {
        public var call: String
        public var path: String
        public var errno: Errno
        public var description: String { "\(path): \(call) failed: \(errno)" }
    }

    /// A listening socket that could not be made, said as the daemon's user reads it (what
    /// exists at the path, what to do).
    public struct ListenFailure: Error, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    /// `path` as a `sockaddr_un`, or nil when it does not fit (107 bytes).
    public static func address(_ path: String) -> sockaddr_un? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    /// A new stream socket, close-on-exec, optionally non-blocking.
    ///
    /// The corresponding C function is `socket`.
    public static func make(nonBlocking: Bool, path: String) throws(Failure) -> CInt {
        var type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        if nonBlocking { type |= Int32(SOCK_NONBLOCK.rawValue) }
        return try valueOrErrno { socket(AF_UNIX, type, 0) }.mapError { Failure(call: "socket", path: path, errno: $0) }.get()
    }

    /// Connects `descriptor` to `path`.
    ///
    /// Not retried on `EINTR`: the connection goes on being made, and a second `connect` would
    /// fail (`EALREADY`) rather than wait for it.
    ///
    /// The corresponding C function is `connect`.
    public static func connect(_ descriptor: CInt, to path: String) throws(Failure) {
        guard var address = address(path) else { throw Failure(call: "connect", path: path, errno: Errno(rawValue: ENAMETOOLONG)) }
        try nothingOrErrno(retryOnInterrupt: false) {
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
        }.mapError { Failure(call: "connect", path: path, errno: $0) }.get()
    }

    /// Connects a blocking client socket to `path` (the command-line client).
    public static func connectClient(to path: String) throws(Failure) -> CInt {
        let descriptor = try make(nonBlocking: false, path: path)
        do throws(Failure) {
            try connect(descriptor, to: path)
        } catch {
            close(descriptor)
            throw error
        }
        return descriptor
    }

    /// The next waiting client of `listener` (any stream socket: the HTTP server's TCP one
    /// too), non-blocking and close-on-exec, or -1 with errno set; its address into `address`.
    ///
    /// The corresponding C function is `accept` (Glibc's module leaves out `accept4`).
    public static func accept(_ listener: CInt, address: UnsafeMutablePointer<sockaddr>? = nil, length: UnsafeMutablePointer<socklen_t>? = nil) -> CInt {
        let descriptor = Glibc.accept(listener, address, length)
        guard descriptor >= 0 else { return descriptor }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        return descriptor
    }

    /// Who is at the other end of a connected Unix socket, as the kernel recorded it when the
    /// peer connected (a later setuid or newgrp of the peer does not change it).
    public struct PeerCredentials: Hashable, Sendable {
        public var pid: pid_t
        public var user: uid_t
        /// The primary group.
        public var group: gid_t
        /// The supplementary groups (may or may not repeat the primary one).
        public var groups: [gid_t]

        public init(pid: pid_t = 0, user: uid_t, group: gid_t, groups: [gid_t] = []) {
            self.pid = pid
            self.user = user
            self.group = group
            self.groups = groups
        }

        /// Whether the peer is in `group`, as its primary group or a supplementary one.
        public func isMember(of group: gid_t) -> Bool {
            self.group == group || groups.contains(group)
        }
    }

    /// The credentials of the peer of a connected Unix socket, or nil when the kernel does not say.
    ///
    /// The groups come from `SO_PEERGROUPS` (Linux 4.13); when that fails (an older kernel),
    /// from the group database for the peer's user (``groups(ofUser:primaryGroup:)``), which
    /// may differ from what the peer's process holds (a group joined since it logged in).
    ///
    /// The corresponding C call is `getsockopt(SO_PEERCRED)`, which fills a `struct ucred`
    /// (`pid`, `uid`, `gid`; Glibc's module leaves the struct out, its layout is three 32-bit fields).
    public static func peerCredentials(_ descriptor: CInt) -> PeerCredentials? {
        var credentials: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
        var size = socklen_t(MemoryLayout.size(ofValue: credentials))
        guard getsockopt(descriptor, SOL_SOCKET, SO_PEERCRED, &credentials, &size) == 0,
              size == socklen_t(MemoryLayout.size(ofValue: credentials)) else { return nil }
        let user = uid_t(credentials.uid), group = gid_t(credentials.gid)
        let groups = peerGroups(descriptor) ?? Self.groups(ofUser: user, primaryGroup: group) ?? []
        return PeerCredentials(pid: pid_t(credentials.pid), user: user, group: group, groups: groups)
    }

    /// The supplementary groups of the peer of a connected Unix socket, or nil when the kernel
    /// does not say (older than 4.13).
    ///
    /// The corresponding C call is `getsockopt(SO_PEERGROUPS)`; a buffer too small fails with
    /// `ERANGE` and says the size it needs.
    public static func peerGroups(_ descriptor: CInt) -> [gid_t]? {
        var groups = [gid_t](repeating: 0, count: 64)
        for _ in 0..<2 {
            var size = socklen_t(groups.count * MemoryLayout<gid_t>.size)
            let result = groups.withUnsafeMutableBytes {
                getsockopt(descriptor, SOL_SOCKET, CShutterSystem_SO_PEERGROUPS, $0.baseAddress, &size)
            }
            if result == 0 { return Array(groups.prefix(Int(size) / MemoryLayout<gid_t>.size)) }
            guard errno == ERANGE else { return nil }
            groups = [gid_t](repeating: 0, count: Int(size) / MemoryLayout<gid_t>.size + 8)
        }
        return nil
    }

    /// The name of `user` in the user database, or nil when it has none.
    ///
    /// The corresponding C function is `getpwuid_r`.
    public static func userName(_ user: uid_t) -> String? {
        var size = 4096
        while size <= 1 << 20 {
            var entry = passwd()
            var found: UnsafeMutablePointer<passwd>?
            var buffer = [CChar](repeating: 0, count: size)
            // The entry's strings point into the buffer: the name is copied out while it is there.
            let outcome = buffer.withUnsafeMutableBufferPointer { storage -> (CInt, String?) in
                let result = getpwuid_r(user, &entry, storage.baseAddress!, storage.count, &found)
                guard result == 0, found != nil, let name = entry.pw_name else { return (result, nil) }
                return (0, String(cString: name))
            }
            guard outcome.0 == ERANGE else { return outcome.1 }
            size *= 4
        }
        return nil
    }

    /// The groups of `user` in the group database (its primary one included), or nil when the
    /// user has no name there.
    ///
    /// The corresponding C function is `getgrouplist` (the name from ``userName(_:)``).
    public static func groups(ofUser user: uid_t, primaryGroup: gid_t) -> [gid_t]? {
        guard let name = userName(user) else { return nil }
        var count: CInt = 64
        var groups = [gid_t](repeating: 0, count: Int(count))
        for _ in 0..<2 {
            // On -1 count is the number needed.
            if getgrouplist(name, primaryGroup, &groups, &count) >= 0 { return Array(groups.prefix(Int(count))) }
            groups = [gid_t](repeating: 0, count: Int(count))
        }
        return nil
    }

    /// Whether a daemon answers on `path` (a connect succeeds).
    public static func isAnswering(_ path: String) -> Bool {
        guard let descriptor = try? make(nonBlocking: true, path: path) else { return false }
        defer { close(descriptor) }
        do throws(Failure) {
            try connect(descriptor, to: path)
            return true
        } catch {
            // A non-blocking connect to a live listener with a full backlog says EAGAIN: still alive.
            return error.errno.rawValue == EAGAIN
        }
    }

    /// Binds a listening socket at `path` with the file mode `mode` (0660: the daemon's group may
    /// connect): a stale socket file (nothing answers) is replaced; a live one, or a file that is
    /// not a socket, is refused.
    ///
    /// The corresponding C functions are `bind` and `listen`.
    public static func listen(at path: String, mode: mode_t = 0o660, backlog: CInt = 128) throws(ListenFailure) -> CInt {
        var info = stat()
        if lstat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFSOCK else {
                throw ListenFailure("\(path) exists and is not a socket; remove it or choose another --socket path")
            }
            if isAnswering(path) {
                throw ListenFailure("\(path): another shutter daemon is already answering on this socket (stop it, or give this one another --socket path)")
            }
            // A socket file left by a daemon that died without removing it.
            unlink(path)
        }
        guard var address = address(path) else {
            throw ListenFailure("\(path): a socket path must be 1 to 107 bytes")
        }
        let descriptor: CInt
        do throws(Failure) {
            descriptor = try make(nonBlocking: true, path: path)
        } catch {
            throw ListenFailure(error.description)
        }
        // The socket file gets its mode from the umask at bind(), so it is never more open than
        // `mode`, even for the moment before the chmod below.
        let oldMask = umask(~mode & 0o777)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        let bindErrno = Errno.current
        umask(oldMask)
        guard bound == 0 else {
            close(descriptor)
            throw ListenFailure("\(path): cannot create the API socket: \(bindErrno)"
                + (bindErrno.rawValue == ENOENT ? " (its directory does not exist)" : ""))
        }
        chmod(path, mode)
        guard Glibc.listen(descriptor, backlog) == 0 else {
            let error = Errno.current
            close(descriptor)
            unlink(path)
            throw ListenFailure("\(path): listen failed: \(error)")
        }
        return descriptor
    }
}
