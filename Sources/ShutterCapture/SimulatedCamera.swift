#if canImport(Glibc)
import Glibc
#endif
import CLibcameraLoader
import CShutterSystem
import CYUV
import ShutterCore
import ShutterSystem

/// A Raspberry Pi camera module that `--simulate` stands in for: the libcamera backend's fake
/// camera with its `raspberrypi` personality, scripted as the module's sensor.
///
/// What each module is, and where it comes from:
/// - The still mode is the sensor's full readout, and its frame rate the one the kernel driver's
///   full-resolution mode runs at (raspberrypi/linux drivers/media/i2c/imx708.c, imx477.c,
///   imx219.c, as `rpicam-hello --list-cameras` prints them: 4608x2592 at 14.35 fps, 4056x3040
///   at 10 fps, 3280x2464 at 21.19 fps). libcamera itself does not carry the modes: its
///   pipeline reads them from the driver.
/// - A request's ExposureValue shows in the frames `exposureDelay` frames later, its
///   FrameDurationLimits `vblankDelay` frames later: src/libcamera/sensor/camera_sensor_properties.cpp
///   gives imx708, imx477 and imx219 an exposureDelay of 2, and imx708 and imx477 a vblankDelay
///   of 3, imx219 one of 2.
/// - Only the Camera Module 3 has a lens to drive: of the three, only imx708's tuning file
///   (src/ipa/rpi/pisp/data/imx708.json) has an `rpi.af` algorithm. A triggered PDAF cycle
///   there (src/ipa/rpi/controller/rpi/af.cpp, doPDAF) is cut to its last `step_frames` frames
///   (5 in imx708.json) once the phase error is under `pdaf_squelch`, as it is on a still scene.
/// - Each frame reports ExposureTime 20 ms and the rest of IpaBase::reportMetadata as the
///   fake's `raspberrypi` personality does (see fake.cpp's FakeCamera).
public enum SimulatedCameraModule: String, CaseIterable, Hashable, Sendable {
    /// Camera Module 3, with autofocus.
    case imx708
    /// The High Quality camera.
    case imx477
    /// Camera Module 2.
    case imx219

    /// The product, for messages: `Camera Module 3`.
    public var productName: String {
        switch self {
        case .imx708: "Camera Module 3"
        case .imx477: "HQ Camera"
        case .imx219: "Camera Module 2"
        }
    }

    /// The full-resolution mode's size (the kernel driver's, see the type's comment).
    public var sensorSize: (width: Int, height: Int) {
        switch self {
        case .imx708: (4608, 2592)
        case .imx477: (4056, 3040)
        case .imx219: (3280, 2464)
        }
    }

    /// The full-resolution mode's shortest frame, in microseconds: 1/14.35 s, 1/10 s, 1/21.19 s.
    public var minimumFrameDurationMicroseconds: Int64 {
        switch self {
        case .imx708: 69_669
        case .imx477: 100_000
        case .imx219: 47_192
        }
    }

    /// camera_sensor_properties.cpp's exposureDelay (2 for all three).
    var exposureDelay: Int { 2 }

    /// camera_sensor_properties.cpp's vblankDelay.
    var vblankDelay: Int { self == .imx219 ? 2 : 3 }

    /// The frames the IPA withholds after the first start (IpaBase::start, src/ipa/rpi/common/
    /// ipa_base.cpp): the larger of AGC's and AWB's convergence_frames (agc_channel.cpp's and
    /// awb.cpp's defaults, 6 and 3, which the three modules' tuning files keep), each plus the
    /// one frame CamHelper::mistrustFramesStartup mistrusts.
    var startupFrames: Int { 7 }

    /// Whether the module focuses itself (imx708.json's `rpi.af`).
    public var hasAutofocus: Bool { self == .imx708 }

    /// The libcamera id a Raspberry Pi gives the module on its camera connector: the sensor's
    /// device-tree node at its I2C address (imx708 and imx477 answer at 0x1a, imx219 at 0x10).
    public var libcameraID: String {
        "/base/soc/i2c0mux/i2c@1/\(rawValue)@\(self == .imx219 ? "10" : "1a")"
    }

    /// The fake camera's script for this module: the Raspberry Pi personality at the sensor's
    /// size, YUV420 stills, the mode's frame durations (up to 1 s: the simulator has no
    /// long-exposure modes), autofocus only on the Camera Module 3, and the module's id and model.
    public var script: FakeLibcameraScript {
        var script = FakeLibcameraScript()
        script.raspberryPi = true
        script.width = sensorSize.width
        script.height = sensorSize.height
        script.format = .yuv420
        script.frameDurationLimits = minimumFrameDurationMicroseconds...1_000_000
        script.controlDelay = exposureDelay
        script.frameDurationDelay = vblankDelay
        script.hasAutofocus = hasAutofocus
        script.autofocusScanFrames = 5
        script.autofocusOutcome = .focused
        script.startupFrames = startupFrames
        script.id = libcameraID
        script.model = rawValue
        return script
    }

