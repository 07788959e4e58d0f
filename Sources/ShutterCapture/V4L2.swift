#if canImport(Glibc)
import Glibc
#endif
import CV4L2
import Dispatch
import ShutterCore
import Synchronization
import ShutterSystem

/// One format a V4L2 device offers, with its frame sizes.
public struct V4L2FormatInfo: Hashable, Sendable {
    public var pixelFormat: PixelFormat
    public var description: String
    /// Produced by libv4lconvert's conversion rather than the device.
    public var isEmulated: Bool
    /// Discrete sizes, largest first; for stepwise ranges, the largest and the smallest.
    public var sizes: [FrameSize]
    /// The device takes any size between the two in `sizes`.
    public var isStepwise: Bool
    /// The shortest frame interval (fastest rate) at each size, where the driver enumerates them.
    public var fastestInterval: [FrameSize: Nanoseconds]

    public init(pixelFormat: PixelFormat, description: String, isEmulated: Bool, sizes: [FrameSize], isStepwise: Bool = false,
                fastestInterval: [FrameSize: Nanoseconds] = [:]) {
        self.pixelFormat = pixelFormat
        self.description = description
        self.isEmulated = isEmulated
        self.sizes = sizes
        self.isStepwise = isStepwise
        self.fastestInterval = fastestInterval
    }

    /// Whether the format offers `size` (one of its discrete sizes, or within its stepwise range).
    public func offers(_ size: FrameSize) -> Bool {
        if sizes.isEmpty || sizes.contains(size) { return true }
        return isStepwise && sizes.count == 2
            && (sizes[1].width...sizes[0].width).contains(size.width) && (sizes[1].height...sizes[0].height).contains(size.height)
    }

    /// The frame rate at `size` (frames per second), when the driver says.
    public func fastestRate(at size: FrameSize) -> Double? {
        guard let interval = fastestInterval[size], interval.rawValue > 0 else { return nil }
        return 1e9 / Double(interval.rawValue)
    }
}

/// A frame size.
public struct FrameSize: Hashable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
    public var description: String { "\(width)x\(height)" }
}

/// The calls ``V4L2Device``'s initialiser makes on the open descriptor, replaceable so a test can
/// give it a node that answers `VIDIOC_QUERYCAP` without capturing, and watch every close.
struct V4L2DeviceCalls: Sendable {
    /// The node's capabilities. The corresponding ioctl is `VIDIOC_QUERYCAP`.
    var queryCapability: @Sendable (_ fd: CInt, _ path: String) throws(CaptureError) -> v4l2_capability
    /// The corresponding C function is `close`.
    var close: @Sendable (CInt) -> Void

    static let system = V4L2DeviceCalls(
        queryCapability: { (fd: CInt, path: String) throws(CaptureError) -> v4l2_capability in
            var capability = v4l2_capability()
            try V4L2Device.ioctl(fd, CV4L2_VIDIOC_QUERYCAP, &capability, "VIDIOC_QUERYCAP", path)
            return capability
        },
        close: { fd in _ = CV4L2_close(fd) })
}

/// A V4L2 capture device opened through the C library: querying, format, buffers.
///
/// Every `open`, `ioctl` and `mmap` goes through the C library (not libv4l2, which calls the kernel
/// through `syscall()`), so an LD_PRELOAD layer such as libcamerify's `v4l2-compat.so` sees them.
/// The low-level half of ``V4L2Camera``; ``CameraCommands`` uses it to list devices.
public final class V4L2Device {
    public let path: String
    let fd: CInt
    /// How the descriptor is closed (the C library's `close`, or a test's recording one).
    private let closeDescriptor: @Sendable (CInt) -> Void
    public let info: CameraInfo
    /// libv4lconvert, made on first use: it lists the formats it can convert to and converts frames.
    private var converterHandle: OpaquePointer?
    private var converterTried = false

    /// Opens `path` non-blocking and checks that it captures video by streaming.
    ///
    /// - Throws: ``CaptureError/permissionDenied(device:)``, ``CaptureError/deviceBusy(device:)``,
    ///   ``CaptureError/noDevice(requested:available:backend:)`` or ``CaptureError/notACaptureDevice(device:reason:)``.
    /// The corresponding C functions are `open` and `ioctl` (`VIDIOC_QUERYCAP`).
    public convenience init(path: String) throws(CaptureError) {
        try self.init(path: path, calls: .system)
    }

