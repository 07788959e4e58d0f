import Dispatch
import ShutterCore
import ShutterSystem
import Synchronization

/// One live-view JPEG: what `/snapshot` serves and `/stream` sends as a part.
public struct PreviewFrame: Sendable {
    /// The JPEG file's bytes.
    public var jpeg: [UInt8]
    /// The frame's CLOCK_MONOTONIC time, the instant ``instant`` names (the start of exposure, as
    /// the photo event's `frameAt` gives it).
    public var timestamp: Instant
    /// Which instant of the frame ``timestamp`` is.
    public var instant: FrameInstant
    /// The camera's frame counter of the frame the preview shows.
    public var frameSequence: UInt32
    /// This preview's number in its feed, from 1, one more for each preview made: a viewer that
    /// sent number n has nothing new until the feed's latest is above n (camera restarts start
    /// ``frameSequence`` again; this goes on).
    public var number: Int
    public var width: Int
    public var height: Int
}

/// What a ``PreviewFeed`` did, for tests, the benchmark and a status line.
public struct PreviewStatistics: Hashable, Sendable {
    /// Previews encoded and published.
    public var encoded = 0
    /// Frames due for a preview that were skipped because the previous one was still being made.
    public var skippedBusy = 0
    /// Previews that failed (a damaged frame, a format without a preview), and the last reason.
    public var failed = 0
    public var lastFailure: String?
    /// CPU time the preview queue spent making previews (downscale and encode), in total.
    public var cpuTime = Nanoseconds(rawValue: 0)
}

/// The live view's previews, for the HTTP server: the newest preview JPEG, the count of
/// viewers that makes the capture service produce them, and a descriptor that becomes readable
/// when a new one is ready.
///
/// Thread-safe, and nothing here blocks on the camera or an encode: ``latest()`` takes a lock
/// held only to copy a reference. Previews are made only while ``watcherCount`` is above zero;
/// with no viewer the capture service spends one atomic load per frame on them. One feed
/// outlives the capture services a reload replaces (the daemon hands it to each), so viewers keep
/// watching across a camera change.
///
/// A loop that serves viewers gives the feed a bell (``ringWhenPublished(_:)``), whose handler
/// calls ``latest()`` and sends each viewer whose socket has drained the newest preview (a slow
/// viewer skips previews: nothing queues here).
public final class PreviewFeed: Sendable {
    private struct State {
        var latest: PreviewFrame?
        /// A preview is being made on the preview queue.
        var busy = false
        var statistics = PreviewStatistics()
    }

    private let watchers = Atomic<Int>(0)
    /// The width the viewers asked for (0: the board's `preview.width`).
    private let askedWidth = Atomic<Int>(0)
    private let state = Mutex(State())
    /// Rung when a preview is published: the bell of the loop that serves the viewers.
    private let ready = Mutex<LoopBell?>(nil)

    public init() {}

    /// Rings `bell` each time a preview is published, until replaced (`nil`: no more).
    public func ringWhenPublished(_ bell: LoopBell?) {
        ready.withLock { $0 = bell }
    }

    /// The newest preview, `nil` before the first.
    public func latest() -> PreviewFrame? { state.withLock { $0.latest } }

    /// One more viewer: previews are made from the next frame due on.
    public func startWatching() {
        watchers.wrappingAdd(1, ordering: .relaxed)
    }

