import Foundation
import Testing
import ShutterCapture
import ShutterCore
@testable import ShutterService
@testable import ShutterSystem

@Suite(.serialized) struct ShutdownTests {
    /// A rig whose camera streams and has held frames, and a full click whose press is newer than
    /// all of them: with no nominal interval its frame is the next one, so the press waits.
    private func rigWithAWaitingPress() throws -> (TestRig, SyntheticCamera) {
        let cameras = ManualCameras()
        let rig = try TestRig(cameraFactory: cameras.open)
        let camera = try cameras.streamingWithFrames(in: rig)
        // A full click, without `click()`'s half second after: the stream's 1 s stall limit is on
        // this virtual clock too.
        for (line, active) in [("half", true), ("full", true), ("full", false), ("half", false)] {
            rig.chip.set(rig.line(line), active: active, at: rig.chip.clock.now)
            try rig.advance(by: .milliseconds(50))
        }
        #expect(rig.names.contains("capture"))
        #expect(rig.daemon.capture.service.pendingCount == 1)
        return (rig, camera)
    }

    @Test func aPressWaitingForItsFrameAtTheStopStillGetsItsPhoto() throws {
        let (rig, camera) = try rigWithAWaitingPress()
        // The frame has come when SIGTERM arrives, and the loop has not read it yet: the stop
        // must not leave it unread (a frame from another thread during the stop is the same case,
        // but its timing on a loaded machine is not the test's to know).
        camera.emit(at: rig.chip.clock.now)
        rig.close()
        #expect(rig.names.contains("photo"))
        #expect(!rig.names.contains("captureFailed"), "\(rig.lines.map(\.line))")
    }

    @Test func aPressStillWaitingWhenTheStopEndsIsReportedNotDropped() throws {
        let (rig, _) = try rigWithAWaitingPress()
        rig.close()  // no frame comes: the stream's stall limit (1 s) passes
        #expect(!rig.names.contains("photo"))
        let failed = try #require(rig.lines.first { $0.name == "captureFailed" }?.line)
        #expect(failed.contains("\"pressedAt\""))
        #expect(failed.contains("\"kind\": \"notReady\""))
        #expect(failed.contains("shutter stopped before a frame for the press came"))
    }
}

/// The unit's `TimeoutStopSec=` is short (15 s) and `camera.startTimeoutMs` may be 600 s: the
/// daemon tells systemd, with `STOPPING=1`, how long its stop may take for the running board
/// (`EXTEND_TIMEOUT_USEC=`), so a stop waiting on a hung camera start is not killed halfway.
@Suite(.serialized) struct StopTimeoutTests {
    /// The datagrams a notifier sent to a socket of the test's own.
    private final class NotifySocket {
        let path = "/tmp/sdt-notify-\(UUID().uuidString.prefix(8)).sock"
        let descriptor: CInt

        init() throws {
            descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: Array(path.utf8) + [0]) }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            try #require(descriptor >= 0 && bound == 0)
        }

        deinit { close(descriptor); unlink(path) }

        var messages: [String] {
            var found: [String] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = recv(descriptor, &buffer, buffer.count, 0)
                guard count > 0 else { return found }
                found.append(String(decoding: buffer[..<count], as: UTF8.self))
            }
        }
    }

    @Test func stoppingExtendsTheStopTimeoutToTheBoardsStartTimeout() throws {
        let listener = try NotifySocket()
        let board = TestRig.simulatorBoard.replacingOccurrences(of: "\"quality\": 80", with: "\"quality\": 80, \"startTimeoutMs\": 600000")
        let rig = try TestRig(boardJSON: board)
        rig.daemon.notifier = SystemdNotifier(path: listener.path, watchdogInterval: nil)
        rig.close()
        let stopping = try #require(listener.messages.first { $0.contains("STOPPING=1") })
        let extend = stopping.split(separator: "\n").first { $0.hasPrefix("EXTEND_TIMEOUT_USEC=") }
        let microseconds = try #require(extend.flatMap { Int64($0.dropFirst("EXTEND_TIMEOUT_USEC=".count)) }, "\(stopping)")
        #expect(microseconds >= 600_000_000 && microseconds <= 700_000_000)
    }
}