    /// Opens `path` making the capability query and the close through `calls` (tests replace them).
    init(path: String, calls: V4L2DeviceCalls) throws(CaptureError) {
        self.path = path
        self.closeDescriptor = calls.close
        let fd: CInt
        switch valueOrErrno({ CV4L2_open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC) }) {
        case .success(let opened):
            fd = opened
        case .failure(let errno):
            switch errno.rawValue {
            case EACCES, EPERM: throw CaptureError.permissionDenied(device: path)
            case EBUSY: throw CaptureError.deviceBusy(device: path)
            case ENOENT, ENODEV, ENXIO: throw CaptureError.noDevice(requested: path, available: V4L2Device.listCaptureDevices())
            default: throw CaptureError.system("open", errno, path)
            }
        }
        self.fd = fd
        let capability: v4l2_capability
        do throws(CaptureError) {
            capability = try calls.queryCapability(fd, path)
        } catch {
            calls.close(fd)
            throw error
        }
        // Checked before the last stored property is set: a throw after that would run `deinit`
        // too, closing the descriptor a second time (by then perhaps another thread's file).
        if let problem = Self.captureProblem(capability) {
            calls.close(fd)
            throw CaptureError.notACaptureDevice(device: path, reason: problem)
        }
        info = CameraInfo(path: path, card: Self.string(capability.card), driver: Self.string(capability.driver),
                          bus: Self.string(capability.bus_info), maker: Self.usbManufacturer(of: path))
    }

    /// The USB manufacturer string of the device behind `path` (`/dev/video0` →
    /// `/sys/class/video4linux/video0/device/../manufacturer`), or `nil` for other buses.
    static func usbManufacturer(of path: String) -> String? {
        guard let name = path.split(separator: "/").last else { return nil }
        let file = "/sys/class/video4linux/\(name)/device/../manufacturer"
        let fd = Glibc.open(file, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = Glibc.read(fd, &buffer, buffer.count)
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[..<count], as: UTF8.self)
        let trimmed = text.split(whereSeparator: \.isNewline).first.map { $0.trimmingPrefix(while: \.isWhitespace) }.map(String.init) ?? ""
        return trimmed.isEmpty ? nil : trimmed
    }

    /// Why a node with these capabilities cannot be a camera, or `nil` when it can.
    static func captureProblem(_ capability: v4l2_capability) -> String? {
        let caps = capability.capabilities & CV4L2_CAP_DEVICE_CAPS != 0 ? capability.device_caps : capability.capabilities
        guard caps & CV4L2_CAP_VIDEO_CAPTURE != 0, caps & CV4L2_CAP_STREAMING != 0 else {
            return "it is not a streaming video capture node (a metadata or output node?)"
        }
        return nil
    }

    deinit {
        if let converterHandle { v4lconvert_destroy(converterHandle) }
        closeDescriptor(fd)
    }

    /// The converter for this device; `nil` if libv4lconvert could not make one (then only the
    /// device's own formats are offered). The corresponding C function is `v4lconvert_create_with_dev_ops`.
    var converter: OpaquePointer? {
        if !converterTried {
            converterTried = true
            converterHandle = CV4L2_converter_create(fd)
        }
        return converterHandle
    }

    static func string<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
    }

    /// Runs an ioctl through the C library, retrying EINTR; errno becomes a ``CaptureError`` naming the ioctl and device.
    ///
    /// The corresponding C function is `ioctl`.
    static func ioctl(_ fd: CInt, _ request: UInt, _ argument: UnsafeMutableRawPointer, _ name: String, _ device: String) throws(CaptureError) {
        guard case .failure(let errno) = nothingOrErrno({ CV4L2_ioctl(fd, request, argument) }) else { return }
        switch errno.rawValue {
        case ENODEV: throw CaptureError.deviceVanished(device: device)
        case EBUSY: throw CaptureError.deviceBusy(device: device)
        default: throw CaptureError.system(name, errno, device)
        }
    }

    func ioctl(_ request: UInt, _ argument: UnsafeMutableRawPointer, _ name: String) throws(CaptureError) {
        try Self.ioctl(fd, request, argument, name, path)
    }

    /// The device nodes `/dev/video*`, in number order.
    public static func nodes() -> [String] {
        guard let dir = opendir("/dev") else { return [] }
        defer { closedir(dir) }
        var numbers: [Int] = []
        while let entry = readdir(dir) {
            let name = string(entry.pointee.d_name)
            if name.hasPrefix("video"), let number = Int(name.dropFirst(5)) { numbers.append(number) }
        }
        return numbers.sorted().map { "/dev/video\($0)" }
    }

    /// The paths of the capture devices, in number order (metadata and output nodes left out):
    /// the candidates for a board that names no camera.
    public static func captureDevicePaths() -> [String] {
        nodes().filter { path in
            do throws(CaptureError) {
                _ = try V4L2Device(path: path)
                return true
            } catch {
                // A busy or forbidden camera is still the one to open: opening it then says why it cannot be used.
                switch error {
                case .notACaptureDevice, .noDevice: return false
                default: return true
                }
            }
        }
    }

    /// `path (card)` for each capture device, for error messages.
    public static func listCaptureDevices() -> [String] {
        nodes().compactMap { path in
            guard let device = try? V4L2Device(path: path) else { return nil }
            return "\(path) (\(device.info.card))"
        }
    }

    /// Opens the device the board names: a path, or the card name `VIDIOC_QUERYCAP` reports
    /// (exact first, then ignoring case, then as a prefix), because `/dev/videoN` numbers move.
    public static func open(named name: String) throws(CaptureError) -> V4L2Device {
        if name.hasPrefix("/") { return try V4L2Device(path: name) }
        var devices: [V4L2Device] = []
        var busy: String?
        var denied: String?
        for path in nodes() {
            do throws(CaptureError) {
                devices.append(try V4L2Device(path: path))
            } catch {
                if case .deviceBusy = error { busy = path }
                if case .permissionDenied = error { denied = path }
            }
        }
        let lowered = name.lowercased()
        for match in [{ (card: String) in card == name }, { $0.lowercased() == lowered }, { $0.lowercased().hasPrefix(lowered) }] {
            if let device = devices.first(where: { match($0.info.card) }) { return device }
        }
        if let denied, devices.isEmpty { throw CaptureError.permissionDenied(device: denied) }
        if let busy, devices.isEmpty { throw CaptureError.deviceBusy(device: busy) }
        throw CaptureError.noDevice(requested: name, available: devices.map { "\($0.path) (\($0.info.card))" })
    }

    /// The formats the device offers (libv4lconvert adds the ones it converts to), with their sizes.
    /// The corresponding C function is `v4lconvert_enum_fmt` (`VIDIOC_ENUM_FMT` without a converter).
    public func formats() -> [V4L2FormatInfo] {
        var result: [V4L2FormatInfo] = []
        let converter = converter
        for index in 0..<256 {
            var description = v4l2_fmtdesc()
            description.index = UInt32(index)
            description.type = CV4L2_BUF_TYPE_VIDEO_CAPTURE
            if let converter {
                guard v4lconvert_enum_fmt(converter, &description) == 0 else { break }
            } else {
                guard (try? ioctl(CV4L2_VIDIOC_ENUM_FMT, &description, "VIDIOC_ENUM_FMT")) != nil else { break }
            }
            let format = PixelFormat(rawValue: description.pixelformat)
            let (sizes, stepwise) = sizes(for: format)
            var fastest: [FrameSize: Nanoseconds] = [:]
            for size in sizes {
                if let interval = frameIntervals(for: format, size: size).min() { fastest[size] = interval }
            }
            result.append(V4L2FormatInfo(pixelFormat: format, description: Self.string(description.description),
                                         isEmulated: description.flags & CV4L2_FMT_FLAG_EMULATED != 0,
                                         sizes: sizes, isStepwise: stepwise, fastestInterval: fastest))
        }
        return result
    }

    /// The frame sizes offered for `format`, largest first, and whether any size between the two given is allowed.
    /// The corresponding C function is `v4lconvert_enum_framesizes` (`VIDIOC_ENUM_FRAMESIZES` without a converter).
    public func sizes(for format: PixelFormat) -> (sizes: [FrameSize], isStepwise: Bool) {
        var sizes: [FrameSize] = []
        var stepwise = false
        let converter = converter
        for index in 0..<256 {
            var size = v4l2_frmsizeenum()
            size.index = UInt32(index)
            size.pixel_format = format.rawValue
            if let converter {
                guard v4lconvert_enum_framesizes(converter, &size) == 0 else { break }
            } else {
                guard (try? ioctl(CV4L2_VIDIOC_ENUM_FRAMESIZES, &size, "VIDIOC_ENUM_FRAMESIZES")) != nil else { break }
            }
            if size.type == CV4L2_FRMSIZE_TYPE_DISCRETE {
                sizes.append(FrameSize(width: Int(size.discrete.width), height: Int(size.discrete.height)))
            } else {
                sizes.append(FrameSize(width: Int(size.stepwise.max_width), height: Int(size.stepwise.max_height)))
                sizes.append(FrameSize(width: Int(size.stepwise.min_width), height: Int(size.stepwise.min_height)))
                stepwise = true
                break
            }
        }
        return (sizes.sorted { $0.width * $0.height > $1.width * $1.height }, stepwise)
    }

    /// The frame intervals offered for `format` at `size`: every discrete one, or the shortest and
    /// longest of a range. Empty when the driver does not say.
    /// The corresponding ioctl is `VIDIOC_ENUM_FRAMEINTERVALS`.
    public func frameIntervals(for format: PixelFormat, size: FrameSize) -> [Nanoseconds] {
        func nanoseconds(_ fraction: v4l2_fract) -> Nanoseconds? {
            fraction.denominator > 0 && fraction.numerator > 0
                ? Nanoseconds(rawValue: Int64(fraction.numerator) * 1_000_000_000 / Int64(fraction.denominator)) : nil
        }
        var intervals: [Nanoseconds] = []
        for index in 0..<64 {
            var interval = v4l2_frmivalenum()
            interval.index = UInt32(index)
            interval.pixel_format = format.rawValue
            interval.width = UInt32(size.width)
            interval.height = UInt32(size.height)
            guard (try? ioctl(CV4L2_VIDIOC_ENUM_FRAMEINTERVALS, &interval, "VIDIOC_ENUM_FRAMEINTERVALS")) != nil else { break }
            if interval.type == CV4L2_FRMIVAL_TYPE_DISCRETE {
                if let value = nanoseconds(interval.discrete) { intervals.append(value) }
            } else {
                if let value = nanoseconds(interval.stepwise.min) { intervals.append(value) }
                if let value = nanoseconds(interval.stepwise.max) { intervals.append(value) }
                break
            }
        }
        return intervals
    }

    /// Every control, with menu entries. The corresponding ioctl is `VIDIOC_QUERYCTRL`.
    public func controls() -> [CameraControl] {
        var result: [CameraControl] = []
        var id = CV4L2_CTRL_FLAG_NEXT_CTRL
        while true {
            var query = v4l2_queryctrl()
            query.id = id
            guard (try? ioctl(CV4L2_VIDIOC_QUERYCTRL, &query, "VIDIOC_QUERYCTRL")) != nil else { break }
            id = query.id | CV4L2_CTRL_FLAG_NEXT_CTRL
            if query.type == CV4L2_CTRL_TYPE_CTRL_CLASS || query.flags & CV4L2_CTRL_FLAG_DISABLED != 0 { continue }
            let kind: CameraControl.Kind = switch query.type {
            case CV4L2_CTRL_TYPE_INTEGER: .integer
            case CV4L2_CTRL_TYPE_BOOLEAN: .boolean
            case CV4L2_CTRL_TYPE_MENU: .menu
            case CV4L2_CTRL_TYPE_INTEGER_MENU: .integerMenu
            case CV4L2_CTRL_TYPE_BUTTON: .button
            default: .other
            }
            var control = CameraControl(id: query.id, name: Self.string(query.name), kind: kind, minimum: query.minimum,
                                        maximum: query.maximum, step: query.step, defaultValue: query.default_value,
                                        isWritable: query.flags & (CV4L2_CTRL_FLAG_READ_ONLY | CV4L2_CTRL_FLAG_INACTIVE) == 0)
            if kind == .menu || kind == .integerMenu, query.minimum <= query.maximum, query.maximum - query.minimum < 256 {
                for value in query.minimum...query.maximum {
                    var item = v4l2_querymenu()
                    item.id = query.id
                    item.index = UInt32(bitPattern: value)
                    guard (try? ioctl(CV4L2_VIDIOC_QUERYMENU, &item, "VIDIOC_QUERYMENU")) != nil else { continue }
                    let name = kind == .menu ? Self.string(item.name) : String(item.value)
                    control.menu.append((value: value, name: name))
                }
            }
            result.append(control)
        }
        return result
    }

    /// Reads a control. The corresponding ioctl is `VIDIOC_G_CTRL`.
    public func control(_ id: UInt32) throws(CaptureError) -> Int32 {
        var control = v4l2_control(id: id, value: 0)
        try ioctl(CV4L2_VIDIOC_G_CTRL, &control, "VIDIOC_G_CTRL")
        return control.value
    }

    /// Sets a control. The corresponding ioctl is `VIDIOC_S_CTRL`.
    public func setControl(_ id: UInt32, to value: Int32) throws(CaptureError) {
        var control = v4l2_control(id: id, value: value)
        try ioctl(CV4L2_VIDIOC_S_CTRL, &control, "VIDIOC_S_CTRL")
    }
}

