#if canImport(Glibc)
import Glibc
#endif
import CV4L2
import ShutterCore
import Synchronization

/// The driver's `mmap` buffers, shared by the camera and every frame lent one of them: unmapped
/// when the last lets go, so a photo still encoding keeps its buffer readable after the camera
/// stopped or closed. The corresponding C function is `munmap`.
final class MappedBuffers: @unchecked Sendable {
    // @unchecked: the regions never change after init; their bytes are read only by a frame
    // that holds the buffer out of the driver's queue.
    struct Region {
        var start: UnsafeMutableRawPointer
        var length: Int
        /// For a buffer whose planes lie apart (libcamera): each plane; empty when the frame is
        /// `length` bytes from `start`. Not unmapped one by one: `unmap` gets the region.
        var planes: [UnsafeRawBufferPointer] = []
    }

    let regions: [Region]
    private let unmap: @Sendable (Region) -> Void

    init(_ regions: [Region], unmap: @escaping @Sendable (Region) -> Void = { _ = CV4L2_munmap($0.start, $0.length) }) {
        self.regions = regions
        self.unmap = unmap
    }

    deinit {
        for region in regions { unmap(region) }
    }
}

/// What ``BufferQueue`` asks of the camera, replaceable so tests can follow the buffers without
/// a device: V4L2's ioctls, or libcamera's requests.
struct BufferQueueCalls: Sendable {
    /// Hands buffer `index` to the camera to fill: `VIDIOC_QBUF`, or `Camera::queueRequest` (`shutter_lc_release`).
    var queue: @Sendable (_ index: Int) throws(CaptureError) -> Void
    /// Starts the stream: `VIDIOC_STREAMON`, or `Camera::start` (`shutter_lc_start`).
    var start: @Sendable () throws(CaptureError) -> Void
    /// Stops it, the camera giving back every buffer it holds: `VIDIOC_STREAMOFF`, or `Camera::stop`.
    var stop: @Sendable () -> Void
}

/// Which of a camera's buffers (V4L2's mmap buffers, libcamera's requests) are queued in the
/// camera and which are lent to frames.
///
/// Each buffer has one ``FrameBuffer``, made when the buffers are mapped. Lending a buffer hands
/// out that object; the buffer comes back (``reclaim()``) once nothing but this queue refers to
/// the object any more: the ring dropped the frame and no photo is being encoded from it. Frames
/// are dropped on other threads (the encode worker's), but only the event loop hands frames out,
/// so an object seen unreferenced stays so. Nothing is allocated per frame.
final class BufferQueue: Sendable {
    private struct Ledger: @unchecked Sendable {
        // @unchecked: the slots are only touched under the lock, and lent ones only read.
        var mapping: MappedBuffers?
        /// One object per buffer, lent to the frames made from it.
        var slots: [FrameBuffer] = []
        var isStreaming = false
        /// Buffers dequeued and held by frames; not queued until reclaimed.
        var lent: Set<Int> = []
        /// Buffers the driver holds to fill.
        var queued = 0
    }

    private let calls: BufferQueueCalls
    private let ledger = Mutex(Ledger())
    /// The buffers the camera should hold to stream smoothly (vimc streams only with two).
    let minimumQueued: Int
    /// Whether a frame is lent even when that leaves fewer than ``minimumQueued`` buffers queued.
    /// `false` (V4L2): the caller copies the frame and queues the buffer at once, so photos still
    /// encoding cannot starve the driver. `true` (libcamera, whose 12 MP frames are 18 MB: no copy
    /// that size on the event loop): the frame is lent, ``shortfall`` says how many buffers the
    /// camera lacks, and the service gives back the oldest frames its ring holds.
    let lendsBelowMinimum: Bool

    init(calls: BufferQueueCalls, minimumQueued: Int, lendsBelowMinimum: Bool = false) {
        self.calls = calls
        self.minimumQueued = minimumQueued
        self.lendsBelowMinimum = lendsBelowMinimum
    }

    /// How many more buffers the camera should hold to have ``minimumQueued`` while streaming.
    var shortfall: Int {
        ledger.withLock { ledger in ledger.isStreaming ? max(0, minimumQueued - ledger.queued) : 0 }
    }

