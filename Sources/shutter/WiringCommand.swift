import ShutterCore
import ShutterService
import ShutterSystem

// MARK: - wiring

func drawWiring(_ arguments: ParsedArguments) throws -> Int32 {
    let diagram = WiringDiagram(board: try loadBoard(arguments.positionals[0]))
    guard let target = arguments.value("--svg") else {
        Console.out(withoutFinalNewline(diagram.text))
        return ExitStatus.success
    }
    if target == "-" {
        Console.out(withoutFinalNewline(diagram.svg))
        return ExitStatus.success
    }
    do {
        try AtomicFile.replace(target, with: Array(diagram.svg.utf8), mode: 0o644)
    } catch {
        throw CommandFailure("cannot write the picture: \(error)")
    }
    Console.error("shutter wiring: \(target): \(diagram.connections.count) lines on the header"
        + (diagram.unplaced.isEmpty ? "" : ", \(diagram.unplaced.count) not on it"))
    return ExitStatus.success
}

/// `text` less its last newline, for ``Console/out(_:)``, which adds one.
private func withoutFinalNewline(_ text: String) -> String {
    text.hasSuffix("\n") ? String(text.dropLast()) : text
}
