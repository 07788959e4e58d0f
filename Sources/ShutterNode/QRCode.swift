#if canImport(Glibc)
import Glibc
#endif
import CQRencode
import ShutterCore

/// A QR code: a square of dark and light modules, made by libqrencode.
public struct QRCode: Sendable {
    /// Why a text could not be encoded.
    public struct Failure: Error, CustomStringConvertible {
        public var errno: CInt
        public var description: String
    }

    /// Modules per side.
    public let width: Int
    /// Row by row, `true` for a dark module.
    public let modules: [Bool]

    /// Encodes `text` as bytes at error correction level M (a phone reads it off a screen).
    ///
    /// The corresponding C functions are `QRcode_encodeString8bit` and `QRcode_free`.
    public init(encoding text: String) throws(Failure) {
        guard let code = QRcode_encodeString8bit(text, 0, QR_ECLEVEL_M) else {
            let error = Glibc.errno
            throw Failure(errno: error, description: "cannot make a QR code of \(text.utf8.count) bytes: \(String(cString: strerror(error)))")
        }
        defer { QRcode_free(code) }
        width = Int(code.pointee.width)
        modules = (0..<width * width).map { shutter_qr_module_is_dark(code, CInt($0)) != 0 }
    }

    public func isDark(row: Int, column: Int) -> Bool {
        row >= 0 && row < width && column >= 0 && column < width && modules[row * width + column]
    }

    /// The code for a terminal: two rows of modules a line in half blocks, white on black set
    /// explicitly (so a light theme does not invert it), inside the four-module quiet zone a
    /// reader needs.
    public var terminalText: String {
        let quiet = 4
        let span = -quiet..<(width + quiet)
        var lines: [String] = []
        for top in stride(from: -quiet, to: width + quiet, by: 2) {
            var line = "\u{1B}[97;40m"
            for column in span {
                // The light modules are drawn: the block's upper half is `top`, its lower half the row below.
                let upper = !isDark(row: top, column: column), lower = !isDark(row: top + 1, column: column)
                line += upper ? (lower ? "█" : "▀") : (lower ? "▄" : " ")
            }
            lines.append(line + "\u{1B}[0m")
        }
        return lines.joined(separator: "\n")
    }
}

/// The machine's IPv4 addresses other than loopback, on interfaces that are up: where a phone on
/// the rig's network reaches a server bound to every address.
///
/// The corresponding C functions are `getifaddrs`, `inet_ntop` and `freeifaddrs`.
public func localIPv4Addresses() -> [String] {
    var list: UnsafeMutablePointer<ifaddrs>?
    guard getifaddrs(&list) == 0 else { return [] }
    defer { freeifaddrs(list) }
    var addresses: [String] = []
    var entry = list
    while let current = entry {
        defer { entry = current.pointee.ifa_next }
        let flags = Int32(bitPattern: current.pointee.ifa_flags)
        guard let address = current.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET),
              flags & Int32(IFF_UP) != 0, flags & Int32(IFF_LOOPBACK) == 0 else { continue }
        var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        let converted = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { inet in
            var raw = inet.pointee.sin_addr
            return inet_ntop(AF_INET, &raw, &text, socklen_t(text.count)) != nil
        }
        if converted { addresses.append(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)) }
    }
    return addresses
}

/// The links to live view at `link` (``HTTPServer/link(endpoint:token:)``) that a phone can
/// open: bound to every address (`0.0.0.0`, `::`), one for each of this machine's own IPv4
/// addresses in its place; else `link` alone.
public func liveViewLinks(_ link: String, endpoint: HTTPEndpoint) -> [String] {
    let wildcard = endpoint.address == "0.0.0.0" || endpoint.address == "::"
    let hosts = wildcard ? localIPv4Addresses() : []
    return hosts.isEmpty ? [link] : hosts.map { link.replacingEvery("//\(endpoint)/", with: "//\($0):\(endpoint.port)/") }
}
