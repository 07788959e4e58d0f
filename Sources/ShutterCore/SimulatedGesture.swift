/// A gesture a person makes on the rig, as the raw edges it gives: what the simulator's keys
/// and its demo session play on the mock chip.
///
/// Times are well inside the board's gesture timings (a light press is held 120 ms, a swipe
/// crosses a pad every 60 ms), so each gesture is recognized as what it is named.
public enum SimulatedGesture: Hashable, Sendable, CaseIterable {
    /// Half press and release: shows the controls (or selects in the chooser).
    case lightPress
    /// Two light presses: opens the chooser.
    case doubleLightPress
    /// Half, then full, then both released: takes a photo.
    case fullClick
    /// Half and full held for 1.6 s: a burst when the board allows bursts, else one photo.
    case burst
    /// A finger along half the strip toward its first pad.
    case swipeLeft
    /// A finger along half the strip toward its last pad.
    case swipeRight
    /// A press of the secondary button.
    case secondary
    /// A finger from one pad to the next, toward the first pad: one step, in the chooser and on
    /// a control's scale (the simulator's keys).
    case stepLeft
    /// A finger from one pad to the next, toward the last pad: one step.
    case stepRight

    /// How long after the gesture's edges the next may start, so two are never merged.
    public static let pause = Nanoseconds.milliseconds(120)

    /// The gesture's edges on `board`'s lines from `start`, in time order; empty when the board
    /// lacks the lines it needs (no strip, no secondary button).
    public func edges(on board: Board, from start: Instant) -> [Edge] {
        var edges: [Edge] = []
        var time = start
        func set(_ line: LineIndex?, _ active: Bool) {
            if let line { edges.append(Edge(line: line, active: active, time: time)) }
        }
        func wait(_ milliseconds: Double) { time = time + .milliseconds(milliseconds) }
        let half = board.lines(withRole: .half).first
        let full = board.lines(withRole: .full).first
        let pads = board.pads
        // A rig without a half line takes a tap on the strip as its light press.
        func lightPress() {
            if let half {
                set(half, true); wait(120); set(half, false)
            } else if let pad = pads.first {
                set(pad, true); wait(80); set(pad, false)
            }
        }
        func hold(_ milliseconds: Double) {
            set(half, true); wait(40); set(full, true); wait(milliseconds); set(full, false); wait(20); set(half, false)
        }
        switch self {
        case .lightPress:
            lightPress()
        case .doubleLightPress:
            lightPress(); wait(120); lightPress()
        case .fullClick:
            hold(80)
        case .burst:
            hold(1_600)
        case .swipeLeft, .swipeRight:
            guard pads.count >= 2 else { return [] }
            // Half the strip (at least two pads), from the end the finger starts at: several
            // steps at once (one step is `stepLeft` or `stepRight`).
            let length = max(2, pads.count / 2)
            let order: [LineIndex] = self == .swipeRight ? Array(pads.prefix(length)) : Array(pads.suffix(length).reversed())
            // Each pad is touched 60 ms after the one before and let go 10 ms after the next is
            // touched, as a finger sliding along does.
            set(order[0], true)
            for (previous, pad) in zip(order, order.dropFirst()) {
                wait(60); set(pad, true); wait(10); set(previous, false); time = time - .milliseconds(10)
            }
            wait(60); set(order.last, false)
        case .stepLeft, .stepRight:
            guard pads.count >= 2 else { return [] }
            // From the middle of the strip, one pad over, at a finger's unhurried pace (200 ms a
            // pad): one item in the chooser, one fine step on a scale (zoom ×1.15 on the
            // simulator board). At a swipe's pace the step is coarser (×1.34 at 120 ms a pad).
            let from = pads.count / 2 - (self == .stepRight ? 1 : 0)
            let to = self == .stepRight ? from + 1 : from - 1
            set(pads[from], true); wait(200); set(pads[to], true); wait(10); set(pads[from], false); wait(200); set(pads[to], false)
        case .secondary:
            guard let secondary = board.lines(withRole: .secondary).first else { return [] }
            set(secondary, true); wait(100); set(secondary, false)
        }
        return edges
    }
}