/// The format and size to ask a device for, decided from what it offers.
///
/// - Returns: with `pixelFormat` set, that format at the asked (or its largest) size. Without it and
///   with a size asked: of the formats offering that size, the one with the best frame rate there
///   (rates above the asked `fps` count as equal), then the best of ``PixelFormat/preferred``,
///   native before libv4lconvert-converted. Without a size: the best of ``PixelFormat/preferred``
///   at its largest size.
/// - Throws: ``CaptureError/unsupportedFormat(device:requested:supported:)`` or
///   ``CaptureError/unsupportedSize(device:requested:supported:)`` listing what is offered.
public func chooseFormat(offered: [V4L2FormatInfo], settings: CameraSettings, device: String) throws(CaptureError) -> (PixelFormat, FrameSize) {
    let wantedSize = settings.width.flatMap { width in settings.height.map { FrameSize(width: width, height: $0) } }
    let format: V4L2FormatInfo
    if let code = settings.pixelFormat {
        guard let wanted = PixelFormat(fourcc: code), let match = offered.first(where: { $0.pixelFormat == wanted }) else {
            throw CaptureError.unsupportedFormat(device: device, requested: code, supported: offered.map(\.pixelFormat.fourcc))
        }
        guard match.pixelFormat.isEncodable else {
            throw CaptureError.unsupportedFormat(device: device, requested: code,
                                                 supported: offered.map(\.pixelFormat).filter(\.isEncodable).map(\.fourcc))
        }
        format = match
    } else {
        let encodable = offered.filter(\.pixelFormat.isEncodable)
        /// Lower is better: native before converted, then the order of ``PixelFormat/preferred``.
        func preference(_ info: V4L2FormatInfo) -> Int {
            (info.isEmulated ? 100 : 0) + (PixelFormat.preferred.firstIndex(of: info.pixelFormat) ?? 99)
        }
        guard let best = encodable.min(by: { preference($0) < preference($1) }) else {
            throw CaptureError.unsupportedFormat(device: device, requested: "any of " + PixelFormat.preferred.map(\.fourcc).joined(separator: ", "),
                                                 supported: offered.map(\.pixelFormat.fourcc))
        }
        if let wantedSize {
            let candidates = encodable.filter { $0.offers(wantedSize) }
            // The rate that counts: what the format delivers at the size, up to the rate asked for.
            func rate(_ info: V4L2FormatInfo) -> Double {
                let fastest = info.fastestRate(at: wantedSize) ?? 0
                return settings.fps.map { min(fastest, $0 * 0.999) } ?? fastest
            }
            format = candidates.min { lhs, rhs in
                let (left, right) = (rate(lhs), rate(rhs))
                if abs(left - right) > 0.005 * max(left, right) { return left > right }
                return preference(lhs) < preference(rhs)
            } ?? best
        } else {
            format = best
        }
    }
    if let wantedSize {
        guard format.offers(wantedSize) else {
            throw CaptureError.unsupportedSize(device: device, requested: "\(wantedSize) in \(format.pixelFormat)",
                                               supported: format.sizes.map(\.description))
        }
        return (format.pixelFormat, wantedSize)
    }
    guard let largest = format.sizes.first else {
        throw CaptureError.unsupportedSize(device: device, requested: "a size in \(format.pixelFormat)", supported: [])
    }
    return (format.pixelFormat, largest)
}

