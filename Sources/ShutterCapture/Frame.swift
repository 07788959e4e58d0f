import ShutterCore

/// A V4L2 pixel format, its four-character code (`YUYV`, `MJPG`) packed little-endian.
public struct PixelFormat: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The format with four-character code `code`; `nil` unless it is exactly four ASCII characters.
    public init?(fourcc code: String) {
        let bytes = Array(code.utf8)
        guard bytes.count == 4, bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
        rawValue = UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24
    }

    /// The four-character code, as `v4l2-ctl` prints it.
    public var fourcc: String {
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: rawValue >> ($0 * 8)) }
        return String(decoding: bytes.map { (0x20..<0x7f).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }

    public var description: String { fourcc }

    public static let mjpeg = PixelFormat(fourcc: "MJPG")!
    public static let jpeg = PixelFormat(fourcc: "JPEG")!
    public static let yuyv = PixelFormat(fourcc: "YUYV")!
    public static let uyvy = PixelFormat(fourcc: "UYVY")!
    public static let nv12 = PixelFormat(fourcc: "NV12")!
    /// Planar 4:2:0, `YU12` (I420).
    public static let yuv420 = PixelFormat(fourcc: "YU12")!
    public static let rgb24 = PixelFormat(fourcc: "RGB3")!
    public static let bgr24 = PixelFormat(fourcc: "BGR3")!
    public static let grey = PixelFormat(fourcc: "GREY")!

    /// The formats shutter saves or encodes without libv4lconvert's help, best first.
    ///
    /// MJPEG is saved as it comes (no re-encoding, no loss); then the YUV formats, which TurboJPEG
    /// encodes without a colour conversion; RGB last. Anything else is converted by libv4lconvert.
    public static let preferred: [PixelFormat] = [.mjpeg, .jpeg, .yuyv, .uyvy, .nv12, .yuv420, .rgb24, .bgr24, .grey]

    /// `true` for compressed formats whose frames are already JPEG files.
    public var isJPEG: Bool { self == .mjpeg || self == .jpeg }

    /// Whether the encoder can take frames in this format.
    public var isEncodable: Bool { Self.preferred.contains(self) }

    /// The uncompressed Y'CbCr formats: the ones whose values may be in limited range (``YUVRange``).
    public var isYCbCr: Bool { self == .yuyv || self == .uyvy || self == .nv12 || self == .yuv420 }
}

/// The layout of every frame a camera delivers.
public struct FrameFormat: Hashable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    public var pixelFormat: PixelFormat
    /// Bytes from one row to the next (of the first plane); 0 for compressed formats.
    public var bytesPerLine: Int
    /// The range of a YUV format's values: limited-range frames are expanded to full range (JPEG's)
    /// as they are encoded. Ignored for RGB, grey and JPEG formats.
    public var yuvRange: YUVRange

    public init(width: Int, height: Int, pixelFormat: PixelFormat, bytesPerLine: Int? = nil, yuvRange: YUVRange = .full) {
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        self.bytesPerLine = bytesPerLine ?? FrameFormat.defaultBytesPerLine(width: width, pixelFormat: pixelFormat)
        self.yuvRange = yuvRange
    }

    /// Whether frames must be expanded to full range before encoding: a limited-range YUV format.
    public var isLimitedRangeYUV: Bool { yuvRange == .limited && pixelFormat.isYCbCr }

    /// The tightly packed stride of the first plane.
    public static func defaultBytesPerLine(width: Int, pixelFormat: PixelFormat) -> Int {
        switch pixelFormat {
        case .yuyv, .uyvy: width * 2
        case .rgb24, .bgr24: width * 3
        case .nv12, .yuv420, .grey: width
        default: 0
        }
    }

    /// The bytes one uncompressed frame takes; `nil` for compressed formats.
    public var frameBytes: Int? {
        switch pixelFormat {
        case .yuyv, .uyvy, .rgb24, .bgr24, .grey: bytesPerLine * height
        case .nv12, .yuv420: bytesPerLine * height + bytesPerLine * ((height + 1) / 2)
        default: nil
        }
    }

    public var description: String { "\(width)x\(height) \(pixelFormat)" }
}

