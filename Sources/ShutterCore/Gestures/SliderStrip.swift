/// Turns the pads' confirmed touch states into touches, taps and swipes.
///
/// The strip follows one finger at a time as a *contact* with a life: it lands, moves (a pad arriving
/// next to it moves it to the mean index of its pads, so N pads give 2N−1 places), lifts (pads
/// leaving with none arriving), and is lifted once its last pad left. A pad leaving is no movement
/// on its own: a finger lifting off two pads lets go of one a few milliseconds before the other,
/// and a pad of a wide contact drops out for a few milliseconds mid-swipe. It is movement only once
/// the rest of the contact stayed down ``secondPressGap`` (the finger rolled off it) or a pad
/// arrived (the finger slid on); a contact that lifts is where it was before it began lifting.
///
/// Touched pads that are not one run of neighbours are separate contacts (a thumb resting on one
/// end, a finger elsewhere), each known by when it landed: the touch follows one of them, never
/// their mean. A followed contact that rests without being a tap or a swipe (a thumb) gives way to
/// a finger landing elsewhere, and one that has not moved yet gives way to another that moves or
/// taps (a thumb and a finger landing together). A contact already on the strip that becomes the touch (the
/// thumb moving once the finger's touch is over) is no landing: it is where and when it landed, and
/// no tap once it has rested past the tap window.
///
/// A touch becomes a swipe once it moved ``swipeThreshold`` (1.5 pads), or 1 pad with its leading
/// edge two pads past where it landed (a wide finger flicking lifts before its mean moves more), or
/// 1 pad, outlived the tap window and rested there 50 ms: a tap that rolls over two neighbouring
/// pads (land on one, lift off the other) moves one pad at most and must stay a tap. Reversals need
/// 0.75 pad (hysteresis) so a finger resting between two pads does not jitter the value.
struct SliderStrip: Sendable {
    /// What one input meant; the rig routes it to the light-press recognizer and the controls.
    enum Action: Hashable, Sendable {
        case none
        /// A finger landed on the empty strip.
        case touchBegan(since: Instant)
        /// The touch outlived the tap window having moved `moved` pads (less than a swipe): it is no tap.
        case notTap(moved: Double)
        /// The touch became a swipe, and why; `deltaPads` is its movement since it landed.
        case swipeBegan(Motion, SwipeStart)
        /// The swipe moved by `deltaPads`.
        case swipeChanged(Motion)
        /// The swipe ended, and how.
        case swipeEnded(Motion, SwipeEnd)
        /// A short touch that moved `moved` pads (less than a swipe): the light press of a one-stage rig.
        case tap(pressedAt: Instant, releasedAt: Instant, moved: Double)
        /// Two taps, the second on a neighbouring pad within the lift grace (fingers do not land on
        /// the same pad twice): known only once the second one lifted without moving on.
        case doubleTap(pressedAt: Instant, firstReleasedAt: Instant, secondPressedAt: Instant, releasedAt: Instant)
        /// A touch that lifted after the tap window without becoming a swipe: neither, ignored.
        case ignored(pressedAt: Instant, releasedAt: Instant, moved: Double)
    }

    /// Why a touch became a swipe, with the figures that decided it.
    enum SwipeStart: Hashable, Sendable {
        /// It moved `pads` (1.5 or more) within `after` of landing.
        case moved(pads: Double, after: Nanoseconds)
        /// It moved `pads` (a pad), outlived the tap window and rested there ``SliderStrip/dwell``.
        case rested(pads: Double)
    }

    /// How a swipe ended.
    enum SwipeEnd: Hashable, Sendable {
        /// The finger left the strip (after the lift grace) at the motion's `padsPerSecond`: a flick
        /// when that is ``SliderStrip/flickPadsPerSecond`` or more.
        case lifted(flick: Bool)
        /// Input ended with the finger down: no flick.
        case inputEnded

