import Foundation
import Testing

/// libmosquitto and libmicrohttpd are opened when the board asks for MQTT or HTTP, and the
/// libcamera backend (the plugin libshutter-libcamera.so, which links libcamera) when its camera
/// may be a libcamera one, not linked (peak RSS): the built `shutter run` on the
/// simulator board, its /proc/PID/maps read while it runs, and the daemon's message when a
/// library cannot be loaded.
///
/// That the forwarding functions reach the library is what the HTTP, MQTT and libcamera suites prove.
@Suite(.serialized) struct LibraryLoadingTests {
    /// The `shutter` executable beside this test bundle (`swift build` makes both), or `SHUTTER`.
    static let shutter: String = {
        if let path = ProcessInfo.processInfo.environment["SHUTTER"] { return path }
        let bundle = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: bundle).deletingLastPathComponent().appendingPathComponent("shutter").path
    }()

    static let simulatorBoard = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Boards/simulator.json")

    /// What a finished or stopped `shutter run` left.
    struct Run {
        var status: Int32
        var signalled: Bool
        var standardError: String
        /// The events it wrote until the light press.
        var events: String
        /// The files /proc/PID/maps listed once the daemon had handled a light press.
        var mapped: Set<String>

        func maps(_ library: String) -> Bool { mapped.contains { $0.split(separator: "/").last?.hasPrefix(library) == true } }
    }

    /// Runs `shutter run --no-state` on the simulator board with `sections` added, its input a
    /// trace: once a light press has come back as an event (the daemon is set up and its loop
    /// runs), reads /proc/PID/maps and stops it. A daemon that fails to start is returned as it exited.
    func run(with sections: [String: Any], arguments: [String] = [], environment: [String: String] = [:]) throws -> Run {
        var board = try #require(JSONSerialization.jsonObject(with: Data(contentsOf: Self.simulatorBoard)) as? [String: Any])
        board.merge(sections) { $1 }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("shutter-libraries-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let boardFile = directory.appendingPathComponent("board.json")
        try JSONSerialization.data(withJSONObject: board).write(to: boardFile)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.shutter)
        process.arguments = ["run", "--board", boardFile.path, "--no-state"] + arguments
        process.currentDirectoryURL = directory
        // Its own API socket goes in the test's directory, never in the machine's runtime directory.
        process.environment = ProcessInfo.processInfo.environment.merging(["XDG_RUNTIME_DIR": directory.path]) { $1 }
            .merging(environment) { $1 }
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        input.fileHandleForWriting.write(Data("{\"t\": 0.1, \"line\": \"half\", \"active\": true}\n{\"t\": 0.2, \"line\": \"half\", \"active\": false}\n".utf8))

        // Events until the light press, or the end of output (a daemon that did not start).
        var events = ""
        let deadline = Date().addingTimeInterval(30)
        var descriptor = pollfd(fd: output.fileHandleForReading.fileDescriptor, events: Int16(POLLIN), revents: 0)
        while !events.contains("lightPress"), Date() < deadline {
            guard poll(&descriptor, 1, 200) > 0 else { continue }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            events += String(decoding: chunk, as: UTF8.self)
        }
        var mapped = Set<String>()
        // A FileHandle reads to the end: /proc's files have no size, and String(contentsOfFile:) stops at 4 KiB.
        if events.contains("lightPress"), let maps = FileHandle(forReadingAtPath: "/proc/\(process.processIdentifier)/maps") {
            for line in String(decoding: maps.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n") {
                if let path = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst(5).first, path.hasPrefix("/") {
                    mapped.insert(String(path))
                }
            }
        }
        if process.isRunning { process.terminate() }
        try? input.fileHandleForWriting.close()
        let standardError = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(!mapped.isEmpty || process.terminationStatus != 0, "shutter neither handled the press nor failed: \(standardError)")
        return Run(status: process.terminationStatus, signalled: process.terminationReason == .uncaughtSignal,
                   standardError: standardError, events: events, mapped: mapped)
    }

    @Test func aBoardWithoutMQTTOrHTTPMapsNeitherLibrary() throws {
        let run = try run(with: [:])
        #expect(run.maps("libturbojpeg"), "the daemon's own libraries are seen: \(run.mapped.sorted())")
        for library in ["libmosquitto", "libmicrohttpd", "libssl", "libcrypto"] {
            #expect(!run.maps(library), "\(library) is mapped: \(run.mapped.sorted())")
        }
    }

    /// `--http` rather than the board's section, whose port may not be 0 (the kernel's choice).
    @Test func servingHTTPLoadsLibmicrohttpdOnly() throws {
        let run = try run(with: [:], arguments: ["--http", "127.0.0.1:0"])
        #expect(run.maps("libmicrohttpd"), "\(run.mapped.sorted()) \(run.standardError)")
        #expect(!run.maps("libmosquitto"))
    }

    /// The simulator board's `camera` section with `device` set, or taken out (`nil`: libcamera's
    /// first camera, else V4L2's).
    static func camera(device: String?) throws -> [String: Any] {
        let board = try #require(JSONSerialization.jsonObject(with: Data(contentsOf: simulatorBoard)) as? [String: Any])
        var camera = try #require(board["camera"] as? [String: Any])
        camera["device"] = device
        return camera
    }

    /// The synthetic camera never asks libcamera: neither the plugin nor libcamera, nor the GnuTLS
    /// libcamera links, is mapped.
    @Test func theSimulatorBoardDoesNotLoadLibcamera() throws {
        let run = try run(with: [:])
        #expect(run.maps("libturbojpeg"), "the daemon's own libraries are seen: \(run.mapped.sorted())")
        for library in ["libshutter-libcamera", "libcamera", "libgnutls"] {
            #expect(!run.maps(library), "\(library) is mapped: \(run.mapped.sorted())")
        }
    }

    /// A board that names no camera asks libcamera first (a Pi camera module): the plugin beside
    /// the executable is loaded, and libcamera with it.
    @Test func aBoardNamingNoCameraLoadsLibcamera() throws {
        let run = try run(with: ["camera": Self.camera(device: nil)])
        #expect(run.maps("libshutter-libcamera"), "\(run.mapped.sorted()) \(run.standardError)")
        #expect(run.maps("libcamera"))
    }

    /// Without the plugin, a board that names no camera goes on to V4L2 (none here: the
    /// failure says why libcamera was not asked); one that names libcamera fails saying which
    /// files were looked for. The daemon keeps running and looking for its camera either way.
    @Test(arguments: [nil, "libcamera"])
    func aMissingPluginIsNamed(device: String?) throws {
        let run = try run(with: ["camera": Self.camera(device: device)],
                          environment: ["SHUTTER_LIBCAMERA_PLUGIN": "/nonexistent/libshutter-libcamera.so"])
        #expect(!run.mapped.isEmpty, "the daemon did not run: \(run.standardError)")
        #expect(!run.maps("libcamera"))
        let said = run.events + run.standardError
        #expect(said.contains("cannot load the libcamera backend: /nonexistent/libshutter-libcamera.so: cannot open shared object file"), "\(said)")
    }

    /// `shutter cameras` lists V4L2's cameras when libcamera cannot be loaded, saying why: the
    /// plugin is missing, or a library without its functions.
    @Test(arguments: [
        ("/nonexistent/plugin.so", "/nonexistent/plugin.so: cannot open shared object file"),
        ("libz.so.1", "undefined symbol: shutter_lc_header_version"),
    ])
    func camerasWithoutThePlugin(file: String, said: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.shutter)
        process.arguments = ["cameras"]
        process.environment = ProcessInfo.processInfo.environment.merging(["SHUTTER_LIBCAMERA_PLUGIN": file]) { $1 }
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0 && process.terminationReason == .exit)
        #expect(text.hasPrefix("libcamera: cannot load the libcamera backend: ") && text.contains(said), "\(text)")
        #expect(text.contains("V4L2") || text.contains("/dev/video"), "\(text)")
    }

    /// No broker listens: the node keeps retrying, and the library is loaded all the same.
    @Test func anMQTTSectionLoadsLibmosquittoAndItsTLS() throws {
        let run = try run(with: ["mqtt": ["host": "127.0.0.1", "port": 9, "rig": "test"]])
        #expect(run.maps("libmosquitto"), "\(run.mapped.sorted()) \(run.standardError)")
        #expect(run.maps("libssl"))
        #expect(!run.maps("libmicrohttpd"))
    }

    /// A library that is missing, or one without the functions shutter calls: the daemon says
    /// which and why, and exits; it does not trap.
    @Test(arguments: [
        ("mqtt", "SHUTTER_LIBMOSQUITTO", "/nonexistent/libmosquitto.so.1",
         ["mqtt: cannot load libmosquitto", "/nonexistent/libmosquitto.so.1: cannot open shared object file"]),
        ("mqtt", "SHUTTER_LIBMOSQUITTO", "libz.so.1", ["mqtt: cannot load libmosquitto", "undefined symbol: mosquitto_lib_init"]),
        ("http", "SHUTTER_LIBMICROHTTPD", "/nonexistent/libmicrohttpd.so.12",
         ["http: cannot load libmicrohttpd", "/nonexistent/libmicrohttpd.so.12: cannot open shared object file"]),
        ("http", "SHUTTER_LIBMICROHTTPD", "libz.so.1", ["http: cannot load libmicrohttpd", "undefined symbol: MHD_start_daemon_va"]),
    ])
    func aLibraryThatCannotBeLoadedIsNamed(section: String, variable: String, file: String, said: [String]) throws {
        let run = section == "mqtt"
            ? try run(with: ["mqtt": ["host": "127.0.0.1", "port": 9, "rig": "test"]], environment: [variable: file])
            : try run(with: [:], arguments: ["--http", "127.0.0.1:0"], environment: [variable: file])
        #expect(run.status != 0 && !run.signalled, "status \(run.status): \(run.standardError)")
        for text in said {
            #expect(run.standardError.contains(text), "\(run.standardError)")
        }
    }
}
