#if canImport(Glibc)
import Glibc
#endif
import ShutterSystem

/// Where the local API's socket is: the installed service's, and a development daemon's own.
///
/// The installed service serves ``system`` (its unit says `--socket /run/shutter/shutter.sock`).
/// A `shutter run` given no socket serves the per-user one, in a directory only its user may
/// enter, so that `shutter status`, `ctl` and `events` reach a development daemon without
/// options, and no other user's daemon or client is involved.
public enum APISocketPaths {
    /// The installed service's socket (systemd's `RuntimeDirectory=shutter`).
    public static let system = "/run/shutter/shutter.sock"

    /// The per-user directory: `$XDG_RUNTIME_DIR/shutter` when the session has a runtime
    /// directory (an absolute path), else `/tmp/shutter-UID`.
    public static func userDirectory(environment: [String: String], user: uid_t) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            var directory = runtime
            while directory.count > 1, directory.hasSuffix("/") { directory.removeLast() }
            return (directory == "/" ? "" : directory) + "/shutter"
        }
        return "/tmp/shutter-\(user)"
    }

    /// The per-user socket, `shutter.sock` in ``userDirectory(environment:user:)``.
    public static func user(environment: [String: String], user: uid_t) -> String {
        userDirectory(environment: environment, user: user) + "/shutter.sock"
    }

    /// The sockets a client tries, in order: the one it was given (`--socket`, else
    /// `$SHUTTER_SOCKET`) alone; else the per-user socket, then the installed service's. The
    /// per-user one is left out when its directory exists but is not the user's own, closed to
    /// others: a socket there could be anyone's.
    public static func candidates(given: String?, environment: [String: String], user: uid_t) -> [String] {
        if let given = given ?? environment["SHUTTER_SOCKET"], !given.isEmpty { return [given] }
        let directory = userDirectory(environment: environment, user: user)
        var info = stat()
        let usable = lstat(directory, &info) != 0 || isPrivateDirectory(directory, of: user)
        return usable ? [self.user(environment: environment, user: user), system] : [system]
    }

    /// Why the per-user directory cannot hold the socket, after making it (mode 0700) when it
    /// is missing; nil when it can. A directory of another user (someone made `/tmp/shutter-UID`
    /// first) or one open to others is refused: whoever controls it could put their own
    /// socket in its place.
    ///
    /// The corresponding C functions are `mkdir` and `lstat`.
    public static func prepareUserDirectory(_ directory: String, of user: uid_t) -> String? {
        if mkdir(directory, 0o700) != 0, errno != EEXIST {
            return "cannot make \(directory): \(String(cString: strerror(errno)))"
        }
        return isPrivateDirectory(directory, of: user) ? nil
            : "\(directory) is not a directory of user \(user) closed to others (mode 0700): remove it, or give --socket PATH"
    }

    /// Whether `directory` is a real directory (not a link) owned by `user` that no one else may enter.
    static func isPrivateDirectory(_ directory: String, of user: uid_t) -> Bool {
        var info = stat()
        return lstat(directory, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR && info.st_uid == user
            && info.st_mode & 0o077 == 0
    }
}
