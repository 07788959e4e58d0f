import Foundation
import Testing
import ShutterCore
@testable import ShutterCapture
import ShutterTestSupport

/// A synthetic camera with a UVC webcam's controls, recording every control it is given.
final class ControlledCamera: ForwardingCamera, @unchecked Sendable {
    // Unchecked: used from the test's thread only (the service sets controls on the loop, the test's).
    private let uvcControls: [CameraControl]
    private(set) var sets: [(id: UInt32, value: Int32)] = []
    /// Each control's current value, as the camera holds it: its default until set (by the
    /// service, or by the user before the daemon ran: ``userSet(_:to:)``).
    private(set) var values: [UInt32: Int32]
    /// What auto exposure metered: the value read back for the exposure time.
    var metered: [UInt32: Int32] = [:]
    /// Reads not answered yet, as a USB control transfer in progress: ``answerReads()`` answers them.
    private var unansweredReads: [(id: UInt32, answer: @Sendable (Int32?) -> Void)] = []
    var readsInProgress: Int { unansweredReads.count }

    init(controls: [CameraControl]) throws {
        uvcControls = controls
        values = Dictionary(controls.map { ($0.id, $0.defaultValue) }, uniquingKeysWith: { first, _ in first })
        super.init(try SyntheticCamera(width: 64, height: 48, frameInterval: nil))
    }

    /// A control set on the camera by someone else (`v4l2-ctl`, another program): not one of ``sets``.
    func userSet(_ id: UInt32, to value: Int32) { values[id] = value }

    override var info: CameraInfo { CameraInfo(path: "/dev/video9", card: "Fake UVC", driver: "uvcvideo", bus: "usb-1") }
    override var frameInterval: Nanoseconds? { .milliseconds(33) }
    override var controls: [CameraControl] { uvcControls }
    override func setControl(_ id: UInt32, to value: Int32) throws(CaptureError) {
        sets.append((id, value))
        values[id] = value
    }
    override func readControl(_ id: UInt32, then answer: @escaping @Sendable (Int32?) -> Void) { unansweredReads.append((id, answer)) }

    /// Answers the reads asked for so far with what auto exposure metered.
    func answerReads() {
        for read in unansweredReads { read.answer(metered[read.id]) }
        unansweredReads.removeAll()
    }
}

@Suite("CaptureService with camera controls")
struct CameraControlServiceTests {
    static let zoom = CameraControl(id: ControlID.zoomAbsolute, name: "Zoom, Absolute", kind: .integer, minimum: 100,
                                    maximum: 500, step: 1, defaultValue: 100, isWritable: true)
    static let autoExposure: CameraControl = {
        var control = CameraControl(id: ControlID.exposureAuto, name: "Auto Exposure", kind: .menu, minimum: 0, maximum: 3,
                                    step: 1, defaultValue: 3, isWritable: true)
        control.menu = [(1, "Manual Mode"), (3, "Aperture Priority Mode")]
        return control
    }()
    static let exposure = CameraControl(id: ControlID.exposureAbsolute, name: "Exposure Time, Absolute", kind: .integer,
                                        minimum: 3, maximum: 2047, step: 1, defaultValue: 250, isWritable: false)

    func service(_ camera: ControlledCamera, _ directory: String) throws -> CaptureService {
        let board = try simulatorBoard(directory: directory)
        let service = try CaptureService(board: board, camera: camera, clock: VirtualClock(start: .seconds(1)))
        service.settle()  // started on the lifecycle queue; controls set meanwhile would wait for it
        return service
    }

