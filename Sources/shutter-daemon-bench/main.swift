#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterSystem

// Measures the daemon as a service, against a real `shutter run` process on the simulator board
// with the synthetic camera: start-up to READY=1, API round trip, event → subscriber delay with 1
// and 64 subscribers, peak RSS, CPU time and heap allocations over 10 idle seconds with the camera
// streaming, CPU time with it stopped, and press → JPEG on disk at 1280x720 and 1920x1080.
// Usage: swift build -c release && .build/release/shutter-daemon-bench [path/to/shutter] [idle-seconds]
// Allocations are counted with Deploy/vm/malloc-count.c preloaded into the daemon: the bench
// builds it with `cc` from this checkout, or takes a built one from $SHUTTER_MALLOC_COUNT.
// SHUTTER_BENCH_ONLY=press runs only press → JPEG (with the daemon's minor page faults per photo);
// =abuse, clients that exhaust the API (Abuse.swift); =http, live view's cost and limits (LiveView.swift).
// SHUTTER_BENCH_SHORT=1: a tenth of the requests, events and photos (CI's `Tests/bench.sh --short`:
// every figure produced in seconds, none of them meaningful).

let usage = """
    usage: shutter-daemon-bench [shutter] [idle-seconds]
      shutter       the shutter binary to measure (default: the one beside this tool)
      idle-seconds  how long the idle CPU and allocation figures are taken over (default 10)
    Environment: SHUTTER_BENCH_ONLY=press|abuse|http runs one part; SHUTTER_BENCH_SHORT=1 a tenth
    of each; SHUTTER_MALLOC_COUNT names a built Deploy/vm/malloc-count.c.
    Build with -c release for figures that mean anything.
    """
let arguments: ParsedArguments
do {
    let spec = CommandSpec(program: "shutter-daemon-bench", name: "", summary: "The daemon measured as a service.",
                           synopsis: "[shutter] [idle-seconds]", options: [], optionalPositionals: ["shutter", "idle-seconds"])
    arguments = try ParsedArguments(Array(CommandLine.arguments.dropFirst()), spec: spec)
} catch {
    FileHandle.standardError.write(Data("shutter-daemon-bench: \((error as? UsageError)?.message ?? "\(error)")\n\(usage)\n".utf8))
    exit(2)
}
if arguments.wantsHelp {
    FileHandle.standardOutput.write(Data((usage + "\n").utf8))
    exit(0)
}
let binary = arguments.positionals.first
    ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("shutter").path
let idleSeconds = arguments.positionals.count > 1 ? Double(arguments.positionals[1]) ?? 10 : 10
/// The one part to run, from $SHUTTER_BENCH_ONLY (`press`); every part when unset.
let onlyPart = ProcessInfo.processInfo.environment["SHUTTER_BENCH_ONLY"]
/// How many of each: a tenth under $SHUTTER_BENCH_SHORT.
let isShort = ProcessInfo.processInfo.environment["SHUTTER_BENCH_SHORT"] != nil
let requestCount = isShort ? 100 : 1000, eventCount = isShort ? 30 : 300, shotCount = isShort ? 2 : 10

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("shutter-daemon-bench: \(message)\n".utf8))
    exit(1)
}

func now() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
}

/// Writes a line to standard output at once, also into a pipe (CI's log): a part that hangs
/// shows how far it came. Shadows the standard library's buffered `print` in this tool.
func print(_ text: String) {
    var bytes = Array((text + "\n").utf8)[...]
    while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        if written <= 0 { return }
        bytes = bytes.dropFirst(written)
    }
}

func ms(_ value: Double) -> String { String(format: "%.3f ms", value) }

let work = "/tmp/shutter-daemon-bench-\(getpid())"
try? FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: work) }

/// The allocation counter to preload, built from this checkout's Deploy/vm/malloc-count.c unless
/// $SHUTTER_MALLOC_COUNT names one; nil when neither can be had (allocations are then not counted).
let mallocCounter: String? = {
    if let given = ProcessInfo.processInfo.environment["SHUTTER_MALLOC_COUNT"] { return given }
    let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Deploy/vm/malloc-count.c").path
    guard FileManager.default.fileExists(atPath: source) else { return nil }
    let output = "\(work)/malloc-count.so"
    let compiler = Process()
    compiler.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    compiler.arguments = ["cc", "-O2", "-shared", "-fPIC", "-o", output, source]
    guard (try? compiler.run()) != nil else { return nil }
    compiler.waitUntilExit()
    return compiler.terminationStatus == 0 ? output : nil
}()