/// The range a negotiated format's values are in, from `VIDIOC_S_FMT`'s answer: its
/// `quantization`, or for `V4L2_QUANTIZATION_DEFAULT` the kernel's default for its colorspace
/// (`V4L2_MAP_QUANTIZATION_DEFAULT`: limited for Y'CbCr, full for the JPEG colorspace).
///
/// The extended fields (`ycbcr_enc`, `quantization`) count only when `priv` says they were
/// filled in (`V4L2_PIX_FMT_PRIV_MAGIC`); otherwise they are taken as the defaults. Formats that
/// are not Y'CbCr (RGB, grey, JPEG) are full range: the encoder takes their values as they are.
///
/// - Parameter libcameraCompat: the device is libcamerify's `v4l2-compat.so` (driver "libcamera"),
///   which answers a fixed sRGB with default quantization whatever libcamera configured; its
///   viewfinder stream is sYCC (full range) on a Raspberry Pi, so its frames stay as they are.
func negotiatedYUVRange(_ pix: v4l2_pix_format, libcameraCompat: Bool = false) -> YUVRange {
    guard PixelFormat(rawValue: pix.pixelformat).isYCbCr, !libcameraCompat else { return .full }
    let extended = pix.priv == CV4L2_PIX_FMT_PRIV_MAGIC
    var quantization = extended ? pix.quantization : CV4L2_QUANTIZATION_DEFAULT
    if quantization != CV4L2_QUANTIZATION_FULL_RANGE, quantization != CV4L2_QUANTIZATION_LIM_RANGE {
        quantization = CV4L2_map_quantization_default(0, pix.colorspace, extended ? pix.ycbcr_enc : CV4L2_YCBCR_ENC_DEFAULT)
    }
    return quantization == CV4L2_QUANTIZATION_FULL_RANGE ? .full : .limited
}

