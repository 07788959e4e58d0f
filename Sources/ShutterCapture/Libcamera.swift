#if canImport(Glibc)
import Glibc
#endif
import CLibcameraLoader
import ShutterCore
import ShutterSystem

/// One control a libcamera camera offers, with its range as libcamera states it.
public struct LibcameraControlInfo: Hashable, Sendable {
    /// The controls shutter maps; libcamera's numeric ids differ between versions, these do not.
    public enum Role: Int32, Hashable, Sendable {
        case other = 0, scalerCrop, exposureValue, afMode, afTrigger, lensPosition, aeEnable, brightness, contrast, saturation
        case frameDurationLimits
    }

    public enum ValueType: Int32, Hashable, Sendable {
        case bool = 1, integer, float, rectangle, other
    }

    /// libcamera's numeric id (for listing only).
    public var libcameraID: UInt32
    public var role: Role
    public var type: ValueType
    public var name: String
    public var minimum: Double
    public var maximum: Double
    public var defaultValue: Double

    public init(libcameraID: UInt32, role: Role, type: ValueType, name: String, minimum: Double, maximum: Double, defaultValue: Double) {
        self.libcameraID = libcameraID
        self.role = role
        self.type = type
        self.name = name
        self.minimum = minimum
        self.maximum = maximum
        self.defaultValue = defaultValue
    }

    /// The control as the ``Camera`` protocol's integer control: floats in thousandths, so a
    /// board binding maps onto it like a V4L2 control.
    public var cameraControl: CameraControl {
        let scale = type == .float ? 1000.0 : 1
        func clampedInt(_ value: Double) -> Int32 { Int32(max(Double(Int32.min), min(Double(Int32.max), (value * scale).rounded()))) }
        return CameraControl(id: libcameraID, name: name, kind: type == .bool ? .boolean : type == .rectangle ? .other : .integer,
                             minimum: clampedInt(minimum), maximum: clampedInt(maximum), step: 1,
                             defaultValue: clampedInt(defaultValue), isWritable: type != .rectangle)
    }
}

/// A camera libcamera lists.
public struct LibcameraEntry: Hashable, Sendable {
    /// libcamera's id (`/base/soc/i2c0mux/i2c@1/imx708@1a`, `platform/vimc.0 Sensor B`).
    public var id: String
    /// The sensor model (`imx708`), empty when unknown.
    public var model: String
}