/// Where a frame's bytes live: an array the frame owns, or a driver buffer lent to it.
///
/// A lent buffer (a V4L2 `mmap` buffer) stays out of the driver's queue while any frame refers to
/// it: the ring holding it, or a photo being encoded from it. The camera keeps one `FrameBuffer`
/// per driver buffer, made once when the buffers are mapped, and takes a buffer back when its
/// object is referred to by nobody else any more (`isKnownUniquelyReferenced`): so the ring is
/// the driver's own buffers, a photo is encoded straight from the memory the camera wrote, and
/// streaming allocates nothing per frame.
public final class FrameBuffer: @unchecked Sendable {
    // @unchecked: `count` changes only while the camera alone holds the object (no frame refers
    // to it), and the driver writes lent bytes only after the camera took the buffer back.
    /// How many bytes the frame has.
    public internal(set) var count: Int
    private let owned: [UInt8]?
    private let lent: UnsafeRawPointer?
    /// A lent buffer whose planes lie apart (libcamera cameras whose planes are separate
    /// buffers): the planes, in ``FrameFormat``'s order. Empty for one run of bytes.
    private let lentPlanes: [UnsafeRawBufferPointer]
    /// What keeps lent memory mapped while this object lives (the camera's mapping).
    private let keeper: AnyObject?

    /// Bytes the frame owns.
    public init(bytes: [UInt8]) {
        owned = bytes
        count = bytes.count
        lent = nil
        lentPlanes = []
        keeper = nil
    }

    /// `count` bytes at `start`, which stay valid while `keeper` lives.
    init(lending start: UnsafeRawPointer, count: Int, keeper: AnyObject) {
        lent = start
        self.count = count
        owned = nil
        lentPlanes = []
        self.keeper = keeper
    }

    /// Planes that lie apart, which stay valid while `keeper` lives: the frame is their bytes one
    /// after another. Made once per buffer (as the camera maps it), so lending allocates nothing.
    init(lendingPlanes planes: [UnsafeRawBufferPointer], keeper: AnyObject) {
        lent = planes.first?.baseAddress
        lentPlanes = planes
        count = planes.reduce(0) { $0 + $1.count }
        owned = nil
        self.keeper = keeper
    }

    /// Whether the bytes are a driver buffer lent to the frame (not a copy).
    public var isLent: Bool { lent != nil }

    /// Whether the frame's planes lie apart: it is read through ``array`` (or ``Frame/resolved()``,
    /// off the event loop), never in place.
    public var isPlanar: Bool { !lentPlanes.isEmpty }

    /// The bytes as an array: the owned array itself, or a copy of a lent buffer (its planes one
    /// after another, up to ``count`` bytes).
    public var array: [UInt8] {
        if let owned { return owned }
        guard isPlanar else { return [UInt8](UnsafeRawBufferPointer(start: lent, count: count)) }
        return withExtendedLifetime(self) {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(count)
            for plane in lentPlanes where bytes.count < count { bytes.append(contentsOf: plane.prefix(count - bytes.count)) }
            return bytes
        }
    }

    /// Calls `body` with the bytes where they lie (for planes that lie apart, a copy of them one
    /// after another: only for the photo being made, off the loop).
    public func withUnsafeBytes<Result, Failure: Error>(_ body: (UnsafeRawBufferPointer) throws(Failure) -> Result) throws(Failure) -> Result {
        if let bytes = owned ?? (isPlanar ? array : nil) {
            let outcome: Swift.Result<Result, Failure> = bytes.withUnsafeBytes { raw in
                Swift.Result { () throws(Failure) -> Result in try body(raw) }
            }
            return try outcome.get()
        }
        return try withExtendedLifetime(self) { () throws(Failure) -> Result in
            try body(UnsafeRawBufferPointer(start: lent, count: count))
        }
    }
}

