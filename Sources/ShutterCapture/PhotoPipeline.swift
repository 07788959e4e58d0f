import ShutterCore
import ShutterSystem

/// One photo's background work: encode, EXIF, atomic write.
struct PhotoJob: Sendable {
    var frame: Frame
    /// The shot the photo answers; its file name and digest, when it asks for them, go with it.
    var shot: Shot
    var focus: ShotFocus
    var exposureSettling = ExposureSettling.Outcome.none
    var exposureBias: Double?
    var bracket: Nanoseconds?
    var frameInterval: Nanoseconds?
    /// Digital zoom and effect, applied before encoding.
    var processing: PhotoProcessing
    var quality: Int
    var name: String
    var metadata: PhotoMetadata

    /// The finished photo, or why there is none. Runs on the encode worker's thread, the only
    /// user of `encoder`.
    func run(writer: PhotoWriter, encoder: EncodeWorkerEncoder) -> CaptureEvent {
        do throws(CaptureError) {
            let started = monotonicNow()
            let photo = try encodePhoto(frame, processing: processing, quality: quality, encoder: try encoder.encoder())
            var jpeg = photo.jpeg
            let width = photo.width, height = photo.height
            var metadata = self.metadata
            metadata.width = width
            metadata.height = height
            jpeg = try ExifWriter.adding(metadata, to: jpeg)
            let encoded = monotonicNow()
            let path = try writer.write(jpeg, name: name)
            let written = monotonicNow()
            return .photo(Photo(at: written, path: path, shot: shot, frameAt: frame.timestamp, frameAtIs: frame.instant, width: width,
                                height: height, bytes: jpeg.count, frameSequence: frame.sequence, bracket: bracket, frameInterval: frameInterval,
                                encodeTime: encoded - started, writeTime: written - encoded, focus: focus.outcome,
                                focusFrames: focus.frames,
                                clockSynchronized: metadata.clockSynchronized, sha256: shot.digest ? SHA256.hexDigest(of: jpeg) : nil,
                                exposure: frame.exposure, exposureSettling: exposureSettling, exposureBias: exposureBias))
        } catch {
            return .captureFailed(CaptureFailure(at: monotonicNow(), shot: shot, error: error))
        }
    }
}

/// The JPEG encoder of the service's encode worker, made on the first photo and kept for the next.
///
/// A fresh ``JPEGEncoder`` per photo splits the frame into planes in fresh memory (4 MB for a
/// 1920x1080 YUYV frame, about a thousand page faults) and allocates TurboJPEG's output buffer
/// again; a kept one reuses both. It encodes a large frame in a strip per core at once
/// (``JPEGEncoder/photoStrips``). Used only from the encode worker's one thread
/// (``PhotoJob/run(writer:encoder:)``).
final class EncodeWorkerEncoder: @unchecked Sendable {
    // @unchecked: `kept` is read and written only by jobs on the encode worker, which run one
    // after another on its thread (its mailbox's lock orders their memory accesses), so the
    // TurboJPEG handle and its buffers are never used from two threads at once.
    private var kept: JPEGEncoder?

    /// The kept encoder, made now if there is none yet (a failed `tjInitCompress` fails this
    /// photo; the next one tries again).
    func encoder() throws(CaptureError) -> JPEGEncoder {
        if let kept { return kept }
        let made = try JPEGEncoder(strips: JPEGEncoder.photoStrips)
        kept = made
        return made
    }
}
