import Foundation
import ShutterCore
import ShutterSystem

// Pushes a long synthetic trace (bounced full clicks, light presses, double presses, swipes across
// the whole strip and back, and sub-glitch noise) through GestureStateMachine, on the board given and
// on generated copies of the simulator board with 6, 16, 32 and 64 pads, and prints edges per second
// and nanoseconds per edge for each, then the per-edge cost of 64 pads over 6: the recognizer's
// cost per edge should not grow with the strip. With --trace, writes the same trace as a trace
// file instead, for timing `shutter replay` on it.

let usage = """
    usage: shutter-bench [passes] [board]
           shutter-bench --trace FILE EDGES [board]
      passes  measured passes of the trace on each board (default 20; one warm-up pass first)
      board   board file measured first (default Boards/simulator.json); then generated boards
              with 6, 16, 32 and 64 pads, and the ratio of ns/edge for 64 pads over 6
      --trace writes the first EDGES edges of the trace on board, passes one after another, to
              FILE as a trace file (`shutter replay --board board --trace FILE` reads it)
    Build with -c release for figures that mean anything.
    """
let spec = CommandSpec(
    program: "shutter-bench", name: "", summary: "Throughput of the gesture state machines.", synopsis: "[passes] [board]",
    options: [OptionSpec(name: "--trace", valueName: "FILE", help: "write the trace to FILE instead of measuring it")],
    optionalPositionals: ["passes", "board"])
/// Refuses the command line: the reason, then the usage, exit status 2.
func refuse(_ message: String) -> Never {
    FileHandle.standardError.write(Data("shutter-bench: \(message)\n\(usage)\n".utf8))
    exit(2)
}
let arguments: ParsedArguments
do {
    arguments = try ParsedArguments(Array(CommandLine.arguments.dropFirst()), spec: spec)
} catch let error as UsageError {
    refuse(error.message)
} catch {
    refuse("\(error)")
}
if arguments.wantsHelp {
    print(usage)
    exit(0)
}
var traceRequest: (path: String, edges: Int)?
let passes: Int
if let path = arguments.value("--trace") {
    // With --trace, the first word is EDGES, and the trace is one pass after another.
    guard let edges = arguments.positionals.first.flatMap({ Int($0) }), edges > 0 else {
        refuse("--trace needs a file and a positive number of edges")
    }
    traceRequest = (path, edges)
    passes = 1
} else {
    guard let given = arguments.positionals.first.map({ Int($0) }) ?? 20, given > 0 else {
        refuse("passes must be a positive number")
    }
    passes = given
}
let boardPath = arguments.positionals.count > 1 ? arguments.positionals[1] : "Boards/simulator.json"
let shipped: Board
do {
    shipped = try Board.load(path: boardPath)
} catch {
    FileHandle.standardError.write(Data("shutter-bench: \(error)\n".utf8))
    exit(1)
}

