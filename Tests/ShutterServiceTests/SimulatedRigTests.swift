import Foundation
import Testing
import ShutterCapture
import ShutterCore
@testable import ShutterNode
@testable import ShutterService

private let boardsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path + "/Boards"

/// A shipped board file's text, its output directory made the test rig's (`PHOTOS`).
private func boardJSON(_ name: String) throws -> String {
    try String(contentsOfFile: boardsDirectory + "/\(name).json", encoding: .utf8)
        .replacingOccurrences(of: "/var/lib/shutter/photos", with: "PHOTOS")
}

@Suite("A board run with --simulate (SimulatedRig)")
struct SimulatedRigTests {
    @Test func aPiBoardKeepsItsLinesOnTheMockChipAndGetsTheCameraModule3() throws {
        let board = try Board.load(path: boardsDirectory + "/raspberry-pi-5.json")
        let rig = try SimulatedRig(board: board)
        #expect(rig.board.chip == .simulator)
        #expect(rig.board.lines.map(\.name) == board.lines.map(\.name))
        #expect(rig.board.lines.map(\.role) == board.lines.map(\.role))
        #expect(rig.module == .imx708)
        #expect(rig.board.output.directory == "photos", "not the rig's /var/lib/shutter/photos")
        #expect(try SimulatedRig(board: board, outputDirectory: "/tmp/shots").board.output.directory == "/tmp/shots")
    }

    @Test func theModuleAskedForWinsAndAnUnknownOneIsNamed() throws {
        let board = try Board.load(path: boardsDirectory + "/raspberry-pi-4.json")
        #expect(try SimulatedRig(board: board, moduleName: "imx477").module == .imx477)
        do {
            _ = try SimulatedRig(board: board, moduleName: "imx999")
            Issue.record("imx999 was taken for a camera module")
        } catch {
            #expect("\(error)".contains("'imx999'") && "\(error)".contains("imx219 (Camera Module 2)"))
        }
    }

    @Test func theSimulatorBoardKeepsItsSyntheticCamera() throws {
        let board = try Board.load(path: boardsDirectory + "/simulator.json")
        let rig = try SimulatedRig(board: board)
        #expect(rig.module == nil)
        #expect(rig.cameraFactory == nil)
    }

    /// The Pi 5 board, simulated, takes its photo through the libcamera path: the simulated
    /// Camera Module 3 at its full resolution, EXIF saying Raspberry Pi and imx708.
    @Test func aPi5BoardSimulatedTakesAPhotoThroughTheSimulatedCameraModule3() throws {
        let rig = try TestRig(boardJSON: try boardJSON("raspberry-pi-5"), captureService: { board, clock in
            try CaptureService(board: board, factory: SimulatedCameraModule.imx708.factory(clock: clock), clock: clock)
        }, edit: { board in
            board = try! SimulatedRig(board: board, outputDirectory: board.output.directory).board
        })
        defer { rig.close() }
        try rig.waitFor { rig.daemon.capture.service.isStreaming }
        // The sensor's frames come as the rig's clock moves: into the ring before the press,
        // after the seven the IPA withholds on the first start.
        for _ in 0..<12 { try rig.advance(by: .milliseconds(70)) }
        #expect(rig.daemon.capture.service.framesReceived >= 4)
        try rig.click()
        try rig.waitFor { rig.names.contains("photo") || rig.names.contains("captureFailed") }
        let ready = try #require(rig.lines.first { $0.name == "cameraReady" }?.line)
        #expect(ready.contains("\"card\": \"imx708\"") && ready.contains("\"width\": 4608") && ready.contains("\"height\": 2592"))
        #expect(rig.names.filter { $0 == "photo" }.count == 1, "\(rig.lines.map(\.line))")
        let path = try #require(rig.daemon.lastPhotoPath)
        let photo = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(photo.range(of: Data("imx708\0".utf8)) != nil, "EXIF Model")
        #expect(photo.range(of: Data("Raspberry Pi\0".utf8)) != nil, "EXIF Make")
        // The picture painted into the requests: the synthetic camera's bars, light grey at the left, black at the right.
        let image = try JPEGDecoder().decode([UInt8](photo))
        #expect(image.width == 4608 && image.height == 2592)
        let left = image.pixel(x: image.width / 16, y: image.height * 3 / 4), right = image.pixel(x: image.width * 15 / 16, y: image.height * 3 / 4)
        #expect(Int(left.g) > Int(right.g) + 100, "\(left) \(right)")
    }
}