/// How a frame was exposed, as the camera reported it with the frame (libcamera's request
/// metadata: `ExposureTime`, `AnalogueGain`, `DigitalGain`, `LensPosition`, `ColourTemperature`); each `nil`
/// when not reported (V4L2 and the synthetic camera report none).
public struct FrameExposure: Hashable, Sendable {
    /// How long the frame was exposed (`controls::ExposureTime`, microseconds in libcamera).
    public var exposureTime: Nanoseconds?
    /// The sensor's analogue gain (`controls::AnalogueGain`): ISO is 100 times it, as rpicam-apps writes it.
    public var analogueGain: Double?
    /// The gain the ISP applied on top of the sensor's (`controls::DigitalGain`): the Raspberry Pi
    /// AGC's share of the exposure beyond the sensor's limits, and part of ISO.
    public var digitalGain: Double?
    /// Where the lens stood, in dioptres (`controls::LensPosition`).
    public var lensPosition: Double?
    /// The white balance's colour temperature in kelvin (`controls::ColourTemperature`).
    public var colourTemperature: Int?
    /// Whether the frame's request was queued after the newest exposure bias was set (libcamera:
    /// earlier requests show the bias before); nil when the camera does not say.
    public var answersNewestBias: Bool?

    public init(exposureTime: Nanoseconds? = nil, analogueGain: Double? = nil, digitalGain: Double? = nil, lensPosition: Double? = nil,
                colourTemperature: Int? = nil) {
        self.exposureTime = exposureTime
        self.analogueGain = analogueGain
        self.digitalGain = digitalGain
        self.lensPosition = lensPosition
        self.colourTemperature = colourTemperature
    }

    /// ExposureTime (µs) × AnalogueGain × DigitalGain (1 when not reported): what auto exposure
    /// moves as a whole; nil without an exposure time and an analogue gain.
    public var totalExposure: Double? {
        guard let exposureTime, exposureTime.rawValue > 0, let analogueGain, analogueGain > 0 else { return nil }
        return Double(exposureTime.rawValue) / 1000 * analogueGain * (digitalGain ?? 1)
    }
}

/// Which instant of a frame its ``Frame/timestamp`` is (the photo event's `frameAtIs`).
public enum FrameInstant: String, Hashable, Sendable {
    /// The start of the frame's exposure: V4L2's start-of-exposure stamps (end-of-frame stamps
    /// moved back by a frame interval), libcamera's SensorTimestamp minus the ExposureTime
    /// reported with it (on a Raspberry Pi, SensorTimestamp is the start of readout).
    case exposureStart
    /// libcamera's SensorTimestamp as the pipeline gave it: no ExposureTime came with it to find
    /// the start of exposure (vimc).
    case sensorTimestamp
}

/// A viewfinder image lent with a frame: the viewfinder buffer of the frame's own libcamera
/// request, valid while the frame's ``Frame/buffer`` is held (the request is not queued again
/// before), so it is read only through the frame that carries it.
struct FrameViewfinder: @unchecked Sendable {
    // @unchecked: the bytes are read only, while the frame holding the request lives.
    var start: UnsafeRawPointer
    var count: Int
    var format: FrameFormat
}

/// One frame from the camera: its pixels and the CLOCK_MONOTONIC instant the driver stamped it with.
public struct Frame: Sendable {
    /// The driver's timestamp (V4L2 `timestamp`), on the same clock as GPIO edges.
    public var timestamp: Instant
    /// The driver's frame counter; gaps mean dropped frames.
    public var sequence: UInt32
    public var format: FrameFormat
    /// Where the bytes live (`bytesused` of them for compressed formats): owned, or a lent driver buffer.
    public var buffer: FrameBuffer
    /// Set when `buffer` holds the device's format and libv4lconvert makes `format` from it
    /// (only for a frame a photo takes: ``resolved()``).
    public var conversion: FrameConversion?
    /// How the frame was exposed, where the camera says (libcamera); empty otherwise.
    public var exposure = FrameExposure()
    /// Which instant of the frame ``timestamp`` is.
    public var instant = FrameInstant.exposureStart
    /// The same exposure's viewfinder image (a libcamera camera with a `viewfinder` stream),
    /// which the live view reads instead of the frame; `nil` otherwise.
    var viewfinder: FrameViewfinder?

