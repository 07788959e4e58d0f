#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShutterCore
import ShutterAPI
import ShutterHTTP
import ShutterMQTT
import ShutterNode
import ShutterService
import ShutterSystem

// MARK: - run

func runDaemon(_ arguments: ParsedArguments) throws -> Int32 {
    let boardPath = try arguments.value("--board") ?? defaultBoardPath()
    var board = try loadBoard(boardPath)
    let rig = try simulatedRig(board, arguments)
    if let rig {
        board = rig.board
        Console.error("shutter: \(rig.summary)")
    } else if let directory = arguments.value("--output") {
        board.output.directory = directory
    }
    var options = NodeOptions()
    options.boardPath = boardPath
    options.statePath = arguments.value("--state")
    options.keepsState = !arguments.has("--no-state")
    options.socketPath = arguments.value("--socket")
    // Without a socket asked for, the per-user one: `shutter status` and `ctl` find it.
    options.userSocketDirectory = APISocketPaths.userDirectory(environment: ProcessInfo.processInfo.environment, user: geteuid())
    options.controlGroup = arguments.value("--control-group")
    options.viewGroup = arguments.value("--view-group")
    options.explains = arguments.has("--explain")
    if let node = arguments.value("--mqtt-node") {
        if let problem = MQTTSettings.topicLevelProblem(node) { throw CommandFailure("--mqtt-node '\(node)' \(problem)") }
        options.mqttNode = node
    }
    if let endpoint = arguments.value("--http") {
        var http = board.http ?? HTTPSettings()
        do throws(HTTPEndpoint.Invalid) {
            http.endpoint = try HTTPEndpoint(parsing: endpoint)
        } catch {
            throw CommandFailure("--http \(error.description)")
        }
        options.http = http
    }
    let input = board.chip == .simulator ? SimulatorInputKind.of() : .trace
    if board.chip == .simulator, input != .trace { options.readsSimulatorInput = false }
    // The demo is the same every time: it starts from the board's values, and what it turns
    // (zoom, exposure, the filter) is not saved over the values a user's own run left.
    if board.chip == .simulator, input == .empty { options.keepsState = false }
    // In a terminal the overlay shows the events in words; JSON lines are for a pipe or a file.
    let drawsOverlay = isatty(STDOUT_FILENO) == 1
    if drawsOverlay { options.printsEvents = false }
    let node = try Node(board: board, options: options, cameraFactory: rig?.cameraFactory)
    let daemon = node.service
    daemon.notifier = SystemdNotifier.fromEnvironment()
    let overlay = drawsOverlay ? TerminalOverlay(daemon: daemon) : nil
    defer { overlay?.close() }
    var terminal: SimulatorTerminal?
    // Held for the whole run: the loop's closures refer to it without owning it.
    let gestures = board.chip == .simulator && input != .trace ? GesturePlayer(daemon: daemon) : nil
    if let player = gestures {
        switch input {
        case .terminal:
            terminal = SimulatorTerminal(daemon: daemon, player: player, overlay: overlay)
        case .empty:
            Console.error("shutter: standard input is empty: playing the demo session (light press, zoom, exposure, filter, a photo, a burst), "
                + "from the board's starting values; saved control values are neither read nor changed")
            DemoSession.play(on: player, daemon: daemon)
        case .trace:
            break
        }
    }
    defer { terminal?.restore() }
    try withExtendedLifetime(gestures) { try node.run() }
    return ExitStatus.success
}

/// The rig `--simulate` asks for (`--camera-module`, `--output`), or `nil` without it.
func simulatedRig(_ board: Board, _ arguments: ParsedArguments) throws -> SimulatedRig? {
    guard arguments.has("--simulate") else {
        if arguments.value("--camera-module") != nil { throw UsageError(message: "--camera-module needs --simulate") }
        return nil
    }
    return try SimulatedRig(board: board, moduleName: arguments.value("--camera-module"), outputDirectory: arguments.value("--output"))
}

/// The board `shutter run` uses without `--board`: the installed one, else the simulator board
/// from the checkout the binary was built in, else the installed copy of it.
func defaultBoardPath() throws -> String {
    let installed = "/etc/shutter/board.json"
    if FileManager.default.fileExists(atPath: installed) {
        Console.error("shutter: no --board given: using \(installed)")
        return installed
    }
    for candidate in simulatorBoardCandidates() where FileManager.default.fileExists(atPath: candidate) {
        Console.error("shutter: no --board given and no \(installed): using the simulator board \(candidate)")
        return candidate
    }
    throw CommandFailure("no --board given, no \(installed), and no simulator board found beside the binary or in "
        + "/usr/local/share/shutter/boards (install with Deploy/install.sh, or give --board FILE)")
}

/// Boards/simulator.json in the package the binary was built in (.build/<triple>/debug/shutter
/// sits 3 levels below it), then the installed share directories.
func simulatorBoardCandidates() -> [String] {
    var candidates: [String] = []
    let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    var directory = executable.parentPath
    for _ in 0..<5 {
        candidates.append(directory + "/Boards/simulator.json")
        directory = directory.parentPath
    }
    candidates.append("/usr/local/share/shutter/boards/simulator.json")
    candidates.append("/usr/share/shutter/boards/simulator.json")
    return candidates
}

// MARK: - link

/// `shutter link`: the live-view link with its token, and its QR code, for the board's (or
/// `--http`'s) address and the token the daemon keeps.
func printLiveViewLink(_ arguments: ParsedArguments) throws -> Int32 {
    let boardPath = try arguments.value("--board") ?? defaultBoardPath()
    let board = try loadBoard(boardPath)
    var settings = board.http ?? HTTPSettings()
    if let endpoint = arguments.value("--http") {
        do throws(HTTPEndpoint.Invalid) {
            settings.endpoint = try HTTPEndpoint(parsing: endpoint)
        } catch {
            throw CommandFailure("--http \(error.description)")
        }
    } else if board.http == nil {
        throw CommandFailure("\(boardPath) has no http section: live view is off (give --http ADDR:PORT as 'shutter run' was given it, "
            + "or turn it on for the service with: sudo Deploy/install.sh --http 0.0.0.0:8080 BOARD)")
    }
    let tokenPath = arguments.value("--token-file") ?? ControlState.stateDirectory(for: ServiceOptions()) + "/http-token"
    let waitSeconds = try arguments.number("--wait", command: "link") ?? 0
    let deadline = Date().addingTimeInterval(waitSeconds)
    var token = HTTPServer.storedToken(at: tokenPath)
    // The daemon makes the token when it first serves live view: a service just (re)started may not have yet.
    while token == nil, Date() < deadline {
        usleep(100_000)
        token = HTTPServer.storedToken(at: tokenPath)
    }
    // A daemon with an API control group asks for the token on loopback too: a stored one is always shown.
    if token == nil, settings.requiresToken {
        throw CommandFailure("\(tokenPath) holds no token yet: the daemon makes it when it first serves live view "
            + "(start it, then try again; the service's is /var/lib/shutter/http-token, readable by root)")
    }
    let links = liveViewLinks(HTTPServer.link(endpoint: settings.endpoint, token: token), endpoint: settings.endpoint)
    var text = "live view: " + links.joined(separator: " or ") + "\n"
    if token != nil { text += "(the link carries the token: share it only with who may control the rig)\n" }
    do {
        text += try QRCode(encoding: links[0]).terminalText
    } catch {
        text += "(no QR code: \(error.description))"
    }
    Console.out(text)
    return ExitStatus.success
}