/// When a frame's exposure started, from the driver's timestamp and its flags: the press is
/// compared with the start of exposure, like with like.
///
/// Zero shutter lag compares frame times with GPIO edge times, so only a CLOCK_MONOTONIC stamp
/// will do: a driver that stamps otherwise (or not at all) gets the dequeue time. A start-of-exposure
/// stamp (`V4L2_BUF_FLAG_TSTAMP_SRC_SOE`, as uvcvideo gives) is taken as it is; an end-of-frame
/// stamp (`..._EOF`, the default) and the dequeue time are moved back by one frame interval.
func exposureStart(stamped: Instant, flags: UInt32, interval: Nanoseconds?, dequeuedAt: Instant) -> Instant {
    let monotonic = flags & CV4L2_BUF_FLAG_TIMESTAMP_MASK == CV4L2_BUF_FLAG_TIMESTAMP_MONOTONIC && stamped != .zero
    let time = monotonic ? stamped : dequeuedAt
    if monotonic, flags & CV4L2_BUF_FLAG_TSTAMP_SRC_MASK == CV4L2_BUF_FLAG_TSTAMP_SRC_SOE { return time }
    return time - (interval ?? .zero)
}

/// Whether a dequeued frame is whole, so that it may go into the ring: not flagged
/// `V4L2_BUF_FLAG_ERROR` (the driver says its data is damaged, as uvcvideo does for a frame that
/// lost packets), not shorter than an uncompressed frame of its format (`bytesused` short of
/// the size: a frame cut off), and for JPEG, complete from its SOI to its EOI.
///
/// - Parameters:
///   - flags: the buffer's `flags`.
///   - bytes: the buffer's first `bytesused` bytes.
///   - format: the format the device delivers.
func isWholeFrame(flags: UInt32, bytes: UnsafeRawBufferPointer, format: FrameFormat) -> Bool {
    if flags & CV4L2_BUF_FLAG_ERROR != 0 { return false }
    if let size = format.frameBytes, bytes.count < size { return false }
    return !format.pixelFormat.isJPEG || JPEGMarkers.isComplete(bytes)
}

/// A V4L2 camera streaming into memory-mapped buffers; frames in a format the device does not
/// offer itself are converted by libv4lconvert.
public final class V4L2Camera: Camera {
    public let device: V4L2Device
    public private(set) var format: FrameFormat
    /// What the device delivers and how to convert it into `format`; `nil` when frames come as they are.
    private var conversion: FrameConversion?
    public private(set) var frameInterval: Nanoseconds?
    public private(set) var isStreaming = false
    public let controls: [CameraControl]
    /// The driver's buffers and which of them are queued or lent to frames.
    private let bufferQueue: BufferQueue
    /// How many frames the zero-shutter-lag ring holds (the board's `ringFrames`, bounded by `ringMiB`).
    public let ringCapacity: Int
    /// The driver's buffer size (`sizeimage`): what one frame held in the ring costs.
    public private(set) var bytesPerFrame: Int
    private let controlQueue = DispatchQueue(label: "shutter.v4l2.controls")
    /// The most recent control failure from the background queue, reported by the next `setControl`.
    private let controlFailure = Locked<CaptureError?>(nil)

    /// Buffers asked for beyond the ring: two stay queued so the driver never starves (vimc
    /// streams only with two), one is dequeued while the ring still holds the frame it replaces,
    /// and one is a photo being encoded. More photos at once, and frames are copied while they encode.
    public static let spareBuffers = 4
    /// Fewer queued buffers than this after a dequeue, and the frame is copied and its buffer
    /// queued at once, rather than lent: a burst of photos still encoding cannot starve the driver.
    static let minimumQueued = 2

    /// Whether frames borrow the driver's buffers (the ring is the driver's buffers). Not under
    /// libcamerify: its `v4l2-compat.so` hands buffers out in turn from `DQBUF` and expects
    /// them back in the same order, so there frames are copied and buffers queued at once.
    public let lendsBuffers: Bool

    /// How many buffers the driver streams into: the ring plus ``spareBuffers`` (4 when frames are copied).
    public var bufferCount: Int { lendsBuffers ? ringCapacity + Self.spareBuffers : 4 }

    public var info: CameraInfo { device.info }
    /// What the event loop polls in the device's place while streaming: made at each start, after
    /// the buffers are requested (a vb2 queue polled before `VIDIOC_REQBUFS` starts its `read()`
    /// emulation, vb2_core_poll in videobuf2-core.c, and would refuse the buffers).
    private var readiness: DriverReadiness?
    public var pollDescriptor: CInt? { isStreaming ? readiness?.descriptor : nil }