        var isFlick: Bool {
            if case .lifted(true) = self { return true }
            return false
        }
    }

    /// A swipe step, in the event's units (strip lengths) and in pads for the controls.
    struct Motion: Hashable, Sendable {
        var position: Double
        var delta: Double
        var velocity: Double
        var deltaPads: Double
        /// The speed in pads per second (positive toward the last pad) over ``speedWindow``, for the
        /// controls' speed curve; at the end of a swipe, the lift speed that makes a flick.
        var padsPerSecond: Double
    }

    /// A tap's finger that landed again on another pad within the lift grace: maybe a second tap.
    private struct SecondContact: Sendable {
        var firstReleasedAt: Instant
        var since: Instant
    }

    /// The finger a touch follows: its pads, and whether it is lifting (where it is and its last
    /// movement are the touch's ``Touch/current`` and ``Touch/currentSince``).
    private struct Contact: Sendable {
        /// Its pads: one run of neighbours, or the runs it split into while a pad drops out.
        var pads: UInt64
        /// Since when pads have been leaving it with none arriving; nil while landed or moving.
        var liftingSince: Instant?
    }

    private struct Touch: Sendable {
        var start: Instant
        var anchor: Double
        var lowest: Double
        var highest: Double
        /// Where the finger is now (mean index of its pads as of its last movement), and since when.
        var current: Double
        var currentSince: Instant
        var contact: Contact
        /// The lowest and highest pad it landed on, and the lowest and highest its contact reached
        /// since: a leading edge two pads past where it landed moved the finger, however wide it is.
        var landedLow: Int
        var landedHigh: Int
        var reachedLow: Int
        var reachedHigh: Int
        var swiping = false
        var tapExpired = false
        /// The last place reported, and the direction of travel (-1, 0, 1) for the hysteresis.
        var reported: Double
        var direction = 0
        /// Set while the touch may be two taps (a slide across a gap, or a second tap that drifted a
        /// pad); cleared once it is a swipe or a third contact lands.
        var secondContact: SecondContact?

        init(pads: UInt64, place: Double, at time: Instant) {
            start = time
            anchor = place
            lowest = place
            highest = place
            current = place
            currentSince = time
            reported = place
            contact = Contact(pads: pads)
            landedLow = pads.trailingZeroBitCount
            landedHigh = 63 - pads.leadingZeroBitCount
            reachedLow = landedLow
            reachedHigh = landedHigh
        }

        /// Notes pad `index` arriving on the contact at `time`: within `landing` of the touch's start
        /// it is where the finger came down (a wide finger lands on its pads a few milliseconds apart).
        mutating func reach(_ index: Int, at time: Instant, landing: Nanoseconds) {
            if time - start < landing, secondContact == nil {
                landedLow = min(landedLow, index)
                landedHigh = max(landedHigh, index)
            }
            reachedLow = min(reachedLow, index)
            reachedHigh = max(reachedHigh, index)
        }

        /// Whether the contact's leading edge went two pads past where it landed: a wide finger
        /// sliding quickly, whose mean moves less before it lifts.
        var advancedTwoPads: Bool { reachedHigh - landedHigh >= 2 || landedLow - reachedLow >= 2 }

        /// When the current contact landed: the tap window of a possible second tap runs from it.
        var contactStart: Instant { secondContact?.since ?? start }

        /// Neither a tap nor a swipe, and not moving: a thumb resting, which gives way to another finger.
        var isResting: Bool { tapExpired && !swiping && contact.liftingSince == nil }

        /// Not moved since it landed, nor a swipe or a possible second tap: another contact that
        /// moves first is the finger (two landing together).
        var hasNotMoved: Bool { !swiping && secondContact == nil && highest == lowest && contact.liftingSince == nil }
    }

    private enum State: Sendable {
        case idle
        case touching(Touch)
        /// Every pad left at `liftedAt`; the same touch resumes if a pad is touched within the grace.
        case lifted(Touch, liftedAt: Instant)
    }

