/// The board's `preview` section: the live view's JPEGs (the HTTP server's `/stream` and `/snapshot`).
///
/// Previews are made only while someone watches, from the newest ring frame (downscaled) or, for
/// an MJPEG camera, from its frame decoded at a reduced scale; see `PreviewFeed` in ShutterCapture.
public struct PreviewSettings: Hashable, Sendable {
    /// The preview's width in pixels; the height keeps the frame's aspect. An MJPEG camera's
    /// scaled decode gives the smallest of TurboJPEG's sizes at least this wide.
    public var width = 640
    /// JPEG quality, 1–100.
    public var quality = 70
    /// The most previews made per second.
    public var fps = 15
    /// The widest preview a viewer may ask for (`?width=` on `/stream` and `/snapshot`): a page
    /// asks for its displayed width times its pixel ratio, and a desktop's would cost the rig
    /// a full-size encode per preview without this bound.
    public var maxWidth = 1280

    /// The accepted widths: below 16 there is nothing to see; above 4096 it is no longer a preview.
    public static let widths = 16...4096
    public static let qualities = 1...100
    public static let rates = 1...60

    /// The widths a viewer's request snaps up to: a few sizes, so viewers whose windows differ
    /// by a pixel share one preview and a resized window does not change it at every step.
    public static let viewerWidths = [320, 480, 640, 960, 1280, 1600, 1920, 2560, 3840]

    public init(width: Int = 640, quality: Int = 70, fps: Int = 15, maxWidth: Int = 1280) {
        self.width = width
        self.quality = quality
        self.fps = fps
        self.maxWidth = maxWidth
    }

    /// The width previews are made at for a viewer that asks for `asked` pixels across: the
    /// smallest of ``viewerWidths`` at least that wide, at most ``maxWidth`` (or ``width``, when
    /// the board's own width is the wider).
    public func viewerWidth(asking asked: Int) -> Int {
        let bound = max(maxWidth, width)
        let snapped = Self.viewerWidths.first { $0 >= asked } ?? bound
        return min(snapped, bound)
    }

    /// The time between two previews at ``fps``.
    public var interval: Nanoseconds { Nanoseconds(rawValue: 1_000_000_000 / Int64(fps)) }
}

extension PreviewSettings: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable { case width, quality, fps, maxWidth }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        width = try container.decodeIfPresent(Int.self, forKey: .width) ?? width
        guard Self.widths.contains(width) else {
            throw container.fail(.width, "\(width) is outside \(Self.widths.lowerBound)...\(Self.widths.upperBound) pixels")
        }
        quality = try container.decodeIfPresent(Int.self, forKey: .quality) ?? quality
        guard Self.qualities.contains(quality) else {
            throw container.fail(.quality, "\(quality) is outside \(Self.qualities.lowerBound)...\(Self.qualities.upperBound)")
        }
        fps = try container.decodeIfPresent(Int.self, forKey: .fps) ?? fps
        guard Self.rates.contains(fps) else {
            throw container.fail(.fps, "\(fps) is outside \(Self.rates.lowerBound)...\(Self.rates.upperBound) frames per second")
        }
        maxWidth = try container.decodeIfPresent(Int.self, forKey: .maxWidth) ?? maxWidth
        guard Self.widths.contains(maxWidth) else {
            throw container.fail(.maxWidth, "\(maxWidth) is outside \(Self.widths.lowerBound)...\(Self.widths.upperBound) pixels")
        }
    }
}