    /// Opens the camera `settings.device` names and sets its format; does not start streaming.
    public init(settings: CameraSettings) throws(CaptureError) {
        device = try V4L2Device.open(named: settings.device ?? "")
        let (pixelFormat, size) = try chooseFormat(offered: device.formats(), settings: settings, device: device.path)
        var request = v4l2_format()
        request.type = CV4L2_BUF_TYPE_VIDEO_CAPTURE
        request.fmt.pix.width = UInt32(size.width)
        request.fmt.pix.height = UInt32(size.height)
        request.fmt.pix.pixelformat = pixelFormat.rawValue
        request.fmt.pix.field = CV4L2_FIELD_NONE
        // A format libv4lconvert makes: set the device to the format it converts from.
        var destination = request, source = v4l2_format()
        if let converter = device.converter, v4lconvert_try_format(converter, &destination, &source) == 0,
           destination.fmt.pix.pixelformat == pixelFormat.rawValue, v4lconvert_needs_conversion(converter, &source, &destination) != 0 {
            request = source
            try device.ioctl(CV4L2_VIDIOC_S_FMT, &request, "VIDIOC_S_FMT")
            guard request.fmt.pix.pixelformat == source.fmt.pix.pixelformat,
                  request.fmt.pix.width == source.fmt.pix.width, request.fmt.pix.height == source.fmt.pix.height else {
                throw CaptureError.unsupportedFormat(device: device.path, requested: "\(pixelFormat.fourcc) converted from \(PixelFormat(rawValue: source.fmt.pix.pixelformat).fourcc)",
                                                     supported: device.formats().map(\.pixelFormat.fourcc))
            }
            let delivered = FrameFormat(width: Int(request.fmt.pix.width), height: Int(request.fmt.pix.height),
                                        pixelFormat: PixelFormat(rawValue: request.fmt.pix.pixelformat),
                                        bytesPerLine: Int(request.fmt.pix.bytesperline))
            conversion = FrameConversion(device: device, converter: converter, source: request, destination: destination,
                                         sourceFormat: delivered, capacity: max(Int(destination.fmt.pix.sizeimage), 0))
            request = destination
        } else {
            try device.ioctl(CV4L2_VIDIOC_S_FMT, &request, "VIDIOC_S_FMT")
        }
        // For a converted format this is libv4lconvert's answer (`v4lconvert_try_format`), whose
        // colour fields say what it makes.
        let got = FrameFormat(width: Int(request.fmt.pix.width), height: Int(request.fmt.pix.height),
                              pixelFormat: PixelFormat(rawValue: request.fmt.pix.pixelformat),
                              bytesPerLine: Int(request.fmt.pix.bytesperline),
                              yuvRange: negotiatedYUVRange(request.fmt.pix, libcameraCompat: device.info.driver == "libcamera"))
        guard got.pixelFormat == pixelFormat else {
            throw CaptureError.unsupportedFormat(device: device.path, requested: pixelFormat.fourcc, supported: device.formats().map(\.pixelFormat.fourcc))
        }
        guard got.width == size.width, got.height == size.height else {
            throw CaptureError.unsupportedSize(device: device.path, requested: "\(size) (the driver gave \(got.width)x\(got.height))",
                                               supported: device.sizes(for: pixelFormat).sizes.map(\.description))
        }
        format = got
        if got.bytesPerLine == 0 { format.bytesPerLine = FrameFormat.defaultBytesPerLine(width: got.width, pixelFormat: got.pixelFormat) }
        bytesPerFrame = max(Int(request.fmt.pix.sizeimage), format.frameBytes ?? 0)
        ringCapacity = try ShutterCapture.ringCapacity(ringFrames: settings.ringFrames, ringMiB: settings.ringMiB,
                                                       frameBytes: bytesPerFrame, device: device.path)
        lendsBuffers = device.info.driver != "libcamera"
        bufferQueue = BufferQueue(calls: .device(fd: device.fd, path: device.path),
                                      minimumQueued: lendsBuffers ? Self.minimumQueued : .max)
        var parm = v4l2_streamparm()
        parm.type = CV4L2_BUF_TYPE_VIDEO_CAPTURE
        let hasParm = (try? device.ioctl(CV4L2_VIDIOC_G_PARM, &parm, "VIDIOC_G_PARM")) != nil
        if let fps = settings.fps {
            let offered = device.frameIntervals(for: pixelFormat, size: size).map { JSONLine.number(1e9 / Double($0.rawValue), decimals: 2) + " fps" }
            guard hasParm, parm.parm.capture.capability & CV4L2_CAP_TIMEPERFRAME != 0 else {
                throw CaptureError.unsupportedSize(device: device.path, requested: "a chosen frame rate (\(JSONLine.number(fps, decimals: 2)) fps): the driver keeps its own",
                                                   supported: offered.isEmpty ? ["its own rate"] : offered)
            }
            // 1000 / (fps × 1000) keeps fractional rates such as 29.97 exact enough.
            parm.parm.capture.timeperframe = v4l2_fract(numerator: 1000, denominator: UInt32((fps * 1000).rounded()))
            try device.ioctl(CV4L2_VIDIOC_S_PARM, &parm, "VIDIOC_S_PARM")
        }
        if hasParm, parm.parm.capture.timeperframe.denominator > 0 {
            let perFrame = parm.parm.capture.timeperframe
            frameInterval = Nanoseconds(rawValue: Int64(perFrame.numerator) * 1_000_000_000 / Int64(perFrame.denominator))
        }
        controls = device.controls()
    }

    deinit { close() }

    /// Maps the buffers, queues them (all but those still lent to frames) and starts streaming.
    /// The corresponding ioctls are `VIDIOC_REQBUFS`, `VIDIOC_QUERYBUF`, `VIDIOC_QBUF` and `VIDIOC_STREAMON`.
    public func start() throws(CaptureError) {
        guard !isStreaming else { return }
        do throws(CaptureError) {
            if !bufferQueue.isMapped { try mapBuffers() }
            try bufferQueue.start()
            isStreaming = true  // first: a failure below stops the stream again
            readiness = try DriverReadiness(watching: device.fd, path: device.path)
        } catch {
            stop()
            unmapBuffers()
            throw error
        }
    }

