#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShutterCore
import ShutterGPIO
import ShutterAPI
import ShutterHTTP
import ShutterMQTT
import ShutterNode
import ShutterService
import ShutterSystem

// MARK: - record

/// The board of a command that needs real hardware, and its `--seconds`.
func hardwareBoard(_ arguments: ParsedArguments, command: String, instead: String) throws -> (Board, Double?) {
    let path = arguments.value("--board")!
    let board = try loadBoard(path)
    let seconds = try arguments.number("--seconds", command: command)
    guard board.chip != .simulator else {
        throw CommandFailure("\(path): the simulator chip has no hardware to \(command); \(instead)")
    }
    return (board, seconds)
}

func recordTrace(_ arguments: ParsedArguments) throws -> Int32 {
    let (board, seconds) = try hardwareBoard(arguments, command: "record",
        instead: "write a trace by hand and use 'shutter replay', or record on a board with a real chip")
    var sink = STDOUT_FILENO
    if let path = arguments.value("--out"), path != "-" {
        sink = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard sink >= 0 else {
            throw CommandFailure("\(path): cannot write the trace: \(Errno.current)")
        }
    }
    defer { if sink != STDOUT_FILENO { close(sink) } }
    let (_, watcher) = try watchLines(of: board, consumer: "shutter-record")
    defer { watcher.close() }

    let loop = try EventLoop()
    let origin = loop.clock.now
    let end = seconds.map { origin + .seconds($0) }
    var edges: [Edge] = []
    var count = 0
    var lostTotal = 0
    let read = {
        edges.removeAll(keepingCapacity: true)
        let lost = try watcher.readEdges(into: &edges)
        if lost > 0 {
            lostTotal += lost
            Console.error("shutter record: the kernel dropped \(lost) edges (event queue overflow); the trace has a gap here")
        }
        for edge in edges {
            // Each line is written as it happens, so an interrupted recording is still a valid trace.
            guard Console.write(Trace.line(for: edge, origin: origin, board: board) + "\n", to: sink) else {
                throw CommandFailure("cannot write the trace: \(Errno.current)")
            }
            count += 1
        }
    }
    for descriptor in watcher.pollDescriptors { loop.watch(descriptor, handler: read) }
    loop.nextDeadline = { end }
    loop.deadlineReached = { _ in loop.stop() }
    Console.error("shutter record: recording \(board.lines.count) lines on \(board.chip) (\(LibGPIOD.summary)); stop with Ctrl-C")
    try loop.run()
    try read()
    let elapsed = (loop.clock.now - origin).milliseconds / 1000
    Console.error("shutter record: \(count) edges in \(JSONLine.number(elapsed, decimals: 1)) s" + (lostTotal > 0 ? ", \(lostTotal) lost" : ""))
    return ExitStatus.success
}

// MARK: - monitor

func monitorLines(_ arguments: ParsedArguments) throws -> Int32 {
    let (board, seconds) = try hardwareBoard(arguments, command: "monitor",
        instead: "use 'shutter run' (it reads simulated edges from standard input) or 'shutter replay'")
    let (_, watcher) = try watchLines(of: board, consumer: "shutter-monitor")
    defer { watcher.close() }
    let loop = try EventLoop()
    let origin = loop.clock.now
    let end = seconds.map { origin + .seconds($0) }
    let interpreter = GestureDriver(board: board, watcher: watcher)
    let text = MonitorText(board: board, origin: origin)
    let stamp = text.stamp
    // Each edge is written as it is read, before the recognizer's events it leads to.
    interpreter.observeEdge = { edge in Console.out(text.edge(edge)) }
    interpreter.emit = { event in Console.out("\(stamp(event.time))  → \(event.json)") }
    if arguments.has("--explain") {
        interpreter.explain = { explanation in Console.error("\(stamp(explanation.time))  why \(explanation.line)") }
    }
    interpreter.reportLostEdges = { count, time in Console.out("\(stamp(time))  ! \(count) edges lost (kernel event queue overflow)") }
    let levels = try watcher.currentLevels()
    let held = board.lines.indices.filter { levels[$0] }.map { board.lines[$0].name }
    Console.out("monitoring \(board.lines.count) lines on \(board.chip), \(LibGPIOD.summary); Ctrl-C to stop"
        + (held.isEmpty ? "" : "\nactive now: " + held.joined(separator: ", ")))
    for descriptor in watcher.pollDescriptors {
        loop.watch(descriptor) { try interpreter.pump(now: loop.clock.now) }
    }
    loop.nextDeadline = { [end] in [interpreter.nextDeadline, end].compactMap { $0 }.min() }
    loop.deadlineReached = { now in
        if let end, now >= end { loop.stop() }
        try interpreter.pump(now: now)
    }
    try loop.run()
    interpreter.finish(at: loop.clock.now)
    return ExitStatus.success
}