    private var state = State.idle
    private var touched: UInt64 = 0
    /// The pads released since a pad was last touched: at a lift, the pads the finger left.
    private var leaving: UInt64 = 0
    /// By pad, while touched: when its contact landed (a pad arriving next to touched pads joins
    /// their contact). A contact's landing is its earliest pad's. Allocated once.
    private var contactLanded: [Instant]
    /// Recent reported places and their instants, for the velocity (a ring, allocated once).
    private var historyTimes: [Instant]
    private var historyPlaces: [Double]
    private var historyNext = 0
    private var historyCount = 0
    /// A lifted touch a landing within reach resumed, kept while the rest of that landing may
    /// still arrive (``secondPressGap``): pads landing together are confirmed one at a time, and
    /// the whole landing may lie beyond reach though its first pad did not.
    private var resumed: Resumed?

    private struct Resumed: Sendable {
        var touch: Touch
        var liftedAt: Instant
        var landedAt: Instant
        var historyNext: Int
        var historyCount: Int
    }

    let padCount: Int
    let tapMaximum: Nanoseconds
    let liftGrace: Nanoseconds
    let secondPressGap: Nanoseconds
    /// Strip length in pads once the end dead bands are taken off.
    private let span: Double
    /// How far a touch must move to be a swipe: 1.5 pads, or on a strip too short for that (two
    /// pads span one) its length less half a pad; a one-pad strip never swipes.
    let swipeThreshold: Double

    /// How far a touch moves to be a swipe on a strip long enough (``swipeThreshold``).
    static let swipePads = 1.5
    /// A finger landing within the lift grace this close (pads) to where it lifted slid across a
    /// gap between pads and continues the touch; farther away it is another touch.
    static let reach = 1.5
    /// Each end's dead band, in pads: the last quarter pad reads as the end, so the ends are easy to reach.
    static let deadBand = 0.25
    /// How long a finger must rest one pad from where it landed before that alone makes a swipe.
    static let dwell = Nanoseconds.milliseconds(50)
    /// A reversal must move this far (pads) before it counts.
    static let reversalHysteresis = 0.75
    /// Velocity is measured over this span before the latest step.
    static let velocityWindow = Nanoseconds.milliseconds(100)
    /// The controls' speed curve measures over this longer span: a slow finger crossing overlapping
    /// pads moves in half-pad bursts, and only their average says how fast the person moves.
    static let speedWindow = Nanoseconds.milliseconds(300)
    /// Lifting while moving at least this fast (pads per second) is a flick.
    static let flickPadsPerSecond = 15.0
    private static let historyCapacity = 16

    init(padCount: Int, timings: GestureTimings) {
        precondition(padCount <= 64, "a strip has at most 64 pads")
        self.padCount = padCount
        tapMaximum = timings.tapMaximum
        liftGrace = timings.liftGrace
        secondPressGap = timings.secondPressGap
        span = max(Double(padCount - 1) - 2 * Self.deadBand, 0.5)
        swipeThreshold = padCount > 1 ? min(Self.swipePads, Double(padCount - 1) - 0.5) : .infinity
        historyTimes = Array(repeating: .zero, count: Self.historyCapacity)
        historyPlaces = Array(repeating: 0, count: Self.historyCapacity)
        contactLanded = Array(repeating: .zero, count: max(padCount, 1))
    }

    @inline(__always)
    var deadline: Instant? {
        switch state {
        case .idle: return nil
        case .touching(let touch):
            var due: Instant?
            if touch.swiping { due = nil }
            // One nanosecond past the window: a touch exactly as long as the window is still a tap.
            else if !touch.tapExpired { due = touch.start + tapMaximum + Nanoseconds(rawValue: 1) }
            else if Self.restsAPadAway(touch) {
                due = max(touch.currentSince + Self.dwell, touch.contactStart + tapMaximum + Nanoseconds(rawValue: 1))
            }
            // A pad that left while the rest of the contact stays: movement once it stayed that long.
            if let lifting = touch.contact.liftingSince {
                let moved = lifting + secondPressGap
                due = due.map { min($0, moved) } ?? moved
            }
            return due
        case .lifted: return graceDeadline
        }
    }

