#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterSystem

// SHUTTER_BENCH_ONLY=abuse: the daemon against clients that exhaust it, on the
// simulator board with the synthetic camera streaming and a 2 s watchdog:
//   1. flood: hundreds of clients send `status` requests as fast as their sockets take them and
//      never read a reply; meanwhile a probe asks `status` every second and a remote capture's
//      photo event is timed;
//   2. stuck subscribers: 20 subscribers that never read, while a client sets a control
//      thousands of times (each set is one event for every subscriber);
//   3. pipelined then closed: two requests written and the connection closed at once;
//   4. a low descriptor limit (prlimit): more clients than descriptors;
//   5. idle clients filling every slot, then `shutter status`.
// Prints the figures and exits non-zero when the daemon's resident memory grows more than
// 64 MiB over its start, a probe or a photo event waits as long as the watchdog's 2 s (a loop
// held that long would be killed; how much sooner they come is a figure a loaded machine moves,
// printed, not checked), the watchdog is late, a pipelined request is lost, the loop spins on a
// full descriptor table, or `shutter status` cannot get through.

/// Watchdog pings as the notify socket receives them, stamped on CLOCK_MONOTONIC by a thread of
/// their own (a ping read late by a busy bench would look like a late ping).
final class PingRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var stamps: [Int64] = []
    private var stopped = false

    init(descriptor: CInt) {
        let thread = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                lock.lock(); let done = stopped; lock.unlock()
                if done { return }
                var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&entry, 1, 200) == 1 else { continue }
                let count = recv(descriptor, &buffer, buffer.count, 0)
                guard count > 0, String(decoding: buffer[..<count], as: UTF8.self).contains("WATCHDOG=1") else { continue }
                let stamp = now()
                lock.lock(); stamps.append(stamp); lock.unlock()
            }
        }
        thread.start()
    }

    func stop() { lock.lock(); stopped = true; lock.unlock() }

    /// The longest time between two pings, or from the first ping to `until`, in ms.
    func longestGap(until end: Int64) -> Double {
        lock.lock(); defer { lock.unlock() }
        guard let first = stamps.first else { return .infinity }
        var previous = first, longest: Int64 = 0
        for stamp in stamps.dropFirst() { longest = max(longest, stamp - previous); previous = stamp }
        return Double(max(longest, end - previous)) / 1e6
    }
}

/// A client socket made non-blocking, with a small receive buffer (it never reads).
@MainActor func floodingClient(_ path: String) -> CInt? {
    guard let descriptor = try? UnixSocket.connectClient(to: path) else { return nil }
    var size: CInt = 4096
    setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<CInt>.size))
    _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    return descriptor
}

/// Waits up to `timeout` ms for one line on `descriptor` (blocking reads under poll); nil on timeout or close.
func line(from descriptor: CInt, timeout: Int32) -> String? {
    var collected: [UInt8] = []
    var byte: UInt8 = 0
    let deadline = now() + Int64(timeout) * 1_000_000
    while true {
        let left = Int32(max(0, (deadline - now()) / 1_000_000))
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, left) == 1 else { return nil }
        guard recv(descriptor, &byte, 1, 0) == 1 else { return nil }
        if byte == UInt8(ascii: "\n") { return String(decoding: collected, as: UTF8.self) }
        collected.append(byte)
    }
}

