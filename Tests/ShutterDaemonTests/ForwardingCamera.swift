import ShutterCapture
import ShutterCore

/// A synthetic camera passed through: test cameras subclass it and override only what they
/// change (a slow start, hidden controls, a close they count).
class ForwardingCamera: Camera, @unchecked Sendable {
    // Unchecked: the capture service hands a camera between the loop and its lifecycle queue, one at a time.
    let inner: SyntheticCamera

    init(_ inner: SyntheticCamera) { self.inner = inner }

    var info: CameraInfo { inner.info }
    var format: FrameFormat { inner.format }
    var pollDescriptor: CInt? { inner.pollDescriptor }
    var isStreaming: Bool { inner.isStreaming }
    var frameInterval: Nanoseconds? { inner.frameInterval }
    var controls: [CameraControl] { inner.controls }
    func start() throws(CaptureError) { try inner.start() }
    func stop() { inner.stop() }
    func readFrames(into frames: inout [Frame]) throws(CaptureError) { try inner.readFrames(into: &frames) }
    func setControl(_ id: UInt32, to value: Int32) throws(CaptureError) { try inner.setControl(id, to: value) }
    func close() { inner.close() }
}