    /// The lift grace only: what must still run when input ends.
    @inline(__always)
    var graceDeadline: Instant? {
        // One nanosecond past the grace: a finger landing exactly at its end is still within it.
        if case .lifted(_, let liftedAt) = state { return liftedAt + liftGrace + Nanoseconds(rawValue: 1) }
        return nil
    }

    var isTouching: Bool {
        if case .idle = state { return false }
        return true
    }

    /// Whether touching `pad` at `since` begins a new touch rather than continuing the lifted one.
    ///
    /// The grace is for a finger sliding on to the next pad across a gap, and for a dropout: a
    /// landing within ``reach`` of where the finger lifted continues the touch. Farther away it is
    /// another touch (a re-grip, a tap elsewhere): the lifted touch ends first (the caller ends it
    /// with ``fire(at:)``, a swipe with its flick), and the jump is no movement. Coming down again on
    /// the pad it left, at least ``secondPressGap`` after lifting, is a second tap; sooner, it is the
    /// same press (a dropout). A double tap cannot happen inside a swipe that has moved: there the
    /// finger sliding back onto the pad it just left continues the swipe.
    func landingIsANewTouch(_ pad: Int, at since: Instant) -> Bool {
        let bit: UInt64 = 1 << UInt64(pad)
        if case .touching(let touch) = state, let resumed, since - resumed.landedAt < secondPressGap,
           touch.swiping == resumed.touch.swiping {
            // More of the landing that resumed the touch: beyond reach as a whole, it is another
            // touch (unless the landing already made the touch a swipe, which has been reported).
            let landing = Self.runs(in: touched | bit, meeting: touch.contact.pads)
            return landing & bit != 0 && abs(Self.mean(landing) - resumed.touch.current) > Self.reach
        }
        guard case .lifted(let touch, let liftedAt) = state else { return false }
        if abs(Self.mean(Self.run(of: pad, in: touched | bit)) - touch.current) > Self.reach { return true }
        return !touch.swiping && leaving & bit != 0 && since - liftedAt >= secondPressGap
    }

    /// The place along the strip in [0, 1] for a mean pad index.
    func position(_ place: Double) -> Double {
        min(max((place - Self.deadBand) / span, 0), 1)
    }

    /// A pad's confirmed change.
    mutating func pad(_ index: Int, active: Bool, since: Instant) -> Action {
        let bit: UInt64 = 1 << UInt64(index)
        if active {
            guard touched & bit == 0 else { return .none }
            var landed = since
            if index > 0, touched & (bit >> 1) != 0 { landed = min(landed, contactLanded[index - 1]) }
            if index + 1 < padCount, touched & (bit << 1) != 0 { landed = min(landed, contactLanded[index + 1]) }
            contactLanded[index] = landed
            touched |= bit
            leaving = 0
        } else {
            guard touched & bit != 0 else { return .none }
            touched &= ~bit
            leaving |= bit
        }
        switch state {
        case .idle:
            // A contact left over from an earlier touch (a thumb still resting) starts nothing by lifting.
            guard active else { return .none }
            return begin(on: index, at: since)
        case .touching(var touch):
            return change(index, active: active, since: since, touch: &touch)
        case .lifted(var touch, let liftedAt):
            guard active else { return .none }
            resumed = Resumed(touch: touch, liftedAt: liftedAt, landedAt: since,
                              historyNext: historyNext, historyCount: historyCount)
            // Back within the grace and within reach (the rig ends the lifted touch first otherwise).
            if !touch.swiping, touch.secondContact == nil, liftedAt - touch.start <= tapMaximum,
               since - liftedAt >= secondPressGap {
                // A tap's finger lifted and landing on another pad: a slide across a gap, or a second
                // tap that drifted a pad. It is a second tap unless the finger moves on or stays.
                touch.secondContact = SecondContact(firstReleasedAt: liftedAt, since: since)
            } else {
                touch.secondContact = nil
            }
            let pads = Self.run(of: index, in: touched)
            touch.contact = Contact(pads: pads)
            touch.reach(index, at: since, landing: secondPressGap)
            let action = move(&touch, to: Self.mean(pads), at: since)
            state = .touching(touch)
            return action
        }
    }