    public init(timestamp: Instant, sequence: UInt32, format: FrameFormat, bytes: [UInt8]) {
        self.init(timestamp: timestamp, sequence: sequence, format: format, buffer: FrameBuffer(bytes: bytes))
    }

    public init(timestamp: Instant, sequence: UInt32, format: FrameFormat, buffer: FrameBuffer, conversion: FrameConversion? = nil) {
        self.timestamp = timestamp
        self.sequence = sequence
        self.format = format
        self.buffer = buffer
        self.conversion = conversion
    }

    /// Whether ``resolved()`` makes a new frame (a conversion, or planes to join) before the bytes are read in place.
    public var needsResolving: Bool { conversion != nil || buffer.isPlanar }

    /// This frame with its bytes in `format`: itself, or (for a frame libv4lconvert converts)
    /// a converted copy, or (for planes that lie apart) a joined copy. Runs where the photo is
    /// made, not on the event loop.
    /// - Throws: ``CaptureError/encoding(_:)`` when the conversion fails (a damaged frame).
    public func resolved() throws(CaptureError) -> Frame {
        guard let conversion else {
            guard buffer.isPlanar else { return self }
            // Planes that lie apart, one after another as the encoder reads them.
            var joined = Frame(timestamp: timestamp, sequence: sequence, format: format, bytes: buffer.array)
            joined.exposure = exposure
            joined.instant = instant
            return joined
        }
        let formatBytes = format.frameBytes ?? 0
        guard let bytes = buffer.withUnsafeBytes({ conversion.convert($0, formatBytes: formatBytes) }) else {
            throw CaptureError.encoding("libv4lconvert could not convert the \(conversion.sourceFormat) frame to \(format.pixelFormat)")
        }
        var converted = Frame(timestamp: timestamp, sequence: sequence, format: format, bytes: bytes)
        converted.exposure = exposure
        converted.instant = instant
        return converted
    }

    /// The frame's bytes in `format` as an array (a copy when they are a lent driver buffer,
    /// converted when the frame needs it, empty when that fails; for checks and tests: the
    /// capture path reads them in place with ``withUnsafeBytes(_:)``).
    public var bytes: [UInt8] {
        get { conversion == nil ? buffer.array : ((try? resolved())?.buffer.array ?? []) }
        set {
            buffer = FrameBuffer(bytes: newValue)
            conversion = nil
        }
    }

    /// How many bytes the frame has (as delivered: before any conversion).
    public var byteCount: Int { buffer.count }

    /// Calls `body` with the frame's bytes where they lie (no copy; for a frame that needs
    /// converting, the device's bytes: call ``resolved()`` first).
    public func withUnsafeBytes<Result, Failure: Error>(_ body: (UnsafeRawBufferPointer) throws(Failure) -> Result) throws(Failure) -> Result {
        try buffer.withUnsafeBytes(body)
    }
}

extension Array where Element == Frame {
    /// Appends what `body` appends, or nothing: when `body` throws, the frames it already
    /// appended are removed again before the error goes on.
    ///
    /// A camera's `readFrames(into:)` appends to the caller's array, which outlives the call; a
    /// read that fails halfway must not leave the caller half a batch (frames dequeued before the
    /// failure, their buffers lent), so each camera wraps its dequeue loop in this. The removal
    /// keeps the array's capacity: the caller's array is reused for every read.
    ///
    /// - Parameter body: appends frames to the array it is given.
    /// - Throws: what `body` throws.
    mutating func appendAllOrNone<Failure: Error>(_ body: (inout [Frame]) throws(Failure) -> Void) throws(Failure) {
        let start = count
        do throws(Failure) {
            try body(&self)
        } catch {
            removeSubrange(start...)
            throw error
        }
    }
}

