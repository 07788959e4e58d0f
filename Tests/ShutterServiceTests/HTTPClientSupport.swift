#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import ShutterCore
@testable import ShutterHTTP
@testable import ShutterNode
@testable import ShutterService

/// A test's HTTP client of the daemon's server on 127.0.0.1 (never another address): raw
/// requests over a TCP socket, so malformed ones can be sent too. The daemon runs on the same
/// thread, so every wait turns the rig's loop.
final class HTTPTestClient {
    /// The socket; -1 once ``closeNow()`` closed it.
    private(set) var descriptor: CInt
    let rig: TestRig
    private(set) var received: [UInt8] = []
    private(set) var closedByServer = false

    /// Connects to the rig's HTTP server (on loopback, where a blocking connect completes at
    /// once: the kernel finishes the handshake before the server accepts).
    ///
    /// - Parameters:
    ///   - receiveBuffer: the socket's receive buffer, set before connecting so the window the
    ///     server sees stays that small (a viewer that stops reading fills it at once).
    ///   - source: another loopback address to connect from (`127.0.0.2`): another client.
    init(_ rig: TestRig, receiveBuffer: CInt? = nil, from source: String? = nil) throws {
        self.rig = rig
        let port = try #require(rig.node.http?.endpoint.port)
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        if var size = receiveBuffer {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<CInt>.size))
        }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            inet_pton(AF_INET, source, &local.sin_addr)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            try #require(bound == 0, "bind to \(source): errno \(errno)")
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port)).bigEndian
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(connected == 0, "connect to 127.0.0.1:\(port): errno \(errno)")
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    }

    /// Closes the socket now (a viewer leaving), once: closing the number again later would close
    /// whatever the process opened under it since, such as the server's side of another connection.
    func closeNow() {
        guard descriptor >= 0 else { return }
        close(descriptor)
        descriptor = -1
    }

    deinit { closeNow() }

    /// Sends `bytes`, turning the loop while the socket is full. A server that closed first ends it.
    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        var turns = 0
        while offset < bytes.count, turns < 5000 {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0 {
                guard errno == EAGAIN else { return }
                turns += 1
                try rig.daemon.loop.runOnce(timeoutMilliseconds: 2)
                continue
            }
            offset += written
        }
    }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Reads what has arrived, without waiting.
    func pull() {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(descriptor, &chunk, chunk.count, Int32(MSG_DONTWAIT))
            if count > 0 { received.append(contentsOf: chunk[..<count]); continue }
            if count == 0 || (errno != EAGAIN && errno != EINTR) { closedByServer = true }
            return
        }
    }

    /// Turns the loop until `condition` holds of what has arrived or the server closed; fails
    /// after 10 s of real time.
    func wait(_ what: String, until condition: (String) -> Bool) throws {
        let limit = Date().addingTimeInterval(10)
        while true {
            pull()
            if condition(text) || closedByServer { return }
            guard Date() < limit else { throw TestTimeout(what: what) }
            try rig.daemon.pump()
            try rig.daemon.loop.runOnce(timeoutMilliseconds: 5)
        }
    }

    var text: String { String(decoding: received, as: UTF8.self) }

    /// The response to one request sent with `Connection: close`: read until the server closes.
    func response(_ what: String = "response") throws -> HTTPTestResponse {
        try wait(what) { _ in false }
        return try #require(HTTPTestResponse(received), "no HTTP response: \(text.prefix(300))")
    }
}

/// A parsed response: status, headers (names lowercased), body.
struct HTTPTestResponse {
    var status: Int
    var headers: [String: String]
    var body: String

    init?(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let end = text.range(of: "\r\n\r\n") else { return nil }
        let head = text[..<end.lowerBound].components(separatedBy: "\r\n")
        let statusParts = head[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { return nil }
        self.status = status
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { $0 + ", " + value } ?? value
        }
        self.headers = headers
        body = String(text[end.upperBound...])
    }

    /// The body as a JSON object.
    var json: [String: JSONValue]? { object(body.trimmingCharacters(in: .whitespacesAndNewlines)) }
}

extension TestRig {
    /// A rig whose daemon serves HTTP on 127.0.0.1 with a port the kernel chooses.
    static func withHTTP(_ settings: HTTPSettings = HTTPSettings(endpoint: HTTPEndpoint(address: "127.0.0.1", port: 0)),
                         requiresToken: Bool? = nil, limits: HTTPServer.Limits = HTTPServer.Limits(), api: Bool = false) throws -> TestRig {
        var options = NodeOptions()
        options.http = settings
        options.httpRequiresToken = requiresToken
        options.httpLimits = limits
        return try TestRig(options: options, api: api)
    }

    /// Sends one request (`Connection: close`) and returns its response.
    ///
    /// - Parameters:
    ///   - headers: extra header lines, each without its CRLF.
    ///   - source: another loopback address to connect from (another client).
    func http(_ method: String, _ target: String, body: String? = nil, contentType: String? = "application/json",
              headers: [String] = [], from source: String? = nil) throws -> HTTPTestResponse {
        let client = try HTTPTestClient(self, from: source)
        var request = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        for header in headers { request += header + "\r\n" }
        if let body {
            if let contentType { request += "Content-Type: \(contentType)\r\n" }
            request += "Content-Length: \(body.utf8.count)\r\n\r\n" + body
        } else {
            request += "\r\n"
        }
        try client.send(request)
        return try client.response("\(method) \(target)")
    }

    /// Opens `/events` (HTTP/1.0: the stream comes unchunked) and waits until it is followed.
    func followEvents(headers: [String] = []) throws -> HTTPTestClient {
        let client = try HTTPTestClient(self)
        try client.send("GET /events HTTP/1.0\r\nHost: 127.0.0.1\r\n" + headers.map { $0 + "\r\n" }.joined() + "\r\n")
        try client.wait("the stream's first comment") { $0.contains(": shutter events") }
        return client
    }
}

/// The `data:` lines of a server-sent event stream, as JSON objects.
func eventObjects(_ stream: String) -> [[String: JSONValue]] {
    stream.components(separatedBy: "\n").compactMap { line in
        line.hasPrefix("data: ") ? object(String(line.dropFirst(6))) : nil
    }
}
