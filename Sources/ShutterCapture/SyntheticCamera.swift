#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CShutterSystem
import ShutterCore
import ShutterSystem

/// A camera with no hardware: colour bars (vivid's order, 75 %) that move a few pixels per
/// frame, stamped on a fixed period of CLOCK_MONOTONIC as a sensor stamps its frames, in YUYV
/// at any size. From 160×120 up it also shows a band with the frame's number and timestamp
/// burned in and a test chart of fine detail and colour patches (``SyntheticScene``).
///
/// It has one control, an exposure bias (as `V4L2_CID_AUTO_EXPOSURE_BIAS`, in 0.001 EV) that
/// brightens or darkens the bars by 2^EV, so the simulator rig's exposure control does something.
///
/// Frames come on a frame clock (`frameInterval` set: a periodic timer descriptor, polled as a
/// device's would be) or, in tests, from ``emit(at:)``.
/// ``failNextRead(with:)`` and ``isUnplugged`` simulate a camera that fails or goes away.
public final class SyntheticCamera: Camera {
    public let info: CameraInfo
    public let format: FrameFormat
    public let frameInterval: Nanoseconds?
    public private(set) var isStreaming = false
    public var controls: [CameraControl] { [Self.exposureBiasControl] }

    /// The synthetic sensor's exposure bias: −4…+4 EV in 0.001 EV, like a webcam's.
    public static let exposureBiasControl = CameraControl(
        id: ControlID.autoExposureBias, name: "Auto Exposure, Bias", kind: .integer,
        minimum: -4000, maximum: 4000, step: 1, defaultValue: 0, isWritable: true)
    /// The bias now, in 0.001 EV.
    public private(set) var exposureBias: Int32 = 0

    /// While `true`, `start` fails as if the device were unplugged.
    public var isUnplugged = false
    private var pendingFailure: CaptureError?
    /// The frame clock: a timerfd readable at each frame's start while streaming (and at once
    /// after an ``emit(at:)``); the camera's poll descriptor.
    private let frameClock: CInt
    /// When the stream started on the frame clock, and the last frame slot read.
    private var clockOrigin: Int64 = 0
    private var lastSlot: Int64 = 0
    /// Frames emitted and not read yet, at most ``queueLimit``, and how many came after those
    /// with nowhere to go.
    private let pending = Locked<(frames: [Instant], dropped: UInt32)>(([], 0))
    /// The most frames waiting to be read. A V4L2 driver fills only the buffers queued to it
    /// and drops a frame when none is free, its sequence number skipped (the V4L2 spec's
    /// `v4l2_buffer.sequence`: gaps show frames lost); so a loop held for a while finds these
    /// oldest frames and a gap, not every frame the timer made, each holding a buffer.
    public static let queueLimit = 8
    private var sequence: UInt32 = 0
    /// Two rows of bars side by side, so a moved row is one copy.
    private let doubleRow: [UInt8]
    /// `doubleRow` with the exposure bias applied to luma.
    private var exposedRow: [UInt8]
    /// The test chart's rows (``SyntheticScene``), as made and with the exposure bias applied.
    private let chart: [UInt8]
    private var exposedChart: [UInt8]
    /// Luma through the exposure bias, for the burned-in band.
    private var lumaTable: [UInt8] = (0...255).map { UInt8($0) }
    /// Frame memory, made once and lent to frames as a V4L2 camera lends its driver buffers: a
    /// buffer is drawn into again once no frame refers to it (the ring dropped it, its photo is
    /// written), so streaming allocates nothing per frame. Grows to as many as are held at once.
    private var pool: [(buffer: FrameBuffer, start: UnsafeMutableRawPointer)] = []
    /// Frame times taken from the timer: storage kept between reads (the frames go into the caller's array).
    private var takenFrames: [Instant] = []
    /// The label burned into the frame being drawn (its storage kept between frames).
    private var labelText = ""

    /// The eight bars, top to bottom in Y, U, V (BT.601, 75 %): white, yellow, cyan, green,
    /// magenta, red, blue, black.
    public static let barsYUV: [(y: UInt8, u: UInt8, v: UInt8)] = [
        (180, 128, 128), (162, 44, 142), (131, 156, 44), (112, 72, 58),
        (84, 184, 198), (65, 100, 212), (35, 212, 114), (16, 128, 128),
    ]
    /// How far the bars move per frame, in pixels.
    public static let pixelsPerFrame = 8