/// One `status` on a new connection: its round trip in ms (infinity when no reply came in 30 s).
func probeStatus(_ path: String) -> Double {
    let start = now()
    guard let descriptor = try? UnixSocket.connectClient(to: path) else { return .infinity }
    defer { close(descriptor) }
    let request = Array("{\"cmd\":\"status\"}\n".utf8)
    _ = request.withUnsafeBytes { send(descriptor, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
    guard let reply = line(from: descriptor, timeout: 30_000), reply.contains("\"ok\": true") else { return .infinity }
    return Double(now() - start) / 1e6
}

/// The zoom value `status` reports, from a reply line.
func zoomValue(in reply: String) -> Double? {
    guard let object = try? JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any],
          let controls = object["controls"] as? [[String: Any]],
          let zoom = controls.first(where: { $0["id"] as? String == "zoom" }) else { return nil }
    return zoom["value"] as? Double
}

@MainActor func runAbuse() -> Bool {
    var ok = true
    func verdict(_ good: Bool, _ text: String) {
        print("  \(good ? "ok  " : "FAIL") \(text)")
        if !good { ok = false }
    }
    let daemon = DaemonProcess(board: board(keepStreaming: true), name: "abuse",
                               environment: ["WATCHDOG_USEC": "2000000"], keepNotifySocket: true)
    let pings = PingRecorder(descriptor: daemon.notifyDescriptor!)
    usleep(1_000_000)
    let startKiB = daemon.residentKiB
    print("abuse: daemon resident at start \(startKiB / 1024) MiB; watchdog 2 s (a ping due every 1 s)")
    var peakKiB = startKiB
    func sample() { peakKiB = max(peakKiB, daemon.residentKiB) }

    // 1. Flood.
    let flooderCount = Int(ProcessInfo.processInfo.environment["SHUTTER_ABUSE_CLIENTS"] ?? "") ?? 400
    let floodSeconds = 10.0
    let flooders = (0..<flooderCount).compactMap { _ in floodingClient(daemon.socket) }
    let payload = Array(String(repeating: "{\"cmd\":\"status\"}\n", count: 960).utf8)
    let watcher = Client(daemon.socket), control = Client(daemon.socket)
    watcher.send("{\"cmd\":\"subscribe\"}")
    _ = watcher.readLine()
    var probes: [Double] = [], captureReplies: [Double] = [], photoDelays: [Double] = []
    var sentBytes = 0
    let floodEnd = now() + Int64(floodSeconds * 1e9)
    var nextProbe = now()
    while now() < floodEnd {
        for descriptor in flooders {
            let written = payload.withUnsafeBytes { send(descriptor, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
            if written > 0 { sentBytes += written }
        }
        if now() >= nextProbe {
            nextProbe = now() + 1_000_000_000
            probes.append(probeStatus(daemon.socket))
            // A remote capture: its reply, then its photo event at the subscriber that reads.
            let asked = now()
            control.send("{\"cmd\":\"capture\"}")
            _ = control.readLine()
            captureReplies.append(Double(now() - asked) / 1e6)
            while true {
                guard let event = line(from: watcher.descriptor, timeout: 30_000) else { photoDelays.append(.infinity); break }
                if event.contains("\"event\": \"photo\"") { photoDelays.append(Double(now() - asked) / 1e6); break }
            }
            sample()
        }
        usleep(10_000)
    }
    sample()
    let floodPeakKiB = peakKiB
    for descriptor in flooders { close(descriptor) }
    usleep(1_000_000)
    let afterFloodKiB = daemon.residentKiB
    print("flood: \(flooders.count) clients sent \(sentBytes / 1_048_576) MiB of status requests in \(Int(floodSeconds)) s and read nothing")
    print("  status probe (\(probes.count)): p50 \(ms(percentile(probes, 0.5))), max \(ms(probes.max() ?? .nan)); each: "
        + probes.map { String(format: "%.0f", $0) }.joined(separator: " ") + " ms")
    print("  remote capture reply: p50 \(ms(percentile(captureReplies, 0.5))), max \(ms(captureReplies.max() ?? .nan)); "
        + "capture → photo event: p50 \(ms(percentile(photoDelays, 0.5))), max \(ms(photoDelays.max() ?? .nan))")
    print("  resident: peak \(floodPeakKiB / 1024) MiB, 1 s after the clients left \(afterFloodKiB / 1024) MiB")
    verdict((probes.max() ?? .infinity) < 2000, "every status probe answered within the watchdog's 2 s")
    verdict((photoDelays.max() ?? .infinity) < 2000, "every remote capture's photo event within the watchdog's 2 s")

    // 2. Stuck subscribers.
    let stuck = (0..<20).compactMap { _ -> CInt? in
        guard let descriptor = floodingClient(daemon.socket) else { return nil }
        let request = Array("{\"cmd\":\"subscribe\"}\n".utf8)
        _ = request.withUnsafeBytes { send(descriptor, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
        return descriptor
    }
    usleep(200_000)
    var trips: [Double] = []
    let sets = 2000
    for index in 0..<sets {
        let start = now()
        control.send("{\"cmd\":\"set\",\"control\":\"zoom\",\"value\":\(1 + Double(index % 14) * 0.5)}")
        _ = control.readLine()
        trips.append(Double(now() - start) / 1e6)
        if index % 500 == 0 { sample() }
    }
    sample()
    print("stuck subscribers: 20 that never read, \(sets) events each: set round trip p50 \(ms(percentile(trips, 0.5))), "
        + "p99 \(ms(percentile(trips, 0.99))), last 500 p50 \(ms(percentile(Array(trips.suffix(500)), 0.5))); resident \(daemon.residentKiB / 1024) MiB")
    for descriptor in stuck { close(descriptor) }
    // The watcher's queue overflowed during this part too: drain it.
    while watcher.readLines(block: false).count > 0 {}

    // 3. Pipelined then closed.
    var lost = 0
    let rounds = 50
    for round in 0..<rounds {
        let last = 2 + Double(round % 10) * 0.5
        guard let descriptor = try? UnixSocket.connectClient(to: daemon.socket) else { lost += 1; continue }
        let requests = Array("{\"cmd\":\"set\",\"control\":\"zoom\",\"value\":1}\n{\"cmd\":\"set\",\"control\":\"zoom\",\"value\":\(last)}\n".utf8)
        _ = requests.withUnsafeBytes { send(descriptor, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
        close(descriptor)
        // Up to 1 s for the daemon to get to it: a lost request never shows.
        var applied = false
        for _ in 0..<50 where !applied {
            usleep(20_000)
            control.send("{\"cmd\":\"status\"}")
            applied = zoomValue(in: control.readLine()) == last
        }
        if !applied { lost += 1 }
    }
    print("pipelined then closed: \(rounds) connections wrote two sets and closed at once; the second set was lost on \(lost)")
    verdict(lost == 0, "every pipelined request is run")

    // 4. More clients than descriptors: a daemon of its own under a limit of 64 descriptors.
    let limited = DaemonProcess(board: board(keepStreaming: false), name: "limited", wrapper: ["/usr/bin/prlimit", "--nofile=64"])
    var extra: [CInt] = []
    for _ in 0..<100 { if let descriptor = try? UnixSocket.connectClient(to: limited.socket) { extra.append(descriptor) } }
    usleep(200_000)
    let cpuBefore = limited.cpuSeconds
    usleep(3_000_000)
    let cpuSpent = limited.cpuSeconds - cpuBefore
    var told = 0
    for descriptor in extra {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = recv(descriptor, &chunk, chunk.count, Int32(MSG_DONTWAIT))
        if count > 0, String(decoding: chunk[..<count], as: UTF8.self).contains("too many clients") { told += 1 }
    }
    for descriptor in extra { close(descriptor) }
    usleep(300_000)
    let limitedProbe = probeStatus(limited.socket)
    print("descriptor limit 64: 100 clients connected; CPU over the next 3 s \(String(format: "%.2f", cpuSpent)) s; "
        + "\(told) told \"too many clients\"; status afterwards \(ms(limitedProbe))")
    verdict(cpuSpent < 0.3, "a full descriptor table does not spin the loop")
    verdict(told > 0, "clients beyond the descriptors are told why")
    verdict(limitedProbe < 2000, "the daemon serves again once they leave")
    limited.stop()

    // 5. Idle clients in every slot, then the command-line client.
    var idle: [CInt] = []
    for _ in 0..<520 { if let descriptor = try? UnixSocket.connectClient(to: daemon.socket) { idle.append(descriptor) } }
    usleep(300_000)
    let cli = Process()
    cli.executableURL = URL(fileURLWithPath: binary)
    cli.arguments = ["status", "--socket", daemon.socket]
    let output = Pipe()
    cli.standardOutput = output
    cli.standardError = output
    try? cli.run()
    cli.waitUntilExit()
    let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    print("idle: 520 idle connections, then `shutter status`: exit \(cli.terminationStatus), first line: \(printed.split(separator: "\n").first ?? "(nothing)")")
    verdict(cli.terminationStatus == 0, "`shutter status` gets through with every slot taken by idle clients")
    for descriptor in idle { close(descriptor) }

    let end = now()
    let gap = pings.longestGap(until: end)
    pings.stop()
    sample()
    let growthMiB = Double(peakKiB - startKiB) / 1024
    print("watchdog: longest gap between pings \(ms(gap)) (due every 1000 ms, fatal at 2000 ms)")
    print("resident: start \(startKiB / 1024) MiB, peak \(peakKiB / 1024) MiB (+\(String(format: "%.1f", growthMiB)) MiB), end \(daemon.residentKiB / 1024) MiB")
    verdict(gap < 2000, "the watchdog is never late")
    verdict(growthMiB < 64, "resident memory stays within 64 MiB of the start")
    daemon.stop()
    print("abuse: \(ok ? "all limits held" : "limits missed")")
    return ok
}
