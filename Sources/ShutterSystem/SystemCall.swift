#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Runs `call`, a system call that returns a negative value and sets `errno` when it fails, and
/// returns its value or that errno; while it fails with `EINTR` (a signal arrived during it) it
/// runs again when `retryOnInterrupt`.
///
/// The one place that retries EINTR, as swift-system does. Callers map the ``Errno`` to their
/// own error (which call, which device or file) where they make the call. Inlined: it is on the
/// event loop's and the camera's paths, and costs no more than the loop it replaces.
@inlinable
public func valueOrErrno<Value: FixedWidthInteger>(retryOnInterrupt: Bool = true, _ call: () -> Value) -> Result<Value, Errno> {
    while true {
        let value = call()
        if value >= 0 { return .success(value) }
        let code = errno
        if retryOnInterrupt, code == EINTR { continue }
        return .failure(Errno(rawValue: code))
    }
}

/// ``valueOrErrno(retryOnInterrupt:_:)`` for a call whose value says only that it worked (0).
@inlinable
public func nothingOrErrno<Value: FixedWidthInteger>(retryOnInterrupt: Bool = true, _ call: () -> Value) -> Result<Void, Errno> {
    valueOrErrno(retryOnInterrupt: retryOnInterrupt, call).map { _ in () }
}
