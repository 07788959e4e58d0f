#if canImport(Glibc)
import Glibc
#endif
import ShutterCore

/// How far an exposure-bias change has come through the camera's auto exposure, judged from the
/// frames' own metadata, and the presses waiting for it to settle.
///
/// A camera's auto exposure does not jump to a new bias: the Raspberry Pi AGC moves its total
/// exposure a fifth of the way each frame (`speed` 0.2 in agc_channel.cpp), so a change shows
/// over about ten frames, after the sensor's own delay of two. A press soon after a change would
/// take a frame exposed part of the way. So a press made after the change waits here until a
/// frame shows the change settled, or until `timeout` after the newest change has passed.
///
/// Settled means the frame's total exposure (ExposureTime × AnalogueGain × DigitalGain), measured
/// against the frame before the change, is within ``tolerance`` of the bias asked for, or stopped
/// moving after it moved (auto exposure at a limit cannot reach it). Only frames whose requests
/// were queued after the newest change count (``FrameExposure/answersNewestBias``): the requests
/// queued earlier show the bias before. A camera that reports no exposure (V4L2, vimc) is never
/// waited for. The measure assumes the scene's light holds while the bias settles.
///
/// A value fed the bias changes and the frames, as ``AutofocusSequence`` is; the capture service
/// submits the presses it returns.
public struct ExposureSettling: Hashable, Sendable {
    /// How a photo's exposure stood against the bias asked for, as the `photo` event reports it.
    public enum Outcome: String, Hashable, Sendable {
        /// No change was under way for the frame, or the frame showed it settled.
        case settled
        /// The change had not settled within the board's `exposureSettleMs`; the frame was taken anyway.
        case timeout
        /// The camera reports no exposure with its frames.
        case none
    }

    /// A press waiting for the exposure, with how its focus ended when autofocus held it first.
    public struct Held: Hashable, Sendable {
        public var shot: Shot
        public var focus: ShotFocus?

        /// The instant of the shot held.
        public var pressedAt: Instant { shot.pressedAt }
    }

    /// How close to the bias asked for counts as settled, in EV: the AGC stops moving within 2%
    /// of its target (`stable_region`), 0.03 EV; the rest allows for its metering from frame to frame.
    public static let tolerance = 0.05
    /// Two frames whose totals differ by less than this (EV) did not move.
    static let steady = 0.005

    /// A frame's total exposure (µs × gain) and the bias it belongs to.
    struct Reference: Hashable, Sendable {
        var total: Double
        var bias: Double
    }

    /// A change under way (or settled) since the last one.
    struct Change: Hashable, Sendable {
        /// When the first change of this run was asked for: presses before it are not held.
        var at: Instant
        /// `timeout` after the newest change: a held press takes its frame from then on.
        var deadline: Instant
        /// A frame answering the first change of the run has come (the baseline is fixed).
        var answered = false
        /// The total exposure of the previous frame answering the newest change.
        var previous: Double?
        /// The first frame that showed the change settled.
        var settledAt: Instant?
    }

    /// How long a press waits for the exposure after the newest change (the board's `exposureSettleMs`); zero never waits.
    public let timeout: Nanoseconds
    /// The bias asked for last, in EV.
    public private(set) var bias = 0.0
    /// A frame's total exposure known to belong to `bias`: the frame before the change under way,
    /// else the newest frame while no change is.
    private var reference: Reference?
    private var change: Change?
    /// The newest frame's total exposure; nil while the camera reports none.
    private var newestTotal: Double?
    /// Presses waiting for the exposure to settle, oldest first.
    public private(set) var held: [Held] = []

    public init(timeout: Nanoseconds) {
        self.timeout = timeout
    }