    /// The module a board's camera is simulated as: the one `device` names by its model
    /// (`imx477`), else the Camera Module 3 for any camera libcamera or V4L2 would open; `nil`
    /// for the synthetic camera, which stays itself.
    public static func standingIn(for settings: CameraSettings) -> SimulatedCameraModule? {
        if settings.device == "synthetic" { return nil }
        return settings.device.flatMap { SimulatedCameraModule(rawValue: $0.lowercased()) } ?? .imx708
    }

    /// The names `--camera-module` takes, for messages: `imx708 (Camera Module 3), ...`.
    public static var choices: String {
        allCases.map { "\($0.rawValue) (\($0.productName))" }.joined(separator: ", ")
    }

    /// A factory that opens this module for a capture service (and again after a loss), its
    /// frames stamped on `clock` (the service's).
    public func factory(clock: any MonotonicClock = SystemMonotonicClock()) -> CameraFactory {
        { (settings: CameraSettings) throws(CaptureError) -> any Camera in try SimulatedCamera(module: self, settings: settings, clock: clock) }
    }
}

/// A simulated camera module: the real libcamera path (``LibcameraCamera`` over the backend's
/// fake with the `raspberrypi` personality) with frames arriving by themselves at the module's
/// rate, each showing a picture.
///
/// The fake delivers a frame only when asked, and is not made to be called from two threads, so
/// the frames are delivered on the loop that reads them: ``pollDescriptor`` is a timer on
/// CLOCK_MONOTONIC due at the next frame's instant, and ``readFrames(into:)`` delivers every
/// frame due by now, stamped at its own instant of the sensor's cadence, before taking them as
/// any libcamera camera's. The picture (the synthetic camera's colour bars and test chart) is
/// painted into every request's buffers once (the still planes as the camera opens, a viewfinder
/// image as its request's first frame is taken), and the deliveries leave it there: a frame then
/// costs no pixel work at all, so a laptop keeps up with 12 MP at 14 fps.
public final class SimulatedCamera: Camera {
    public let module: SimulatedCameraModule
    /// The libcamera camera the frames go through.
    public let libcamera: LibcameraCamera
    /// The time between frames: the module's still mode, or the board's `fps` within its range.
    public let sensorInterval: Nanoseconds
    /// The timer the loop polls (a timerfd), due at ``nextFrameAt``.
    private let timer: CInt
    /// When the sensor finishes its next frame.
    private var nextFrameAt: Instant?
    /// The sensor's clock: the system's CLOCK_MONOTONIC, the clock GPIO edges are stamped on
    /// (tests: a virtual one; the timer is then always readable, and each read delivers what
    /// the virtual time made due).
    private let clock: any MonotonicClock
    /// Frames the sensor made while every request was held (a real pipeline drops them too).
    public private(set) var framesDropped = 0
    /// The picture at a quarter of the sensor's size, planar 4:2:0, scaled into each buffer.
    private let scene: ScenePlanes
    /// The viewfinder buffers painted so far: each request's, as its first frame is taken.
    private var paintedViewfinders: Set<UnsafeRawPointer> = []

    /// Opens the simulated `module` as the board's camera `settings` configure it.
    /// - Parameter clock: the clock frames are stamped on.
    /// - Throws: ``CaptureError`` when the libcamera backend cannot be loaded or configured, or
    ///   no timer can be made.
    public init(module: SimulatedCameraModule, settings: CameraSettings,
                clock: any MonotonicClock = SystemMonotonicClock()) throws(CaptureError) {
        self.module = module
        self.clock = clock
        var script = module.script
        script.keepsPlanes = true
        var settings = settings
        settings.device = module.rawValue
        settings.backend = .libcamera
        libcamera = try LibcameraCamera(fake: script, settings: settings)
        let shortest = Nanoseconds.microseconds(module.minimumFrameDurationMicroseconds)
        let asked = settings.fps.map { Nanoseconds.milliseconds(1000 / $0) } ?? shortest
        sensorInterval = min(max(asked, shortest), .seconds(1))
        let timer = CShutterSystem_deadlineTimerCreate()
        guard timer >= 0 else {
            libcamera.close()
            throw CaptureError.system(call: "timerfd_create", errno: errno, context: "simulated \(module.rawValue)")
        }
        self.timer = timer
        let size = libcamera.format
        scene = ScenePlanes(width: max(160, (size.width / 4) & ~1), height: max(120, (size.height / 4) & ~1))
        paintRequests()
    }

    deinit {
        close()
        Glibc.close(timer)
    }