    /// - Parameters:
    ///   - width, height: the frame size (even width).
    ///   - frameInterval: the time between frames for the timer; `nil` for frames only from ``emit(at:)``.
    public init(width: Int = 1280, height: Int = 720, frameInterval: Nanoseconds? = .milliseconds(1000.0 / 30))
        throws(CaptureError) {
        guard width >= 16, height >= 16, width % 2 == 0 else {
            throw CaptureError.unsupportedSize(device: "synthetic", requested: "\(width)x\(height)",
                                               supported: ["any even width ≥ 16 x any height ≥ 16"])
        }
        info = CameraInfo(path: "synthetic", card: "shutter synthetic camera", driver: "synthetic", bus: "none")
        format = FrameFormat(width: width, height: height, pixelFormat: .yuyv)
        self.frameInterval = frameInterval
        frameClock = CShutterSystem_deadlineTimerCreate()
        guard frameClock >= 0 else { throw CaptureError.system("timerfd_create", Errno.current, "the synthetic camera's frame clock") }
        var row = [UInt8](repeating: 0, count: width * 4)
        for pair in 0..<width {  // 2 × width pixels, one pair (4 bytes) per step
            let x = (pair * 2) % width
            let bar = Self.barsYUV[x * 8 / width]
            row[pair * 4] = bar.y
            row[pair * 4 + 1] = bar.u
            row[pair * 4 + 2] = bar.y
            row[pair * 4 + 3] = bar.v
        }
        doubleRow = row
        exposedRow = row
        chart = SyntheticScene.applies(width: width, height: height) ? SyntheticScene.chart(width: width, height: height) : []
        exposedChart = chart
    }

    /// The bar index at column `x` of frame `sequence`: what a photo of that frame shows there.
    public static func bar(atColumn x: Int, width: Int, sequence: UInt32) -> Int {
        let shift = Int(sequence % UInt32(width / pixelsPerFrame)) * pixelsPerFrame
        return (((x + shift) % width) & ~1) * 8 / width
    }

    public var pollDescriptor: CInt? { isStreaming ? frameClock : nil }

    public func start() throws(CaptureError) {
        if isUnplugged { throw CaptureError.noDevice(requested: "synthetic", available: []) }
        guard !isStreaming else { return }
        isStreaming = true
        if let frameInterval {
            // A sensor starts its frames on a fixed period and stamps each with its start,
            // however late the frame is read: the slots are counted from the origin, never from
            // when the loop got to them (the zero-shutter-lag pick and a rig's spread rely on it).
            clockOrigin = monotonicNow().rawValue
            lastSlot = 0
            _ = CShutterSystem_periodicTimerSet(frameClock, clockOrigin + frameInterval.rawValue, frameInterval.rawValue)
        }
    }

    public func stop() {
        _ = CShutterSystem_deadlineTimerSet(frameClock, 0, 0)
        isStreaming = false
        pending.withLock { $0 = ([], 0) }
        drainFrameClock()
    }

    deinit { Glibc.close(frameClock) }

    /// Reads the frame clock's expirations, so that poll stops reporting it until the next frame.
    private func drainFrameClock() {
        var expirations: UInt64 = 0
        _ = read(frameClock, &expirations, MemoryLayout<UInt64>.size)
    }

    /// Queues a frame stamped `timestamp`, as if the sensor had just delivered it.
    public func emit(at timestamp: Instant) {
        Self.queue(timestamp, in: pending)
        // At once, for a camera with no frame clock; one with a clock is read at its next frame.
        if frameInterval == nil { _ = CShutterSystem_deadlineTimerSet(frameClock, 1, 1) }
    }

    /// Queues a frame started at `time`, or counts it dropped when the queue is full or has
    /// dropped one already (frames after a gap wait for the gap to be read).
    private static func queue(_ time: Instant, in pending: Locked<(frames: [Instant], dropped: UInt32)>) {
        pending.withLock {
            if $0.frames.count < queueLimit && $0.dropped == 0 {
                $0.frames.append(time)
            } else {
                $0.dropped &+= 1
            }
        }
    }

    /// Queues the frames whose slots began since the last read. A loop that read late finds the
    /// oldest ``queueLimit`` of them and a gap, as a driver with that many buffers leaves it.
    private func queueSlots(upTo now: Instant, interval: Int64) {
        let slot = (now.rawValue - clockOrigin) / interval
        guard slot > lastSlot else { return }
        let first = lastSlot + 1
        lastSlot = slot
        let kept = min(slot - first + 1, Int64(Self.queueLimit))
        for index in first..<(first + kept) {
            Self.queue(Instant(rawValue: clockOrigin + index * interval), in: pending)
        }
        let lost = slot - first + 1 - kept
        if lost > 0 { pending.withLock { $0.dropped &+= UInt32(clamping: lost) } }
    }