    @Test func opticalZoomUsesTheCameraAndSavesTheWholeFrame() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let camera = try ControlledCamera(controls: [Self.zoom])
        let service = try service(camera, directory)
        defer { service.shutdown() }
        service.apply(controlID: "zoom", value: .number(4.5))  // the board's zoom range is 1...8
        #expect(camera.sets.map(\.id) == [ControlID.zoomAbsolute])
        #expect(camera.sets.first?.value == 300)
        #expect(service.digitalZoomCrop == nil)
        camera.inner.emit(at: .seconds(1))
        service.handleReadable()
        service.capture(pressedAt: .seconds(1), now: .seconds(1))
        service.waitForWrites()
        let photo = try #require(service.handleReadable().compactMap(\.photo).first)
        #expect(photo.width == 64 && photo.height == 48)
        #expect(service.controlReport().first?.how == "camera zoom 'Zoom, Absolute'")
    }

    /// The camera's own zoom is already in its frames: the preview shows the whole frame, as the
    /// photo does, not a second crop of it.
    @Test func opticalZoomIsNotCroppedAgainInThePreview() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let camera = try ControlledCamera(controls: [Self.zoom])
        let service = try service(camera, directory)
        defer { service.shutdown() }
        service.previewSettings = PreviewSettings(width: 32, quality: 95, fps: 30)
        service.preview.startWatching()
        service.apply(controlID: "zoom", value: .number(4))
        #expect(service.photoProcessing.crop == nil)
        camera.inner.emit(at: .seconds(1))
        service.handleReadable()
        service.capture(pressedAt: .seconds(1), now: .seconds(1))
        service.waitForPreviews()
        service.waitForWrites()
        let photo = try #require(service.handleReadable().compactMap(\.photo).first)
        let preview = try #require(service.preview.latest())
        try #require(preview.width == 32 && preview.height == 24, "the whole 64x48 frame, halved")
        let previewPlanes = try decodeJPEGPlanes(preview.jpeg)
        let photoPlanes = try decodeJPEGPlanes(Array(Data(contentsOf: URL(fileURLWithPath: photo.path)))).scaled(width: 32, height: 24)
        // Each quarter's mean luma: a second crop would show the middle of the frame in all four.
        func quarters(_ image: YUVImage) -> [Int] {
            [(0, 0), (16, 0), (0, 12), (16, 12)].map { corner in
                (0..<12).reduce(0) { total, row in (0..<16).reduce(total) { $0 + Int(image.y[(corner.1 + row) * 32 + corner.0 + $1]) } } / 192
            }
        }
        let (seen, saved) = (quarters(previewPlanes), quarters(photoPlanes))
        #expect(zip(seen, saved).allSatisfy { abs($0 - $1) <= 8 }, "preview quarters \(seen), photo's \(saved)")
    }

    @Test func exposureBiasSwitchesToManualOnceAndScalesTheExposureTime() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let camera = try ControlledCamera(controls: [Self.autoExposure, Self.exposure])
        camera.metered[ControlID.exposureAbsolute] = 100  // auto exposure chose 10 ms, not the 25 ms default
        let service = try service(camera, directory)
        defer { service.shutdown() }
        service.apply(controlID: "exposure", value: .number(1))
        // The metered exposure is being read: nothing is switched until it is back.
        #expect(camera.sets.isEmpty)
        #expect(camera.readsInProgress == 1)
        camera.answerReads()
        service.handleReadable()
        service.apply(controlID: "exposure", value: .number(-1))
        #expect(camera.sets.map(\.id) == [ControlID.exposureAuto, ControlID.exposureAbsolute, ControlID.exposureAbsolute])
        #expect(camera.sets.map(\.value) == [1, 200, 50])  // scaled from the metered exposure
        // 0 EV is plain auto exposure again (aperture priority on a UVC camera), not a fixed time.
        service.apply(controlID: "exposure", value: .number(0))
        #expect(camera.sets.last?.id == ControlID.exposureAuto)
        #expect(camera.sets.last?.value == 3)
        #expect(camera.sets.count == 4)
        // The next bias meters afresh.
        camera.metered[ControlID.exposureAbsolute] = 400
        service.apply(controlID: "exposure", value: .number(-2))
        camera.answerReads()
        service.handleReadable()
        #expect(camera.sets.suffix(2).map(\.value) == [1, 100])
        let report = service.controlReport()
        #expect(report[1].enabled && report[1].how.contains("scaled by 2^EV"))
    }

    @Test func biasesWhileTheMeteredExposureIsReadApplyOnlyTheLastAndZeroGivesUp() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let camera = try ControlledCamera(controls: [Self.autoExposure, Self.exposure])
        camera.metered[ControlID.exposureAbsolute] = 100
        let service = try service(camera, directory)
        defer { service.shutdown() }
        // A swipe while the read is out: one read, then the last bias on the metered time.
        service.apply(controlID: "exposure", value: .number(0.5))
        service.apply(controlID: "exposure", value: .number(1))
        #expect(camera.readsInProgress == 1)
        camera.answerReads()
        service.handleReadable()
        #expect(camera.sets.map(\.value) == [1, 200])
        // Back to 0 EV before the next read answers: auto exposure stays, the late answer changes nothing.
        service.apply(controlID: "exposure", value: .number(0))
        service.apply(controlID: "exposure", value: .number(2))
        service.apply(controlID: "exposure", value: .number(0))
        camera.answerReads()
        service.handleReadable()
        #expect(camera.sets.map(\.value) == [1, 200, 3])
    }

    /// The user put the camera in manual exposure (1) with a time of their own before the daemon
    /// ran. 0 EV — at start, and again as a swipe passes through it — switches nothing: the camera
    /// stays in manual mode with the user's time, since it was not the service that switched it.
    @Test func zeroBiasOnTheCameraOwnManualExposureStaysManual() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let camera = try ControlledCamera(controls: [Self.autoExposure, Self.exposure])
        camera.userSet(ControlID.exposureAuto, to: 1)  // V4L2_EXPOSURE_MANUAL
        camera.userSet(ControlID.exposureAbsolute, to: 500)
        let service = try service(camera, directory)
        defer { service.shutdown() }
        service.apply(controlID: "exposure", value: .number(0))
        service.apply(controlID: "zoom", value: .number(2))
        service.apply(controlID: "exposure", value: .number(0))
        #expect(camera.readsInProgress == 0, "0 EV meters nothing")
        #expect(camera.values[ControlID.exposureAuto] == 1, "the camera left manual exposure: \(camera.sets)")
        #expect(camera.values[ControlID.exposureAbsolute] == 500, "the user's exposure time changed: \(camera.sets)")
        #expect(camera.sets.isEmpty)
    }
}