    /// A new touch on the contact pad `index` arrived on at `since`. Pads of that contact touched
    /// ``secondPressGap`` or more before are a contact already on the strip (a thumb that rested
    /// while another touch went on): the touch begins where and when that contact landed, and the
    /// pad arriving is its movement.
    private mutating func begin(on index: Int, at since: Instant) -> Action {
        let pads = Self.run(of: index, in: touched)
        let earlier = pads & ~(1 << UInt64(index))
        let landed = landing(of: earlier)
        guard earlier != 0, since - landed >= secondPressGap else { return begin(pads, at: since) }
        resumed = nil
        var touch = Touch(pads: earlier, place: Self.mean(earlier), at: landed)
        // Rested past the tap window: no tap, and no touch begins now (it began long ago).
        touch.tapExpired = since - landed > tapMaximum
        let action = moveOn(touch, landed: landed, to: pads, arrived: index, at: since)
        return action != .none || touch.tapExpired ? action : .touchBegan(since: landed)
    }

    /// The touch is now `touch`, on a contact that landed at `landed` and was still since: pad
    /// `index` arriving at `since` moves it onto `pads`.
    private mutating func moveOn(_ touch: Touch, landed: Instant, to pads: UInt64, arrived index: Int,
                                 at since: Instant) -> Action {
        var touch = touch
        historyCount = 0
        record(touch.current, at: landed)
        follow(pads, arrived: index, at: since, touch: &touch)
        let action = move(&touch, to: Self.mean(pads), at: since)
        state = .touching(touch)
        return action
    }

    /// When the contact of `pads` landed: its earliest pad's landing.
    private func landing(of pads: UInt64) -> Instant {
        var earliest = Instant(rawValue: .max)
        var remaining = pads
        while remaining != 0 {
            earliest = min(earliest, contactLanded[remaining.trailingZeroBitCount])
            remaining &= remaining - 1
        }
        return earliest
    }

    /// The touch follows the contact of `pads`, pad `index` having arrived on it at `since`.
    private func follow(_ pads: UInt64, arrived index: Int, at since: Instant, touch: inout Touch) {
        touch.contact.pads = pads
        touch.contact.liftingSince = nil
        touch.reach(index, at: since, landing: secondPressGap)
    }

    /// A new touch on the contact of `pads`, landed at `since`.
    private mutating func begin(_ pads: UInt64, at since: Instant) -> Action {
        let place = Self.mean(pads)
        resumed = nil
        state = .touching(Touch(pads: pads, place: place, at: since))
        historyCount = 0
        record(place, at: since)
        return .touchBegan(since: since)
    }