/// Opens the libcamera backend, once: the plugin `libshutter-libcamera.so` beside the executable
/// (a build directory) or in `../lib/shutter` from it (installed), or the file
/// `SHUTTER_LIBCAMERA_PLUGIN` names. Every other function here calls it first, so libcamera, and
/// the libraries it links, are mapped only by a process that looks at libcamera's cameras.
///
/// - Throws: ``CaptureError/libcameraUnavailable(reason:)`` naming the files looked for, or the
///   plugin with `dlerror`'s text (libcamera itself missing). A later call tries again.
///
/// The corresponding C function is `shutter_lc_load` (`dlopen`).
public func loadLibcamera() throws(CaptureError) {
    var error = [CChar](repeating: 0, count: 1024)
    guard shutter_lc_load(getenv("SHUTTER_LIBCAMERA_PLUGIN"), &error, error.count) == 0 else {
        throw CaptureError.libcameraUnavailable(reason: String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
}

/// The pid of the process holding a POSIX lock on the file `fd` opens (this process's own
/// included), 0 when none does, a negative errno when the kernel cannot say: how the backend
/// tells the media devices a camera's acquire locked, without /proc/locks.
///
/// The corresponding C function is `shutter_lc_lock_holder` (`fcntl(F_OFD_GETLK)`).
func libcameraLockHolder(_ fd: Int32) throws(CaptureError) -> Int32 {
    try loadLibcamera()
    return shutter_lc_lock_holder(fd)
}

/// The cameras libcamera lists, or why it cannot list any (or cannot be loaded: ``loadLibcamera()``).
///
/// The corresponding C function is `shutter_lc_list` (`CameraManager::cameras`).
public func libcameraCameras() throws(CaptureError) -> [LibcameraEntry] {
    try loadLibcamera()
    var entries = [shutter_lc_camera_entry](repeating: shutter_lc_camera_entry(), count: 16)
    let count = shutter_lc_list(&entries, Int32(entries.count))
    guard count >= 0 else {
        if -count == EALREADY { throw CaptureError.system(call: "CameraManager::start", errno: EALREADY, context: libcamerifyContext) }
        throw CaptureError.system(call: "CameraManager::start", errno: -count, context: "libcamera")
    }
    return entries.prefix(Int(min(count, 16))).map {
        LibcameraEntry(id: V4L2Device.string($0.id), model: V4L2Device.string($0.model))
    }
}

/// Wakes a loop when libcamera adds a camera (hot-plugged, or listed by a camera manager as it
/// starts: `CameraManager::cameraAdded`), so that a service waiting for its camera looks again
/// at once instead of at its next retry. The camera manager stays running while the camera is
/// missing (the backend keeps it, on a thread of its own), so its hot-plug handling is what sees
/// the camera come.
///
/// The corresponding C functions are `shutter_lc_watch_cameras`, `shutter_lc_watch_take` and `shutter_lc_watch_close`.
final class LibcameraArrivals {
    private let handle: OpaquePointer
    /// The bell libcamera's thread rings, kept alive by the watch until it is closed.
    private let bell: Unmanaged<LoopBell>

    /// Watches for cameras when `settings` may pick a libcamera camera (as
    /// ``CaptureService/chooseCamera(_:)`` asks libcamera), ringing `wake`; `nil` otherwise,
    /// and when libcamera cannot be loaded.
    init?(watching settings: CameraSettings, waking wake: LoopBell) {
        let device = settings.device ?? ""
        let mayUseLibcamera = settings.backend == .libcamera || (settings.backend == .auto && !device.hasPrefix("/dev/"))
        guard device != "synthetic", mayUseLibcamera, (try? loadLibcamera()) != nil else { return nil }
        let bell = Unmanaged.passRetained(wake)
        guard let handle = shutter_lc_watch_cameras({ context in
            Unmanaged<LoopBell>.fromOpaque(context!).takeUnretainedValue().ring()
        }, bell.toOpaque()) else {
            bell.release()
            return nil
        }
        self.handle = handle
        self.bell = bell
    }

    /// Whether libcamera added a camera since the watch began or this was last asked.
    func take() -> Bool { shutter_lc_watch_take(handle) > 0 }

    deinit {
        // After the close: libcamera's thread no longer calls the bell.
        shutter_lc_watch_close(handle)
        bell.release()
    }
}

/// Why the libcamera backend is off under libcamerify: its layer runs libcamera's one camera
/// manager in the process (a second one would abort it), and serves the camera as a V4L2 device.
let libcamerifyContext = "libcamera under libcamerify (its layer v4l2-compat.so owns the process's one camera manager; "
    + "the camera is a V4L2 device there: use the v4l2 backend, or run without libcamerify for the libcamera backend)"

/// The libcamera version shutter was compiled against and the one loaded now; `none` for both
/// when libcamera cannot be loaded (``loadLibcamera()``).
public var libcameraVersions: (header: String, runtime: String) {
    guard (try? loadLibcamera()) != nil else { return ("none", "none") }
    return (String(cString: shutter_lc_header_version()), String(cString: shutter_lc_runtime_version()))
}

/// libcamera's pixel formats (DRM fourccs) as the V4L2 formats with the same memory layout.
///
/// DRM names packed RGB by the 32-bit word, V4L2 by the bytes: libcamera's `RGB888` is V4L2's
/// `BGR3` (bytes B, G, R) and `BGR888` is `RGB3`. The YUV formats share their codes.
public enum LibcameraFormat {
    public static let rgb888 = PixelFormat(fourcc: "RG24")!
    public static let bgr888 = PixelFormat(fourcc: "BG24")!

    /// The V4L2 format with the same bytes as libcamera's `drm` format.
    public static func v4l2(fromDRM drm: PixelFormat) -> PixelFormat {
        switch drm {
        case rgb888: .bgr24
        case bgr888: .rgb24
        default: drm
        }
    }

    /// The DRM fourcc for a board's `pixelFormat`: libcamera's name (`NV12`, `RGB888`) or a V4L2 code.
    public static func drm(named name: String) -> PixelFormat? {
        switch name {
        case "RGB888": rgb888
        case "BGR888": bgr888
        case "YUV420": PixelFormat(fourcc: "YU12")
        case "YVU420": PixelFormat(fourcc: "YV12")
        case "MJPEG": .mjpeg
        case "RGB3": bgr888
        case "BGR3": rgb888
        default: PixelFormat(fourcc: name)
        }
    }

    /// The formats shutter asks libcamera for, best first: YUV420/NV12 go to TurboJPEG without a colour conversion.
    public static let preferred: [PixelFormat] = [PixelFormat(fourcc: "YU12")!, .nv12, .yuyv, .uyvy, rgb888, bgr888, .mjpeg]
}

/// Autofocus state as libcamera reports it per frame (`controls::AfState`).
public enum AfState: Int32, Hashable, Sendable {
    case idle = 0, scanning, focused, failed
}

/// What a frame's request said of focus.
public struct FocusReport: Hashable, Sendable {
    /// Its AfState, when reported.
    public var state: AfState?
    /// Whether the request was queued after the newest ``LibcameraCamera/triggerAutofocus()``:
    /// earlier requests report the cycle before.
    public var answersTrigger: Bool
}

/// A camera through libcamera (or its fake): a still stream and optionally a viewfinder stream,
/// requests cycling continuously, the ring's frames lent the requests' own buffers.
public final class LibcameraCamera: Camera {
    private var handle: OpaquePointer?
    public let info: CameraInfo
    public private(set) var format: FrameFormat
    /// The viewfinder stream's size, when libcamera granted one.
    public private(set) var viewfinder: FrameDimensions?
    /// The viewfinder stream's layout, when the live view can read it as it is (a YUV format
    /// ``PreviewScaler`` takes): each frame then carries its request's viewfinder image.
    public private(set) var viewfinderFormat: FrameFormat?
    public private(set) var isStreaming = false
    public private(set) var frameInterval: Nanoseconds?
    public private(set) var controls: [CameraControl] = []
    /// Every control with libcamera's own ranges, as the configured mode states them.
    public private(set) var libcameraControls: [LibcameraControlInfo] = []
    /// The largest rectangle `ScalerCrop` may take, in sensor pixels; `nil` without ScalerCrop.
    public private(set) var scalerCropMaximum: PixelRect?
    /// Whether the size or format was changed by libcamera (vimc rounds widths to multiples of 6).
    public private(set) var wasAdjusted = false
    /// What the last ``focusSlots`` frames said of focus: frame `sequence` in slot
    /// `sequence % focusSlots`, with its sequence, so an older frame reads as unknown rather
    /// than as the state of the newer frame in its slot.
    ///
    /// A fixed array of slots rather than a dictionary keyed by sequence: written for every
    /// frame, the dictionary grew, and was filtered into a new one every 32 frames (allocations
    /// on the streaming path); the slots are allocated once, with the camera.
    private var focusBySequence = [(sequence: UInt32, report: FocusReport)?](repeating: nil, count: focusSlots)
    /// How many autofocus cycles ``triggerAutofocus()`` asked for.
    private var triggersSent: UInt32 = 0
    /// How many exposure biases ``setExposureValue(_:)`` set.
    private var exposureValuesSent: UInt32 = 0
    /// How many recent frames' AfState is kept (a press waits on a handful at most).
    static let focusSlots = 64
    /// Measures ``frameInterval`` from the frames (libcamera says no nominal rate without a board `fps`).
    private var intervalMeter = FrameIntervalMeter()

    /// Requests beyond the ring, as V4L2's ``V4L2Camera/spareBuffers``: two stay queued (vimc
    /// streams only with two), one completes while the ring still holds the frame it replaces,
    /// and one is a photo being encoded. With more photos at once, the ring gives its oldest
    /// frames back (``buffersWanted``): a frame is never copied on the event loop.
    public static let spareRequests = V4L2Camera.spareBuffers
    /// The requests libcamera should hold (vimc streams only with two queued).
    static let minimumQueued = V4L2Camera.minimumQueued
    /// Frames copied on the event loop because their planes could not be lent (a layout neither
    /// one run nor one plane per buffer); 0 on every pipeline seen.
    public private(set) var framesCopied = 0

    /// How many frames the zero-shutter-lag ring holds (the board's `ringFrames`, bounded by `ringMiB` and `cmaMiB`).
    public private(set) var ringCapacity = 1
    /// The still stream's frame size as libcamera states it: what one frame held in the ring costs.
    public private(set) var bytesPerFrame = 0
    /// How many requests (each with its own buffers) cycle: the ring plus ``spareRequests``, or
    /// fewer when the pipeline fixes the count (libcamera 0.0.3's vimc and uvcvideo give 4; the
    /// ring then gives back its oldest frames sooner).
    public private(set) var requestCount = 0
    /// Whether frames borrow the requests' buffers: the still planes lie one after another as
    /// ``FrameFormat`` expects them, or each in a buffer of its own (joined for the photo, off
    /// the loop). Otherwise each frame is copied into that layout.
    public private(set) var lendsRequests = false
    /// The requests' buffers and which of them are queued or lent to frames.
    private var bufferQueue: BufferQueue?

    /// Opens the libcamera camera `settings.device` names (its id, or its model such as `imx708`;
    /// `libcamera` takes the first one), configures the still stream (and the viewfinder), and
    /// allocates and maps the buffers. Does not start streaming.
    ///
    /// The corresponding C functions are `shutter_lc_open` and `shutter_lc_configure`.
    public convenience init(settings: CameraSettings) throws(CaptureError) {
        try loadLibcamera()
        var error: Int32 = 0
        let name = settings.device == "libcamera" ? "" : settings.device ?? ""
        let device = settings.device ?? "libcamera"
        guard let handle = shutter_lc_open(name, &error) else {
            switch -error {
            case EBUSY: throw CaptureError.deviceBusy(device: device)
            case EACCES, EPERM: throw CaptureError.permissionDenied(device: device)
            case ENOENT:
                let available = ((try? libcameraCameras()) ?? []).map { "\($0.id) (\($0.model))" }
                throw CaptureError.noDevice(requested: device, available: available, backend: .libcamera)
            case EALREADY: throw CaptureError.system(call: "CameraManager::start", errno: EALREADY, context: libcamerifyContext)
            default: throw CaptureError.system(call: "shutter_lc_open", errno: -error, context: device)
            }
        }
        try self.init(handle: handle, settings: settings)
    }

    /// A fake libcamera camera behind the same C interface, for tests: frames arrive when
    /// ``deliverFakeFrame(at:fill:)`` is called.
    ///
    /// The corresponding C function is `shutter_lc_open_fake`.
    public convenience init(fake: FakeLibcameraScript, settings: CameraSettings = CameraSettings()) throws(CaptureError) {
        try loadLibcamera()
        var config = fake.config
        guard let handle = shutter_lc_open_fake(&config) else {
            throw CaptureError.notACaptureDevice(device: "fake", reason: "bad fake configuration")
        }
        try self.init(handle: handle, settings: settings)
    }

    private init(handle: OpaquePointer, settings: CameraSettings) throws(CaptureError) {
        self.handle = handle
        let id = String(cString: shutter_lc_id(handle)), model = String(cString: shutter_lc_model(handle))
        // A Raspberry Pi's camera ids are device-tree paths (/base/soc/..., /base/axi/...): its EXIF
        // Make is "Raspberry Pi", as rpicam-apps writes it (the model, imx708, is the Model).
        info = CameraInfo(path: id, card: model.isEmpty ? id : model, driver: "libcamera", bus: id,
                          maker: id.hasPrefix("/base/") ? "Raspberry Pi" : nil)
        format = FrameFormat(width: 0, height: 0, pixelFormat: .nv12)
        do throws(CaptureError) {
            try configure(settings)
        } catch {
            shutter_lc_close(handle)
            self.handle = nil
            throw error
        }
    }

    deinit { close() }

    /// The formats offered (DRM fourcc and libcamera's name) with their sizes, largest first.
    public func offeredFormats() -> [(format: PixelFormat, name: String, sizes: [FrameSize])] {
        guard let handle else { return [] }
        var formats = [shutter_lc_format](repeating: shutter_lc_format(), count: 64)
        let count = Int(max(0, min(shutter_lc_formats(handle, &formats, 64), 64)))
        return formats.prefix(count).map { entry in
            var widths = [UInt32](repeating: 0, count: 256), heights = [UInt32](repeating: 0, count: 256)
            let sizeCount = Int(max(0, min(shutter_lc_sizes(handle, entry.fourcc, &widths, &heights, 256), 256)))
            let sizes = (0..<sizeCount).map { FrameSize(width: Int(widths[$0]), height: Int(heights[$0])) }
            return (PixelFormat(rawValue: entry.fourcc), V4L2Device.string(entry.name), sizes)
        }
    }

    /// Reads the controls, their ranges and the ScalerCrop maximum, as the configured mode states
    /// them. Only after `Camera::configure()`: before it the Raspberry Pi pipeline states
    /// placeholders (ScalerCrop up to 65535x65535, FrameDurationLimits 33333...120000 µs,
    /// LensPosition 0...32), and rpicam-apps reads them after configure too.
    ///
    /// The corresponding C functions are `shutter_lc_controls` and `shutter_lc_scaler_crop_maximum`.
    private func readControls(_ handle: OpaquePointer) {
        var infos = [shutter_lc_control_info](repeating: shutter_lc_control_info(), count: 128)
        let controlCount = Int(max(0, min(shutter_lc_controls(handle, &infos, 128), 128)))
        libcameraControls = infos.prefix(controlCount).map { entry in
            LibcameraControlInfo(libcameraID: entry.libcamera_id, role: LibcameraControlInfo.Role(rawValue: entry.control) ?? .other,
                                 type: LibcameraControlInfo.ValueType(rawValue: entry.type) ?? .other,
                                 name: V4L2Device.string(entry.name), minimum: entry.minimum, maximum: entry.maximum,
                                 defaultValue: entry.default_value)
        }
        controls = libcameraControls.map(\.cameraControl)
        scalerCropMaximum = Self.rectangle { shutter_lc_scaler_crop_maximum(handle, $0, $1, $2, $3) }
    }

    private func configure(_ settings: CameraSettings) throws(CaptureError) {
        guard let handle else { return }
        let offered = offeredFormats()
        let device = info.path
        let wanted: PixelFormat
        if let name = settings.pixelFormat {
            guard let drm = LibcameraFormat.drm(named: name), offered.contains(where: { $0.format == drm }) else {
                throw CaptureError.unsupportedFormat(device: device, requested: name, supported: offered.map(\.name))
            }
            wanted = drm
        } else {
            guard let pick = LibcameraFormat.preferred.first(where: { want in offered.contains { $0.format == want } }) else {
                throw CaptureError.unsupportedFormat(device: device, requested: "any of YUV420, NV12, YUYV, UYVY, RGB888, BGR888, MJPEG",
                                                     supported: offered.map(\.name))
            }
            wanted = pick
        }
        var still = shutter_lc_stream_config()
        still.fourcc = wanted.rawValue
        // Without a board size, libcamera's StillCapture default: the sensor's full size. The
        // sizes offered are no guide: for a size range (every Raspberry Pi ISP output) they are
        // StreamFormats' fixed list of common sizes, so Camera Module 3's largest is 3840x2400.
        if let width = settings.width, let height = settings.height {
            still.width = UInt32(width)
            still.height = UInt32(height)
        }
        var finder = shutter_lc_stream_config()
        if let viewfinder = settings.viewfinder {
            finder.width = UInt32(viewfinder.width)
            finder.height = UInt32(viewfinder.height)
            // YUV420, as rpicam-apps asks for its low-resolution stream: the live view scales and
            // encodes it without a conversion (the Raspberry Pi's default for the role is ARGB8888).
            finder.fourcc = PixelFormat.yuv420.rawValue
        }
        // As many requests as the ring holds frames, plus spares; the ring's size depends on the
        // frame size granted, so a size libcamera adjusted may take a second configuration.
        let estimated = FrameFormat(width: Int(still.width), height: Int(still.height), pixelFormat: LibcameraFormat.v4l2(fromDRM: wanted))
        let estimatedBytes = estimated.frameBytes ?? Int(still.width) * Int(still.height) * 2
        let estimatedFinder = settings.viewfinder.map { $0.width * $0.height * 3 / 2 } ?? 0
        var plan = try Self.requestPlan(ring: try ShutterCapture.ringCapacity(ringFrames: settings.ringFrames, ringMiB: settings.ringMiB,
                                                                              frameBytes: estimatedBytes, device: device),
                                        requestBytes: estimatedBytes + estimatedFinder, cmaMiB: settings.cmaMiB, device: device)
        var result: Int32 = 0
        for _ in 0..<2 {
            result = settings.viewfinder == nil
                ? shutter_lc_configure(handle, &still, nil, Int32(plan.requests))
                : shutter_lc_configure(handle, &still, &finder, Int32(plan.requests))
            guard result == 0 else { break }
            let granted = FrameFormat(width: Int(still.width), height: Int(still.height),
                                      pixelFormat: LibcameraFormat.v4l2(fromDRM: PixelFormat(rawValue: still.fourcc)), bytesPerLine: Int(still.stride))
            let frameBytes = max(Int(still.frame_size), granted.frameBytes ?? 0)
            let needed = try Self.requestPlan(ring: try ShutterCapture.ringCapacity(ringFrames: settings.ringFrames, ringMiB: settings.ringMiB,
                                                                                    frameBytes: frameBytes, device: device),
                                              requestBytes: frameBytes + Int(finder.frame_size), cmaMiB: settings.cmaMiB, device: device)
            if needed == plan { break }
            plan = needed
        }
        let capacity = plan.ring
        guard result == 0 else {
            if result == -ENOMEM {
                throw CaptureError.cameraMemory(device: device, call: "FrameBufferAllocator::allocate", requests: plan.requests,
                                                requestBytes: max(Int(still.frame_size), estimatedBytes) + Int(finder.frame_size), cmaMiB: settings.cmaMiB)
            }
            if result == -EINVAL {
                throw CaptureError.unsupportedSize(device: device, requested: "\(still.width)x\(still.height) in \(wanted)",
                                                   supported: offered.first { $0.format == wanted }?.sizes.map(\.description) ?? [])
            }
            throw CaptureError.system(call: "shutter_lc_configure", errno: -result, context: device)
        }
        let granted = PixelFormat(rawValue: still.fourcc)
        guard granted == wanted else {
            throw CaptureError.unsupportedFormat(device: device, requested: "\(wanted) (libcamera gave \(granted))", supported: offered.map(\.name))
        }
        format = FrameFormat(width: Int(still.width), height: Int(still.height), pixelFormat: LibcameraFormat.v4l2(fromDRM: granted),
                             bytesPerLine: Int(still.stride))
        wasAdjusted = still.adjusted != 0
        viewfinder = finder.width > 0 ? FrameDimensions(width: Int(finder.width), height: Int(finder.height)) : nil
        let finderFormat = FrameFormat(width: Int(finder.width), height: Int(finder.height),
                                       pixelFormat: LibcameraFormat.v4l2(fromDRM: PixelFormat(rawValue: finder.fourcc)),
                                       bytesPerLine: Int(finder.stride))
        viewfinderFormat = viewfinder != nil && PreviewScaler.formats.contains(finderFormat.pixelFormat) && finderFormat.frameBytes != nil
            ? finderFormat : nil
        bytesPerFrame = max(Int(still.frame_size), format.frameBytes ?? 0)
        ringCapacity = capacity
        readControls(handle)
        try adoptBuffers(handle, requestBytes: bytesPerFrame + Int(finder.frame_size), cmaMiB: settings.cmaMiB)
        if let fps = settings.fps { try setFrameRate(fps) }
    }

    /// How many requests to configure and how many frames the ring then holds: `ring` frames
    /// plus ``spareRequests``, fewer when `cmaMiB` cannot hold that many requests of
    /// `requestBytes` (still and viewfinder): the ring then keeps what the requests beyond the
    /// spares allow, at least 2, and gives back its oldest frames sooner while photos encode.
    ///
    /// - Throws: ``CaptureError/cmaTooSmall(device:cmaMiB:requestBytes:)`` when `cmaMiB` holds fewer than four requests.
    static func requestPlan(ring: Int, requestBytes: Int, cmaMiB: Int?, device: String) throws(CaptureError) -> RequestPlan {
        let wanted = ring + spareRequests
        guard let cmaMiB, requestBytes > 0 else { return RequestPlan(requests: wanted, ring: ring) }
        let fitting = cmaMiB * 1_048_576 / requestBytes
        guard fitting >= 4 else { throw CaptureError.cmaTooSmall(device: device, cmaMiB: cmaMiB, requestBytes: requestBytes) }
        let requests = min(wanted, fitting)
        return RequestPlan(requests: requests, ring: min(ring, max(2, requests - spareRequests)))
    }

    /// The requests a configuration asks for and the frames its ring holds.
    struct RequestPlan: Hashable {
        var requests: Int
        var ring: Int
    }

    /// One lent ``FrameBuffer`` per request over its still planes, when they lie as ``format``
    /// lays a frame out; otherwise frames are copied (``lendsRequests`` false).
    ///
    /// The buffers' memory is the backend's `shutter_lc_buffers`, which the frames' keeper holds:
    /// a frame still being encoded when the camera closes keeps reading valid memory, and the
    /// mappings go with the last such frame (the camera itself closes at once: see backend.cpp).
    private func adoptBuffers(_ handle: OpaquePointer, requestBytes: Int, cmaMiB: Int?) throws(CaptureError) {
        guard let retained = shutter_lc_buffers_retain(handle) else {
            throw CaptureError.system(call: "shutter_lc_buffers_retain", errno: ENOMEM, context: info.path)
        }
        let buffers = LibcameraBuffers(retained)
        requestCount = Int(shutter_lc_buffers_count(retained))
        let layout = Self.planeLayout(of: format)
        var regions: [MappedBuffers.Region] = []
        var contiguous = true
        for request in 0..<requestCount {
            var planes: [UnsafePointer<UInt8>?] = [nil, nil, nil], bytes: [UInt32] = [0, 0, 0]
            let count = Int(shutter_lc_buffers_planes(retained, Int32(request), &planes, &bytes, 3))
            guard count > 0, let first = planes[0] else {
                throw CaptureError.system(call: "shutter_lc_buffers_planes", errno: EINVAL, context: info.path)
            }
            var given: [(offset: Int, bytes: Int)] = []
            for plane in 0..<min(count, 3) {
                guard let address = planes[plane] else { break }
                given.append((UnsafeRawPointer(address) - UnsafeRawPointer(first), Int(bytes[plane])))
            }
            let length = given.count == count ? Self.contiguousLength(given: given, layout: layout) : nil
            if let length {
                regions.append(MappedBuffers.Region(start: UnsafeMutableRawPointer(mutating: first), length: length))
            } else if given.count == count, given.count == layout.count, zip(given, layout).allSatisfy({ $0.bytes >= $1.bytes }) {
                // Planes apart (in buffers of their own, as PiSP may give YUV420, or with gaps):
                // lent as they lie; the photo joins them on the encode worker, never the loop.
                let planeList = (0..<count).map { UnsafeRawBufferPointer(start: planes[$0], count: layout[$0].bytes) }
                regions.append(MappedBuffers.Region(start: UnsafeMutableRawPointer(mutating: first), length: Int(bytes[0]), planes: planeList))
            } else {
                contiguous = false
                regions.append(MappedBuffers.Region(start: UnsafeMutableRawPointer(mutating: first), length: Int(bytes[0])))
            }
        }
        lendsRequests = contiguous
        let handleForCalls = LibcameraHandle(handle), path = info.path, requests = requestCount
        let queue = BufferQueue(calls: BufferQueueCalls(
            queue: { (index: Int) throws(CaptureError) in
                let result = shutter_lc_release(handleForCalls.pointer, Int32(index))
                if result == -ENODEV { throw CaptureError.deviceVanished(device: path) }
                if result < 0 { throw CaptureError.system(call: "Camera::queueRequest", errno: -result, context: path) }
            },
            start: { () throws(CaptureError) in
                let result = shutter_lc_start(handleForCalls.pointer)
                if result == -ENODEV { throw CaptureError.deviceVanished(device: path) }
                // A Raspberry Pi pipeline allocates its own raw and ISP buffers at the first start.
                if result == -ENOMEM {
                    throw CaptureError.cameraMemory(device: path, call: "Camera::start", requests: requests, requestBytes: requestBytes, cmaMiB: cmaMiB)
                }
                if result < 0 { throw CaptureError.system(call: "Camera::start", errno: -result, context: path) }
            },
            stop: { shutter_lc_stop(handleForCalls.pointer) }),
            minimumQueued: contiguous ? Self.minimumQueued : .max, lendsBelowMinimum: contiguous)
        // The keeper: the regions' "unmap" holds the backend's buffers and lets go of them.
        queue.adopt(MappedBuffers(regions) { [buffers] _ in withExtendedLifetime(buffers) {} })
        bufferQueue = queue
    }

    /// Where ``FrameFormat`` puts each plane of a frame (offset from the first, bytes); one plane
    /// of unknown length for compressed formats.
    static func planeLayout(of format: FrameFormat) -> [(offset: Int, bytes: Int)] {
        let luma = format.bytesPerLine * format.height, chromaRows = (format.height + 1) / 2
        switch format.pixelFormat {
        case .nv12: return [(0, luma), (luma, format.bytesPerLine * chromaRows)]
        case .yuv420:
            let chroma = format.bytesPerLine / 2 * chromaRows
            return [(0, luma), (luma, chroma), (luma + chroma, chroma)]
        default: return [(0, format.frameBytes ?? 0)]
        }
    }

    /// The bytes from the first plane that hold the whole frame in ``FrameFormat``'s layout, or
    /// `nil` when the planes libcamera `given` (offsets from the first plane, lengths) lie otherwise.
    static func contiguousLength(given: [(offset: Int, bytes: Int)], layout: [(offset: Int, bytes: Int)]) -> Int? {
        guard let first = given.first else { return nil }
        let total = layout.map { $0.offset + $0.bytes }.max() ?? 0
        // One plane holding every plane (single-planar V4L2 formats), or a compressed frame.
        if given.count == 1 { return first.bytes >= total ? max(total, first.bytes) : nil }
        guard given.count == layout.count else { return nil }
        for (plane, expected) in zip(given, layout) where plane.offset != expected.offset || plane.bytes < expected.bytes {
            return nil
        }
        return total
    }

    /// Asks for `fps` through `FrameDurationLimits` (both limits at 1/fps, within the camera's
    /// range) from the next start on; ``frameInterval`` says the duration asked for until frames
    /// measure the real one.
    ///
    /// - Throws: ``CaptureError/unsupportedSize(device:requested:supported:)`` when the camera has
    ///   no FrameDurationLimits (vimc, most UVC cameras): a board asking for a rate is refused, as on V4L2.
    /// The corresponding C function is `shutter_lc_set_frame_rate`.
    public func setFrameRate(_ fps: Double) throws(CaptureError) {
        guard let handle else { return }
        var duration: Int64 = 0
        let result = shutter_lc_set_frame_rate(handle, fps, &duration)
        if result == -ENOTSUP {
            throw CaptureError.unsupportedSize(device: info.path, requested: "a chosen frame rate (\(JSONLine.number(fps, decimals: 2)) fps): "
                                               + "the camera has no FrameDurationLimits; remove 'fps' from the board", supported: [])
        }
        guard result == 0 else { throw CaptureError.system(call: "FrameDurationLimits", errno: -result, context: info.path) }
        frameInterval = Nanoseconds(rawValue: duration)
    }

    public var pollDescriptor: CInt? {
        guard isStreaming, let handle else { return nil }
        return shutter_lc_poll_fd(handle)
    }

    /// Starts the camera and queues every request no frame holds. The corresponding C function is `shutter_lc_start`.
    public func start() throws(CaptureError) {
        guard !isStreaming, handle != nil, let bufferQueue else { return }
        try bufferQueue.start()
        isStreaming = true
        intervalMeter.streamStopped()
    }

    /// How many requests libcamera holds now (queued, not yet completed).
    public var queuedRequests: Int { bufferQueue?.queuedCount ?? 0 }

    /// How many requests libcamera lacks to hold ``minimumQueued`` (frames in the ring and in
    /// photos hold the others): the service gives back that many of its oldest ring frames.
    public var buffersWanted: Int { bufferQueue?.shortfall ?? 0 }

    /// Queues again at once every request no frame refers to any more, as rpicam-apps requeues a
    /// request when its last user lets go. The corresponding C function is `shutter_lc_release`.
    public func returnUnusedBuffers() throws(CaptureError) {
        guard isStreaming else { return }
        try bufferQueue?.reclaim()
    }

    /// Stops the camera; requests lent to frames stay lent. The corresponding C function is `shutter_lc_stop`.
    public func stop() {
        guard isStreaming, handle != nil else { return }
        isStreaming = false
        bufferQueue?.stop()
    }

    /// Takes every completed request. Each good frame borrows its request's buffers: the request
    /// stays out of libcamera's queue until the frame (in the ring, or in a photo being encoded)
    /// is dropped, and goes back at the next call. A frame that would leave fewer than two
    /// requests queued, or whose planes do not lie as ``format`` lays them out, is copied and
    /// its request queued again at once. Notes each frame's AfState.
    ///
    /// Appends to `frames`, all or none.
    ///
    /// The corresponding C functions are `shutter_lc_next` and `shutter_lc_release`.
    public func readFrames(into frames: inout [Frame]) throws(CaptureError) {
        guard isStreaming, let handle, let bufferQueue else { return }
        // Requests whose frames the ring dropped (or whose photos are written) go back first.
        try bufferQueue.reclaim()
        // A failure after some frames were taken must not leave the caller half a batch.
        try frames.appendAllOrNone { (frames: inout [Frame]) throws(CaptureError) in
            try takeCompleted(into: &frames, handle: handle, bufferQueue: bufferQueue)
        }
    }

    /// ``readFrames(into:)``'s loop: takes completed requests until none is left, appending to `frames`.
    private func takeCompleted(into frames: inout [Frame], handle: OpaquePointer, bufferQueue: BufferQueue) throws(CaptureError) {
        while true {
            var done = shutter_lc_completed()
            let result = shutter_lc_next(handle, &done)
            if result == 0 { return }
            if result == -ENODEV { throw CaptureError.deviceVanished(device: info.path) }
            guard result > 0 else { throw CaptureError.system(call: "shutter_lc_next", errno: -result, context: info.path) }
            if done.ok != 0 {
                let exposure = Self.exposure(of: done)
                var time = LibcameraTimestamp.monotonic(sensor: done.sensor_timestamp, buffer: done.buffer_timestamp,
                                                        completedAt: Instant(rawValue: done.completed_at))
                // The press is compared with the start of exposure, as V4L2's stamps are: on a
                // Raspberry Pi SensorTimestamp is the start of readout (Unicam's and rp1-cfe's
                // frame-start interrupt), ExposureTime after the exposure began.
                if let exposureTime = exposure.exposureTime { time = time - exposureTime }
                intervalMeter.frame(at: time)
                if let measured = intervalMeter.interval { frameInterval = measured }
                // Whether this request was queued after the newest trigger: the backend counts the
                // triggers set when each request went to libcamera (it alone knows which carried it).
                let report = FocusReport(state: AfState(rawValue: done.af_state), answersTrigger: done.af_triggers >= triggersSent)
                focusBySequence[Int(done.sequence % UInt32(Self.focusSlots))] = (done.sequence, report)
                // Compressed frames fill their plane only partly: the frame is what was written.
                let count = format.frameBytes ?? Int(done.plane_bytes.0)
                var frame: Frame
                if let lent = bufferQueue.lend(Int(done.request), count: count) {
                    frame = Frame(timestamp: time, sequence: done.sequence, format: format, buffer: lent)
                    // The viewfinder image lies in the same request, held as long as the frame is.
                    if let finder = viewfinderFormat, let start = done.viewfinder, Int(done.viewfinder_bytes) >= finder.frameBytes ?? .max {
                        frame.viewfinder = FrameViewfinder(start: UnsafeRawPointer(start), count: Int(done.viewfinder_bytes), format: finder)
                    }
                } else {
                    // Planes laid out as neither one run nor one buffer each: copied (never seen).
                    frame = Frame(timestamp: time, sequence: done.sequence, format: format, bytes: copyPlanes(done))
                    framesCopied += 1
                    try bufferQueue.requeue(Int(done.request))
                }
                frame.exposure = exposure
                // As for focus: the backend counts the ExposureValue changes set when each request
                // went to libcamera; requests queued before the newest show the bias before.
                frame.exposure.answersNewestBias = done.exposure_value_sets >= exposureValuesSent
                frame.instant = exposure.exposureTime == nil ? .sensorTimestamp : .exposureStart
                frames.append(frame)
            } else {
                try bufferQueue.discard(Int(done.request))  // a failed request: handed back at once
            }
        }
    }

    /// The rectangle a backend function fills (x, y, width, height), or `nil` when it returns an error.
    static func rectangle(_ fill: (UnsafeMutablePointer<Int32>, UnsafeMutablePointer<Int32>,
                                   UnsafeMutablePointer<UInt32>, UnsafeMutablePointer<UInt32>) -> Int32) -> PixelRect? {
        var x: Int32 = 0, y: Int32 = 0, width: UInt32 = 0, height: UInt32 = 0
        guard fill(&x, &y, &width, &height) == 0 else { return nil }
        return PixelRect(x: Int(x), y: Int(y), width: Int(width), height: Int(height))
    }

    /// What the request's metadata says of the frame's exposure (each `nil` when not reported).
    static func exposure(of done: shutter_lc_completed) -> FrameExposure {
        FrameExposure(exposureTime: done.exposure_time_us > 0 ? .microseconds(Int64(done.exposure_time_us)) : nil,
                      analogueGain: done.analogue_gain > 0 ? Double(done.analogue_gain) : nil,
                      digitalGain: done.digital_gain > 0 ? Double(done.digital_gain) : nil,
                      lensPosition: done.lens_position >= 0 ? Double(done.lens_position) : nil,
                      colourTemperature: done.colour_temperature > 0 ? Int(done.colour_temperature) : nil)
    }

    /// The still stream's planes, one after another as ``FrameFormat`` lays them out.
    private func copyPlanes(_ done: shutter_lc_completed) -> [UInt8] {
        let planes = [done.planes.0, done.planes.1, done.planes.2], sizes = [done.plane_bytes.0, done.plane_bytes.1, done.plane_bytes.2]
        let total = (0..<Int(done.plane_count)).reduce(0) { $0 + Int(sizes[$1]) }
        let wanted = format.frameBytes ?? total
        return [UInt8](unsafeUninitializedCapacity: max(total, wanted)) { buffer, count in
            var offset = 0
            for index in 0..<Int(done.plane_count) {
                guard let plane = planes[index] else { continue }
                (buffer.baseAddress! + offset).initialize(from: plane, count: Int(sizes[index]))
                offset += Int(sizes[index])
            }
            if offset < wanted {
                (buffer.baseAddress! + offset).initialize(repeating: 0, count: wanted - offset)
                offset = wanted
            }
            count = offset
        }
    }

    /// What libcamera reported of focus with the frame `sequence`, while it is recent.
    public func focusReport(ofFrame sequence: UInt32) -> FocusReport? {
        guard let slot = focusBySequence[Int(sequence % UInt32(Self.focusSlots))], slot.sequence == sequence else { return nil }
        return slot.report
    }

    /// The AfState libcamera reported with the frame `sequence`, while it is recent.
    public func focusState(ofFrame sequence: UInt32) -> AfState? { focusReport(ofFrame: sequence)?.state }

    /// Sets a control by its libcamera id (a board binding); float controls take thousandths.
    ///
    /// The corresponding C function is `shutter_lc_set_named`.
    public func setControl(_ id: UInt32, to value: Int32) throws(CaptureError) {
        guard let handle, let control = libcameraControls.first(where: { $0.libcameraID == id }) else {
            throw CaptureError.system(call: "set control", errno: ENOTSUP, context: "\(info.path): control \(id)")
        }
        let scaled = control.type == .float ? Double(value) / 1000 : Double(value)
        try check(shutter_lc_set_named(handle, control.name, scaled), control.name)
    }

    /// The crop the pipeline takes unzoomed, in sensor pixels: `ScalerCrop`'s default as the
    /// configured camera states it, else the crop its first frame reported (libcamera 0.0.3
    /// states no default); `nil` while neither is known, or without ScalerCrop. The Raspberry Pi
    /// pipeline fits it to the still's aspect, where ``scalerCropMaximum`` is the sensor mode's.
    ///
    /// The corresponding C function is `shutter_lc_scaler_crop_default`.
    public var scalerCropDefault: PixelRect? {
        guard let handle else { return nil }
        return Self.rectangle { shutter_lc_scaler_crop_default(handle, $0, $1, $2, $3) }
    }

    /// How many device nodes the backend watches as the camera's own for an unplug libcamera
    /// missed, or the negative errno that kept it from telling them (then any removed V4L2 or
    /// media node counts as this camera's). The corresponding C function is `shutter_lc_device_nodes`.
    public var ownDeviceNodes: Int32 {
        guard let handle else { return 0 }
        return shutter_lc_device_nodes(handle)
    }

    /// Crops on the ISP: the photo keeps the stream's size. The corresponding control is `ScalerCrop`.
    public func setScalerCrop(_ rect: PixelRect) throws(CaptureError) {
        guard let handle else { return }
        try check(shutter_lc_set_scaler_crop(handle, Int32(rect.x), Int32(rect.y), UInt32(rect.width), UInt32(rect.height)), "ScalerCrop")
    }

    /// Sets `ExposureValue` (EV; 0 is plain auto exposure).
    public func setExposureValue(_ ev: Double) throws(CaptureError) {
        guard let handle else { return }
        try check(shutter_lc_set_float(handle, Int32(SHUTTER_LC_CONTROL_EXPOSURE_VALUE), Float(ev)), "ExposureValue")
        exposureValuesSent += 1
    }

    /// Starts an autofocus cycle: `AfMode` auto and `AfTrigger` start on the next request queued
    /// (or the next start). Frames answer it from that request on (``focusReport(ofFrame:)``).
    public func triggerAutofocus() throws(CaptureError) {
        guard let handle else { return }
        try check(shutter_lc_set_int(handle, Int32(SHUTTER_LC_CONTROL_AF_MODE), 1), "AfMode")  // AfModeAuto
        try check(shutter_lc_set_int(handle, Int32(SHUTTER_LC_CONTROL_AF_TRIGGER), 0), "AfTrigger")  // AfTriggerStart
        triggersSent += 1
    }

    /// Lets the lens keep itself in focus (`AfMode` continuous), from the next request or start.
    public func focusContinuously() throws(CaptureError) {
        guard let handle else { return }
        try check(shutter_lc_set_int(handle, Int32(SHUTTER_LC_CONTROL_AF_MODE), 2), "AfMode")  // AfModeContinuous
    }

    /// Leaves the lens where it is until a `LensPosition` moves it (`AfMode` manual).
    public func focusManually() throws(CaptureError) {
        guard let handle else { return }
        try check(shutter_lc_set_int(handle, Int32(SHUTTER_LC_CONTROL_AF_MODE), 0), "AfMode")  // AfModeManual
    }

    /// Manual focus: `AfMode` manual and `LensPosition` in dioptres.
    public func setLensPosition(_ dioptres: Double) throws(CaptureError) {
        guard let handle else { return }
        try check(shutter_lc_set_int(handle, Int32(SHUTTER_LC_CONTROL_AF_MODE), 0), "AfMode")  // AfModeManual
        try check(shutter_lc_set_float(handle, Int32(SHUTTER_LC_CONTROL_LENS_POSITION), Float(dioptres)), "LensPosition")
    }

    public func makeControlAdapter(settings: CameraSettings) -> any CameraControlAdapter {
        LibcameraControlAdapter(camera: self, settings: settings)
    }

    /// The control with `role`, when the camera offers it.
    public func control(_ role: LibcameraControlInfo.Role) -> LibcameraControlInfo? {
        libcameraControls.first { $0.role == role }
    }

    /// Whether the camera can focus itself (Camera Module 3): it offers AfMode, AfTrigger and LensPosition.
    public var hasAutofocus: Bool {
        control(.afMode) != nil && control(.afTrigger) != nil && control(.lensPosition) != nil
    }

    private func check(_ result: Int32, _ name: String) throws(CaptureError) {
        guard result < 0 else { return }
        throw CaptureError.system(call: "set \(name)", errno: -result, context: info.path)
    }

    /// Stops, releases and closes the camera at once; frames still lent keep their buffers'
    /// memory until they are dropped. The corresponding C function is `shutter_lc_close`.
    public func close() {
        guard let handle else { return }
        stop()
        _ = bufferQueue?.forget()
        bufferQueue = nil
        shutter_lc_close(handle)
        self.handle = nil
    }

    // MARK: - The fake camera's test hooks

    /// Completes the fake camera's oldest queued request as a frame at `time`; `false` when every request is held.
    @discardableResult
    public func deliverFakeFrame(at time: Instant, fill: UInt8 = 0x80) -> Bool {
        guard let handle else { return false }
        return shutter_lc_fake_deliver(handle, time.rawValue, fill) == 0
    }

    /// The value the fake camera last applied for the control with `role`.
    public func fakeApplied(_ role: LibcameraControlInfo.Role) -> Double? {
        guard let handle else { return nil }
        var value: Float = 0
        return shutter_lc_fake_applied(handle, role.rawValue, &value) == 0 ? Double(value) : nil
    }

    /// The ScalerCrop rectangle the fake camera last applied.
    public var fakeAppliedScalerCrop: PixelRect? {
        guard let handle else { return nil }
        return Self.rectangle { shutter_lc_fake_scaler_crop(handle, $0, $1, $2, $3) }
    }

    /// How many autofocus cycles the fake camera started.
    public var fakeAutofocusTriggers: Int {
        guard let handle else { return 0 }
        return Int(shutter_lc_fake_af_triggers(handle))
    }

    /// The DMA_BUF_IOCTL_SYNC starts and ends the fake camera saw on each buffer of `request`
    /// (its still planes' buffers, then the viewfinder's).
    public func fakeBufferSyncs(request: Int) -> [(starts: Int, ends: Int)] {
        guard let handle else { return [] }
        var starts = [Int32](repeating: 0, count: 8), ends = [Int32](repeating: 0, count: 8)
        let count = Int(max(0, min(shutter_lc_fake_buffer_syncs(handle, Int32(request), &starts, &ends, 8), 8)))
        return (0..<count).map { (Int(starts[$0]), Int(ends[$0])) }
    }

    /// The scene in front of the fake camera changes from its next frame: continuous autofocus
    /// on the `raspberryPi` personality scans again. The corresponding C function is `shutter_lc_fake_scene_change`.
    public func changeFakeScene() {
        guard let handle else { return }
        _ = shutter_lc_fake_scene_change(handle)
    }

    /// How many controls the fake camera's last start was given (`Camera::start(controls)`).
    public var fakeStartControlCount: Int {
        guard let handle else { return 0 }
        return Int(shutter_lc_fake_start_controls(handle))
    }

    /// The backend's handle while open, for the simulated camera module (SimulatedCamera.swift),
    /// which paints the fake's buffers and delivers its frames.
    var backendHandle: OpaquePointer? { handle }
}

/// A camera handle the buffer queue's calls use (only on the event loop, while the camera is open).
private struct LibcameraHandle: @unchecked Sendable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
}

/// A reference to the backend's buffer memory (`shutter_lc_buffers`), released with the last
/// frame lent from it. The corresponding C function is `shutter_lc_buffers_release`.
private final class LibcameraBuffers: @unchecked Sendable {
    // @unchecked: the pointer never changes; the backend's reference counting is thread-safe.
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
    deinit { shutter_lc_buffers_release(pointer) }
}

/// What the fake libcamera camera offers and how its autofocus ends.
public struct FakeLibcameraScript: Hashable, Sendable {
    public var width = 64
    public var height = 48
    /// The DRM fourcc it streams (`NV12`, `YU12`, `RG24`, `BG24`).
    public var format = PixelFormat.nv12
    public var hasScalerCrop = true
    public var hasExposureValue = true
    public var hasAutofocus = true
    /// Frames reporting Scanning after an AfTrigger start before the outcome.
    public var autofocusScanFrames = 2
    /// `.focused`, `.failed`, or `.scanning` (never ends: the photo times out).
    public var autofocusOutcome = AfState.focused
    /// The FrameDurationLimits range it offers, in microseconds; `nil` for none.
    public var frameDurationLimits: ClosedRange<Int64>? = 33_333...1_000_000
    /// Bytes between one still plane and the next (0: back to back, as ``FrameFormat`` lays them out).
    public var planeGap = 0
    /// Still planes in buffers of their own (a multi-planar V4L2 format such as YUV420M).
    public var separatePlanes = false
    /// With ``raspberryPi``: the frames after the first start that complete as FrameStartup (not pictures).
    public var startupFrames = 0
    /// Behaves as libcamera's Raspberry Pi pipeline does (fake.cpp's FakeCamera cites each
    /// behaviour): placeholder ranges until configure, sizes as a range with the sensor's full
    /// size (`width` x `height`) as the default, SensorTimestamp at the start of readout with
    /// ExposureTime reported, ExposureValue ``controlDelay`` and FrameDurationLimits
    /// ``frameDurationDelay`` frames late, an ExposureValue change easing in over about ten frames
    /// (the AGC's filter), continuous autofocus scanning again after ``LibcameraCamera/changeFakeScene()``,
    /// YUV420 rows padded to 64-byte alignment in one buffer (the HQ camera's 4056 pixels 4096
    /// bytes apart).
    public var raspberryPi = false
    /// With ``raspberryPi``: the ExposureTime each frame reports until an ExposureValue change, in microseconds.
    public var exposureTimeMicroseconds = 20_000
    /// With ``raspberryPi``: frames until a request's ExposureValue shows.
    public var controlDelay = 2
    /// With ``raspberryPi``: frames until a request's FrameDurationLimits shows (imx708's VBLANK delay).
    public var frameDurationDelay = 3
    /// The libcamera id and model it reports instead of the fake's own (`nil`: keep them).
    public var id: String?
    public var model: String?
    /// Deliveries leave the still planes as they are (the simulator paints them once) instead of filling them.
    public var keepsPlanes = false
    /// With ``raspberryPi``, a Raspberry Pi 4: the CMA left for the camera, in bytes (0: no
    /// limit); the requests' buffers and the vc4 pipeline's own beyond it fail with ENOMEM.
    public var cmaBudget = 0

    public init() {}

    /// The script as the backend takes it: field by field from a zeroed one, so a field the
    /// backend adds starts at 0 here.
    var config: shutter_lc_fake_config {
        var config = shutter_lc_fake_config()
        config.width = UInt32(width)
        config.height = UInt32(height)
        config.fourcc = format.rawValue
        config.has_scaler_crop = hasScalerCrop ? 1 : 0
        config.has_exposure_value = hasExposureValue ? 1 : 0
        config.has_autofocus = hasAutofocus ? 1 : 0
        config.af_scan_frames = Int32(autofocusScanFrames)
        config.af_outcome = autofocusOutcome.rawValue
        config.frame_duration_min_us = frameDurationLimits?.lowerBound ?? 0
        config.frame_duration_max_us = frameDurationLimits?.upperBound ?? 0
        config.plane_gap = UInt32(planeGap)
        config.separate_planes = separatePlanes ? 1 : 0
        config.startup_frames = Int32(startupFrames)
        config.raspberrypi = raspberryPi ? 1 : 0
        config.exposure_time_us = Int32(exposureTimeMicroseconds)
        config.control_delay = Int32(controlDelay)
        config.frame_duration_delay = Int32(frameDurationDelay)
        if let id { withUnsafeMutableBytes(of: &config.id) { Self.copy(id, into: $0) } }
        if let model { withUnsafeMutableBytes(of: &config.model) { Self.copy(model, into: $0) } }
        config.keeps_planes = keepsPlanes ? 1 : 0
        config.cma_budget = UInt64(cmaBudget)
        return config
    }

    /// `text` into a C string field, cut to fit with its terminating zero.
    private static func copy(_ text: String, into field: UnsafeMutableRawBufferPointer) {
        let bytes = Array(text.utf8.prefix(field.count - 1))
        field.copyBytes(from: bytes)
        field[bytes.count] = 0
    }

    /// A Camera Module 3 (imx708, 4608x2592, autofocus) on a Raspberry Pi: YUV420 stills, the
    /// mode's FrameDurationLimits of its full-resolution mode (14 fps at most).
    public static var cameraModule3: FakeLibcameraScript {
        var script = FakeLibcameraScript()
        script.raspberryPi = true
        script.width = 4608
        script.height = 2592
        script.format = .yuv420
        script.frameDurationLimits = 69_669...120_000_000
        return script
    }

    /// A High Quality camera (imx477, 4056x3040, no autofocus) on a Raspberry Pi: YUV420 stills at
    /// the sensor's full size, about 10 fps at most there.
    public static var hqCamera: FakeLibcameraScript {
        var script = FakeLibcameraScript()
        script.raspberryPi = true
        script.hasAutofocus = false
        script.width = 4056
        script.height = 3040
        script.format = .yuv420
        script.frameDurationLimits = 100_000...120_000_000
        return script
    }
}