    /// One viewer fewer; at zero, no preview is made any more (one being made is still published).
    /// A stop without a start is ignored rather than letting the count go below zero.
    public func stopWatching() {
        var current = watchers.load(ordering: .relaxed)
        while current > 0 {
            let (exchanged, original) = watchers.compareExchange(expected: current, desired: current - 1, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }

    /// Makes the next previews `width` pixels across (nil: the board's `preview.width`). The
    /// server that serves the viewers decides it, within the board's bound: one width for all of
    /// them, so however many watch, one preview is made per frame.
    public func makePreviews(width: Int?) {
        askedWidth.store(max(0, width ?? 0), ordering: .relaxed)
    }

    /// The width the viewers asked for, nil when none did.
    public var requestedWidth: Int? {
        let width = askedWidth.load(ordering: .relaxed)
        return width > 0 ? width : nil
    }

    /// How many viewers watch now.
    public var watcherCount: Int { watchers.load(ordering: .relaxed) }

    /// Whether anyone watches: the capture service makes previews only then.
    public var isWatched: Bool { watcherCount > 0 }

    /// What the feed did so far.
    public var statistics: PreviewStatistics { state.withLock { $0.statistics } }

    // MARK: - For the producer

    /// Claims the preview queue for one preview; `false` (counted as a skip) while the previous
    /// one is still being made: the frame is skipped, never queued.
    func claim() -> Bool {
        state.withLock { state in
            if state.busy {
                state.statistics.skippedBusy += 1
                return false
            }
            state.busy = true
            return true
        }
    }

    /// Publishes a preview made from the claimed frame and wakes the viewers' loop.
    func publish(jpeg: [UInt8], of frame: FrameStamp, width: Int, height: Int, cpuTime: Nanoseconds) {
        state.withLock { state in
            state.statistics.encoded += 1
            state.statistics.cpuTime = state.statistics.cpuTime + cpuTime
            state.latest = PreviewFrame(jpeg: jpeg, timestamp: frame.timestamp, instant: frame.instant, frameSequence: frame.sequence,
                                        number: state.statistics.encoded, width: width, height: height)
            state.busy = false
        }
        ready.withLock { $0 }?.ring()
    }

    /// The claimed frame gave no preview.
    func failed(_ error: CaptureError?, cpuTime: Nanoseconds) {
        state.withLock { state in
            if let error {
                state.statistics.failed += 1
                state.statistics.lastFailure = error.description
            }
            state.statistics.cpuTime = state.statistics.cpuTime + cpuTime
            state.busy = false
        }
    }
}

/// What a preview keeps of its frame once the frame itself is let go.
struct FrameStamp: Sendable {
    var timestamp: Instant
    var instant: FrameInstant
    var sequence: UInt32
}

/// Decides which frames become previews: at most one per interval, on the frames' own timestamps.
///
/// Each preview is due an interval after the one before was *due* (not taken), so a camera at
/// twice the preview rate gives every other frame even with jitter, and a frame up to an eighth
/// of an interval early still counts: measured on frame times, never more than `fps` previews
/// a second (over any span, at most one more than the span's share), and not a third fewer when
/// the camera's rate is a multiple of the preview's. A value type that never reads a clock.
struct PreviewPacer: Sendable {
    /// When the next preview is due; `nil` before the first.
    private(set) var nextDue: Instant?

    /// Whether a frame at `timestamp` is due for a preview.
    func isDue(_ timestamp: Instant, interval: Nanoseconds) -> Bool {
        guard let nextDue else { return true }
        return timestamp >= nextDue - Nanoseconds(rawValue: interval.rawValue / 8)
    }

    /// The frame at `timestamp` was taken for a preview.
    mutating func took(_ timestamp: Instant, interval: Nanoseconds) {
        if let due = nextDue, timestamp < due + interval {
            nextDue = due + interval
        } else {
            nextDue = timestamp + interval  // the first, or after a gap (nobody watched, or the camera stopped)
        }
    }
}

/// Makes the live view's previews from the ring's frames, for one capture service.
///
/// The capture service offers it every frame it keeps, on the event loop (``offer(_:processing:)``); with
/// nobody watching that is one atomic load. A frame due for a preview goes to its own serial
/// queue of low priority (`utility`), unless the preview before is still being made: then the
/// frame is skipped, so a slow preview never grows a backlog and never holds more than one ring
/// frame. The queue downscales the frame into a small buffer of its own and lets the ring frame
/// go at once, before encoding. Used from the event loop only.
///
/// A preview shows what a photo of its frame would be: the photo's digital zoom crop and effect
/// (``PhotoProcessing``, the capture service's own decision, so a camera that zooms itself is not
/// cropped a second time) are applied to the preview too, the crop before the downscale and the
/// effect to the small frame.
final class PreviewProducer {
    let feed: PreviewFeed
    /// The board's `preview` section; a reload may change it.
    var settings: PreviewSettings
    private var pacer = PreviewPacer()
    /// Its own queue: never the event loop, never the photo encode worker.
    let queue = DispatchQueue(label: "shutter.capture.preview", qos: .utility)
    private let maker = PreviewMaker()
    private let group = DispatchGroup()

    init(feed: PreviewFeed, settings: PreviewSettings) {
        self.feed = feed
        self.settings = settings
    }

    /// Takes `frame` (just kept in the ring) for a preview when someone watches, one is due, and
    /// the previous one is done; `processing` is what a photo of it would go through, asked for
    /// only then.
    func offer(_ frame: Frame, processing: @autoclosure () -> PhotoProcessing = PhotoProcessing()) {
        guard feed.isWatched else { return }
        let interval = settings.interval
        guard pacer.isDue(frame.timestamp, interval: interval), feed.claim() else { return }
        pacer.took(frame.timestamp, interval: interval)
        var asked = self.settings
        if let width = feed.requestedWidth { asked.width = asked.viewerWidth(asking: width) }
        let settings = asked, feed = self.feed, maker = self.maker, processing = processing()
        // In a box the job empties: the frame (which may hold a camera buffer) is let go by the
        // maker right after its downscale, not when the block is freed.
        let handed = Locked<Frame?>(frame)
        queue.async(group: group) {
            maker.make(from: handed, settings: settings, processing: processing, feed: feed)
        }
    }

    /// Blocks until the previews handed to the queue are made (tests, shutdown).
    func waitForPreviews() {
        group.wait()
    }
}

/// The preview queue's worker: its encoder, decoder and small buffers, kept from preview to preview.
final class PreviewMaker: @unchecked Sendable {
    // @unchecked: every member is used only by jobs on the one serial preview queue, which run
    // one after another (the queue orders their memory accesses).
    private var encoder: JPEGEncoder?
    private var decoder: JPEGDecoder?
    /// The downscaled frame's bytes; unshared again once its small frame is encoded and dropped,
    /// so the next downscale writes into the same memory.
    private var small: [UInt8] = []
    /// An MJPEG frame's planes, decoded at a reduced scale.
    private var planes: [UInt8] = []

    /// What a ring frame is reduced to before it is let go.
    enum Reduced {
        /// A small uncompressed frame of the camera's layout, owning its bytes.
        case frame(Frame)
        /// An MJPEG frame's planes in ``planes``.
        case planes(DecodedPlanes)
        /// An MJPEG frame small enough to send as it came (Huffman tables added when missing).
        case jpeg([UInt8], width: Int, height: Int)
    }

    /// Takes the frame out of `handed`, reduces it (to `processing`'s crop, with its effect), lets
    /// it go, encodes and publishes the preview.
    func make(from handed: Locked<Frame?>, settings: PreviewSettings, processing: PhotoProcessing = PhotoProcessing(), feed: PreviewFeed) {
        let started = threadCPUTime()
        do throws(CaptureError) {
            let (reduced, stamp) = try reduce(handed, width: settings.width, processing: processing)
            // The ring frame is gone here: only the small copy is left.
            let made: (jpeg: [UInt8], width: Int, height: Int)
            switch reduced {
            case .frame(let frame):
                let encoder = try keptEncoder()
                made = (try encoder.encode(frame, quality: settings.quality), frame.format.width, frame.format.height)
            case .planes(let decoded):
                let encoder = try keptEncoder()
                made = (try encoder.encode(decoded, in: planes, quality: settings.quality), decoded.width, decoded.height)
            case .jpeg(let jpeg, let width, let height):
                made = (jpeg, width, height)
            }
            feed.publish(jpeg: made.jpeg, of: stamp, width: made.width, height: made.height, cpuTime: Nanoseconds(rawValue: threadCPUTime().rawValue - started.rawValue))
        } catch {
            feed.failed(error, cpuTime: Nanoseconds(rawValue: threadCPUTime().rawValue - started.rawValue))
        }
    }

    private func keptEncoder() throws(CaptureError) -> JPEGEncoder {
        if let encoder { return encoder }
        let made = try JPEGEncoder()
        encoder = made
        return made
    }

    private func keptDecoder() throws(CaptureError) -> JPEGDecoder {
        if let decoder { return decoder }
        let made = try JPEGDecoder()
        decoder = made
        return made
    }

    /// The frame in `handed` reduced to preview size, and its stamp; the frame is let go when this returns.
    private func reduce(_ handed: Locked<Frame?>, width wanted: Int, processing: PhotoProcessing) throws(CaptureError) -> (Reduced, FrameStamp) {
        guard var frame = handed.withLock({ box in defer { box = nil }; return box }) else {
            throw CaptureError.encoding("no frame for the preview")
        }
        let stamp = FrameStamp(timestamp: frame.timestamp, instant: frame.instant, sequence: frame.sequence)
        // The crop is in the still's pixels; a viewfinder or a reduced decode shows the same part at its own size.
        let still = frame.format
        func crop(of width: Int, _ height: Int) -> CropRect? { processing.crop?.scaled(from: still, toWidth: width, height: height) }
        if let finder = frame.viewfinder {
            // libcamera's viewfinder stream: the same exposure, already small; read while the
            // frame (and so its request) is held, then let go with it.
            var small = self.small
            self.small = []
            let layout: FrameFormat
            do {
                defer { withExtendedLifetime(frame) {} }  // the request stays held until the scale is done
                layout = try PreviewScaler.downscale(UnsafeRawBufferPointer(start: finder.start, count: finder.count), format: finder.format,
                                                     crop: crop(of: finder.format.width, finder.format.height), toWidth: wanted, into: &small)
                PreviewScaler.apply(processing.effect, to: &small, format: layout)
            } catch {
                self.small = small
                throw error
            }
            self.small = small
            var reduced = Frame(timestamp: stamp.timestamp, sequence: stamp.sequence, format: layout, bytes: small)
            reduced.instant = stamp.instant
            return (.frame(reduced), stamp)
        }
        // A frame libv4lconvert converts, or one whose planes lie apart, is resolved first: a
        // full-size copy, the one case where a preview copies a whole frame.
        if frame.needsResolving { frame = try frame.resolved() }
        let format = frame.format
        if format.pixelFormat.isJPEG {
            if format.width <= wanted, processing.isIdentity {
                guard let fixed = JPEGMarkers.insertingHuffmanTablesIfMissing(frame.bytes), JPEGMarkers.isComplete(fixed) else {
                    throw CaptureError.encoding("the camera sent a damaged MJPEG frame")
                }
                return (.jpeg(fixed, width: format.width, height: format.height), stamp)
            }
            let decoder = try keptDecoder()
            // Decoded large enough that the crop alone is at least the preview's width.
            let zoomedWidth = processing.crop.map { wanted * format.width / max($0.width, 1) } ?? wanted
            var decoded = try frame.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws(CaptureError) -> DecodedPlanes in
                try decoder.decodePlanes(raw, atLeast: zoomedWidth, into: &planes)
            }
            decoded.apply(processing.effect, to: &planes)
            if let region = crop(of: decoded.width, decoded.height) { decoded = decoded.cropped(to: region) }
            return (.planes(decoded), stamp)
        }
        var small = self.small
        self.small = []  // one owner while it is written: no copy on write
        let reducedFrame: Frame
        do {
            let layout = try frame.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws(CaptureError) -> FrameFormat in
                try PreviewScaler.downscale(raw, format: format, crop: crop(of: format.width, format.height), toWidth: wanted, into: &small)
            }
            // Before the small frame shares the bytes: the effect writes them in place, not into a copy.
            PreviewScaler.apply(processing.effect, to: &small, format: layout)
            var made = Frame(timestamp: stamp.timestamp, sequence: stamp.sequence, format: layout, bytes: small)
            made.instant = stamp.instant
            reducedFrame = made
        } catch {
            self.small = small
            throw error
        }
        self.small = small
        return (.frame(reducedFrame), stamp)
    }
}

extension CropRect {
    /// The same part of a `width`×`height` picture as this crop is of a frame of `format`'s size
    /// (a viewfinder stream, or a reduced decode), on even coordinates, inside the picture.
    func scaled(from format: FrameFormat, toWidth width: Int, height: Int) -> CropRect {
        guard format.width != width || format.height != height else { return self }
        let sx = Double(width) / Double(format.width), sy = Double(height) / Double(format.height)
        let w = min(width & ~1, max(2, Int((Double(self.width) * sx).rounded()) & ~1))
        let h = min(height & ~1, max(2, Int((Double(self.height) * sy).rounded()) & ~1))
        let x = min(width - w, Int((Double(self.x) * sx).rounded())) & ~1, y = min(height - h, Int((Double(self.y) * sy).rounded())) & ~1
        return CropRect(x: max(0, x), y: max(0, y), width: w, height: h)
    }
}