    /// A change of pad `index` (already in ``touched``) while a finger is down.
    ///
    /// A pad arriving next to the followed contact moves it (or, within its landing, is part of
    /// where it landed); a pad leaving it starts or continues its lift, which ``fire(at:)`` turns
    /// into movement if the rest of the contact stays. A finger landing apart from it is another
    /// contact: it moves nothing, unless the followed one is resting (a thumb), when it is a new
    /// touch, or has not moved yet while the other one moves, when the touch follows that one.
    private mutating func change(_ index: Int, active: Bool, since: Instant, touch: inout Touch) -> Action {
        let bit: UInt64 = 1 << UInt64(index)
        if active {
            let joined = Self.runs(in: touched, meeting: touch.contact.pads)
            guard joined & bit != 0 else {
                if touch.isResting { return begin(on: index, at: since) }
                let other = Self.run(of: index, in: touched)
                let earlier = other & ~bit
                if touch.hasNotMoved, earlier != 0, since - landing(of: earlier) >= secondPressGap {
                    // Two contacts landed together and this one moves first: it is the finger. The
                    // touch (begun when the first of them landed) follows it from where it landed.
                    var finger = Touch(pads: earlier, place: Self.mean(earlier), at: touch.start)
                    finger.tapExpired = touch.tapExpired
                    return moveOn(finger, landed: landing(of: earlier), to: other, arrived: index, at: since)
                }
                state = .touching(touch)
                return .none
            }
            follow(joined, arrived: index, at: since, touch: &touch)
            let place = Self.mean(joined)
            if swipeThreshold < 1, !touch.swiping, touch.secondContact == nil, since - touch.start < secondPressGap {
                // Still landing: where the finger came down, not movement. Only on a strip too short
                // for a 1.5-pad threshold, where half a pad is a swipe: elsewhere a quick flick
                // reaches the next pad as soon, and a finger landing on two pads moves less than a swipe.
                touch.anchor = place
                touch.lowest = place
                touch.highest = place
                touch.current = place
                touch.reported = place
                historyCount = 0
                record(place, at: touch.start)
                state = .touching(touch)
                return .none
            }
            let action = move(&touch, to: place, at: since)
            state = .touching(touch)
            return action
        }
        guard touch.contact.pads & bit != 0 else {
            // Another contact's pad. Two contacts landed together and this one lifted off whole
            // within the tap window, the followed one unmoved: it was the finger, and it tapped.
            let landed = contactLanded[index]
            if touch.hasNotMoved, !touch.tapExpired, Self.run(of: index, in: touched | bit) == bit,
               since - landed <= tapMaximum {
                state = .lifted(Touch(pads: bit, place: Double(index), at: landed), liftedAt: since)
                return .none
            }
            state = .touching(touch)
            return .none
        }
        let remaining = Self.runs(in: touched, meeting: touch.contact.pads & ~bit)
        guard remaining != 0 else {
            // The followed finger left the strip, where it was before it began lifting; another
            // contact staying on the strip is not this touch.
            touch.contact.pads = 0
            touch.contact.liftingSince = nil
            state = .lifted(touch, liftedAt: since)
            return .none
        }
        touch.contact.pads = remaining
        touch.contact.liftingSince = since
        state = .touching(touch)
        return .none
    }

    /// The run of neighbouring pads in `mask` that contains pad `index`.
    private static func run(of index: Int, in mask: UInt64) -> UInt64 {
        var low = index, high = index
        while low > 0, mask & (1 << UInt64(low - 1)) != 0 { low -= 1 }
        while high < 63, mask & (1 << UInt64(high + 1)) != 0 { high += 1 }
        let upTo: UInt64 = high == 63 ? ~0 : (1 << UInt64(high + 1)) - 1
        return upTo & ~((1 << UInt64(low)) - 1)
    }

    /// The runs of `mask` that contain a pad of `seeds`.
    private static func runs(in mask: UInt64, meeting seeds: UInt64) -> UInt64 {
        var result: UInt64 = 0
        var remaining = seeds & mask
        while remaining != 0 {
            let run = run(of: remaining.trailingZeroBitCount, in: mask)
            result |= run
            remaining &= ~run
        }
        return result
    }

    /// The mean index of the pads in `mask`.
    private static func mean(_ mask: UInt64) -> Double {
        var sum = 0
        var remaining = mask
        while remaining != 0 {
            sum += remaining.trailingZeroBitCount
            remaining &= remaining - 1
        }
        return Double(sum) / Double(max(mask.nonzeroBitCount, 1))
    }