/// How many frames the zero-shutter-lag ring holds: the board's `ringFrames`, fewer when that many
/// frames of `frameBytes` each would pass the board's `ringMiB` (when it sets one); `nil` when
/// `ringMiB` cannot hold two frames.
///
/// Two is the least that works: with one, a press between two frames finds only the frame before
/// it, or waits for the next, whichever exposure covered it. So the ring is sized in frames: a
/// memory cap that would leave fewer is refused, not quietly obeyed.
public func ringCapacity(ringFrames: Int, ringMiB: Int?, frameBytes: Int) -> Int? {
    guard frameBytes > 0, let ringMiB else { return max(2, ringFrames) }
    let fitting = (ringMiB * 1_048_576) / frameBytes
    return fitting >= 2 ? min(ringFrames, fitting) : nil
}

/// How many frames the ring holds for the open `camera`: what a V4L2 or libcamera camera decided
/// as it opened (refusing a `ringMiB` below two frames), else `settings`' ring at its frame size.
func ringCapacity(of camera: any Camera, settings: CameraSettings) -> Int {
    (camera as? V4L2Camera)?.ringCapacity ?? (camera as? LibcameraCamera)?.ringCapacity ?? (camera as? SimulatedCamera)?.libcamera.ringCapacity
        ?? ringCapacity(ringFrames: settings.ringFrames, ringMiB: settings.ringMiB, frameBytes: camera.bytesPerFrame) ?? 2
}

/// ``ringCapacity(ringFrames:ringMiB:frameBytes:)`` for a camera being opened.
/// - Throws: ``CaptureError/ringTooSmall(device:ringMiB:frameBytes:)`` when the board's cap holds fewer than two frames.
func ringCapacity(ringFrames: Int, ringMiB: Int?, frameBytes: Int, device: String) throws(CaptureError) -> Int {
    if let capacity = ringCapacity(ringFrames: ringFrames, ringMiB: ringMiB, frameBytes: frameBytes) { return capacity }
    throw CaptureError.ringTooSmall(device: device, ringMiB: ringMiB ?? 0, frameBytes: frameBytes)
}

/// Which frame a press should take, as decided from the frame times alone.
public enum FrameChoice: Hashable, Sendable {
    /// The frame at this index of the times given.
    case frame(Int)
    /// The press is newer than every frame: take the next frame to arrive.
    case next
}

/// The zero-shutter-lag rule: the frame whose exposure covers the press.
///
/// Frame times are starts of exposure. A frame's exposure covers the press when it started at or
/// before the press and the next frame (or, for the newest, `interval` later) starts after it. A
/// press before every frame held takes the oldest; a press after the newest frame's exposure (or
/// after the newest frame, when the interval is unknown) waits for the next frame. When frames were
/// dropped (the gap to the next frame is longer than `interval`) and the press falls in the gap,
/// the next frame is nearer the press than the end of the earlier one's exposure: it takes that.
///
/// - Parameters:
///   - times: the frame timestamps held (starts of exposure), in any order.
///   - pressedAt: the press's kernel edge timestamp.
///   - interval: the frame interval, when known.
/// - Returns: the chosen index, or ``FrameChoice/next``.
public func chooseFrame(times: [Instant], pressedAt: Instant, interval: Nanoseconds? = nil) -> FrameChoice {
    let order = times.indices.sorted { times[$0] < times[$1] }
    guard let oldest = order.first else { return .next }
    guard let covering = order.lastIndex(where: { times[$0] <= pressedAt }) else { return .frame(oldest) }
    let start = times[order[covering]]
    if covering + 1 < order.count {
        let next = times[order[covering + 1]]
        if let interval, pressedAt >= start + interval, next - pressedAt < pressedAt - (start + interval) {
            return .frame(order[covering + 1])
        }
        return .frame(order[covering])
    }
    if pressedAt == start { return .frame(order[covering]) }
    if let interval, pressedAt < start + interval { return .frame(order[covering]) }
    return .next
}