    private func mapBuffers() throws(CaptureError) {
        var request = v4l2_requestbuffers()
        request.count = UInt32(bufferCount)
        request.type = CV4L2_BUF_TYPE_VIDEO_CAPTURE
        request.memory = CV4L2_MEMORY_MMAP
        try device.ioctl(CV4L2_VIDIOC_REQBUFS, &request, "VIDIOC_REQBUFS")
        guard request.count >= 2 else {
            throw CaptureError.notACaptureDevice(device: device.path, reason: "the driver gave \(request.count) buffers, 2 are needed")
        }
        var regions: [MappedBuffers.Region] = []
        defer { bufferQueue.adopt(MappedBuffers(regions)) }  // what was mapped is unmapped, even after a failure
        for index in 0..<Int(request.count) {
            var buffer = v4l2_buffer()
            buffer.index = UInt32(index)
            buffer.type = CV4L2_BUF_TYPE_VIDEO_CAPTURE
            buffer.memory = CV4L2_MEMORY_MMAP
            try device.ioctl(CV4L2_VIDIOC_QUERYBUF, &buffer, "VIDIOC_QUERYBUF")
            let pointer = CV4L2_mmap(device.fd, Int(buffer.length), Int64(buffer.m.offset))
            guard let pointer, CV4L2_is_map_failed(pointer) == 0 else {
                throw CaptureError.system(call: "mmap", errno: errno, context: device.path)
            }
            regions.append(MappedBuffers.Region(start: pointer, length: Int(buffer.length)))
        }
    }

    /// Lets go of the buffers: the driver frees them once the frames still holding some are done
    /// (their mappings stay valid until then). The corresponding ioctl is `VIDIOC_REQBUFS` (count 0).
    private func unmapBuffers() {
        guard bufferQueue.forget() else { return }
        var request = v4l2_requestbuffers()
        request.count = 0
        request.type = CV4L2_BUF_TYPE_VIDEO_CAPTURE
        request.memory = CV4L2_MEMORY_MMAP
        try? device.ioctl(CV4L2_VIDIOC_REQBUFS, &request, "VIDIOC_REQBUFS")
    }

    /// The corresponding ioctl is `VIDIOC_STREAMOFF`.
    public func stop() {
        readiness = nil
        guard isStreaming else { return }
        isStreaming = false
        bufferQueue.stop()
    }

    /// Dequeues every filled buffer. Each good frame borrows its buffer: the buffer stays out of
    /// the driver's queue until the frame (in the ring, or in a photo being encoded) is dropped.
    /// Frames that would leave the driver short of queued buffers are copied and their buffer
    /// queued at once; error-flagged and damaged frames are dropped. Frames in a format
    /// libv4lconvert makes carry the device's bytes and their ``FrameConversion``. Appends to
    /// `frames`, all or none.
    /// The corresponding ioctl is `VIDIOC_DQBUF`.
    public func readFrames(into frames: inout [Frame]) throws(CaptureError) {
        guard isStreaming, let mapping = bufferQueue.mapping else { return }
        // Buffers whose frames the ring dropped (or whose photos are written) go back first.
        try bufferQueue.reclaim()
        // A failure after some frames were dequeued must not leave the caller half a batch.
        try frames.appendAllOrNone { (frames: inout [Frame]) throws(CaptureError) in try dequeueReady(into: &frames, mapping: mapping) }
    }

    /// ``readFrames(into:)``'s loop: dequeues until no buffer is ready, appending to `frames`.
    private func dequeueReady(into frames: inout [Frame], mapping: MappedBuffers) throws(CaptureError) {
        while true {
            // Ask poll first, so an empty queue costs no ioctl (and no EAGAIN) on every wake-up.
            var ready = pollfd(fd: device.fd, events: Int16(POLLIN), revents: 0)
            let polled = try valueOrErrno { poll(&ready, 1, 0) }.mapError { CaptureError.system("poll", $0, device.path) }.get()
            if polled == 0 { return }
            if ready.revents & Int16(POLLIN) == 0 {
                if ready.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 {
                    // vb2 reports a stream error or a disconnected device as POLLERR; DQBUF says which.
                } else {
                    return
                }
            }
            var buffer = v4l2_buffer()
            buffer.type = CV4L2_BUF_TYPE_VIDEO_CAPTURE
            buffer.memory = CV4L2_MEMORY_MMAP
            if case .failure(let errno) = nothingOrErrno({ CV4L2_ioctl(device.fd, CV4L2_VIDIOC_DQBUF, &buffer) }) {
                if errno == .wouldBlock { return }
                if errno.rawValue == ENODEV { throw CaptureError.deviceVanished(device: device.path) }
                throw CaptureError.system("VIDIOC_DQBUF", errno, device.path)
            }
            let index = Int(buffer.index)
            guard index < mapping.regions.count else { continue }
            let region = mapping.regions[index]
            let used = buffer.bytesused > 0 ? min(Int(buffer.bytesused), region.length) : region.length
            let raw = UnsafeRawBufferPointer(start: region.start, count: used)
            let wanted = isWholeFrame(flags: buffer.flags, bytes: raw, format: conversion?.sourceFormat ?? format)
            let stamped = Instant(rawValue: Int64(buffer.timestamp.tv_sec) * 1_000_000_000 + Int64(buffer.timestamp.tv_usec) * 1_000)
            let time = exposureStart(stamped: stamped, flags: buffer.flags, interval: frameInterval, dequeuedAt: monotonicNow())
            // A frame libv4lconvert must convert keeps the device's bytes and is converted only
            // if a photo takes it, on the encode worker: never per frame on the event loop.
            if wanted, let lent = bufferQueue.lend(index, count: used) {
                frames.append(Frame(timestamp: time, sequence: buffer.sequence, format: format, buffer: lent, conversion: conversion))
                continue
            }
            guard wanted else {
                try bufferQueue.discard(index)
                continue
            }
            frames.append(Frame(timestamp: time, sequence: buffer.sequence, format: format,
                                buffer: FrameBuffer(bytes: [UInt8](raw)), conversion: conversion))
            try bufferQueue.requeue(index)
        }
    }

