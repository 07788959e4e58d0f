import Foundation
import Testing
@testable import ShutterAPI
import ShutterSystem

/// Where a development `shutter run` serves its API and where the clients look for it: the
/// built `shutter` run with a runtime directory of the test's own in its environment (never the
/// machine's $XDG_RUNTIME_DIR, and never this process's environment).
@Suite struct DevelopmentSocketTests {
    /// A temporary directory, closed to others as a session's runtime directory is.
    static func temporaryDirectory(_ name: String) throws -> String {
        let path = "/tmp/sdev-\(name)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return path
    }

    /// The test's environment for a child: its own runtime directory, no $SHUTTER_SOCKET.
    static func environment(runtime: String?) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["SHUTTER_SOCKET"] = nil
        environment["XDG_RUNTIME_DIR"] = runtime
        return environment
    }

    struct Finished {
        var status: Int32
        var output: String
        var errors: String
    }

    /// Runs the built `shutter` with `arguments` to its end.
    static func shutter(_ arguments: [String], environment: [String: String], in directory: String? = nil) throws -> Finished {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: LibraryLoadingTests.shutter)
        process.arguments = arguments
        process.environment = environment
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let output = Pipe(), errors = Pipe()
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return Finished(status: process.terminationStatus, output: printed, errors: said)
    }

    /// Waits up to `seconds` for `condition`.
    static func waitFor(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            guard Date() < deadline else { return false }
            usleep(50_000)
        }
        return true
    }

    /// `shutter run` with no socket asked for serves the per-user one in a 0700 directory;
    /// `status` and `ctl` find it without options; a second daemon (the demo session: its
    /// standard input is empty) leaves it to the first, runs without and ends as the demo does;
    /// the trace's end still ends the run, and the socket goes with it.
    @Test func aDevelopmentRunServesTheUsersSocketAndTheClientsFindIt() throws {
        let runtime = try Self.temporaryDirectory("run")
        defer { try? FileManager.default.removeItem(atPath: runtime) }
        let environment = Self.environment(runtime: runtime)
        let socket = runtime + "/shutter/shutter.sock"

        let daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: LibraryLoadingTests.shutter)
        daemon.arguments = ["run", "--board", LibraryLoadingTests.simulatorBoard.path, "--no-state", "--output", runtime + "/photos"]
        daemon.environment = environment
        daemon.currentDirectoryURL = URL(fileURLWithPath: runtime)
        let input = Pipe(), errors = Pipe()
        daemon.standardInput = input
        daemon.standardOutput = FileHandle.nullDevice
        daemon.standardError = errors
        try daemon.run()
        defer { if daemon.isRunning { daemon.terminate() } }

        let answered = Self.waitFor(30) { UnixSocket.isAnswering(socket) }
        #expect(answered, "no daemon answered on \(socket)")
        guard answered else { return }
        let attributes = try FileManager.default.attributesOfItem(atPath: runtime + "/shutter")
        #expect((attributes[.posixPermissions] as? Int) == 0o700)

        let status = try Self.shutter(["status"], environment: environment)
        #expect(status.status == 0, "\(status.errors)")
        #expect(status.output.contains("board simulator"), "\(status.output)")
        let set = try Self.shutter(["ctl", "set", "filter", "Mono"], environment: environment)
        #expect(set.status == 0, "\(set.errors)")
        #expect(try Self.shutter(["status"], environment: environment).output.contains("Mono"))

        let second = try Self.shutter(["run", "--board", LibraryLoadingTests.simulatorBoard.path, "--no-state", "--output", runtime + "/photos"],
                                      environment: environment, in: runtime)
        #expect(second.status == 0, "\(second.errors)")
        #expect(second.errors.contains("no local API on \(socket)"), "\(second.errors)")
        #expect(UnixSocket.isAnswering(socket), "the second daemon took the first one's socket away")

        try input.fileHandleForWriting.close()
        #expect(Self.waitFor(30) { !daemon.isRunning }, "the trace ended and the daemon ran on")
        daemon.waitUntilExit()
        #expect(daemon.terminationStatus == 0)
        #expect(!FileManager.default.fileExists(atPath: socket))
        _ = errors.fileHandleForReading.readDataToEndOfFile()
    }

    /// With no daemon anywhere, the clients' error names each socket they tried.
    @Test func theClientsErrorNamesTheSocketsTried() throws {
        guard !UnixSocket.isAnswering(APISocketPaths.system) else { return }  // an installed service answers here
        let runtime = try Self.temporaryDirectory("none")
        defer { try? FileManager.default.removeItem(atPath: runtime) }
        for command in [["status"], ["ctl", "capture"], ["events"]] {
            let finished = try Self.shutter(command, environment: Self.environment(runtime: runtime))
            #expect(finished.status == 1)
            #expect(finished.errors.contains(runtime + "/shutter/shutter.sock or /run/shutter/shutter.sock"), "\(command): \(finished.errors)")
        }
    }

    @Test func theUsersDirectoryIsTheRuntimeOneElseOneInTmp() {
        #expect(APISocketPaths.userDirectory(environment: ["XDG_RUNTIME_DIR": "/run/user/1000/"], user: 1000) == "/run/user/1000/shutter")
        #expect(APISocketPaths.userDirectory(environment: [:], user: 1000) == "/tmp/shutter-1000")
        #expect(APISocketPaths.userDirectory(environment: ["XDG_RUNTIME_DIR": "relative"], user: 7) == "/tmp/shutter-7")
        #expect(APISocketPaths.candidates(given: "/x.sock", environment: ["SHUTTER_SOCKET": "/y.sock"], user: 7) == ["/x.sock"])
        #expect(APISocketPaths.candidates(given: nil, environment: ["SHUTTER_SOCKET": "/y.sock"], user: 7) == ["/y.sock"])
    }

    /// A directory open to others, or another user's, is not used for the socket: whoever can
    /// write there could put a socket of their own in its place.
    @Test func aDirectoryOpenToOthersIsRefused() throws {
        let runtime = try Self.temporaryDirectory("open")
        defer { try? FileManager.default.removeItem(atPath: runtime) }
        let directory = runtime + "/shutter"
        #expect(APISocketPaths.prepareUserDirectory(directory, of: geteuid()) == nil)
        #expect(APISocketPaths.candidates(given: nil, environment: ["XDG_RUNTIME_DIR": runtime], user: geteuid()).first == directory + "/shutter.sock")
        chmod(directory, 0o777)
        #expect(APISocketPaths.prepareUserDirectory(directory, of: geteuid()) != nil)
        #expect(APISocketPaths.candidates(given: nil, environment: ["XDG_RUNTIME_DIR": runtime], user: geteuid()) == [APISocketPaths.system])
        chmod(directory, 0o700)
        #expect(APISocketPaths.prepareUserDirectory(directory, of: geteuid() &+ 1) != nil)
    }

    /// `shutter link` prints the live-view link with the daemon's token, and its QR code.
    @Test func linkPrintsTheTokenAndAQRCode() throws {
        let directory = try Self.temporaryDirectory("link")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let board = directory + "/board.json"
        var json = try #require(JSONSerialization.jsonObject(with: Data(contentsOf: LibraryLoadingTests.simulatorBoard)) as? [String: Any])
        json["http"] = ["address": "192.0.2.7", "port": 8081]
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: board))
        let tokenFile = directory + "/http-token", token = "0123456789abcdef0123456789abcdef"
        let environment = Self.environment(runtime: directory)

        let missing = try Self.shutter(["link", "--board", board, "--token-file", tokenFile], environment: environment)
        #expect(missing.status == 1)
        #expect(missing.errors.contains("\(tokenFile) holds no token yet"), "\(missing.errors)")

        #expect(FileManager.default.createFile(atPath: tokenFile, contents: Data((token + "\n").utf8), attributes: [.posixPermissions: 0o600]))
        let printed = try Self.shutter(["link", "--board", board, "--token-file", tokenFile], environment: environment)
        #expect(printed.status == 0, "\(printed.errors)")
        #expect(printed.output.contains("http://192.0.2.7:8081/?token=\(token)"), "\(printed.output)")
        #expect(printed.output.contains("▀") || printed.output.contains("▄"), "no QR code: \(printed.output)")

        let given = try Self.shutter(["link", "--board", board, "--token-file", tokenFile, "--http", "192.0.2.8:9000"], environment: environment)
        #expect(given.output.contains("http://192.0.2.8:9000/?token=\(token)"), "\(given.output)")

        let off = try Self.shutter(["link", "--board", LibraryLoadingTests.simulatorBoard.path, "--token-file", tokenFile], environment: environment)
        #expect(off.status == 1)
        #expect(off.errors.contains("has no http section"), "\(off.errors)")
    }
}
