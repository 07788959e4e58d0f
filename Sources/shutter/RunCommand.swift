import ShutterCore
import ShutterDaemon

// MARK: - run

func runDaemon(_ arguments: ParsedArguments) throws -> Int32 {
    let boardPath = arguments.value("--board")!
    let board = try loadBoard(boardPath)
    var options = DaemonOptions()
    options.boardPath = boardPath
    options.statePath = arguments.value("--state")
    options.keepsState = !arguments.has("--no-state")
    options.socketPath = arguments.value("--socket")
    let daemon = try Daemon(board: board, options: options)
    try daemon.run()
    return ExitStatus.success
}
