import Foundation
import Testing

/// `shutter wiring` and what `shutter check` says of the header, run as a user runs them: the
/// built executable beside this test bundle.
@Suite struct WiringCommandTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// Runs `shutter ARGUMENTS` to its end; its exit status and standard output.
    func shutter(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: LibraryLoadingTests.shutter)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test("'wiring --svg' writes the picture the guide shows, to a file or to standard output")
    func svgOutput() throws {
        let board = Self.root.appendingPathComponent("Boards/raspberry-pi-5.json").path
        let committed = try String(contentsOf: Self.root.appendingPathComponent("Docs/wiring/raspberry-pi-5.svg"), encoding: .utf8)
        let printed = try shutter(["wiring", board, "--svg", "-"])
        #expect(printed.status == 0)
        #expect(printed.output == committed)

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("shutter-wiring-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("pi5.svg").path
        #expect(try shutter(["wiring", board, "--svg", file]).status == 0)
        #expect(try String(contentsOfFile: file, encoding: .utf8) == committed)
    }

    @Test("'check' names each line's header pin and marks a line the header does not carry")
    func checkMarksLinesOffTheHeader() throws {
        var text = try String(contentsOf: Self.root.appendingPathComponent("Boards/raspberry-pi-5.json"), encoding: .utf8)
        text = text.replacingOccurrences(of: #""line": "GPIO6""#, with: #""line": "GPIO60""#)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("shutter-wiring-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let board = directory.appendingPathComponent("rig.json")
        try Data(text.utf8).write(to: board)
        let checked = try shutter(["check", board.path])
        #expect(checked.status == 0)
        let rows = checked.output.split(separator: "\n").map(String.init)
        #expect(rows.contains { $0.hasPrefix("  half ") && $0.contains("header pin 29") })
        #expect(rows.contains { $0.hasPrefix("  full ") && $0.contains("NOT ON THE HEADER: GPIO60 is not on the 40-pin header") })
    }
}
