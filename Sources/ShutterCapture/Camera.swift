import ShutterCore

/// A source of timestamped frames: a libcamera camera, a V4L2 device or the synthetic camera.
///
/// Used from one thread at a time: the capture service's ``CameraSession`` opens, starts, stops
/// and closes it on its lifecycle queue, and the service reads frames and sets controls on the
/// event loop while no lifecycle job is queued. `readFrames` and `setControl` must not block; opening, `start`, `stop` and `close`
/// may (they configure the device).
public protocol Camera: AnyObject {
    /// What the camera reports about itself (card name for EXIF `Model`).
    var info: CameraInfo { get }
    /// The format frames arrive in; valid once opened.
    var format: FrameFormat { get }
    /// The descriptor to poll for readable (frames ready); `nil` while not streaming.
    var pollDescriptor: CInt? { get }
    /// Whether frames are flowing.
    var isStreaming: Bool { get }
    /// The nominal time between frames, when known.
    var frameInterval: Nanoseconds? { get }
    /// Starts streaming.
    func start() throws(CaptureError)
    /// Stops streaming; frames already dequeued stay valid.
    func stop()
    /// Takes every frame that is ready without blocking and appends them to `frames`, oldest
    /// first; frames the driver flagged with errors are dropped here.
    ///
    /// Appending to the caller's array (rather than returning a new one) lets the caller keep one
    /// array for the whole stream: at 30 fps a fresh array per read is an allocation per frame.
    /// The frames already in `frames` are left alone; when the read throws, it appends nothing
    /// (all or none, see `appendAllOrNone`).
    /// - Parameter frames: the array the ready frames are appended to.
    /// - Throws: ``CaptureError/deviceVanished(device:)`` when the device went away.
    func readFrames(into frames: inout [Frame]) throws(CaptureError)
    /// The controls the camera has (empty for cameras without any).
    var controls: [CameraControl] { get }
    /// Sets a control by id; values outside the range are clamped.
    func setControl(_ id: UInt32, to value: Int32) throws(CaptureError)
    /// Releases the device. The camera cannot be used afterwards.
    func close()
    /// Reads the control's value (for auto exposure: the metered exposure) without blocking the
    /// caller: after the control changes already asked for, `answer` gets it on another thread,
    /// or `nil` when it cannot be read.
    func readControl(_ id: UInt32, then answer: @escaping @Sendable (Int32?) -> Void)
    /// What one frame held in the ring costs in bytes (for a V4L2 camera, the driver's buffer
    /// size); with the board's `ringMiB` it bounds how many frames the ring holds.
    var bytesPerFrame: Int { get }
    /// How many of its buffers the camera needs back to keep streaming (frames hold the others);
    /// the service gives back that many of the oldest frames its ring holds. 0 for cameras that
    /// copy a frame rather than run short (V4L2) or have no buffers (synthetic).
    var buffersWanted: Int { get }
    /// Hands the camera back, now, every buffer no frame refers to any more (the ring dropped
    /// it, its photo is written), instead of at the next read.
    func returnUnusedBuffers() throws(CaptureError)
    /// The viewfinder stream's size, when the camera has one beside the still stream.
    var viewfinder: FrameDimensions? { get }
    /// A new adapter that sets this camera's zoom, exposure bias and focus as the board's
    /// camera `settings` ask (and reports how), with no control set yet.
    func makeControlAdapter(settings: CameraSettings) -> any CameraControlAdapter
}

extension Camera {
    /// Cameras that cannot read controls back answer `nil` at once.
    public func readControl(_ id: UInt32, then answer: @escaping @Sendable (Int32?) -> Void) { answer(nil) }

    public var buffersWanted: Int { 0 }
    public func returnUnusedBuffers() throws(CaptureError) {}
    public var viewfinder: FrameDimensions? { nil }