    private mutating func move(_ touch: inout Touch, to place: Double, at time: Instant) -> Action {
        touch.lowest = min(touch.lowest, place)
        touch.highest = max(touch.highest, place)
        if place != touch.current { touch.currentSince = time }
        touch.current = place
        if !touch.swiping {
            // Every place before the swipe counts for its velocity: a flick after a rest is a flick.
            record(place, at: time)
            return startSwipeIfMoved(&touch, place: place, at: time) ?? .none
        }
        let change = place - touch.reported
        let accepted: Bool
        switch touch.direction {
        case 1: accepted = change > 0 || change <= -Self.reversalHysteresis
        case -1: accepted = change < 0 || change >= Self.reversalHysteresis
        default: accepted = change != 0
        }
        guard accepted else { return .none }
        touch.direction = change > 0 ? 1 : -1
        let previous = touch.reported
        touch.reported = place
        record(place, at: time)
        return .swipeChanged(Motion(position: position(place), delta: position(place) - position(previous),
                                    velocity: velocity(at: time, place: place) / span, deltaPads: change,
                                    padsPerSecond: velocity(at: time, place: place, window: Self.speedWindow)))
    }

    private mutating func startSwipeIfMoved(_ touch: inout Touch, place: Double, at time: Instant) -> Action? {
        let range = touch.highest - touch.lowest
        // One pad of movement is a swipe only once it outlived the tap window and the finger rested
        // at its new place: a tap rolling over two pads moves one pad too.
        guard range >= swipeThreshold || (touch.advancedTwoPads && range >= 1)
            || (Self.restsAPadAway(touch) && time - touch.contactStart > tapMaximum && time - touch.currentSince >= Self.dwell)
        else { return nil }
        let reason: SwipeStart = range >= swipeThreshold || touch.advancedTwoPads ? .moved(pads: range, after: time - touch.start) : .rested(pads: range)
        touch.swiping = true
        touch.secondContact = nil
        touch.reported = place
        touch.direction = place > touch.anchor ? 1 : (place < touch.anchor ? -1 : 0)
        // Velocity as of when the finger reached this place, not when the tap window ran out.
        record(place, at: touch.currentSince)
        return .swipeBegan(Motion(position: position(place), delta: position(place) - position(touch.anchor),
                                  velocity: velocity(at: touch.currentSince, place: place) / span,
                                  deltaPads: place - touch.anchor,
                                  padsPerSecond: velocity(at: touch.currentSince, place: place, window: Self.speedWindow)),
                           reason)
    }

    /// Whether the finger is a pad or more from where it landed (a swipe once it rests there).
    private static func restsAPadAway(_ touch: Touch) -> Bool {
        abs(touch.current - touch.anchor) >= 1
    }

    /// Takes back the landing that resumed a lifted touch (``landingIsANewTouch(_:at:)`` found the
    /// whole landing beyond reach): the touch is lifted again as it was, for ``fire(at:)`` to end.
    /// Its pads stay touched, so the next pad begins a new touch on all of them.
    mutating func undoResumption(at since: Instant) {
        guard case .touching = state, let resumed, since - resumed.landedAt < secondPressGap else { return }
        self.resumed = nil
        state = .lifted(resumed.touch, liftedAt: resumed.liftedAt)
        historyNext = resumed.historyNext
        historyCount = resumed.historyCount
    }