func board(keepStreaming: Bool, width: Int = 1280, height: Int = 720) -> String {
    let path = "\(work)/board-\(keepStreaming)-\(width)x\(height).json"
    let text = """
    {"name": "bench", "chip": "simulator",
     "lines": [{"name": "half", "role": "half"}, {"name": "full", "role": "full"},
               {"name": "pad0", "role": "pad"}, {"name": "pad1", "role": "pad"}, {"name": "pad2", "role": "pad"}],
     "controls": [{"id": "zoom", "kind": "systemZoom", "label": "Zoom", "range": [1, 8], "step": 0.5, "initial": 1}],
     "camera": {"device": "synthetic", "width": \(width), "height": \(height), "keepStreaming": \(keepStreaming)},
     "output": {"directory": "\(work)/photos-\(width)x\(height)"}}
    """
    try! text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

/// A daemon process with a notify socket: started, and timed to READY=1.
final class DaemonProcess {
    let process = Process()
    let input = Pipe()
    let socket: String
    /// Where malloc-count keeps its live counter (with `.PID` appended).
    let allocationsBase: String
    let readyAfter: Double

    /// The notify socket, kept open when the caller reads the watchdog's pings from it.
    let notifyDescriptor: CInt?

    init(board: String, name: String, environment extra: [String: String] = [:], keepNotifySocket: Bool = false,
         wrapper: [String] = []) {
        socket = "\(work)/\(name).sock"
        allocationsBase = "\(work)/\(name).allocations"
        let notifyPath = "\(work)/\(name).notify"
        let notify = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(notifyPath.utf8)
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(notify, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        // A wrapper (prlimit) runs the daemon in place: the process measured is the daemon.
        process.executableURL = URL(fileURLWithPath: wrapper.first ?? binary)
        process.arguments = wrapper.dropFirst() + (wrapper.isEmpty ? [] : [binary]) + ["run", "--board", board, "--no-state", "--socket", socket]
        var environment = ProcessInfo.processInfo.environment
        environment["NOTIFY_SOCKET"] = notifyPath
        environment.merge(extra) { $1 }
        if let mallocCounter {
            environment["LD_PRELOAD"] = mallocCounter
            environment["MALLOC_COUNT_LIVE"] = allocationsBase
        }
        process.environment = environment
        // A pipe held open: the simulator reads it as a trace that has not ended, and stays up
        // (standard input at its end would play the demo session and exit).
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        _ = FileManager.default.createFile(atPath: "\(work)/\(name).err", contents: nil)
        process.standardError = FileHandle(forWritingAtPath: "\(work)/\(name).err")
        let start = now()
        do { try process.run() } catch { fail("cannot start \(binary): \(error)") }
        var buffer = [UInt8](repeating: 0, count: 4096)
        var ready = false
        while !ready {
            var entry = pollfd(fd: notify, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 10_000) == 1 else { fail("no READY=1 within 10 s") }
            let count = recv(notify, &buffer, buffer.count, 0)
            if count > 0, String(decoding: buffer[..<count], as: UTF8.self).contains("READY=1") { ready = true }
        }
        readyAfter = Double(now() - start) / 1e6
        if keepNotifySocket { notifyDescriptor = notify } else { close(notify); notifyDescriptor = nil }
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }

    /// Resident memory now, in KiB, from /proc (VmRSS).
    var residentKiB: Int {
        let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
        return line.flatMap { Int($0.dropFirst(6).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "") } ?? 0
    }

    /// Peak resident memory, from /proc.
    var peakRSS: String {
        let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
        return status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }.map { $0.dropFirst(6).trimmingCharacters(in: .whitespaces) } ?? "?"
    }

    /// Heap allocations so far (malloc-count's live counter), when counted.
    var allocations: UInt64? {
        guard mallocCounter != nil,
              let data = FileManager.default.contents(atPath: "\(allocationsBase).\(process.processIdentifier)"),
              data.count >= 8 else { return nil }
        return data.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
    }

    /// The fields of /proc/PID/stat after the command (which may hold spaces): state is [0],
    /// field 3 overall, so field N is [N - 3].
    private var statFields: [Substring] {
        let stat = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8)) ?? ""
        guard let close = stat.lastIndex(of: ")") else { return [] }
        return stat[stat.index(after: close)...].split(separator: " ")
    }

    /// User + system CPU seconds so far.
    var cpuSeconds: Double {
        let fields = statFields
        guard fields.count > 12 else { return .nan }
        // utime is field 14 overall, [11] here; stime [12].
        let ticks = (Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Minor page faults so far (field 10 of /proc/PID/stat, `minflt`): pages the process touched
    /// for the first time, such as fresh memory from malloc.
    var minorFaults: Int {
        let fields = statFields
        return fields.count > 7 ? Int(fields[7]) ?? 0 : 0
    }
}

/// A raw client connection.
final class Client {
    let descriptor: CInt
    var buffer: [UInt8] = []

    init(_ path: String) {
        do { descriptor = try UnixSocket.connectClient(to: path) } catch { fail("\(error)") }
    }

    func send(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Lines already received, without waiting beyond one read.
    func readLines(block: Bool) -> [String] {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = recv(descriptor, &chunk, chunk.count, block ? 0 : Int32(MSG_DONTWAIT))
        if count > 0 { buffer.append(contentsOf: chunk[..<count]) }
        var lines: [String] = []
        while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
            lines.append(String(decoding: buffer[..<newline], as: UTF8.self))
            buffer.removeFirst(newline + 1)
        }
        return lines
    }

    /// The next line, read from what is buffered first: a line that came in the same read as the
    /// last one is already here, and waiting on the socket for it would wait for good.
    func readLine() -> String {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeFirst(newline + 1)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = recv(descriptor, &chunk, chunk.count, 0)
            if count <= 0 { fail("the daemon closed the connection") }
            buffer.append(contentsOf: chunk[..<count])
        }
    }
}

