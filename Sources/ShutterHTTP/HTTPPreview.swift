#if canImport(Glibc)
import Glibc
#endif
import CMicroHTTPD
import ShutterCore
import ShutterService
import ShutterSystem

/// A response the library holds suspended while it has nothing to send: an event stream with
/// an empty queue, an MJPEG viewer that has the newest preview already, a request waiting for a
/// preview or a thumbnail.
///
/// While suspended the library does not poll the connection (nor time it out), so the server
/// resumes it when there is something to send, and watches a stream's socket meanwhile so a
/// viewer that leaves frees its slot at once.
class SuspendableResponse {
    let connection: OpaquePointer
    /// The connection's socket.
    let descriptor: CInt
    var suspended = false
    /// The server is stopping, or the viewer has gone: the response ends once what it owes is sent.
    var ended = false
    /// Whether the loop watches ``descriptor`` (only while suspended).
    var watched = false
    weak var server: HTTPServer?

    init(connection: OpaquePointer, server: HTTPServer) {
        self.connection = connection
        descriptor = CMicroHTTPD_connection_descriptor(connection)
        self.server = server
    }

    /// libmicrohttpd's content reader for a streamed body, overridden by the streams; a request
    /// that streams nothing ends at once.
    func read(into buffer: UnsafeMutablePointer<CChar>, maximum: Int) -> Int {
        CMicroHTTPD_CONTENT_READER_END_OF_STREAM
    }

    /// Suspends the connection from inside one of the library's callbacks (the only place it may
    /// be), and has the server watch its socket.
    ///
    /// The corresponding C function is `MHD_suspend_connection`.
    func suspendFromCallback(watchingSocket: Bool) {
        MHD_suspend_connection(connection)
        suspended = true
        if watchingSocket { server?.watchWhileSuspended(self) }
    }
}

/// `/stream`'s body, `multipart/x-mixed-replace`: each part a preview JPEG with its length and
/// its frame's time, as µStreamer and Motion send MJPEG to browsers.
enum MJPEGPart {
    static let boundary = "shutterframe"
    /// The response's `Content-Type`.
    static let contentType = "multipart/x-mixed-replace;boundary=\(boundary)"

    /// The part's head: the boundary, `Content-Type`, `Content-Length`, and `X-Timestamp` (the
    /// frame's CLOCK_MONOTONIC time in seconds, the clock of the events' `t`, so a viewer can
    /// tell how old what it shows is) and `X-Frame` (the preview's number in its feed).
    static func head(of frame: LiveView.Picture) -> [UInt8] {
        Array(("--\(boundary)\r\nContent-Type: image/jpeg\r\nContent-Length: \(frame.jpeg.count)\r\n"
               + "X-Timestamp: \(JSONLine.seconds(frame.timestamp))\r\nX-Frame: \(frame.number)\r\n\r\n").utf8)
    }

    /// What ends each part's JPEG.
    static let tail: [UInt8] = [0x0D, 0x0A]
}

/// One viewer of `/stream`: the part being sent and the number of its preview. A viewer whose
/// socket is slow is asked for more only when the library's buffer has gone out, and then gets
/// the newest preview: previews it had no room for are skipped, never queued.
final class PreviewViewer: SuspendableResponse {
    let feed: LiveView
    /// The width it asked for (`?width=`), nil: the board's.
    let width: Int?
    /// The part in progress: its head, the JPEG (the feed's own bytes, shared, not copied) and
    /// its tail, and how much of the three has gone to the library.
    private var head: [UInt8] = []
    private var jpeg: [UInt8] = []
    private var offset = 0
    /// The number of the newest preview sent (0: none yet).
    private(set) var sentNumber = 0
    /// Previews sent.
    private(set) var sentCount = 0

    init(connection: OpaquePointer, feed: LiveView, width: Int?, server: HTTPServer) {
        self.feed = feed
        self.width = width
        super.init(connection: connection, server: server)
    }

    /// Sends no preview numbered up to `number` (stale ones, made before anyone watched).
    func skipPreviews(through number: Int) {
        sentNumber = max(sentNumber, number)
    }

    /// Whether the part in progress has all gone to the library.
    private var partSent: Bool { offset >= head.count + jpeg.count + MJPEGPart.tail.count }

    /// libmicrohttpd's content reader: the rest of the part in progress, or the newest preview
    /// when it is newer than the last one sent; nothing new suspends the connection until the
    /// feed publishes one.
    override func read(into buffer: UnsafeMutablePointer<CChar>, maximum: Int) -> Int {
        if partSent {
            if ended { return CMicroHTTPD_CONTENT_READER_END_OF_STREAM }
            guard let frame = feed.latest(), frame.number > sentNumber else {
                suspendFromCallback(watchingSocket: true)
                return 0
            }
            head = MJPEGPart.head(of: frame)
            jpeg = frame.jpeg
            offset = 0
            sentNumber = frame.number
            sentCount += 1
        }
        var copied = 0
        /// Copies what is left of `segment`, which starts at `start` in the part.
        func take(_ segment: [UInt8], at start: Int) {
            let from = offset - start
            guard from >= 0, from < segment.count, copied < maximum else { return }
            let count = min(segment.count - from, maximum - copied)
            segment.withUnsafeBytes { bytes in
                UnsafeMutableRawPointer(buffer + copied).copyMemory(from: bytes.baseAddress! + from, byteCount: count)
            }
            offset += count
            copied += count
        }
        take(head, at: 0)
        take(jpeg, at: head.count)
        take(MJPEGPart.tail, at: head.count + jpeg.count)
        return copied
    }
}