/// The simulator board's lines, gestures and controls with `pads` pads, through the same parser
/// and validation `shutter check` uses.
func generatedBoard(pads: Int) -> Board {
    let padLines = (0..<pads).map { #"{"name": "pad\#($0)", "role": "pad"}"# }.joined(separator: ", ")
    let text = """
    {"name": "generated-\(pads)-pads", "chip": "simulator",
     "lineDefaults": {"activeLow": false, "bias": "as-is", "debounceMs": 5},
     "lines": [{"name": "half", "role": "half"}, {"name": "full", "role": "full"},
               {"name": "secondary", "role": "secondary"}, \(padLines)],
     "gestures": {"glitchFilterMs": 5, "lightPressMaxMs": 350, "doublePressWindowMs": 300, "tapMaxMs": 180, "burst": true},
     "controls": [
       {"id": "zoom", "kind": "systemZoom", "label": "Zoom", "range": [1, 8], "initial": 1},
       {"id": "exposure", "kind": "systemExposureBias", "label": "Exposure", "range": [-2, 2], "step": 0.3333333333333333, "initial": 0},
       {"id": "filter", "kind": "picker", "label": "Filter", "titles": ["None", "Mono", "Vivid", "Warm"], "initial": "None"}]}
    """
    do {
        return try Board.decode(Data(text.utf8), file: "generated-\(pads)-pads.json")
    } catch {
        FileHandle.standardError.write(Data("shutter-bench: generated board with \(pads) pads: \(error)\n".utf8))
        exit(1)
    }
}

/// A seeded generator, so the trace is the same on every run.
extension SplitMix64 {
    mutating func ms(_ low: Double, _ high: Double) -> Int64 {
        Int64((low + Double(next() % 1_000_000) / 1_000_000 * (high - low)) * 1e6)
    }
}

/// One pass of the synthetic trace, times from zero.
func makePass(board: Board) -> [Edge] {
    var random = SplitMix64(seed: 7)
    var edges: [Edge] = []
    let half = board.line(named: "half"), full = board.line(named: "full")!
    let pads = board.pads
    var t: Int64 = 100_000_000
    func change(_ line: LineIndex, _ active: Bool, _ time: Int64) {
        edges.append(Edge(line: line, active: active, time: .nanoseconds(time)))
        // Contact bounce: three quick flips, settling on `active`.
        var at = time
        for flip in 0..<6 {
            at += 200_000 + Int64(random.next() % 400_000)
            edges.append(Edge(line: line, active: flip % 2 == 0 ? !active : active, time: .nanoseconds(at)))
        }
    }
    for round in 0..<2_000 {
        switch round % 4 {
        case 0 where half != nil:     // full click
            change(half!, true, t); change(full, true, t + 30_000_000)
            change(full, false, t + 160_000_000); change(half!, false, t + 190_000_000)
            t += 190_000_000
        case 1 where half != nil:     // double light press
            change(half!, true, t); change(half!, false, t + random.ms(80, 200))
            t += 400_000_000
            change(half!, true, t); change(half!, false, t + random.ms(80, 200))
            t += 200_000_000
        default:                      // swipe across the strip and back
            let order = Array(pads) + Array(pads.reversed().dropFirst())
            for (step, pad) in order.enumerated() {
                let on = t + Int64(step) * 60_000_000
                change(pad, true, on)
                change(pad, false, on + 75_000_000)
            }
            t += Int64(order.count) * 60_000_000 + 75_000_000
        }
        // A sub-glitch pulse on a random line between gestures.
        let line = LineIndex(Int(random.next() % UInt64(board.lines.count)))
        edges.append(Edge(line: line, active: true, time: .nanoseconds(t + 200_000_000)))
        edges.append(Edge(line: line, active: false, time: .nanoseconds(t + 202_000_000)))
        t += random.ms(450, 900) * 1 + 250_000_000
    }
    return edges.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
}

/// Feeds one pass shifted by `offset` ns, the way the daemon does: advance, then the edge.
@inline(never)
func run(pass: [Edge], offset: Int64, machine: inout GestureStateMachine, events: inout [ShutterEvent],
         eventCount: inout Int) {
    for edge in pass {
        let shifted = Edge(line: edge.line, active: edge.active, time: .nanoseconds(edge.time.rawValue + offset))
        machine.advance(to: shifted.time, into: &events)
        machine.edge(shifted, into: &events)
        eventCount &+= events.count
        events.removeAll(keepingCapacity: true)
    }
}

/// A warm-up pass, then `passes` measured ones on a fresh machine; prints one row and returns ns/edge.
func measure(_ board: Board) -> Double {
    let pass = makePass(board: board)
    let passLength = pass.last!.time.rawValue + 10_000_000_000
    var machine = GestureStateMachine(board: board)
    var events: [ShutterEvent] = []
    events.reserveCapacity(64)
    var eventCount = 0
    run(pass: pass, offset: 0, machine: &machine, events: &events, eventCount: &eventCount)
    eventCount = 0
    let clock = ContinuousClock()
    let start = clock.now
    for index in 1...passes {
        run(pass: pass, offset: Int64(index) * passLength, machine: &machine, events: &events, eventCount: &eventCount)
    }
    let elapsed = start.duration(to: clock.now)
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let edgeCount = pass.count * passes
    let perEdge = seconds * 1e9 / Double(edgeCount)
    let name = board.name.padding(toLength: 20, withPad: " ", startingAt: 0)
    print("\(name) \(String(format: "%4d", board.pads.count)) pads  \(String(format: "%9d", edgeCount)) edges  "
          + "\(String(format: "%7d", eventCount)) events  \(String(format: "%6.3f", seconds)) s  "
          + "\(String(format: "%12.0f", Double(edgeCount) / seconds)) edges/s  \(String(format: "%6.1f", perEdge)) ns/edge")
    return perEdge
}

/// Passes one after another, each shifted past the last, until `count` edges, as a trace file's lines.
func writeTrace(board: Board, count: Int, to path: String) {
    let pass = makePass(board: board)
    let passLength = pass.last!.time.rawValue + 10_000_000_000
    var text = ""
    text.reserveCapacity(count * 48)
    for index in 0..<count {
        let edge = pass[index % pass.count]
        let shifted = Edge(line: edge.line, active: edge.active,
                           time: .nanoseconds(edge.time.rawValue + Int64(index / pass.count) * passLength))
        text += Trace.line(for: shifted, origin: .zero, board: board)
        text += "\n"
    }
    guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8)) else {
        FileHandle.standardError.write(Data("shutter-bench: cannot write \(path)\n".utf8))
        exit(1)
    }
}

if let traceRequest {
    writeTrace(board: shipped, count: traceRequest.edges, to: traceRequest.path)
    exit(0)
}

print("\(passes) passes per board (\(boardPath) first)")
_ = measure(shipped)
let perEdge = [6, 16, 32, 64].map { measure(generatedBoard(pads: $0)) }
print("per-edge cost, 64 pads / 6 pads: \(String(format: "%.2f", perEdge[3] / perEdge[0]))×")