    /// The exposure bias asked of the camera is `ev` from `now` on.
    public mutating func biasChanged(to ev: Double, at now: Instant) {
        let before = bias
        bias = ev
        guard ev != before, timeout > .zero, let newestTotal else {
            // Nothing to measure against (no frame yet, or no exposure reported), or nothing to wait for.
            if newestTotal == nil { change = nil; reference = nil }
            return
        }
        if var running = change, running.settledAt == nil {
            running.deadline = now + timeout
            running.previous = nil
            change = running
        } else {
            reference = Reference(total: newestTotal, bias: before)
            change = Change(at: now, deadline: now + timeout)
        }
    }

    /// Whether `shot`, handled at `now`, waits for the exposure: its instant came after a change
    /// that had not settled by then. It is held here until ``frame(_:at:now:)`` serves it.
    /// `focus` is how its focus ended, when autofocus held it first.
    public mutating func holdsPress(_ shot: Shot, now: Instant, focus: ShotFocus? = nil) -> Bool {
        let pressedAt = shot.pressedAt
        guard let change, pressedAt >= change.at else { return false }
        if let settledAt = change.settledAt {
            if pressedAt >= settledAt { return false }
        } else if now >= change.deadline {
            return false
        }
        held.append(Held(shot: shot, focus: focus))
        return true
    }

    /// Takes in the frame that began at `frameAt` with `exposure`; returns the held presses it
    /// serves (handled at `now`), with the outcome, or `nil` when they wait on.
    public mutating func frame(_ exposure: FrameExposure, at frameAt: Instant, now: Instant) -> (presses: [Held], outcome: Outcome)? {
        guard let total = exposure.totalExposure else {
            newestTotal = nil
            change = nil
            reference = nil
            return serveAll(.none)
        }
        newestTotal = total
        guard var running = change else {
            reference = Reference(total: total, bias: bias)
            return serveAll(.settled)
        }
        if running.settledAt == nil {
            if exposure.answersNewestBias == false {
                // Queued before the newest change: before the run's first, still the old bias.
                if !running.answered, let old = reference?.bias { reference = Reference(total: total, bias: old) }
            } else if let reference {
                running.answered = true
                let moved = Self.stops(total, reference.total)
                let stopped = running.previous.map { abs(Self.stops(total, $0)) < Self.steady } ?? false
                if abs(reference.bias + moved - bias) <= Self.tolerance || (stopped && abs(moved) > Self.tolerance) {
                    running.settledAt = frameAt
                }
                running.previous = total
            }
            change = running
        }
        guard !held.isEmpty else { return nil }
        if let settledAt = running.settledAt, frameAt >= settledAt { return serveAll(.settled) }
        if now >= running.deadline || frameAt >= running.deadline { return serveAll(.timeout) }
        return nil
    }

    /// How the frame that began at `frameAt` stood, for a press served without waiting.
    public func outcome(ofFrameAt frameAt: Instant, exposure: FrameExposure) -> Outcome {
        guard exposure.totalExposure != nil, reference != nil else { return .none }
        guard let change, frameAt >= change.at else { return .settled }
        if let settledAt = change.settledAt, frameAt >= settledAt { return .settled }
        return .timeout
    }

    /// The bias `exposure` shows, in EV: the bias of the reference frame plus the stops between
    /// the two; nil when the camera reports no exposure.
    public func biasReached(by exposure: FrameExposure) -> Double? {
        guard let total = exposure.totalExposure, let reference else { return nil }
        return reference.bias + Self.stops(total, reference.total)
    }

    /// Lets go of every held shot (the camera is going).
    public mutating func releaseHeld() -> [Shot] {
        defer { held.removeAll() }
        return held.map(\.shot)
    }

    private mutating func serveAll(_ outcome: Outcome) -> (presses: [Held], outcome: Outcome)? {
        guard !held.isEmpty else { return nil }
        defer { held.removeAll() }
        return (held, outcome)
    }

    /// The stops from `reference` to `total`.
    private static func stops(_ total: Double, _ reference: Double) -> Double {
        log2(total / reference)
    }
}
