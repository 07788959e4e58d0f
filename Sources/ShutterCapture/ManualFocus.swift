import ShutterCore

/// Who drives a lens that focuses itself, as a value: the board's `camera.autofocus`, or a
/// `lensPosition` slider by hand from the moment a person moves it until the board's
/// `camera.manualFocusEnds` gesture gives the lens back.
///
/// A slider's starting value (the board's `initial`, or the value saved from the last run) moves
/// the lens only under `autofocus: manual`: under `continuous` or `onPrepare` it would switch the
/// autofocus off before anyone touched the slider. ``CaptureService`` feeds the inputs and
/// performs the actions; with the lens by hand it starts no autofocus cycle.
public struct ManualFocus: Hashable, Sendable {
    /// What happened to the slider or the button.
    public enum Input: Hashable, Sendable {
        /// The slider's value at start or reload (the board's `initial`, or the saved value).
        case startingValue(control: String)
        /// A person moved the slider (a swipe, `shutter ctl set`, HTTP, MQTT).
        case moved(control: String)
        /// A half press held long enough to prepare (`prepare` began).
        case halfPress
        /// A double light press; `currentControl` is the control current when it came.
        case doubleLightPress(currentControl: String?)
    }

    /// What the camera must do.
    public enum Action: Hashable, Sendable {
        /// Nothing: the lens stays with whoever drives it.
        case none
        /// Move the lens to the slider's value (`AfMode` manual, `LensPosition`).
        case moveLens
        /// Move the lens to the slider's value, taking it from the board's autofocus: say so.
        case takeLens(FocusModeChange)
        /// Put the camera back in the board's autofocus mode: say so.
        case giveBack(FocusModeChange)
    }

    /// The board's `camera.autofocus`.
    public let boardMode: AutofocusMode
    /// The board's `camera.manualFocusEnds`.
    public let endsOn: ManualFocusEnd
    /// The slider that holds the lens, while one does (never under `autofocus: manual`, where
    /// the slider always drives it).
    public private(set) var heldBy: String?

    public init(boardMode: AutofocusMode, endsOn: ManualFocusEnd) {
        self.boardMode = boardMode
        self.endsOn = endsOn
    }

    /// Whether a slider holds the lens: no autofocus cycle may move it.
    public var isByHand: Bool { heldBy != nil }

    /// The action for `input` at `now`.
    public mutating func input(_ input: Input, at now: Instant) -> Action {
        switch input {
        case .startingValue:
            // Under autofocus the starting value waits for a person: the lens is autofocus's.
            return boardMode == .manual || isByHand ? .moveLens : .none
        case .moved(let control):
            guard boardMode != .manual, heldBy == nil else { return .moveLens }
            heldBy = control
            return .takeLens(FocusModeChange(at: now, mode: .manual, boardMode: boardMode, cause: .sliderMoved(control: control), until: endsOn))
        case .halfPress:
            guard endsOn == .prepare, isByHand else { return .none }
            heldBy = nil
            return .giveBack(FocusModeChange(at: now, mode: boardMode, boardMode: boardMode, cause: .halfPress, until: nil))
        case .doubleLightPress(let current):
            guard endsOn == .doubleLightPress, let control = heldBy, current == control else { return .none }
            heldBy = nil
            return .giveBack(FocusModeChange(at: now, mode: boardMode, boardMode: boardMode, cause: .doubleLightPress(control: control), until: nil))
        }
    }
}

/// The lens changed hands: a slider took it from the board's autofocus, or gave it back.
public struct FocusModeChange: Hashable, Sendable {
    /// Why it changed hands.
    public enum Cause: Hashable, Sendable {
        /// A person moved the `lensPosition` slider `control`.
        case sliderMoved(control: String)
        /// A half press prepared.
        case halfPress
        /// A double light press on the slider `control`.
        case doubleLightPress(control: String)
    }

    public var at: Instant
    /// The mode now in effect: `manual` (the slider's), or the board's.
    public var mode: AutofocusMode
    /// The board's `camera.autofocus`.
    public var boardMode: AutofocusMode
    public var cause: Cause
    /// With the lens by hand: the gesture that gives it back.
    public var until: ManualFocusEnd?

    /// What a person reads: who has the lens now, why, and until when.
    public var reason: String {
        let autofocus = boardMode == .continuous ? "continuous autofocus" : "autofocus on prepare"
        switch cause {
        case .sliderMoved(let control):
            let end = until == .doubleLightPress
                ? "a double light press on '\(control)'" : "the next half press (prepare)"
            return "the focus slider '\(control)' took the lens from \(autofocus): manual focus until \(end)"
        case .halfPress:
            return "a half press (prepare) gave the lens back to \(autofocus)"
        case .doubleLightPress(let control):
            return "a double light press on '\(control)' gave the lens back to \(autofocus)"
        }
    }
}
