#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import ShutterCore
@testable import ShutterService
@testable import ShutterSystem

/// A test's client of the daemon's socket: the daemon runs on the same thread, so every wait
/// turns the rig's loop while looking for the reply.
final class TestClient {
    let descriptor: CInt
    let rig: TestRig
    private var buffer: [UInt8] = []
    private(set) var closedByDaemon = false

    init(_ rig: TestRig) throws {
        self.rig = rig
        descriptor = try UnixSocket.connectClient(to: rig.socketPath)
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        try rig.turn()
    }

    deinit { close(descriptor) }

    /// Sends `bytes`, turning the rig's loop while the socket is full (the daemon reads on this thread).
    ///
    /// - Throws: what the rig's loop threw while the socket was full.
    func sendRaw(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0 {
                if errno == EAGAIN { try rig.turn(); continue }
                return
            }
            offset += written
        }
    }

    func send(_ line: String) throws { try sendRaw(Array((line + "\n").utf8)) }

    /// Reads what has arrived without waiting.
    private func pull() {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(descriptor, &chunk, chunk.count, Int32(MSG_DONTWAIT))
            if count > 0 { buffer.append(contentsOf: chunk[..<count]); continue }
            if count == 0 { closedByDaemon = true }
            return
        }
    }

    /// The next line, turning the daemon's loop until it comes (nil when the daemon closed first).
    ///
    /// - Throws: what the daemon's loop threw while waiting (never swallowed).
    func readLine(turns: Int = 500) throws -> String? {
        for _ in 0..<turns {
            pull()
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeFirst(newline + 1)
                return line
            }
            if closedByDaemon { return nil }
            try rig.daemon.loop.runOnce(timeoutMilliseconds: 2)
        }
        return nil
    }

    /// Sends `line` and returns the reply as an object.
    func call(_ line: String) throws -> [String: JSONValue] {
        try send(line)
        while let reply = try readLine() {
            let members = try #require(object(reply))
            if members["ok"] != nil { return members }
        }
        throw TestTimeout(what: "reply to \(line)")
    }

    /// Turns the loop until the daemon has closed this connection.
    ///
    /// - Throws: what the daemon's loop threw while waiting.
    func waitUntilClosed() throws -> Bool {
        for _ in 0..<500 where !closedByDaemon {
            pull()
            try rig.daemon.loop.runOnce(timeoutMilliseconds: 2)
        }
        return closedByDaemon
    }
}

func object(_ line: String) -> [String: JSONValue]? {
    guard case .object(let members)? = try? JSONValue.parse(Array(line.utf8)) else { return nil }
    return members
}
