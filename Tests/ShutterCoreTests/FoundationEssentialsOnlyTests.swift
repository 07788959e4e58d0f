import Foundation
import Testing

/// The `shutter` executable's modules import FoundationEssentials, never full Foundation, whose
/// libraries (libFoundation, libFoundationInternationalization, lib_FoundationICU: 6.1 MiB of a
/// streaming daemon's peak RSS) would then be mapped into it. Full Foundation stays
/// only as the fallback of `#if canImport(FoundationEssentials)`.
@Suite("FoundationEssentials only")
struct FoundationEssentialsOnlyTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Sources")

    @Test(arguments: ["ShutterCore", "ShutterSystem", "ShutterGPIO", "ShutterCapture", "ShutterService", "ShutterAPI", "ShutterHTTP",
                     "ShutterMQTT", "ShutterNode", "shutter"])
    func moduleImportsNoFullFoundation(module: String) throws {
        let directory = Self.sources.appendingPathComponent(module)
        let files = try #require(FileManager.default.enumerator(atPath: directory.path)).compactMap { $0 as? String }
            .filter { $0.hasSuffix(".swift") }
        #expect(!files.isEmpty)
        for file in files {
            let lines = try String(contentsOfFile: directory.appendingPathComponent(file).path, encoding: .utf8)
                .split(separator: "\n", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            for (index, line) in lines.enumerated() where line.hasSuffix("import Foundation") {
                let fallback = index >= 2 && lines[index - 1] == "#else" && lines[index - 2] == "import FoundationEssentials"
                #expect(fallback, "\(module)/\(file):\(index + 1): import FoundationEssentials instead (see the Package's shutter target)")
            }
        }
    }
}
