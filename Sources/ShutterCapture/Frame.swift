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
}

/// The layout of every frame a camera delivers.
public struct FrameFormat: Hashable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    public var pixelFormat: PixelFormat
    /// Bytes from one row to the next (of the first plane); 0 for compressed formats.
    public var bytesPerLine: Int

    public init(width: Int, height: Int, pixelFormat: PixelFormat, bytesPerLine: Int? = nil) {
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        self.bytesPerLine = bytesPerLine ?? FrameFormat.defaultBytesPerLine(width: width, pixelFormat: pixelFormat)
    }

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

/// One frame from the camera: its pixels and the CLOCK_MONOTONIC instant the driver stamped it with.
public struct Frame: Sendable {
    /// The driver's timestamp (V4L2 `timestamp`), on the same clock as GPIO edges.
    public var timestamp: Instant
    /// The driver's frame counter; gaps mean dropped frames.
    public var sequence: UInt32
    public var format: FrameFormat
    /// The frame's bytes (`bytesused` of them for compressed formats).
    public var bytes: [UInt8]

    public init(timestamp: Instant, sequence: UInt32, format: FrameFormat, bytes: [UInt8]) {
        self.timestamp = timestamp
        self.sequence = sequence
        self.format = format
        self.bytes = bytes
    }
}

/// Which frame a press should take, as decided from the frame times alone.
public enum FrameChoice: Hashable, Sendable {
    /// The frame at this index of the times given.
    case frame(Int)
    /// The press is newer than every frame: take the next frame to arrive.
    case next
}

/// The zero-shutter-lag rule: the frame whose timestamp is nearest the press, or the next frame
/// when the press is newer than every frame held.
///
/// - Parameters:
///   - times: the frame timestamps held, in any order.
///   - pressedAt: the press's kernel edge timestamp.
/// - Returns: the chosen index; ties go to the earlier frame (the moment already captured).
public func chooseFrame(times: [Instant], pressedAt: Instant) -> FrameChoice {
    guard let newest = times.max(), pressedAt <= newest else { return .next }
    var best = 0
    for index in times.indices {
        let distance = (times[index] - pressedAt).rawValue.magnitude
        let bestDistance = (times[best] - pressedAt).rawValue.magnitude
        if distance < bestDistance || (distance == bestDistance && times[index] < times[best]) { best = index }
    }
    return .frame(best)
}

/// The last few frames, oldest first, for the zero-shutter-lag choice.
public struct FrameRing: Sendable {
    public let capacity: Int
    public private(set) var frames: [Frame] = []

    public init(capacity: Int) {
        precondition(capacity >= 1, "a ring holds at least one frame")
        self.capacity = capacity
    }

    /// Adds the newest frame, dropping the oldest when full.
    public mutating func append(_ frame: Frame) {
        if frames.count == capacity { frames.removeFirst() }
        frames.append(frame)
    }

    /// Forgets every frame (the camera stopped or changed format).
    public mutating func removeAll() { frames.removeAll() }

    /// The interval between the newest frame at or before `instant` and the oldest after it; `nil`
    /// unless the ring holds both.
    public func bracket(around instant: Instant) -> Nanoseconds? {
        let before = frames.last { $0.timestamp <= instant }, after = frames.first { $0.timestamp > instant }
        guard let before, let after else { return nil }
        return after.timestamp - before.timestamp
    }

    /// The frame of `frames` a press at `pressedAt` takes, or `nil` when it must wait for the next frame.
    public static func nearest(in frames: [Frame], to pressedAt: Instant) -> Frame? {
        switch chooseFrame(times: frames.map(\.timestamp), pressedAt: pressedAt) {
        case .frame(let index): frames[index]
        case .next: nil
        }
    }

    /// The frame a press at `pressedAt` takes, or `nil` when it must wait for the next frame.
    public func frame(for pressedAt: Instant) -> Frame? {
        switch chooseFrame(times: frames.map(\.timestamp), pressedAt: pressedAt) {
        case .frame(let index): frames[index]
        case .next: nil
        }
    }
}
