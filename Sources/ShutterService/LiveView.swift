import ShutterCapture
import ShutterSystem
import ShutterCore

/// The live view as a transport sees it: the newest preview, a descriptor that says a newer one
/// is ready, the count of viewers that makes the camera produce previews, and thumbnails of
/// photos. It stands between the HTTP server and the capture module, so the server needs
/// nothing of the camera's.
///
/// A value, safe to use from any thread: it only forwards to the capture service's feed, which
/// outlives the capture services a reload replaces.
public struct LiveView: Sendable {
    /// One preview: the JPEG (the feed's bytes, shared, not copied), its frame's time and its
    /// number in the feed (one more for each preview made; it goes on across camera restarts).
    public struct Picture: Sendable {
        public var jpeg: [UInt8]
        public var timestamp: Instant
        public var number: Int
        public var width: Int
    }

    let feed: PreviewFeed

    /// The newest preview, nil before the first.
    public func latest() -> Picture? {
        feed.latest().map { Picture(jpeg: $0.jpeg, timestamp: $0.timestamp, number: $0.number, width: $0.width) }
    }

    /// Rings `bell` (one of the loop's) each time a preview is published, until replaced; `nil`: no more.
    public func ringWhenPublished(_ bell: LoopBell?) { feed.ringWhenPublished(bell) }

    /// One more viewer: previews are made from the next frame due on.
    public func startWatching() { feed.startWatching() }

    /// One viewer fewer; at none, no more previews are made.
    public func stopWatching() { feed.stopWatching() }

    /// Makes the next previews `width` pixels across, snapped and bounded as the board's
    /// `preview` section says (``PreviewSettings/viewerWidth(asking:)``); nil: the board's width.
    public func makePreviews(width: Int?) { feed.makePreviews(width: width) }

    /// A thumbnail `width` pixels wide of the JPEG `bytes`, decoded at a reduced scale; off the
    /// loop (it takes milliseconds). Throws the reason as text when the bytes are no JPEG the
    /// decoder takes.
    ///
    /// The corresponding C functions are TurboJPEG's `tjDecompressToYUVPlanes` and `tjCompressFromYUVPlanes`, through ``makeThumbnail(ofJPEG:width:quality:)``.
    public static func thumbnail(ofJPEG bytes: [UInt8], width: Int, quality: Int) throws(ThumbnailFailure) -> [UInt8] {
        do throws(CaptureError) {
            return try makeThumbnail(ofJPEG: bytes, width: width, quality: quality).jpeg
        } catch {
            throw ThumbnailFailure(description: error.description)
        }
    }

    /// Why a photo has no thumbnail.
    public struct ThumbnailFailure: Error, CustomStringConvertible {
        public var description: String
    }
}
