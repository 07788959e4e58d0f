/// The camera, from the board's `camera` object.
public struct CameraSettings: Hashable, Sendable {
    /// `synthetic` (the built-in test pattern), a device path (`/dev/video0`) or the card name it reports.
    public var device: String = "synthetic"
    /// Frame width and height; `nil` picks the largest the camera offers.
    public var width: Int?
    public var height: Int?
    /// A V4L2 fourcc (`YUYV`, `MJPG`); `nil` lets shutter choose.
    public var pixelFormat: String?
    /// JPEG quality for encoded frames, 1...100 (rpicam-still's default).
    public var quality: Int = 93

    public init() {}
}

extension CameraSettings: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable { case device, width, height, pixelFormat, quality }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        device = try container.decodeIfPresent(String.self, forKey: .device) ?? device
        width = try container.decodeIfPresent(Int.self, forKey: .width)
        height = try container.decodeIfPresent(Int.self, forKey: .height)
        pixelFormat = try container.decodeIfPresent(String.self, forKey: .pixelFormat)
        quality = try container.decodeIfPresent(Int.self, forKey: .quality) ?? quality
        if let width, !(16...16384).contains(width) { throw container.fail(.width, "\(width) is outside 16...16384") }
        if let height, !(16...16384).contains(height) { throw container.fail(.height, "\(height) is outside 16...16384") }
        if (width == nil) != (height == nil) {
            throw container.fail(width == nil ? .width : .height, "missing: give both width and height, or neither")
        }
        if let pixelFormat, pixelFormat.utf8.count != 4 {
            throw container.fail(.pixelFormat, "'\(pixelFormat)' is not a four-character code such as 'YUYV' or 'MJPG'")
        }
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