print("shutter-daemon-bench: \(binary)")
if let onlyPart, !["press", "abuse", "http"].contains(onlyPart) {
    fail("SHUTTER_BENCH_ONLY=\(onlyPart): the parts known are press, abuse and http")
}
if onlyPart == "abuse" { exit(runAbuse() ? 0 : 1) }
if onlyPart == "http" { exit(runLiveView() ? 0 : 1) }

// The service as a whole (skipped for SHUTTER_BENCH_ONLY=press).
if onlyPart == nil {
    let daemon = DaemonProcess(board: board(keepStreaming: true), name: "streaming")
    print("start-up to READY=1: \(ms(daemon.readyAfter))")

    // API round trip: request sent → reply read, one at a time.
    let client = Client(daemon.socket)

    /// Sends `requestCount` requests one at a time (`request(index)`), each timed until its reply is read.
    func roundTrips(_ name: String, on client: Client, _ request: (Int) -> String) {
        var trips: [Double] = []
        for index in 0..<requestCount {
            let start = now()
            client.send(request(index))
            _ = client.readLine()
            trips.append(Double(now() - start) / 1e6)
        }
        print("API round trip (\(name), \(requestCount) requests): p50 \(ms(percentile(trips, 0.5))), p99 \(ms(percentile(trips, 0.99)))")
    }
    roundTrips("status", on: client) { "{\"id\":\($0),\"cmd\":\"status\"}" }
    roundTrips("set", on: client) { "{\"cmd\":\"set\",\"control\":\"zoom\",\"value\":\(1 + Double($0 % 14) * 0.5)}" }

    // Event → subscriber: the event's "t" is the daemon's CLOCK_MONOTONIC decision time; the
    // subscriber stamps arrival on the same clock.
    for count in [1, 64] {
        let subscribers = (0..<count).map { _ in Client(daemon.socket) }
        for subscriber in subscribers {
            subscriber.send("{\"cmd\":\"subscribe\"}")
            _ = subscriber.readLine()
        }
        var delays: [Double] = []
        let events = eventCount
        for index in 0..<events {
            client.send("{\"cmd\":\"set\",\"control\":\"zoom\",\"value\":\(1 + Double(index % 14) * 0.5)}")
            _ = client.readLine()
            var pending = Set(subscribers.indices)
            while !pending.isEmpty {
                var entries = pending.map { pollfd(fd: subscribers[$0].descriptor, events: Int16(POLLIN), revents: 0) }
                _ = poll(&entries, nfds_t(entries.count), 1000)
                let arrived = now()
                for (slot, index) in pending.enumerated() where entries[slot].revents != 0 {
                    for line in subscribers[index].readLines(block: false) where line.contains("\"controlValue\"") {
                        guard let range = line.range(of: "\"t\": "), let end = line[range.upperBound...].firstIndex(of: ",") else { continue }
                        if let t = Double(line[range.upperBound..<end]) {
                            delays.append(Double(arrived) / 1e6 - t * 1000)
                            pending.remove(index)
                        }
                    }
                }
            }
            usleep(2000)
        }
        print("event → subscriber, \(count) subscriber\(count == 1 ? "" : "s") (\(delays.count) deliveries): p50 \(ms(percentile(delays, 0.5))), p99 \(ms(percentile(delays, 0.99)))")
        for subscriber in subscribers { close(subscriber.descriptor) }
    }
    close(client.descriptor)

    // Idle CPU and allocations with the camera streaming into the ring, over the same window.
    usleep(500_000)
    var before = daemon.cpuSeconds
    let allocationsBefore = daemon.allocations
    usleep(useconds_t(idleSeconds * 1e6))
    let streamingCPU = daemon.cpuSeconds - before
    let allocationsAfter = daemon.allocations
    if !daemon.process.isRunning {
        fail("the daemon exited (status \(daemon.process.terminationStatus)): " + ((try? String(contentsOfFile: "\(work)/streaming.err", encoding: .utf8)) ?? ""))
    }
    print("CPU over \(idleSeconds) idle s, camera streaming (synthetic 1280x720 at 30 fps): \(String(format: "%.2f", streamingCPU)) s")
    if let first = allocationsBefore, let last = allocationsAfter {
        print("heap allocations over \(idleSeconds) idle s, camera streaming: \(last - first) (\(String(format: "%.1f", Double(last - first) / idleSeconds))/s)")
    } else {
        print("heap allocations: not counted (no cc to build Deploy/vm/malloc-count.c; or set SHUTTER_MALLOC_COUNT)")
    }
    print("peak RSS (VmHWM) after all of the above: \(daemon.peakRSS)")
    daemon.stop()

    let stopped = DaemonProcess(board: board(keepStreaming: false), name: "stopped")
    usleep(500_000)
    before = stopped.cpuSeconds
    usleep(useconds_t(idleSeconds * 1e6))
    print("CPU over \(idleSeconds) idle s, camera stopped (keepStreaming false): \(String(format: "%.2f", stopped.cpuSeconds - before)) s")
    print("start-up to READY=1 (camera stopped): \(ms(stopped.readyAfter)); peak RSS \(stopped.peakRSS)")
    stopped.stop()
}