    /// The buffers mapped now; `nil` before ``adopt(_:)`` and after ``forget()``.
    var mapping: MappedBuffers? { ledger.withLock { $0.mapping } }
    var isMapped: Bool { mapping != nil }

    /// How many buffers are lent to frames now.
    var lentCount: Int { ledger.withLock { $0.lent.count } }
    /// How many buffers the driver holds now.
    var queuedCount: Int { ledger.withLock { $0.queued } }

    /// Takes newly mapped buffers; none is lent or queued yet.
    func adopt(_ mapping: MappedBuffers) {
        let slots = mapping.regions.map { region in
            region.planes.isEmpty ? FrameBuffer(lending: UnsafeRawPointer(region.start), count: region.length, keeper: mapping)
                : FrameBuffer(lendingPlanes: region.planes, keeper: mapping)
        }
        let old = ledger.withLock { ledger in
            let old = ledger
            ledger = Ledger(mapping: mapping, slots: slots)
            return old
        }
        _ = old  // the old mapping and slots go here, outside the lock
    }

    /// Drops the buffers (frames still holding one keep its mapping); whether there were any.
    func forget() -> Bool {
        let old = ledger.withLock { ledger in
            let old = ledger
            ledger = Ledger()
            return old
        }
        return old.mapping != nil
    }

    /// Queues every buffer not lent to a frame and starts streaming.
    func start() throws(CaptureError) {
        try ledger.withLock { (ledger: inout Ledger) throws(CaptureError) in
            guard ledger.mapping != nil else { return }
            try takeBackUnreferenced(&ledger, queueing: false)
            ledger.queued = 0
            for index in ledger.slots.indices where !ledger.lent.contains(index) {
                try calls.queue(index)
                ledger.queued += 1
            }
            try calls.start()
            ledger.isStreaming = true
        }
    }

    /// Stops streaming: the driver gives every queued buffer back; lent ones stay lent.
    func stop() {
        ledger.withLock { ledger in
            ledger.isStreaming = false
            ledger.queued = 0
            calls.stop()
        }
    }

    /// Queues again every lent buffer no frame refers to any more. Call before dequeuing.
    func reclaim() throws(CaptureError) {
        try ledger.withLock { (ledger: inout Ledger) throws(CaptureError) in
            guard ledger.isStreaming else { return }
            try takeBackUnreferenced(&ledger, queueing: true)
        }
    }

    /// Marks lent buffers no frame refers to as back; queues them when `queueing`.
    private func takeBackUnreferenced(_ ledger: inout Ledger, queueing: Bool) throws(CaptureError) {
        for index in ledger.slots.indices where ledger.lent.contains(index) && isKnownUniquelyReferenced(&ledger.slots[index]) {
            ledger.lent.remove(index)
            if queueing {
                try calls.queue(index)
                ledger.queued += 1
            }
        }
    }

    /// Buffer `index` was just dequeued with `count` bytes: its frame buffer when it may be lent
    /// (enough others stay queued); otherwise `nil`, and the caller copies the frame and calls ``requeue(_:)``.
    func lend(_ index: Int, count: Int) -> FrameBuffer? {
        ledger.withLock { ledger in
            ledger.queued -= 1
            guard index < ledger.slots.count, lendsBelowMinimum || ledger.queued >= minimumQueued,
                  isKnownUniquelyReferenced(&ledger.slots[index]) else { return nil }
            ledger.lent.insert(index)
            ledger.slots[index].count = count
            return ledger.slots[index]
        }
    }

    /// Buffer `index` was just dequeued and its frame dropped (error-flagged, damaged, or a
    /// failed request): queues it again at once, keeping the count of queued buffers true.
    func discard(_ index: Int) throws(CaptureError) {
        try ledger.withLock { (ledger: inout Ledger) throws(CaptureError) in
            ledger.queued -= 1
            guard ledger.isStreaming else { return }
            try calls.queue(index)
            ledger.queued += 1
        }
    }

    /// Queues a buffer that was dequeued, counted out by ``lend(_:count:)`` and not lent.
    func requeue(_ index: Int) throws(CaptureError) {
        try ledger.withLock { (ledger: inout Ledger) throws(CaptureError) in
            guard ledger.isStreaming else { return }
            try calls.queue(index)
            ledger.queued += 1
        }
    }
}
