#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A C `errno` value, printed with `strerror`'s text.
public struct Errno: RawRepresentable, Error, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: CInt

    public init(rawValue: CInt) { self.rawValue = rawValue }

    /// The calling thread's `errno` now.
    public static var current: Errno { Errno(rawValue: errno) }

    public static let permissionDenied = Errno(rawValue: EACCES)
    public static let notPermitted = Errno(rawValue: EPERM)
    public static let busy = Errno(rawValue: EBUSY)
    public static let noSuchFile = Errno(rawValue: ENOENT)
    public static let invalidArgument = Errno(rawValue: EINVAL)
    public static let notSupported = Errno(rawValue: EOPNOTSUPP)
    public static let interrupted = Errno(rawValue: EINTR)
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    public static let fileExists = Errno(rawValue: EEXIST)
    public static let ioError = Errno(rawValue: EIO)

    public var description: String { String(cString: strerror(rawValue)) + " (errno \(rawValue))" }
}
