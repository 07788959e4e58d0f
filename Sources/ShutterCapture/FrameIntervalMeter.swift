import ShutterCore

/// The frame interval of a camera that does not say it (libcamera without a board `fps`),
/// measured from the times of its frames.
///
/// The median of the last ``window`` intervals, not the last one: the zero-shutter-lag choice
/// and the stall limit (five intervals) follow it, and one short interval after a long one (a
/// frame dropped and the next on time, or vimc under emulation, whose intervals wander between
/// 50 and 1330 ms within a second) must not make the next ordinary gap look like a stall.
public struct FrameIntervalMeter: Hashable, Sendable {
    /// How many recent intervals the median is taken over.
    public static let window = 9
    private var recent: [Nanoseconds] = []
    private var next = 0
    private var lastFrameAt: Instant?

    public init() {}

    /// The median of the recent intervals; `nil` before two frames.
    public private(set) var interval: Nanoseconds?

    /// A frame whose exposure started at `time`. Times that do not move forward are ignored.
    public mutating func frame(at time: Instant) {
        guard let previous = lastFrameAt else {
            lastFrameAt = time
            return
        }
        guard time > previous else { return }
        lastFrameAt = time
        let measured = time - previous
        if recent.count < Self.window { recent.append(measured) } else { recent[next] = measured }
        next = (next + 1) % Self.window
        interval = Self.median(of: recent)
    }

    /// The value at `values.count / 2` in sorted order, found without sorting a copy: this runs
    /// for every frame, and `sorted()` is a heap allocation a frame (StreamingAllocationTests).
    /// Nine values: 81 comparisons. Index loops, not `for in`: an unoptimized build's iterator
    /// allocates on every loop.
    private static func median(of values: [Nanoseconds]) -> Nanoseconds {
        let middle = values.count / 2
        var index = 0
        while index < values.count {
            let candidate = values[index]
            var below = 0, equal = 0, other = 0
            while other < values.count {
                if values[other] < candidate { below += 1 } else if values[other] == candidate { equal += 1 }
                other += 1
            }
            if below <= middle, middle < below + equal { return candidate }
            index += 1
        }
        preconditionFailure("no median among \(values.count) values")
    }

    /// The stream stopped: the next frame starts a new measurement (the intervals measured stay
    /// the estimate until new ones come).
    public mutating func streamStopped() { lastFrameAt = nil }
}