/// Whether a photo's frame is the one ``chooseFrame(times:pressedAt:interval:)`` takes, judged
/// from the photo's own figures: how the checks hold a photo to its press.
///
/// With a `bracket` (the interval between the frames on either side of the press) and the
/// `interval`, the frame is the one before the press, unless frames were lost around it (the
/// bracket is longer than the interval) and the press came nearer the next frame's start than the
/// end of the earlier frame's exposure: then it is the next frame. A frame starting after the
/// press while the one before it still exposed is refused (+26 ms of a 33 ms bracket).
/// With a bracket but no interval, it is the frame before the press, at most the bracket back.
/// Without a bracket (no frame after the press had arrived), it is the frame still exposing at
/// the press: no later than it, starting at most `interval` before it. Neither figure: nothing
/// to hold it to, so it is not.
///
/// - Parameters:
///   - offset: the frame's start minus the press.
///   - bracket: the interval between the frames on either side of the press, when both were seen.
///   - interval: the frame interval the service assumed.
public func isFrameAtPress(offset: Nanoseconds, bracket: Nanoseconds?, interval: Nanoseconds?) -> Bool {
    switch (bracket, interval) {
    case (let bracket?, let interval?):
        // chooseFrame's rule for a press between two frames, put in terms of the offset: the later
        // frame only when it is nearer than the earlier frame's end of exposure.
        return offset > .zero ? 2 * offset.rawValue < bracket.rawValue - interval.rawValue
            : -2 * offset.rawValue <= bracket.rawValue + interval.rawValue
    case (let bracket?, nil):
        return offset <= .zero && -offset.rawValue <= bracket.rawValue
    case (nil, let interval?):
        return offset <= .zero && -offset.rawValue <= interval.rawValue
    case (nil, nil):
        return false
    }
}

/// The frames the zero-shutter-lag ring holds, oldest first: the bytes behind the stamps
/// ``CaptureStateMachine`` holds.
///
/// The ring is kept once: the state machine alone decides which frames are held (its
/// ``CaptureStateMachine/held``: as many as the ring holds, fewer while the camera needs buffers
/// back), and this keeps their frames, matched by sequence number. Its array keeps its capacity,
/// so streaming allocates nothing here.
public struct HeldFrames: Sendable {
    public private(set) var frames: [Frame] = []

    public init() {}

    /// Adds the newest frame (one the machine just kept).
    public mutating func append(_ frame: Frame) { frames.append(frame) }

    /// Drops every frame the machine no longer holds.
    ///
    /// Once a frame: plain loops over indices, as the generic `removeAll(where:)` and
    /// `contains(where:)` allocate a frame's temporary on every call where they are not
    /// specialized (a debug build's), and streaming allocates nothing per frame.
    public mutating func keep(_ held: [CaptureStateMachine.Stamp]) {
        var kept = 0
        for index in 0..<frames.count {
            let sequence = frames[index].sequence
            var isHeld = false
            for stamp in 0..<held.count where held[stamp].sequence == sequence {
                isHeld = true
                break
            }
            guard isHeld else { continue }
            if kept != index { frames[kept] = frames[index] }
            kept += 1
        }
        frames.removeSubrange(kept..<frames.count)
    }

    /// Forgets every frame (the camera stopped or changed format).
    public mutating func removeAll() { frames.removeAll(keepingCapacity: true) }

    /// The interval between the newest frame at or before `instant` and the oldest after it; `nil`
    /// unless both are held.
    public func bracket(around instant: Instant) -> Nanoseconds? {
        let before = frames.last { $0.timestamp <= instant }, after = frames.first { $0.timestamp > instant }
        guard let before, let after else { return nil }
        return after.timestamp - before.timestamp
    }
}