    /// Makes the next `readFrames` throw `error` (e.g. ``CaptureError/deviceVanished(device:)``).
    public func failNextRead(with error: CaptureError) {
        pendingFailure = error
    }

    public func readFrames(into frames: inout [Frame]) throws(CaptureError) {
        drainFrameClock()
        if let failure = pendingFailure {
            pendingFailure = nil
            throw failure
        }
        guard isStreaming else { return }
        if let frameInterval { queueSlots(upTo: monotonicNow(), interval: frameInterval.rawValue) }
        takenFrames.removeAll(keepingCapacity: true)
        let dropped = pending.withLock { queued in
            takenFrames.append(contentsOf: queued.frames)
            queued.frames.removeAll(keepingCapacity: true)
            defer { queued.dropped = 0 }
            return queued.dropped
        }
        // Over indices: a debug build's unspecialized iterator allocates on each read.
        for index in 0..<takenFrames.count { frames.append(makeFrame(at: takenFrames[index])) }
        sequence &+= dropped
    }

    /// A pooled buffer no frame refers to any more, or a new one for the pool.
    private func freeBuffer(bytes: Int) -> (buffer: FrameBuffer, start: UnsafeMutableRawPointer) {
        for index in pool.indices where isKnownUniquelyReferenced(&pool[index].buffer) {
            return pool[index]
        }
        let memory = FrameMemory(byteCount: bytes)
        let entry = (buffer: FrameBuffer(lending: UnsafeRawPointer(memory.start), count: bytes, keeper: memory), start: memory.start)
        pool.append(entry)
        return entry
    }

    /// The frame the synthetic sensor shows at `timestamp`, numbered by the camera's sequence.
    private func makeFrame(at timestamp: Instant) -> Frame {
        let seq = sequence
        sequence &+= 1
        let rowBytes = format.bytesPerLine
        let shift = Int(seq % UInt32(format.width / Self.pixelsPerFrame)) * Self.pixelsPerFrame
        let (buffer, start) = freeBuffer(bytes: rowBytes * format.height)
        let target = UnsafeMutableBufferPointer(start: start.assumingMemoryBound(to: UInt8.self), count: rowBytes * format.height)
        exposedRow.withUnsafeBufferPointer { source in
            let from = source.baseAddress!.advanced(by: (shift & ~1) * 2)
            for row in 0..<format.height {
                target.baseAddress!.advanced(by: row * rowBytes).update(from: from, count: rowBytes)
            }
        }
        if !exposedChart.isEmpty {
            let box = SyntheticScene.chartBox(width: format.width, height: format.height)
            let boxRowBytes = box.width * 2
            exposedChart.withUnsafeBufferPointer { chart in
                for row in 0..<box.height {
                    target.baseAddress!.advanced(by: (box.y + row) * rowBytes + box.x * 2)
                        .update(from: chart.baseAddress!.advanced(by: row * boxRowBytes), count: boxRowBytes)
                }
            }
            SyntheticScene.label(sequence: seq, seconds: timestamp.seconds, into: &labelText)
            SyntheticScene.drawBand(labelText, into: target, width: format.width, height: format.height, luma: lumaTable)
        }
        return Frame(timestamp: timestamp, sequence: seq, format: format, buffer: buffer)
    }

    public func setControl(_ id: UInt32, to value: Int32) throws(CaptureError) {
        guard id == ControlID.autoExposureBias else {
            throw CaptureError.notACaptureDevice(device: "synthetic", reason: "the synthetic camera has only an exposure bias control")
        }
        exposureBias = min(max(value, Self.exposureBiasControl.minimum), Self.exposureBiasControl.maximum)
        let gain = exp2(Double(exposureBias) / 1000)
        var row = doubleRow
        // Luma sits at every even byte of YUYV; chroma stays as it is.
        for index in stride(from: 0, to: row.count, by: 2) {
            row[index] = UInt8(min(235, max(16, (Double(doubleRow[index]) * gain).rounded())))
        }
        exposedRow = row
        lumaTable = (0...255).map { UInt8(min(235, max(16, (Double($0) * gain).rounded()))) }
        var exposed = chart
        for index in stride(from: 0, to: exposed.count, by: 2) { exposed[index] = lumaTable[Int(chart[index])] }
        exposedChart = exposed
    }

    public func close() { stop() }
}

/// Memory for one synthetic frame, freed when the last frame lent it is gone.
private final class FrameMemory {
    let start: UnsafeMutableRawPointer

    init(byteCount: Int) {
        start = .allocate(byteCount: max(1, byteCount), alignment: 16)
        start.initializeMemory(as: UInt8.self, repeating: 0, count: max(1, byteCount))
    }

    deinit { start.deallocate() }
}