    public var info: CameraInfo { libcamera.info }
    public var format: FrameFormat { libcamera.format }
    public var isStreaming: Bool { libcamera.isStreaming }
    public var pollDescriptor: CInt? { libcamera.isStreaming ? timer : nil }
    /// As libcamera measures it, and the sensor's own until frames have come.
    public var frameInterval: Nanoseconds? { libcamera.frameInterval ?? sensorInterval }
    public var controls: [CameraControl] { libcamera.controls }
    public var bytesPerFrame: Int { libcamera.bytesPerFrame }
    public var buffersWanted: Int { libcamera.buffersWanted }
    public var viewfinder: FrameDimensions? { libcamera.viewfinder }

    public func start() throws(CaptureError) {
        guard !libcamera.isStreaming else { return }
        try libcamera.start()
        nextFrameAt = clock.now + sensorInterval
        arm()
    }

    public func stop() {
        nextFrameAt = nil
        _ = CShutterSystem_deadlineTimerSet(timer, 0, 0)
        libcamera.stop()
    }

    /// Delivers the frames the sensor finished by now, then takes them through libcamera.
    public func readFrames(into frames: inout [Frame]) throws(CaptureError) {
        var expirations: UInt64 = 0
        _ = read(timer, &expirations, MemoryLayout<UInt64>.size)
        if let due = nextFrameAt, libcamera.isStreaming {
            let now = clock.now
            var next = due
            // A loop that was away for long gets the newest frames, as many as there are requests.
            let late = now >= next ? (now - next).rawValue / sensorInterval.rawValue : 0
            let kept = Int64(max(1, libcamera.requestCount))
            if late >= kept { next = next + Nanoseconds(rawValue: (late - kept + 1) * sensorInterval.rawValue) }
            while next <= now {
                // SensorTimestamp is the start of the frame's readout (the fake's raspberrypi personality).
                if !libcamera.deliverFakeFrame(at: next) { framesDropped += 1 }
                next = next + sensorInterval
            }
            nextFrameAt = next
            arm()
        }
        let taken = frames.count
        try libcamera.readFrames(into: &frames)
        // A viewfinder image is painted before the frame holding it is first used.
        for index in taken..<frames.count {
            if let finder = frames[index].viewfinder, paintedViewfinders.insert(finder.start).inserted { paint(finder) }
        }
    }

    public func setControl(_ id: UInt32, to value: Int32) throws(CaptureError) {
        try libcamera.setControl(id, to: value)
    }

    public func readControl(_ id: UInt32, then answer: @escaping @Sendable (Int32?) -> Void) {
        libcamera.readControl(id, then: answer)
    }

    public func returnUnusedBuffers() throws(CaptureError) {
        try libcamera.returnUnusedBuffers()
    }

    public func makeControlAdapter(settings: CameraSettings) -> any CameraControlAdapter {
        libcamera.makeControlAdapter(settings: settings)
    }

    public func close() {
        nextFrameAt = nil
        _ = CShutterSystem_deadlineTimerSet(timer, 0, 0)
        libcamera.close()
    }

    private func arm() {
        guard let nextFrameAt else { return }
        _ = CShutterSystem_deadlineTimerSet(timer, 1, clock is SystemMonotonicClock ? nextFrameAt.rawValue : 1)
    }

    // MARK: - The picture

    /// Paints the picture into the first request's still planes, scaled up from a quarter-size
    /// scene (libyuv), and copies it into every other request's.
    ///
    /// The corresponding C functions are `shutter_lc_buffers_retain`, `shutter_lc_buffers_planes`,
    /// `YUY2ToI420` and `I420Scale`.
    private func paintRequests() {
        guard let handle = libcamera.backendHandle, let buffers = shutter_lc_buffers_retain(handle) else { return }
        defer { shutter_lc_buffers_release(buffers) }
        let format = libcamera.format
        guard format.pixelFormat == .yuv420 else { return }
        let width = format.width, height = format.height, stride = format.bytesPerLine
        let chromaStride = stride / 2, chromaRows = (height + 1) / 2
        let needed = [stride * height, chromaStride * chromaRows, chromaStride * chromaRows]
        func planes(of request: Int32) -> [UnsafeMutablePointer<UInt8>]? {
            var pointers = [UnsafePointer<UInt8>?](repeating: nil, count: 3), bytes = [UInt32](repeating: 0, count: 3)
            guard shutter_lc_buffers_planes(buffers, request, &pointers, &bytes, 3) == 3,
                  zip(bytes, needed).allSatisfy({ Int($0) >= $1 }) else { return nil }
            // The fake's buffers are its own memory, written here before any frame is delivered.
            return pointers.map { UnsafeMutablePointer(mutating: $0!) }
        }
        guard let first = planes(of: 0) else { return }
        scene.scale(into: first[0], first[1], first[2], stride: stride, width: width, height: height)
        for request in 1..<max(1, shutter_lc_buffers_count(buffers)) {
            guard let other = planes(of: request) else { continue }
            for plane in 0..<3 { other[plane].update(from: first[plane], count: needed[plane]) }
        }
    }

