/// The two stages of the shutter button, `half` and `full`, and the rule that spans them: which
/// `full` presses are clicks.
///
/// A two-stage button cannot close its full stage without the first, so a `full` press while `half`
/// is released is noise. `half` may debounce longer than `full` and confirm after it: a `full` press
/// confirmed while `half` is still confirming a press it is held in is a click, and that `half`
/// press, when it confirms, belongs to the click (no light press, no prepare). If `half`'s change is
/// dropped as a glitch instead, nothing is left waiting for it. With no debounce, both stages may
/// close at one instant and be fed `full` first: a `full` press taken as noise becomes a click when a
/// `half` press that began no later confirms, so the board's line order decides nothing. On a rig
/// without `half`, `full` is a one-stage button and every press is a click.
struct TwoStageButton: Sendable {
    /// What a step of the button means; the rig turns it into `capture`, `burst` and `prepare`
    /// events and light presses.
    enum Action: Hashable, Sendable {
        /// What `half` did.
        case half(HalfButton.Action)
        /// What `full` did: a click's capture began (or was refused), a burst shot, a release.
        case full(CaptureButton.Action)
        /// `full` alone on a two-stage button: ignored with its release. `halfMayFollow` when `full`
        /// has no window, so a `half` press at this same instant may still come and make it a click.
        case fullNoise(halfMayFollow: Bool)
        /// `half` pressed no later than a `full` press taken as noise (both at one instant, fed
        /// `full` first): it was a click after all, and `capture` is what its press did.
        case clickAfterHalf(capture: CaptureButton.Action)
    }

    var half: HalfButton
    var full: CaptureButton
    let hasHalf: Bool
    /// A click confirmed while `half` was still confirming: its `half` press, when it confirms, is
    /// the click's. Cleared when that change of `half` confirms or is dropped.
    private var clickAwaitsHalf = false
    /// The first edge of a `full` press taken as noise, while it is down: a `half` press whose first
    /// edge came no later still makes it a click (both stages at one instant, fed `full` first).
    private var noiseSince: Instant?

    init(timings: GestureTimings, hasHalf: Bool) {
        half = HalfButton(timings: timings)
        full = CaptureButton(action: .primary, timings: timings, burst: true)
        self.hasHalf = hasHalf
    }

    /// A confirmed press of `full`, whose first edge was at `since`.
    ///
    /// - Parameters:
    ///   - halfLine: `half`'s line now: raw active and still being confirmed (its debounce is
    ///     longer, or it bounced later) means the person is holding it.
    ///   - fullWindowIsZero: `full` passes edges straight through, so `half` may still come at this instant.
    ///   - available: whether capture can take a photo now.
    mutating func fullPressed(since: Instant, halfLine: LineView, fullWindowIsZero: Bool, available: Bool) -> Action {
        noiseSince = nil
        if hasHalf {
            if half.isPressed {
                half.fullClicked()
            } else if halfLine.pendingSince != nil && halfLine.rawLevel {
                clickAwaitsHalf = true
            } else {
                full.ignore()
                noiseSince = since
                return .fullNoise(halfMayFollow: fullWindowIsZero)
            }
        }
        return .full(full.press(since: since, available: available))
    }

    /// `half`'s press confirmed, whose first edge was at `since`: `.half(.pressed)`, or
    /// `.clickAfterHalf` when it makes a `full` press taken as noise a click (it began no earlier
    /// than `half`: both at one instant, the order the lines were fed in must not decide).
    mutating func halfPressed(since: Instant, available: Bool) -> Action {
        // `full` may confirm first (shorter debounce, less bounce): it was a click all the same, and
        // a `full` still down (even as noise) makes this press no light press.
        let pressed = half.press(since: since, inClick: clickAwaitsHalf || full.isDown)
        clickAwaitsHalf = false
        guard let fullSince = noiseSince, full.isDown, since <= fullSince else { return .half(pressed) }
        noiseSince = nil
        return .clickAfterHalf(capture: full.press(since: fullSince, available: available))
    }

    /// `full`'s release confirmed: a press taken as noise is over.
    mutating func fullReleased(since releasedAt: Instant) -> Action {
        noiseSince = nil
        return .full(full.release(since: releasedAt))
    }

    /// `half`'s release confirmed.
    mutating func halfReleased(since releasedAt: Instant) -> Action {
        clickAwaitsHalf = false
        return .half(half.release(since: releasedAt))
    }

    /// `half`'s line stepped without a confirmed change: with nothing left pending there (the
    /// change was dropped, or the levels were read back), no `half` press is coming for a click.
    mutating func halfUnconfirmed(_ halfLine: LineView) {
        if halfLine.pendingSince == nil { clickAwaitsHalf = false }
    }
}

/// One line as a machine that spans lines sees it: its confirmed level, where the raw line is,
/// and since when a change has been pending.
struct LineView: Hashable, Sendable {
    /// The confirmed level.
    var level: Bool
    /// The raw level last seen: while a change is pending, where the line is now.
    var rawLevel: Bool
    /// The first edge of a change still being confirmed or dropped.
    var pendingSince: Instant?

    @inline(__always)
    init(_ debouncer: LineDebouncer) {
        level = debouncer.level
        rawLevel = debouncer.rawLevel
        pendingSince = debouncer.pendingSince
    }

    /// A line that is not on the board: released, nothing pending.
    static let absent = LineView(level: false, rawLevel: false, pendingSince: nil)

    private init(level: Bool, rawLevel: Bool, pendingSince: Instant?) {
        self.level = level
        self.rawLevel = rawLevel
        self.pendingSince = pendingSince
    }
}
