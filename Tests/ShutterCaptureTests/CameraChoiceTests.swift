import Foundation
import Testing
import ShutterCore
@testable import ShutterCapture

/// A board on the simulator chip with `camera` as its camera section (`nil`: none).
private func board(camera: String?) throws -> Board {
    let section = camera.map { #", "camera": \#($0)"# } ?? ""
    let text = #"{"name": "test", "chip": "simulator", "lines": [{"name": "full", "role": "full"}]\#(section)}"#
    return try Board.decode(Data(text.utf8), file: "rig.json")
}

@Suite("Camera choice")
struct CameraChoiceTests {
    /// The synthetic camera only when the board asks: a rig whose camera is missing must say so,
    /// not save test patterns as photos.
    @Test("a board without camera.device names no camera, so none is synthetic", arguments: [nil, "{}", #"{"quality": 90}"#])
    func noDeviceIsNotSynthetic(camera: String?) throws {
        let board = try board(camera: camera)
        #expect(board.camera.device == nil)
    }

    @Test("the simulator board asks for the synthetic camera")
    func simulatorIsSynthetic() throws {
        let board = try Board.load(path: packageRoot + "/Boards/simulator.json")
        #expect(board.camera.device == "synthetic")
    }

    static let imx708 = LibcameraEntry(id: "/base/soc/i2c0mux/i2c@1/imx708@1a", model: "imx708")
    static let webcam = "/dev/video2"

    /// What the board asks (device, backend), what libcamera and V4L2 list, and the camera chosen.
    static let rules: [(String?, CameraBackend, Bool, Bool, CameraChoice.Source)] = [
        (nil, .auto, true, true, .libcamera(imx708.id)),       // no device: libcamera's first...
        (nil, .auto, false, true, .v4l2(webcam)),              // ...else the first V4L2 capture device
        (nil, .libcamera, true, true, .libcamera(imx708.id)),
        (nil, .v4l2, true, true, .v4l2(webcam)),               // the board's backend, even with libcamera's camera there
        ("libcamera", .auto, true, true, .libcamera(imx708.id)),
        ("libcamera", .libcamera, true, false, .libcamera(imx708.id)),
        ("synthetic", .auto, true, true, .synthetic),          // only when named
        ("imx708", .auto, true, false, .libcamera("imx708")),
        ("HD Pro Webcam C920", .auto, true, true, .v4l2("HD Pro Webcam C920")),
        ("/dev/video0", .auto, true, true, .v4l2("/dev/video0")),
    ]

    @Test("which camera a board gets, from the cameras there are", arguments: rules)
    func rule(device: String?, backend: CameraBackend, libcameraLists: Bool, v4l2Lists: Bool, expected: CameraChoice.Source) throws {
        var settings = CameraSettings()
        settings.device = device
        settings.backend = backend
        let choice = try chooseCamera(settings: settings, libcameraCameras: libcameraLists ? [Self.imx708] : [],
                                      v4l2Devices: { v4l2Lists ? [Self.webcam, "/dev/video3"] : [] })
        #expect(choice.source == expected)
    }

    @Test("V4L2 devices are not probed when the board names its camera")
    func namedCameraProbesNoV4L2() throws {
        var settings = CameraSettings()
        settings.device = "HD Pro Webcam C920"
        _ = try chooseCamera(settings: settings, libcameraCameras: [], v4l2Devices: {
            Issue.record("listed V4L2 devices for a named camera")
            return []
        })
    }

    @Test("shutter check says which camera a board naming none found")
    func reasonNamesTheCameraFound() throws {
        let libcamera = try chooseCamera(settings: CameraSettings(), libcameraCameras: [Self.imx708], v4l2Devices: { [] })
        #expect(libcamera.reason == "the first libcamera camera, \(Self.imx708.id) (imx708) (camera.device not given)")
        let v4l2 = try chooseCamera(settings: CameraSettings(), libcameraCameras: [], v4l2Devices: { [Self.webcam] })
        #expect(v4l2.reason == "the first V4L2 capture device, /dev/video2 (camera.device not given; libcamera lists no camera)")
        var named = CameraSettings()
        named.device = "/dev/video0"
        #expect(try chooseCamera(settings: named, libcameraCameras: [], v4l2Devices: { [] }).reason == nil)
    }

    /// The backend that has no camera is the one named: a Pi board on a Pi without its camera
    /// module must not be told about V4L2 devices.
    @Test("a backend with no camera is named in the error", arguments: [
        (nil as String?, CameraBackend.libcamera, "no camera found (the board names none; backend 'libcamera'): libcamera lists no cameras"),
        ("libcamera", .libcamera, "no camera 'libcamera' in libcamera: libcamera lists no cameras"),
        (nil, .v4l2, "no camera found (the board names none; backend 'v4l2'): no V4L2 capture devices exist"),
        (nil, .auto, "no camera found (the board names none; the first libcamera camera, else the first V4L2 capture device): libcamera lists no cameras and no V4L2 capture devices exist"),
    ])
    func noCameraError(device: String?, backend: CameraBackend, message: String) {
        var settings = CameraSettings()
        settings.device = device
        settings.backend = backend
        do {
            let choice = try chooseCamera(settings: settings, libcameraCameras: [], v4l2Devices: { [] })
            Issue.record("chose \(choice)")
        } catch {
            #expect(error.kind == "noDevice")
            #expect(error.description == message)
        }
    }

    @Test("a name neither libcamera nor V4L2 has: both are named")
    func autoNoDeviceNamesBoth() {
        #expect(CaptureError.noDevice(requested: "libcamera", available: [], backend: .auto).description
                == "no camera 'libcamera': libcamera lists no cameras and no V4L2 capture devices exist")
        #expect(CaptureError.noDevice(requested: "libcamera", available: ["/dev/video0 (unicam)"], backend: .auto).description
                == "no camera 'libcamera': libcamera lists no such camera; the V4L2 cameras are: /dev/video0 (unicam)")
        #expect(CaptureError.noDevice(requested: "/dev/video9", available: ["/dev/video0 (vivid)"]).description
                == "no camera '/dev/video9': the cameras are: /dev/video0 (vivid)")
    }

    /// Without the libcamera backend a board naming no camera takes V4L2's first, and the choice
    /// keeps the load error apart from its reason: the daemon warns of it each time it opens the camera.
    @Test("a V4L2 camera taken because libcamera cannot be loaded says why")
    func libcameraUnavailableFallsBackToV4L2() throws {
        let error = "/nonexistent/libshutter-libcamera.so: cannot open shared object file"
        let unloadable = { () throws(CaptureError) -> [LibcameraEntry] in throw .libcameraUnavailable(reason: error) }
        let choice = try CaptureService.chooseCamera(CameraSettings(), listingLibcamera: unloadable, v4l2Devices: { [Self.webcam] })
        #expect(choice.source == .v4l2(Self.webcam))
        #expect(choice.libcameraUnavailable == error)
        #expect(choice.reason?.hasSuffix("; libcamera was not asked: cannot load its backend: \(error)") == true, "\(choice)")
        // libcamera answered (it lists no camera): V4L2's camera is no fallback to warn of.
        let listed = try CaptureService.chooseCamera(CameraSettings(), listingLibcamera: { [] }, v4l2Devices: { [Self.webcam] })
        #expect(listed.source == .v4l2(Self.webcam))
        #expect(listed.libcameraUnavailable == nil)
    }

    @Test("the Raspberry Pi boards open the camera module when libcamera lists one",
          arguments: ["raspberry-pi-4", "raspberry-pi-5", "raspberry-pi-zero-2w"])
    func piBoards(name: String) throws {
        let board = try Board.load(path: packageRoot + "/Boards/\(name).json")
        let choice = try chooseCamera(settings: board.camera, libcameraCameras: [Self.imx708], v4l2Devices: { ["/dev/video0"] })
        #expect(choice.source == .libcamera(Self.imx708.id))
    }
}
