/// The camera, from the board's `camera` object.
public struct CameraSettings: Hashable, Sendable {
    /// `synthetic` (the built-in test pattern), a device path (`/dev/video0`) or the card name it reports.
    public var device: String = "synthetic"
    /// Frame width and height; `nil` picks the largest the camera offers.
    public var width: Int?
    public var height: Int?
    /// A V4L2 fourcc (`YUYV`, `MJPG`); `nil` lets shutter choose.
    public var pixelFormat: String?
    /// Frames per second asked of the camera (`VIDIOC_S_PARM`); `nil` keeps the driver's rate.
    public var fps: Double?
    /// JPEG quality for encoded frames, 1...100 (rpicam-still's default).
    public var quality: Int = 93
    /// `true` keeps the camera streaming into the zero-shutter-lag ring; `false` stops it
    /// between shots to save power (then a press or `prepare` starts it).
    public var keepStreaming: Bool = true
    /// Frames skipped after the camera starts, while auto-exposure settles (only when not kept streaming).
    public var warmupFrames: Int = 4
    /// How many recent frames the zero-shutter-lag ring keeps, 2...16.
    public var ringFrames: Int = 4
    /// The EXIF orientation written into each photo, 1...8 (1 = upright).
    public var orientation: Int = 1
    /// How digital zoom saves its crop: at the crop's own size, or scaled back to the frame's size.
    public var digitalZoom: DigitalZoomOutput = .crop
    /// Custom controls bound to a V4L2 control by name: board control id → control name (`"Brightness"`).
    public var bindings: [String: String] = [:]

    public init() {}
}

/// What digital zoom writes: the centred crop at its own size, or scaled to the configured size.
public enum DigitalZoomOutput: String, CaseIterable, Hashable, Sendable {
    case crop
    case scale
}

extension CameraSettings: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case device, width, height, pixelFormat, fps, quality, keepStreaming, warmupFrames, ringFrames, orientation,
             digitalZoom, bindings
    }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        device = try container.decodeIfPresent(String.self, forKey: .device) ?? device
        width = try container.decodeIfPresent(Int.self, forKey: .width)
        height = try container.decodeIfPresent(Int.self, forKey: .height)
        pixelFormat = try container.decodeIfPresent(String.self, forKey: .pixelFormat)
        fps = try container.decodeIfPresent(Double.self, forKey: .fps)
        quality = try container.decodeIfPresent(Int.self, forKey: .quality) ?? quality
        keepStreaming = try container.decodeIfPresent(Bool.self, forKey: .keepStreaming) ?? keepStreaming
        warmupFrames = try container.decodeIfPresent(Int.self, forKey: .warmupFrames) ?? warmupFrames
        ringFrames = try container.decodeIfPresent(Int.self, forKey: .ringFrames) ?? ringFrames
        orientation = try container.decodeIfPresent(Int.self, forKey: .orientation) ?? orientation
        if let zoomText = try container.decodeIfPresent(String.self, forKey: .digitalZoom) {
            guard let zoom = DigitalZoomOutput(rawValue: zoomText) else {
                throw container.fail(.digitalZoom, "'\(zoomText)' is not one of 'crop', 'scale'")
            }
            digitalZoom = zoom
        }
        bindings = try container.decodeIfPresent([String: String].self, forKey: .bindings) ?? bindings
        if device.isEmpty { throw container.fail(.device, "must name a camera: 'synthetic', a path or a card name") }
        if !(0...100).contains(warmupFrames) { throw container.fail(.warmupFrames, "\(warmupFrames) is outside 0...100") }
        if !(2...16).contains(ringFrames) { throw container.fail(.ringFrames, "\(ringFrames) is outside 2...16") }
        if !(1...8).contains(orientation) {
            throw container.fail(.orientation, "\(orientation) is outside 1...8 (EXIF orientation; 1 is upright)")
        }
        if let width, !(16...16384).contains(width) { throw container.fail(.width, "\(width) is outside 16...16384") }
        if let height, !(16...16384).contains(height) { throw container.fail(.height, "\(height) is outside 16...16384") }
        if (width == nil) != (height == nil) {
            throw container.fail(width == nil ? .width : .height, "missing: give both width and height, or neither")
        }
        if let pixelFormat, pixelFormat.utf8.count != 4 {
            throw container.fail(.pixelFormat, "'\(pixelFormat)' is not a four-character code such as 'YUYV' or 'MJPG'")
        }
        if let fps, !(fps >= 0.1 && fps <= 1000) { throw container.fail(.fps, "\(fps) is outside 0.1...1000 frames per second") }
        if !(1...100).contains(quality) { throw container.fail(.quality, "\(quality) is outside 1...100") }
    }
}

/// Where photos are written, from the board's `output` object.
public struct OutputSettings: Hashable, Sendable {
    /// The directory; relative paths are taken from the working directory.
    public var directory: String = "photos"
    /// The file name: strftime fields plus `{ms}` and `{seq}`.
    public var template: String = "IMG_%Y%m%d_%H%M%S_{ms}_{seq}.jpg"

    public init() {}
}

extension OutputSettings: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable { case directory, template }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        directory = try container.decodeIfPresent(String.self, forKey: .directory) ?? directory
        template = try container.decodeIfPresent(String.self, forKey: .template) ?? template
        if directory.isEmpty { throw container.fail(.directory, "must not be empty") }
        if template.isEmpty || template.contains("/") {
            throw container.fail(.template, "must be a file name without '/'")
        }
    }
}