/// Press → JPEG on disk through the daemon: an API `capture` (the press is the command's time, its
/// reply's `pressedAt`) until the `photo` event (stamped once the file is fsynced and renamed).
func pressToJPEG(width: Int, height: Int, shots: Int) {
    let daemon = DaemonProcess(board: board(keepStreaming: true, width: width, height: height), name: "press-\(width)x\(height)")
    defer { daemon.stop() }
    let events = Client(daemon.socket), control = Client(daemon.socket)
    events.send("{\"cmd\":\"subscribe\"}")
    _ = events.readLine()
    usleep(1_000_000)  // the ring fills and auto-exposure would settle on a real camera
    var delays: [Double] = []
    // Over the whole series: the photos' faults, and the streaming's between them (few: frame
    // memory is pooled).
    let faultsBefore = daemon.minorFaults
    for _ in 0..<shots {
        control.send("{\"cmd\":\"capture\"}")
        _ = control.readLine()
        var photo: [String: Any]?
        while photo == nil {
            let line = events.readLine()
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { continue }
            if object["event"] as? String == "photo" { photo = object }
            if object["event"] as? String == "captureFailed" { fail("capture failed: \(line)") }
        }
        if let t = photo?["t"] as? Double, let pressedAt = photo?["pressedAt"] as? Double { delays.append((t - pressedAt) * 1000) }
        usleep(300_000)
    }
    let faultsPerPhoto = Double(daemon.minorFaults - faultsBefore) / Double(shots)
    print("press → JPEG on disk, \(width)x\(height) (\(delays.count) API captures): p50 \(ms(percentile(delays, 0.5))), "
        + "p90 \(ms(percentile(delays, 0.9))), max \(ms(delays.max() ?? .nan)); "
        + "\(String(format: "%.0f", faultsPerPhoto)) minor page faults/photo; peak RSS \(daemon.peakRSS)")
    close(events.descriptor)
    close(control.descriptor)
}
pressToJPEG(width: 1280, height: 720, shots: shotCount)
pressToJPEG(width: 1920, height: 1080, shots: shotCount)
