#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import ShutterService
import ShutterSystem

/// The HTTP server's listening TCP socket, made here (not by libmicrohttpd) so that binding
/// fails with errno and the address named, and port 0 tells which port the kernel chose.
enum HTTPSocket {
    /// A bound, listening, non-blocking, close-on-exec socket on `endpoint`, and its port.
    ///
    /// - Throws: ``HTTPServer/Failure`` naming the address and errno (in use, not this
    ///   machine's address, a port below 1024 without the capability).
    ///
    /// The corresponding C functions are `inet_pton`, `socket`, `bind`, `listen` and `getsockname`.
    /// - Parameter sendBuffer: `SO_SNDBUF` for the connections (Linux copies it from the listener
    ///   to each accepted socket); nil leaves the kernel's autotuning.
    static func listen(_ endpoint: HTTPEndpoint, backlog: CInt, sendBuffer: Int? = nil) throws(HTTPServer.Failure) -> (descriptor: CInt, port: Int) {
        var storage = sockaddr_storage()
        let length: socklen_t
        let family: CInt
        let parsed: CInt
        if endpoint.address.contains(":") {
            family = AF_INET6
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            parsed = withUnsafeMutableBytes(of: &storage) { raw in
                let address = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in6.self)
                address.pointee.sin6_family = sa_family_t(AF_INET6)
                address.pointee.sin6_port = in_port_t(UInt16(endpoint.port)).bigEndian
                return inet_pton(AF_INET6, endpoint.address, &address.pointee.sin6_addr)
            }
        } else {
            family = AF_INET
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
            parsed = withUnsafeMutableBytes(of: &storage) { raw in
                let address = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in.self)
                address.pointee.sin_family = sa_family_t(AF_INET)
                address.pointee.sin_port = in_port_t(UInt16(endpoint.port)).bigEndian
                return inet_pton(AF_INET, endpoint.address, &address.pointee.sin_addr)
            }
        }
        guard parsed == 1 else {
            throw HTTPServer.Failure("http \(endpoint): '\(endpoint.address)' is not a numeric IPv4 or IPv6 address")
        }
        let descriptor = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard descriptor >= 0 else { throw HTTPServer.Failure("http \(endpoint): socket failed: \(Errno.current)") }
        // A restarted daemon binds again at once, without waiting out the old connections' TIME_WAIT.
        var one: CInt = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<CInt>.size))
        if let sendBuffer {
            var size = CInt(clamping: sendBuffer)
            setsockopt(descriptor, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<CInt>.size))
        }
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else {
            let error = Errno.current
            close(descriptor)
            let hint = switch error.rawValue {
            case EADDRINUSE: " (another program listens there: stop it or choose another port)"
            case EADDRNOTAVAIL: " (not an address of this machine)"
            case EACCES: " (ports below 1024 need root or CAP_NET_BIND_SERVICE)"
            default: ""
            }
            throw HTTPServer.Failure("http \(endpoint): cannot bind: \(error)\(hint)")
        }
        guard Glibc.listen(descriptor, backlog) == 0 else {
            let error = Errno.current
            close(descriptor)
            throw HTTPServer.Failure("http \(endpoint): listen failed: \(error)")
        }
        var actual = sockaddr_storage()
        var actualLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &actualLength) }
        }
        // sin_port and sin6_port sit at the same offset, right after the family.
        let port = withUnsafeBytes(of: &actual) { raw in
            Int(UInt16(bigEndian: raw.load(fromByteOffset: 2, as: UInt16.self)))
        }
        return (descriptor, port)
    }
}