    /// Cameras with V4L2's controls (V4L2 devices, the synthetic camera) are served by ``V4L2ControlAdapter``.
    public func makeControlAdapter(settings: CameraSettings) -> any CameraControlAdapter {
        V4L2ControlAdapter(camera: self)
    }

    /// An uncompressed frame's size; for compressed formats, two bytes a pixel (a bound no
    /// MJPEG frame reaches).
    public var bytesPerFrame: Int { format.frameBytes ?? format.width * format.height * 2 }
}

/// What a camera says about itself.
public struct CameraInfo: Hashable, Sendable {
    /// The device node (`/dev/video0`) or `synthetic`.
    public var path: String
    /// The card name from `VIDIOC_QUERYCAP` (`vivid`, `HD Pro Webcam C920`).
    public var card: String
    /// The driver name (`uvcvideo`, `vivid`).
    public var driver: String
    /// The bus (`usb-0000:00:14.0-1`), which stays put across boots.
    public var bus: String
    /// The maker the device reports (a USB camera's manufacturer string), for EXIF `Make`.
    public var maker: String?

    public init(path: String, card: String, driver: String, bus: String, maker: String? = nil) {
        self.path = path
        self.card = card
        self.driver = driver
        self.bus = bus
        self.maker = maker
    }
}

/// A camera control, as `VIDIOC_QUERYCTRL` describes it.
public struct CameraControl: Hashable, Sendable {
    public var id: UInt32
    public var name: String
    public var kind: Kind
    public var minimum: Int32
    public var maximum: Int32
    public var step: Int32
    public var defaultValue: Int32
    /// Read-only, inactive and disabled controls cannot be set now.
    public var isWritable: Bool
    /// Menu entries by value, for menu controls.
    public var menu: [(value: Int32, name: String)] = []

    public enum Kind: String, Hashable, Sendable {
        case integer, boolean, menu, integerMenu, button, other
    }

    public init(id: UInt32, name: String, kind: Kind, minimum: Int32, maximum: Int32, step: Int32,
                defaultValue: Int32, isWritable: Bool) {
        self.id = id
        self.name = name
        self.kind = kind
        self.minimum = minimum
        self.maximum = maximum
        self.step = step
        self.defaultValue = defaultValue
        self.isWritable = isWritable
    }

    public static func == (lhs: CameraControl, rhs: CameraControl) -> Bool {
        lhs.id == rhs.id && lhs.name == rhs.name && lhs.kind == rhs.kind && lhs.minimum == rhs.minimum
            && lhs.maximum == rhs.maximum && lhs.step == rhs.step && lhs.defaultValue == rhs.defaultValue
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(name)
    }

    /// Maps `value` in `range` linearly onto the control's range, snapped to its step.
    public func mapped(_ value: Double, from range: ClosedRange<Double>) -> Int32 {
        let span = range.upperBound - range.lowerBound
        let fraction = span > 0 ? min(max((value - range.lowerBound) / span, 0), 1) : 0
        return clamped(Double(minimum) + fraction * Double(Int64(maximum) - Int64(minimum)))
    }

    /// `value` rounded to the control's step and clamped to its range.
    public func clamped(_ value: Double) -> Int32 {
        let step = Double(max(self.step, 1))
        let snapped = (((value - Double(minimum)) / step).rounded() * step) + Double(minimum)
        return Int32(min(max(snapped, Double(minimum)), Double(maximum)))
    }
}

/// The V4L2 control ids shutter looks for. Copies of the kernel's values, checked against the
/// header in the V4L2 wrapper.
public enum ControlID {
    public static let zoomAbsolute: UInt32 = 0x009a_090d
    public static let autoExposureBias: UInt32 = 0x009a_0913
    public static let exposureAbsolute: UInt32 = 0x009a_0902
    public static let exposureAuto: UInt32 = 0x009a_0901
    public static let focusAbsolute: UInt32 = 0x009a_090a
    public static let focusAuto: UInt32 = 0x009a_090c
}