/// A request whose answer waits, its connection suspended: a snapshot waiting for the first
/// preview, a thumbnail being made off the loop. It is resumed when its answer is ready or at
/// its deadline, and the library then asks for the answer again.
final class ParkedRequest: SuspendableResponse {
    let exchange: HTTPExchange
    let deadline: Instant

    init(connection: OpaquePointer, exchange: HTTPExchange, deadline: Instant, server: HTTPServer) {
        self.exchange = exchange
        self.deadline = deadline
        super.init(connection: connection, server: server)
    }
}

/// Thumbnails of the output directory's photos, made once and kept while their file is the
/// same (size and modification time), the least recently used let go beyond a byte limit.
struct ThumbnailCache {
    /// What identifies a file's version.
    struct Version: Hashable {
        var size: Int64
        var modified: Int64
    }

    private struct Entry {
        var version: Version
        var jpeg: [UInt8]
        var lastUse: Int
    }

    let byteLimit: Int
    private var entries: [String: Entry] = [:]
    private var uses = 0
    private(set) var byteCount = 0

    init(byteLimit: Int) { self.byteLimit = byteLimit }

    /// The thumbnail of `name` at `version`, if it was made.
    mutating func thumbnail(of name: String, version: Version) -> [UInt8]? {
        guard let entry = entries[name], entry.version == version else { return nil }
        uses += 1
        entries[name]?.lastUse = uses
        return entry.jpeg
    }

    /// Keeps a thumbnail, letting the least recently used go while over the limit.
    mutating func keep(_ jpeg: [UInt8], of name: String, version: Version) {
        uses += 1
        if let old = entries.removeValue(forKey: name) { byteCount -= old.jpeg.count }
        entries[name] = Entry(version: version, jpeg: jpeg, lastUse: uses)
        byteCount += jpeg.count
        while byteCount > byteLimit, entries.count > 1,
              let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse }) {
            entries[oldest.key] = nil
            byteCount -= oldest.value.jpeg.count
        }
    }

    var count: Int { entries.count }
}

extension HTTPPhotos {
    /// The width of `/thumbs/NAME`'s JPEGs.
    static let thumbnailWidth = 320
    /// Photos larger than this get no thumbnail (a file that is no photo).
    static let thumbnailSourceLimit = 64 << 20

    /// The file's version, for the thumbnail cache.
    ///
    /// The corresponding C function is `fstat`.
    static func version(of descriptor: CInt) -> ThumbnailCache.Version? {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        return ThumbnailCache.Version(size: Int64(info.st_size),
                                      modified: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec))
    }

    /// A thumbnail of the JPEG open on `descriptor`, which this closes; off the loop (it reads
    /// the whole file and decodes it at a reduced scale).
    ///
    /// The corresponding C functions are `read` and `close`; TurboJPEG's scaled decode
    /// (``LiveView/thumbnail(ofJPEG:width:quality:)``).
    static func thumbnail(reading descriptor: CInt, size: Int) -> Result<[UInt8], HTTPRefusal> {
        defer { close(descriptor) }
        guard size <= thumbnailSourceLimit else {
            return .failure(HTTPRefusal(status: 415, message: "no thumbnail for a file over \(thumbnailSourceLimit >> 20) MiB"))
        }
        var bytes = [UInt8](repeating: 0, count: size)
        var filled = 0
        var failure: Errno?
        while filled < size {
            let read = bytes[filled...].withUnsafeMutableBytes { buffer in
                valueOrErrno { Glibc.read(descriptor, buffer.baseAddress!, buffer.count) }
            }
            guard case .success(let count) = read, count > 0 else {
                if case .failure(let error) = read { failure = error }
                break
            }
            filled += count
        }
        guard filled == size else {
            return .failure(HTTPRefusal(status: 500, message: "the photo could not be read whole (\(failure?.description ?? "it ended early"))"))
        }
        do throws(LiveView.ThumbnailFailure) {
            return .success(try LiveView.thumbnail(ofJPEG: bytes, width: thumbnailWidth, quality: 75))
        } catch {
            return .failure(HTTPRefusal(status: 415, message: "no thumbnail: \(error)"))
        }
    }

    /// `name` with every byte but the unreserved ones percent-encoded, for a URL path.
    static func percentEncoded(_ name: String) -> String {
        var text = ""
        for byte in name.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                text.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let digits = Array("0123456789ABCDEF".utf8)
                text += "%" + String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 15)]], as: UTF8.self)
            }
        }
        return text
    }
}