    /// The tap window, the rest or the lift grace ran out.
    mutating func fire(at now: Instant) -> Action {
        switch state {
        case .idle:
            return .none
        case .touching(var touch):
            if let lifting = touch.contact.liftingSince, lifting + secondPressGap <= now {
                // The rest of the contact stayed down: the finger rolled off that pad, when it left.
                touch.contact.liftingSince = nil
                let action = move(&touch, to: Self.mean(touch.contact.pads), at: lifting)
                state = .touching(touch)
                return action
            }
            let wasTapExpired = touch.tapExpired
            touch.tapExpired = true
            let action = startSwipeIfMoved(&touch, place: touch.current, at: now)
            state = .touching(touch)
            return action ?? (wasTapExpired ? .none : .notTap(moved: touch.highest - touch.lowest))
        case .lifted(let touch, let liftedAt):
            state = .idle
            if touch.swiping {
                let speed = velocity(at: liftedAt, place: touch.reported)
                return .swipeEnded(Motion(position: position(touch.reported), delta: 0, velocity: speed / span,
                                          deltaPads: 0, padsPerSecond: speed),
                                   .lifted(flick: abs(speed) >= Self.flickPadsPerSecond))
            }
            if let second = touch.secondContact {
                if liftedAt - second.since <= tapMaximum {
                    return .doubleTap(pressedAt: touch.start, firstReleasedAt: second.firstReleasedAt,
                                      secondPressedAt: second.since, releasedAt: liftedAt)
                }
                // A tap, then a longer touch that did not become a swipe.
                return .tap(pressedAt: touch.start, releasedAt: second.firstReleasedAt, moved: touch.highest - touch.lowest)
            }
            if liftedAt - touch.start <= tapMaximum {
                return .tap(pressedAt: touch.start, releasedAt: liftedAt, moved: touch.highest - touch.lowest)
            }
            return .ignored(pressedAt: touch.start, releasedAt: liftedAt, moved: touch.highest - touch.lowest)
        }
    }

    /// Input ended with a finger on the strip: a swipe ends where it is, without a flick.
    mutating func finish(at now: Instant) -> Action {
        defer { state = .idle }
        switch state {
        case .idle:
            return .none
        case .touching(let touch), .lifted(let touch, _):
            guard touch.swiping else { return .none }
            return .swipeEnded(Motion(position: position(touch.reported), delta: 0, velocity: 0, deltaPads: 0, padsPerSecond: 0), .inputEnded)
        }
    }

    /// Keeps `place` at `time` for the velocity; a place equal to the newest kept one keeps its
    /// earlier instant (since when the finger has been there).
    private mutating func record(_ place: Double, at time: Instant) {
        if historyCount > 0 {
            let newest = (historyNext - 1 + Self.historyCapacity) % Self.historyCapacity
            if historyPlaces[newest] == place { return }
        }
        historyTimes[historyNext] = time
        historyPlaces[historyNext] = place
        historyNext = (historyNext + 1) % Self.historyCapacity
        historyCount = min(historyCount + 1, Self.historyCapacity)
    }

    /// Pads per second over about the last ``velocityWindow``: from the newest sample at least that old
    /// (or the oldest kept) to `place` at `time`.
    ///
    /// A finger that rested at the reference place left it no earlier than one window before it
    /// reached the next sample: the rest is not part of the movement (a flick after a one-second
    /// rest is as quick as one without it).
    private func velocity(at time: Instant, place: Double, window: Nanoseconds = velocityWindow) -> Double {
        guard historyCount > 0 else { return 0 }
        let limit = time - window
        let oldest = (historyNext - historyCount + Self.historyCapacity) % Self.historyCapacity
        var reference = oldest
        var next: Int? = historyCount > 1 ? (oldest + 1) % Self.historyCapacity : nil
        for offset in 0..<historyCount {
            let slot = (historyNext - 1 - offset + 2 * Self.historyCapacity) % Self.historyCapacity
            if historyTimes[slot] <= limit {
                reference = slot
                next = offset == 0 ? nil : (slot + 1) % Self.historyCapacity
                break
            }
        }
        let left = max(historyTimes[reference], (next.map { historyTimes[$0] } ?? time) - window)
        let elapsed = (time - left).rawValue
        guard elapsed > 0 else { return 0 }
        return (place - historyPlaces[reference]) / (Double(elapsed) / 1e9)
    }
}
