#if canImport(Glibc)
import Glibc
#endif
import ShutterCapture
import ShutterCore

/// A synthetic camera passed through: the test cameras of both test targets subclass it and
/// override only what they change (a slow start, other controls, a close they count).
open class ForwardingCamera: Camera, @unchecked Sendable {
    // Unchecked: the capture service hands a camera between the loop and its lifecycle queue, one at a time.
    public let inner: SyntheticCamera

    public init(_ inner: SyntheticCamera) { self.inner = inner }

    open var info: CameraInfo { inner.info }
    open var format: FrameFormat { inner.format }
    open var pollDescriptor: CInt? { inner.pollDescriptor }
    open var isStreaming: Bool { inner.isStreaming }
    open var frameInterval: Nanoseconds? { inner.frameInterval }
    open var controls: [CameraControl] { inner.controls }
    open func start() throws(CaptureError) { try inner.start() }
    open func stop() { inner.stop() }
    open func readFrames(into frames: inout [Frame]) throws(CaptureError) { try inner.readFrames(into: &frames) }
    open func setControl(_ id: UInt32, to value: Int32) throws(CaptureError) { try inner.setControl(id, to: value) }
    /// Declared here, not left to the protocol's default, so a subclass's override is the one called.
    open func readControl(_ id: UInt32, then answer: @escaping @Sendable (Int32?) -> Void) { inner.readControl(id, then: answer) }
    open func close() { inner.close() }
}

/// Sleeps the calling thread for `span` (a fake camera's slow device work), through signals.
public func sleepFor(_ span: Nanoseconds) {
    var request = timespec(tv_sec: Int(span.rawValue / 1_000_000_000), tv_nsec: Int(span.rawValue % 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0, errno == EINTR { request = remaining }
}