    /// Paints a viewfinder image (NV12 or YUV420, as libcamera gave the stream) scaled from the scene.
    ///
    /// The corresponding C functions are `I420Scale` and `MergeUVPlane`.
    private func paint(_ finder: FrameViewfinder) {
        let format = finder.format, width = format.width, height = format.height, stride = format.bytesPerLine
        let chromaRows = (height + 1) / 2
        guard finder.count >= stride * height + stride * chromaRows else { return }
        // The request's own memory: the frame holding it was just taken, and is used only after this.
        let luma = UnsafeMutablePointer(mutating: finder.start.assumingMemoryBound(to: UInt8.self))
        let chroma = luma + stride * height
        switch format.pixelFormat {
        case .yuv420:
            scene.scale(into: luma, chroma, chroma + stride / 2 * chromaRows, stride: stride, width: width, height: height)
        case .nv12:
            let chromaWidth = (width + 1) / 2
            var u = [UInt8](repeating: 0, count: chromaWidth * chromaRows), v = u
            u.withUnsafeMutableBufferPointer { u in
                v.withUnsafeMutableBufferPointer { v in
                    scene.scale(into: luma, u.baseAddress!, v.baseAddress!, stride: stride, chromaStride: chromaWidth, width: width, height: height)
                    MergeUVPlane(u.baseAddress, Int32(chromaWidth), v.baseAddress, Int32(chromaWidth), chroma, Int32(stride),
                                 Int32(chromaWidth), Int32(chromaRows))
                }
            }
        default:
            break
        }
    }

    /// The synthetic camera's still scene in YUYV: its eight colour bars with its test chart
    /// in a box at the centre (``SyntheticScene``), no frame label (the picture is painted once).
    static func scene(width: Int, height: Int) -> (yuyv: [UInt8], width: Int, height: Int) {
        var yuyv = [UInt8](repeating: 0, count: width * height * 2)
        var row = [UInt8](repeating: 0, count: width * 2)
        for pair in 0..<width / 2 {
            let bar = SyntheticCamera.barsYUV[pair * 2 * 8 / width]
            row[pair * 4] = bar.y
            row[pair * 4 + 1] = bar.u
            row[pair * 4 + 2] = bar.y
            row[pair * 4 + 3] = bar.v
        }
        for line in 0..<height { yuyv.replaceSubrange(line * width * 2..<(line + 1) * width * 2, with: row) }
        let box = SyntheticScene.chartBox(width: width, height: height)
        let chart = SyntheticScene.chart(width: width, height: height)
        for line in 0..<box.height {
            let from = line * box.width * 2, to = ((box.y + line) * width + box.x) * 2
            yuyv.replaceSubrange(to..<to + box.width * 2, with: chart[from..<from + box.width * 2])
        }
        return (yuyv, width, height)
    }
}

/// The picture in planar 4:2:0 at a small size: scaled into every buffer the camera paints.
struct ScenePlanes {
    let width: Int
    let height: Int
    private let y: [UInt8]
    private let u: [UInt8]
    private let v: [UInt8]

    /// The synthetic camera's scene (``SimulatedCamera/scene(width:height:)``) at `width`x`height`.
    /// The corresponding C function is `YUY2ToI420`.
    init(width: Int, height: Int) {
        self.width = width
        self.height = height
        let yuyv = SimulatedCamera.scene(width: width, height: height).yuyv
        let chroma = width / 2, chromaRows = (height + 1) / 2
        var y = [UInt8](repeating: 0, count: width * height)
        var u = [UInt8](repeating: 0, count: chroma * chromaRows), v = u
        _ = YUY2ToI420(yuyv, Int32(width * 2), &y, Int32(width), &u, Int32(chroma), &v, Int32(chroma), Int32(width), Int32(height))
        self.y = y
        self.u = u
        self.v = v
    }

    /// Scales the scene into planes of `width`x`height` (`chromaStride`: half of `stride` unless given).
    /// The corresponding C function is `I420Scale`.
    func scale(into luma: UnsafeMutablePointer<UInt8>, _ cb: UnsafeMutablePointer<UInt8>, _ cr: UnsafeMutablePointer<UInt8>,
               stride: Int, chromaStride: Int? = nil, width outWidth: Int, height outHeight: Int) {
        let chroma = Int32(chromaStride ?? stride / 2)
        _ = I420Scale(y, Int32(width), u, Int32(width / 2), v, Int32(width / 2), Int32(width), Int32(height),
                      luma, Int32(stride), cb, chroma, cr, chroma, Int32(outWidth), Int32(outHeight), kFilterBilinear)
    }
}
