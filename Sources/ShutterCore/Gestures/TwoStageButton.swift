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
    /// What a confirmed `full` press is.
    enum FullPress: Hashable, Sendable {
        /// A click: capture begins.
        case click
        /// `full` alone on a two-stage button: ignored with its release.
        case noise
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

    /// A confirmed press of `full`.
    ///
    /// - Parameter halfConfirming: `half` is raw active and still being confirmed (its debounce
    ///   is longer, or it bounced later): the person is holding it.
    /// - Returns: whether the press is a click; noise is already set to be ignored with its release.
    mutating func fullPressed(since: Instant, halfConfirming: Bool) -> FullPress {
        noiseSince = nil
        guard hasHalf else { return .click }
        if half.isPressed {
            half.fullClicked()
            return .click
        }
        if halfConfirming {
            clickAwaitsHalf = true
            return .click
        }
        full.ignore()
        noiseSince = since
        return .noise
    }

    /// `half`'s press confirmed, whose first edge was at `since`.
    ///
    /// - Returns: the first edge of a `full` press taken as noise that this press makes a click
    ///   (it began no earlier than `half`: both at one instant, the order the lines were fed in
    ///   must not decide); the owner begins its capture now. Nil otherwise.
    mutating func halfPressed(since: Instant) -> Instant? {
        half.press(since: since)
        // `full` may confirm first (shorter debounce, less bounce): it was a click all the same, and
        // a `full` still down (even as noise) makes this press no light press.
        if clickAwaitsHalf || full.isDown { half.fullClicked() }
        clickAwaitsHalf = false
        guard let fullSince = noiseSince, full.isDown, since <= fullSince else { return nil }
        noiseSince = nil
        return fullSince
    }

    /// `full`'s release confirmed: a press taken as noise is over.
    mutating func fullReleased() {
        noiseSince = nil
    }

    /// `half`'s release confirmed.
    mutating func halfReleased(since releasedAt: Instant) -> (prepare: HalfButton.Action, release: HalfButton.Release) {
        clickAwaitsHalf = false
        return half.release(since: releasedAt)
    }

    /// `half`'s pending change did not hold for its window: no `half` press is coming for a click.
    mutating func halfDropped() {
        clickAwaitsHalf = false
    }
}
