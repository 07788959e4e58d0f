import Foundation
import Testing
@testable import ShutterNode
@testable import ShutterService

/// The QR code of the live view's link: what a phone scans off the terminal.
@Suite("QR code of the live view's link")
struct QRCodeTests {
    static let link = "http://192.0.2.10:8080/?token=0123456789abcdef0123456789abcdef"

    /// The three finder patterns: a dark 7×7 ring, a light ring inside it, a dark 3×3 centre.
    @Test func theCodeHasItsThreeFinderPatterns() throws {
        let code = try QRCode(encoding: Self.link)
        // A version-v symbol is 4v + 17 modules wide; this link needs more than version 1.
        #expect((code.width - 17) % 4 == 0 && code.width > 21)
        for (top, left) in [(0, 0), (0, code.width - 7), (code.width - 7, 0)] {
            for row in 0..<7 {
                for column in 0..<7 {
                    let ring = max(abs(row - 3), abs(column - 3))
                    #expect(code.isDark(row: top + row, column: left + column) == (ring != 2),
                            "module \(top + row),\(left + column)")
                }
            }
        }
    }

    @Test func aLongerTextNeedsALargerCode() throws {
        #expect(try QRCode(encoding: Self.link + String(repeating: "x", count: 200)).width > QRCode(encoding: Self.link).width)
    }

    @Test func theTerminalTextHasTwoRowsALineInsideAQuietZone() throws {
        let code = try QRCode(encoding: Self.link)
        let lines = code.terminalText.split(separator: "\n")
        #expect(lines.count == (code.width + 8 + 1) / 2)
        for line in lines {
            let visible = line.replacingOccurrences(of: "\u{1B}[97;40m", with: "").replacingOccurrences(of: "\u{1B}[0m", with: "")
            #expect(visible.count == code.width + 8)
        }
        // The quiet zone is light: the first line (rows -4 and -3) is all full blocks.
        let first = lines[0].replacingOccurrences(of: "\u{1B}[97;40m", with: "").replacingOccurrences(of: "\u{1B}[0m", with: "")
        #expect(first.allSatisfy { $0 == "█" })
        // Rows 0 and 1 start the top-left finder after the 4 quiet columns: row 0 dark for 7 modules,
        // row 1 dark at both ends and light between, so the light lower halves show as "▄".
        let third = Array(lines[2].replacingOccurrences(of: "\u{1B}[97;40m", with: "").replacingOccurrences(of: "\u{1B}[0m", with: ""))
        #expect(third[4] == " " && third[10] == " ")
        #expect(third[5..<10].allSatisfy { $0 == "▄" })
    }

    static let zbarimg = "/usr/bin/zbarimg"

    /// The terminal text read back into modules (as the screen shows them), drawn 8 pixels a
    /// module and read by zbar (Deploy/setup.sh installs zbar-tools): the link comes back whole.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: zbarimg), "needs zbarimg (zbar-tools)"))
    func aReaderGetsTheLinkBackFromTheTerminalText() throws {
        let text = try QRCode(encoding: Self.link).terminalText
        var rows: [[Bool]] = []
        for line in text.split(separator: "\n") {
            let visible = line.replacingOccurrences(of: "\u{1B}[97;40m", with: "").replacingOccurrences(of: "\u{1B}[0m", with: "")
            rows.append(visible.map { $0 == "█" || $0 == "▀" })   // light upper halves
            rows.append(visible.map { $0 == "█" || $0 == "▄" })   // light lower halves
        }
        let scale = 8, width = rows[0].count * scale
        var image = Array("P5 \(width) \(rows.count * scale) 255\n".utf8)
        for row in rows {
            let pixels = row.flatMap { light in [UInt8](repeating: light ? 255 : 0, count: scale) }
            for _ in 0..<scale { image += pixels }
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("shutter-qr-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("link.pgm")
        try Data(image).write(to: file)
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: Self.zbarimg)
        reader.arguments = ["-q", "--raw", file.path]
        let output = Pipe()
        reader.standardOutput = output
        reader.standardError = FileHandle.nullDevice
        try reader.run()
        let decoded = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        reader.waitUntilExit()
        #expect(decoded.trimmingCharacters(in: .newlines) == Self.link)
    }

    @Test func theMachinesAddressesAreNumericAndNotLoopback() {
        for address in localIPv4Addresses() {
            #expect(!address.hasPrefix("127."))
            #expect(address.split(separator: ".").compactMap { UInt8($0) }.count == 4, "\(address)")
        }
    }
}
