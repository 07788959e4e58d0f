#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
#if compiler(>=6.1)
import Synchronization
#endif

#if compiler(>=6.1)
/// A value behind a lock, shared between the event loop and the threads that work for it
/// (a camera's, an encoder's, an HTTP server's, an MQTT client's).
///
/// `withLock` is inlinable so the capture path's per-frame hand-overs are specialised in the
/// modules that use it, as they were when each module had its own lock.
public final class Locked<Value: Sendable>: Sendable {
    @usableFromInline let mutex: Mutex<Value>

    public init(_ value: Value) { mutex = Mutex(value) }

    /// Runs `body` with the value, holding the lock; `body` must not block (the loop may be waiting).
    @inlinable
    public func withLock<Result: Sendable>(_ body: (inout sending Value) -> sending Result) -> Result {
        mutex.withLock(body)
    }
}
#else
/// A value behind a lock, shared between the event loop and the threads that work for it.
///
/// Swift 6.0 (Debian 13's swiftlang 6.0.3) stops in IRGen on a generic class that stores a
/// `Mutex` of its parameter (assertion "Not a nested archetype"), so with it the value sits
/// behind a `pthread_mutex_t` instead (at a fixed address of its own: a pthread mutex must not
/// move); only `withLock` touches it.
///
/// The corresponding C functions are `pthread_mutex_lock` and `pthread_mutex_unlock`.
public final class Locked<Value: Sendable>: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline var value: Value

    public init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let result = pthread_mutex_init(mutex, nil)
        precondition(result == 0, "pthread_mutex_init failed: \(result)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with the value, holding the lock; `body` must not block (the loop may be waiting).
    @inlinable
    public func withLock<Result: Sendable>(_ body: (inout sending Value) -> sending Result) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body(&value)
    }
}
#endif