    /// Sets a control on a background queue, so a slow USB control transfer never delays frames.
    /// Reports the previous background failure, if any. The corresponding ioctl is `VIDIOC_S_CTRL`.
    public func setControl(_ id: UInt32, to value: Int32) throws(CaptureError) {
        if let failure = controlFailure.withLock({ old in defer { old = nil }; return old }) { throw failure }
        guard let control = controls.first(where: { $0.id == id }) else {
            throw CaptureError.system(call: "VIDIOC_S_CTRL", errno: EINVAL, context: "\(device.path): no control 0x\(String(id, radix: 16))")
        }
        let clamped = min(max(value, control.minimum), control.maximum)
        let fd = device.fd, path = device.path, failure = controlFailure
        controlQueue.async {
            var request = v4l2_control(id: id, value: clamped)
            do throws(CaptureError) {
                try V4L2Device.ioctl(fd, CV4L2_VIDIOC_S_CTRL, &request, "VIDIOC_S_CTRL", path)
            } catch {
                failure.withLock { $0 = error }
            }
        }
    }

    /// Reads a control on the control queue, after the changes queued before it, and hands the
    /// value to `answer` there: a USB control transfer can take tens of milliseconds. The
    /// corresponding ioctl is `VIDIOC_G_CTRL`.
    public func readControl(_ id: UInt32, then answer: @escaping @Sendable (Int32?) -> Void) {
        let fd = device.fd, path = device.path
        controlQueue.async {
            var request = v4l2_control(id: id, value: 0)
            let read = (try? V4L2Device.ioctl(fd, CV4L2_VIDIOC_G_CTRL, &request, "VIDIOC_G_CTRL", path)) != nil
            answer(read ? request.value : nil)
        }
    }

    /// Waits for control changes queued so far (tests and commands).
    public func flushControls() { controlQueue.sync {} }

    public func close() {
        controlQueue.sync {}
        stop()
        unmapBuffers()
    }
}

/// libv4lconvert's conversion of one device's frames into the format the board asked for.
///
/// Done for the one frame a photo takes, on the encode worker, rather than for every frame on the
/// event loop. Holds the device: libv4lconvert may read controls through its descriptor while it
/// converts, so the descriptor stays open until the last frame needing it is gone.
public final class FrameConversion: @unchecked Sendable {
    // @unchecked: the converter is used under `lock` only; everything else is immutable.
    private let device: V4L2Device
    private let converter: OpaquePointer
    private let lock = Mutex(())
    private let source: v4l2_format
    private let destination: v4l2_format
    /// What the device delivers.
    public let sourceFormat: FrameFormat
    private let capacity: Int

    init(device: V4L2Device, converter: OpaquePointer, source: v4l2_format, destination: v4l2_format,
         sourceFormat: FrameFormat, capacity: Int) {
        self.device = device
        self.converter = converter
        self.source = source
        self.destination = destination
        self.sourceFormat = sourceFormat
        self.capacity = capacity
    }

    /// `raw` (a frame as the device delivered it) in the destination format; `nil` when the
    /// conversion fails (a damaged compressed frame). The corresponding C function is `v4lconvert_convert`.
    func convert(_ raw: UnsafeRawBufferPointer, formatBytes: Int) -> [UInt8]? {
        let capacity = max(self.capacity, formatBytes)
        var source = self.source, destination = self.destination
        return lock.withLock { _ -> [UInt8]? in
            var failed = false
            let bytes = [UInt8](unsafeUninitializedCapacity: capacity) { output, count in
                let written = v4lconvert_convert(converter, &source, &destination,
                                                 UnsafeMutablePointer(mutating: raw.baseAddress?.assumingMemoryBound(to: UInt8.self)), CInt(raw.count),
                                                 output.baseAddress, CInt(capacity))
                failed = written < 0
                count = max(Int(written), 0)
            }
            return failed ? nil : bytes
        }
    }
}

extension BufferQueueCalls {
    /// The ioctls on the V4L2 device `fd`.
    static func device(fd: CInt, path: String) -> BufferQueueCalls {
        BufferQueueCalls(
            queue: { (index: Int) throws(CaptureError) in
                var buffer = v4l2_buffer()
                buffer.index = UInt32(index)
                buffer.type = CV4L2_BUF_TYPE_VIDEO_CAPTURE
                buffer.memory = CV4L2_MEMORY_MMAP
                try V4L2Device.ioctl(fd, CV4L2_VIDIOC_QBUF, &buffer, "VIDIOC_QBUF", path)
            },
            start: { () throws(CaptureError) in
                var type = CV4L2_BUF_TYPE_VIDEO_CAPTURE
                try V4L2Device.ioctl(fd, CV4L2_VIDIOC_STREAMON, &type, "VIDIOC_STREAMON", path)
            },
            stop: {
                var type = CV4L2_BUF_TYPE_VIDEO_CAPTURE
                try? V4L2Device.ioctl(fd, CV4L2_VIDIOC_STREAMOFF, &type, "VIDIOC_STREAMOFF", path)
            })
    }
}
