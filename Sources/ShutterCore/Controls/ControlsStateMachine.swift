#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The controls overlay without a screen: which control is current, its value, the chooser.
///
/// Driven by recognized gestures (light press, double light press, swipe steps,
/// captures) and by time (idle timeout, coalescing of value updates). Each step appends its
/// ``Action``s in the order they happened; the rig turns them into the phone's four delegate
/// callbacks as events, plus value and chooser events, and orders them among the other machines'.
struct ControlsStateMachine: Sendable {
    /// What a step of the controls did. The owner stamps each with the step's instant as its
    /// ``ShutterEvent`` (named after each case) and explains the ones that need it.
    enum Action: Hashable, Sendable {
        /// The controls became active on `control` (`controlsActive`).
        case activated(control: String, display: ControlDisplay)
        /// A swipe began or stopped moving the current control (`controlsAdjusting`).
        case adjusting(EventPhase, control: String)
        /// The controls became inactive, and why (`controlsInactive`).
        case closed(InactiveReason)
        /// A control's value changed (`controlValue`).
        case value(control: String, value: ControlValue, display: ControlDisplay)
        /// The chooser opened or closed (`chooser`).
        case chooser(EventPhase)
        /// The chooser's highlight moved to `control` (`controlHighlighted`).
        case highlighted(control: String)
        /// `control` became the current one, or the chooser closed on it (`controlSelected`).
        case selected(control: String, display: ControlDisplay)
        /// A control was enabled or disabled (`controlEnabled`).
        case enabled(control: String, Bool)

        /// The action as the event subscribers get, at `time`.
        func event(at time: Instant) -> ShutterEvent {
            switch self {
            case .activated(let control, let display): .controlsActive(control: control, display: display, at: time)
            case .adjusting(let phase, let control): .controlsAdjusting(phase: phase, control: control, at: time)
            case .closed(let reason): .controlsInactive(reason: reason, at: time)
            case .value(let control, let value, let display):
                .controlValue(control: control, value: value, display: display, at: time)
            case .chooser(let phase): .chooser(phase: phase, at: time)
            case .highlighted(let control): .controlHighlighted(control: control, at: time)
            case .selected(let control, let display): .controlSelected(control: control, display: display, at: time)
            case .enabled(let control, let enabled): .controlEnabled(control: control, enabled: enabled, at: time)
            }
        }
    }

    private enum State: Sendable {
        case inactive
        /// Showing the current control; `adjusting` while a swipe moves it.
        case active(adjusting: Bool)
        /// The list is open on `highlight`.
        case choosing(highlight: Int)
    }

    private var state = State.inactive
    private var specs: [ControlSpec]
    private let titles: [[String]]
    /// The current value of each control, in board order.
    private(set) var values: [ControlValue]
    /// The current control.
    private(set) var current: Int
    /// Each control's movement maths (``ControlScale``), in board order.
    private let scales: [ControlScale]
    /// Where the swipe has moved the current slider to, in units before snapping.
    private var position = 0.0
    /// A flick's glide: its speed (pads per second, signed) and when it moves next.
    private var glide: (padsPerSecond: Double, next: Instant)?
    /// Movement toward the next picker item or chooser entry, in pads.
    private var detent = 0.0
    /// The rest of the swipe in progress changes nothing: it woke the controls (as on the phone,
    /// the first touch only shows them), or they were closed on purpose under it (a capture, a toggle).
    private var restOfSwipeIgnored = false
    /// The idle timeout closed the controls while a swipe adjusted them, the finger still down: its
    /// next movement reopens them and adjusts on (a finger still on the strip is still adjusting).
    private var resumesAdjusting = false
    private var lastInput = Instant.zero
    private var lastEmitted: Instant?
    private var unsentValue = false
    /// The value last sent for each control: a value equal to it is never sent again.
    private var sentValues: [ControlValue]
    private let padSpan: Double
    let idleTimeout: Nanoseconds
    let coalescingInterval: Nanoseconds

    init(controls: [ControlSpec], padCount: Int, timings: GestureTimings, initialValues: [String: ControlValue]?) {
        specs = controls
        titles = controls.map { spec in
            if case .picker(let count, let names) = spec.kind { return names ?? (0..<count).map { String($0) } }
            return []
        }
        values = controls.map { spec in
            initialValues?[spec.id].flatMap { Self.validated($0, for: spec) } ?? spec.initial
        }
        sentValues = values
        current = controls.firstIndex(where: \.enabled) ?? 0
        padSpan = Double(max(padCount - 1, 1))
        scales = controls.map { ControlScale(spec: $0, padSpan: Double(max(padCount - 1, 1))) }
        idleTimeout = timings.controlsIdleTimeout
        coalescingInterval = timings.coalescingInterval
    }

    /// `value` made valid for `spec` (snapped and clamped), or nil when it is of the wrong kind.
    static func validated(_ value: ControlValue, for spec: ControlSpec) -> ControlValue? {
        switch (spec.kind, value) {
        case (.picker(let count, _), .index(let index)):
            return .index(min(max(index, 0), count - 1))
        case (.slider(let values), .number(let number)), (.systemZoom(let values), .number(let number)),
             (.systemExposureBias(let values), .number(let number)), (.lensPosition(let values), .number(let number)):
            guard number.isFinite else { return nil }
            return .number(snap(number, values))
        default:
            return nil
        }
    }

    /// The nearest value a slider can take.
    static func snap(_ number: Double, _ values: SliderValues) -> Double {
        switch values {
        case .range(let range, let step):
            let clamped = min(max(number, range.lowerBound), range.upperBound)
            guard let step else { return clamped }
            var steps = ((clamped - range.lowerBound) / step).rounded()
            if range.lowerBound + steps * step > range.upperBound + step * 1e-9 { steps -= 1 }
            // Rounded to 12 decimals so a third of an EV reads 0.333333333333 and zero is zero,
            // not -2.2e-16, in events and in the state file.
            return ((range.lowerBound + steps * step) * 1e12).rounded() / 1e12
        case .list(let list):
            return list.min { abs($0 - number) < abs($1 - number) }!
        }
    }

    var isActive: Bool {
        if case .inactive = state { return false }
        return true
    }

    /// When a value tick is next due: a glide's next step or the send of a coalesced value. Ticks
    /// finish what a swipe or a flick asked for, so they also run while input ends.
    @inline(__always)
    var tickDeadline: Instant? {
        var earliest = glide?.next
        if unsentValue, let lastEmitted {
            let send = lastEmitted + coalescingInterval
            earliest = earliest.map { min($0, send) } ?? send
        }
        return earliest
    }

    /// When the idle timeout runs out, while the controls are active. It runs while adjusting too:
    /// a finger resting on the strip (or a stuck pad) must not keep the controls open for ever.
    @inline(__always)
    var idleDeadline: Instant? { isActive ? lastInput + idleTimeout : nil }

    /// Any confirmed input restarts the idle timeout.
    mutating func input(at now: Instant) {
        lastInput = now
    }

    private var hasEnabledControl: Bool { specs.contains(where: \.enabled) }

    mutating func lightPress(at now: Instant, into actions: inout [Action]) {
        switch state {
        case .inactive:
            activate(at: now, into: &actions)
        case .active:
            break
        case .choosing(let highlight):
            current = highlight
            state = .active(adjusting: false)
            actions.append(.selected(control: specs[highlight].id, display: display(highlight)))
            actions.append(.chooser(.ended))
        }
    }

    mutating func doubleLightPress(at now: Instant, into actions: inout [Action]) {
        switch state {
        case .inactive:
            guard activate(at: now, into: &actions) else { return }
            openChooser(at: now, into: &actions)
        case .active(let adjusting):
            if adjusting { endAdjusting(at: now, into: &actions) }
            openChooser(at: now, into: &actions)
        case .choosing:
            break
        }
    }

    @discardableResult
    private mutating func activate(at now: Instant, into actions: inout [Action]) -> Bool {
        guard hasEnabledControl else { return false }
        if !specs[current].enabled { current = specs.firstIndex(where: \.enabled)! }
        state = .active(adjusting: false)
        // The idle timeout counts from here: the input that opened them (a light press waits out
        // the double-press window first) may be much older, and the overlay must show its full time.
        lastInput = now
        actions.append(.activated(control: specs[current].id, display: display(current)))
        return true
    }

    private mutating func openChooser(at now: Instant, into actions: inout [Action]) {
        state = .choosing(highlight: current)
        detent = 0
        actions.append(.chooser(.began))
        actions.append(.highlighted(control: specs[current].id))
    }

    /// A finger landed on the strip: a glide stops where it is (whatever the touch turns out to be).
    mutating func touchBegan(at now: Instant, into actions: inout [Action]) {
        if glide != nil { endAdjusting(at: now, into: &actions) }
    }

    mutating func swipeBegan(deltaPads: Double, padsPerSecond: Double, at now: Instant, into actions: inout [Action]) {
        // A new touch stops a glide where it is.
        if glide != nil { endAdjusting(at: now, into: &actions) }
        resumesAdjusting = false
        switch state {
        case .inactive:
            // As on the phone, the first touch only wakes the controls.
            restOfSwipeIgnored = activate(at: now, into: &actions)
        case .active:
            restOfSwipeIgnored = false
            state = .active(adjusting: true)
            actions.append(.adjusting(.began, control: specs[current].id))
            position = scales[current].position(of: values[current])
            detent = 0
            // The movement that made the touch a swipe (a pad or more, so a tap rolling over two pads
            // stays a tap) is the swipe's threshold, as a touch screen's slop: the value starts with one
            // half pad, so a slow swipe visits every step (exposure 0 → +⅓ → +⅔ …).
            let sliderLead = specs[current].kind.sliderValues == nil ? deltaPads : min(max(deltaPads, -0.5), 0.5)
            adjust(deltaPads: sliderLead, padsPerSecond: padsPerSecond, at: now, into: &actions)
        case .choosing:
            restOfSwipeIgnored = false
            detent = 0
            moveHighlight(deltaPads: deltaPads, at: now, into: &actions)
        }
    }

    mutating func swipeChanged(deltaPads: Double, padsPerSecond: Double, at now: Instant, into actions: inout [Action]) {
        guard !restOfSwipeIgnored else { return }
        switch state {
        case .inactive:
            // Movement after the controls went inactive (idle, with the finger still down) wakes them;
            // a swipe that was adjusting adjusts on, any other then changes nothing.
            guard activate(at: now, into: &actions) else { return }
            guard resumesAdjusting else {
                restOfSwipeIgnored = true
                return
            }
            resumesAdjusting = false
            state = .active(adjusting: true)
            actions.append(.adjusting(.began, control: specs[current].id))
            position = scales[current].position(of: values[current])
            detent = 0
            adjust(deltaPads: deltaPads, padsPerSecond: padsPerSecond, at: now, into: &actions)
        case .active(adjusting: false):
            break
        case .active(adjusting: true):
            adjust(deltaPads: deltaPads, padsPerSecond: padsPerSecond, at: now, into: &actions)
        case .choosing:
            moveHighlight(deltaPads: deltaPads, at: now, into: &actions)
        }
    }

    mutating func swipeEnded(flick: Bool, padsPerSecond: Double, at now: Instant, into actions: inout [Action]) {
        restOfSwipeIgnored = false
        resumesAdjusting = false
        lastInput = now
        guard case .active(adjusting: true) = state else { return }
        // A flick of a slider carries on for a short glide that slows down; adjusting ends with it.
        let scale = scales[current]
        let headingOut = padsPerSecond > 0 ? position < scale.units : position > 0
        if flick, specs[current].kind.sliderValues != nil, headingOut {
            glide = (padsPerSecond, now + Self.glideTick)
            return
        }
        endAdjusting(at: now, into: &actions)
    }

    /// A glide moves the value this often.
    static let glideTick = Nanoseconds.milliseconds(20)
    /// A glide's speed falls by e every this many seconds.
    static let glideDecaySeconds = 0.2

    /// One glide step: move at the decayed speed; stop once slow or at an end.
    private mutating func glideStep(at now: Instant, into actions: inout [Action]) {
        guard let current = glide else { return }
        let seconds = Double(Self.glideTick.rawValue) / 1e9
        let speed = current.padsPerSecond * exp(-seconds / Self.glideDecaySeconds)
        adjust(deltaPads: speed * seconds, padsPerSecond: speed, at: now, into: &actions)
        if abs(speed) < ControlScale.slowPadsPerSecond || scales[self.current].isAtEnd(position) {
            endAdjusting(at: now, into: &actions)
        } else {
            glide = (speed, now + Self.glideTick)
        }
    }

    private mutating func endAdjusting(at now: Instant, into actions: inout [Action]) {
        glide = nil
        // The final value is never lost to coalescing.
        if unsentValue { emitValue(at: now, into: &actions) }
        state = .active(adjusting: false)
        actions.append(.adjusting(.ended, control: specs[current].id))
    }

    private mutating func adjust(deltaPads: Double, padsPerSecond: Double, at now: Instant, into actions: inout [Action]) {
        let spec = specs[current]
        let old = values[current]
        switch spec.kind {
        case .picker(let count, _):
            // Pickers keep their detents: one item per pad, whatever the speed.
            guard case .index(var index) = old else { return }
            stepDetent(deltaPads: deltaPads, index: &index, count: count)
            values[current] = .index(index)
        case .slider, .systemZoom, .systemExposureBias, .lensPosition:
            // Slow: one unit (a step, a list entry, 1/40 of a continuous range) per half pad; faster
            // movement covers more per pad (ControlScale.gain), so a quick swipe crosses the range.
            let scale = scales[current]
            position = min(max(position + scale.units(deltaPads: deltaPads, padsPerSecond: padsPerSecond), 0), scale.units)
            values[current] = scale.value(at: position)
        }
        guard values[current] != old else { return }
        if let lastEmitted, now - lastEmitted < coalescingInterval {
            unsentValue = true
        } else {
            emitValue(at: now, into: &actions)
        }
    }

    /// One item per pad of movement, with a detent so resting between pads changes nothing.
    private mutating func stepDetent(deltaPads: Double, index: inout Int, count: Int) {
        detent += deltaPads
        while detent >= 1 {
            detent -= 1
            if index < count - 1 { index += 1 } else { detent = 0 }
        }
        while detent <= -1 {
            detent += 1
            if index > 0 { index -= 1 } else { detent = 0 }
        }
    }

    private mutating func moveHighlight(deltaPads: Double, at now: Instant, into actions: inout [Action]) {
        guard case .choosing(let highlight) = state else { return }
        // Walk the enabled controls one per pad; disabled ones are not there to land on.
        var steps = 0
        detent += deltaPads
        while detent >= 1 { detent -= 1; steps += 1 }
        while detent <= -1 { detent += 1; steps -= 1 }
        var target = highlight
        while steps != 0 {
            let direction = steps > 0 ? 1 : -1
            guard let next = nextEnabled(from: target, direction: direction) else { detent = 0; break }
            target = next
            steps -= direction
        }
        guard target != highlight else { return }
        state = .choosing(highlight: target)
        actions.append(.highlighted(control: specs[target].id))
    }

    /// The nearest enabled control after `index` in `direction` (the list does not wrap).
    private func nextEnabled(from index: Int, direction: Int) -> Int? {
        var candidate = index + direction
        while specs.indices.contains(candidate) {
            if specs[candidate].enabled { return candidate }
            candidate += direction
        }
        return nil
    }

    private mutating func emitValue(at now: Instant, into actions: inout [Action]) {
        unsentValue = false
        let value = values[current]
        // A swipe that went out and came back within one coalescing interval changed nothing.
        guard value != sentValues[current] else { return }
        sentValues[current] = value
        lastEmitted = now
        actions.append(.value(control: specs[current].id, value: value, display: display(current)))
    }

    /// A full click or secondary capture: the controls collapse before the capture event.
    mutating func collapse(at now: Instant, into actions: inout [Action]) {
        close(reason: .capture, at: now, into: &actions)
    }

    /// The secondary button mapped to `toggleControls`.
    mutating func toggle(at now: Instant, into actions: inout [Action]) {
        if isActive { close(reason: .toggle, at: now, into: &actions) } else { activate(at: now, into: &actions) }
    }

    /// The secondary button mapped to `nextControl`: wakes the controls, or moves to the next enabled control.
    mutating func next(at now: Instant, into actions: inout [Action]) {
        if case .choosing(let highlight) = state {
            // In the chooser it moves the highlight, as a swipe would (wrapping round the list).
            var candidate = highlight
            for _ in specs.indices {
                candidate = (candidate + 1) % specs.count
                if specs[candidate].enabled { break }
            }
            lastInput = now
            guard candidate != highlight else { return }
            state = .choosing(highlight: candidate)
            actions.append(.highlighted(control: specs[candidate].id))
            return
        }
        guard case .active(let adjusting) = state else {
            if case .inactive = state { activate(at: now, into: &actions) }
            return
        }
        if adjusting { endAdjusting(at: now, into: &actions) }
        var candidate = current
        for _ in specs.indices {
            candidate = (candidate + 1) % specs.count
            if specs[candidate].enabled { break }
        }
        guard candidate != current else { return }
        current = candidate
        actions.append(.selected(control: specs[current].id, display: display(current)))
    }

    /// A glide's step or the coalescing interval came (``tickDeadline``).
    mutating func fireTick(at now: Instant, into actions: inout [Action]) {
        if let glide, glide.next <= now { glideStep(at: now, into: &actions) }
        if unsentValue, let lastEmitted, lastEmitted + coalescingInterval <= now { emitValue(at: now, into: &actions) }
    }

    /// The idle timeout ran out (``idleDeadline``).
    mutating func fireIdle(at now: Instant, into actions: inout [Action]) {
        if isActive, lastInput + idleTimeout <= now { close(reason: .idle, at: now, into: &actions) }
    }

    mutating func finish(at now: Instant, into actions: inout [Action]) {
        close(reason: .finish, at: now, into: &actions)
    }

    private mutating func close(reason: InactiveReason, at now: Instant, into actions: inout [Action]) {
        switch state {
        case .inactive:
            return
        case .active(let adjusting):
            // A glide is no finger on the strip: nothing resumes after it.
            resumesAdjusting = adjusting && glide == nil && reason == .idle
            if adjusting { endAdjusting(at: now, into: &actions) }
        case .choosing:
            resumesAdjusting = false
            actions.append(.chooser(.ended))
        }
        if unsentValue { emitValue(at: now, into: &actions) }
        // Closed on purpose (a capture, a toggle), the rest of a swipe changes nothing; closed for
        // lack of input, the next movement of a finger still down wakes them.
        restOfSwipeIgnored = reason != .idle
        state = .inactive
        actions.append(.closed(reason))
    }

    /// What control `index` shows now.
    private func display(_ index: Int) -> ControlDisplay {
        ControlDisplay(values[index], of: specs[index])
    }

    /// Each control's value by id, for persistence.
    var valuesByID: [String: ControlValue] {
        var result: [String: ControlValue] = [:]
        for (spec, value) in zip(specs, values) { result[spec.id] = value }
        return result
    }
}

// MARK: - Remote commands (the local API)

/// Why a remote command on the controls was refused: what kind of refusal (so a front-end maps it
/// without reading the text) and a text that says what to send instead.
public struct ControlRefusal: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong with the command.
    public enum Kind: String, Hashable, Sendable {
        /// No control, or no picker item, by that name.
        case notFound
        /// A value more than half a step outside the control's range (or its list); an index past its items.
        case outOfRange
        /// The control is disabled.
        case disabled
        /// The wrong kind of value for the control (an index for a slider, a value for a picker).
        case invalid
    }

    public var kind: Kind
    public var description: String
    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }
}

/// What a `set` did: the control's value now, and the number given when the control took
/// another value for it (the nearest step), so the one who typed it is told which.
public struct ControlSetting: Hashable, Sendable {
    public var control: String
    /// The value the control took.
    public var value: ControlValue
    /// The value as the events write it.
    public var display: ControlDisplay
    /// The number given, when it was not the value taken but for rounding noise; nil otherwise.
    public var given: Double?

    public init(control: String, value: ControlValue, display: ControlDisplay, given: Double? = nil) {
        self.control = control
        self.value = value
        self.display = display
        self.given = given
    }

    /// "0.33 taken as +⅓ EV (0.333333)", when the number given was not the value taken.
    public var note: String? {
        guard let given, case .number(let taken) = value else { return nil }
        return "\(given.shortDescription) taken as \(display.text) (\(JSONLine.number(taken, decimals: 6)))"
    }
}

/// Where the controls are, for `status`.
public struct ControlsSnapshot: Hashable, Sendable {
    /// `inactive`, `active`, `adjusting` or `choosing`.
    public var state: String
    /// The current control's id.
    public var current: String?
    /// The control highlighted in the open chooser.
    public var highlighted: String?
    /// Each control's spec (with `enabled` as it is now) and value, in board order.
    public var controls: [(spec: ControlSpec, value: ControlValue)]

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.state == rhs.state && lhs.current == rhs.current && lhs.highlighted == rhs.highlighted
            && lhs.controls.map(\.spec) == rhs.controls.map(\.spec) && lhs.controls.map(\.value) == rhs.controls.map(\.value)
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(state); hasher.combine(current) }
}

extension ControlsStateMachine {
    private func index(of id: String) throws(ControlRefusal) -> Int {
        guard let index = specs.firstIndex(where: { $0.id == id }) else {
            throw ControlRefusal(.notFound, "no control '\(id)'; the board has \(specs.map(\.id).joined(separator: ", "))")
        }
        return index
    }

    /// Sets a control's value and emits `controlValue` at once, as a swipe's last value is. A
    /// number is taken as the value the control can take within half a step of it
    /// (``SliderValues/nearest(to:)``); one out of range is refused, never clamped.
    @discardableResult
    mutating func set(_ id: String, to value: ControlValue, at now: Instant, into actions: inout [Action]) throws(ControlRefusal) -> ControlSetting {
        let index = try index(of: id)
        let spec = specs[index]
        guard spec.enabled else { throw ControlRefusal(.disabled, "control '\(id)' is disabled") }
        let taken = try Self.accepted(value, for: spec)
        if isActive { lastInput = now }
        if index == current {
            unsentValue = false
            glide = nil
            position = scales[index].position(of: taken)
        }
        values[index] = taken
        sentValues[index] = taken
        lastEmitted = now
        actions.append(.value(control: id, value: taken, display: display(index)))
        // The number given is told back when the control took another value for it.
        var given: Double?
        if case .number(let number) = value, case .number(let takenNumber) = taken,
           spec.kind.sliderValues?.isRoundingNoise(number, from: takenNumber) == false {
            given = number
        }
        return ControlSetting(control: id, value: taken, display: display(index), given: given)
    }

    /// The value `spec` takes for `value`: a picker's index as given, a slider's value nearest the
    /// number given (``SliderValues/nearest(to:)``); refuses a value it cannot take.
    static func accepted(_ value: ControlValue, for spec: ControlSpec) throws(ControlRefusal) -> ControlValue {
        switch (spec.kind, value) {
        case (.picker(let count, _), .index(let index)):
            guard (0..<count).contains(index) else {
                throw ControlRefusal(.outOfRange, "index \(index) is out of range for '\(spec.id)' (0...\(count - 1))")
            }
            return value
        case (.slider(let values), .number(let number)), (.systemZoom(let values), .number(let number)),
             (.systemExposureBias(let values), .number(let number)), (.lensPosition(let values), .number(let number)):
            guard number.isFinite else { throw ControlRefusal(.invalid, "value must be a finite number") }
            guard let taken = values.nearest(to: number) else {
                throw ControlRefusal(.outOfRange, "value \(number.shortDescription) is out of range for '\(spec.id)' (\(values.typedValueRule))")
            }
            return .number(taken)
        case (.picker, .number):
            throw ControlRefusal(.invalid, "'\(spec.id)' is a picker: give an index or a title, not a value")
        default:
            throw ControlRefusal(.invalid, "'\(spec.id)' is a \(spec.kind.name): give a value, not an index or a title")
        }
    }

    /// The index of the item titled `title` in picker `id`.
    func itemIndex(titled title: String, in id: String) throws(ControlRefusal) -> Int {
        let index = try index(of: id)
        guard case .picker = specs[index].kind else {
            throw ControlRefusal(.invalid, "'\(id)' is a \(specs[index].kind.name): give a value, not a title")
        }
        guard let item = titles[index].firstIndex(of: title) else {
            throw ControlRefusal(.notFound, "'\(id)' has no item '\(title)'; its items are \(titles[index].joined(separator: ", "))")
        }
        return item
    }

    /// The item of picker `id` whose title is the number `number` ("200" for 200, "1.5" for 1.5),
    /// for a client that cannot tell a number from a title (`shutter ctl set iso 200`); nil when
    /// `id` is not a picker, so the number is a slider's value.
    func itemIndex(numbered number: Double, in id: String) throws(ControlRefusal) -> Int? {
        let index = try index(of: id)
        guard case .picker = specs[index].kind else { return nil }
        guard let item = titles[index].firstIndex(where: { WrittenNumber.parse($0) == number }) else {
            throw ControlRefusal(.notFound, "'\(id)' is a picker with no item titled \(number.shortDescription): give an index (#N) or a title; its items are \(titles[index].joined(separator: ", "))")
        }
        return item
    }

    /// Makes `id` the current control, as choosing it in the chooser does (the chooser closes).
    ///
    /// `controlSelected` says the current control changed, or that the chooser closed on a choice
    /// (a light press there reports the control it closes on, the current one too). Selecting the
    /// control that is already current with no chooser open changes nothing a subscriber can see,
    /// so it says nothing, as `nextControl` with a single enabled control says nothing.
    mutating func select(_ id: String, at now: Instant, into actions: inout [Action]) throws(ControlRefusal) {
        let index = try index(of: id)
        guard specs[index].enabled else { throw ControlRefusal(.disabled, "control '\(id)' is disabled") }
        let changed = index != current
        switch state {
        case .inactive:
            current = index
            guard changed else { return }
        case .active(let adjusting):
            if adjusting { endAdjusting(at: now, into: &actions) }
            current = index
            lastInput = now
            guard changed else { return }
        case .choosing:
            current = index
            state = .active(adjusting: false)
            lastInput = now
            actions.append(.chooser(.ended))
        }
        actions.append(.selected(control: id, display: display(index)))
    }

    /// Enables or disables a control (`controlEnabled`, only when that changes).
    ///
    /// A disabled control is skipped and cannot be adjusted (Boards/README), so nothing may be left
    /// on it:
    /// - the current control hands over to the first enabled one (`controlSelected`, active or not:
    ///   `status` shows the current control either way). With the chooser open, the chooser closes
    ///   first (`chooser ended`), as the API's `select` closes it: the choice it offered changed, and
    ///   a selection is never reported while a chooser stays open.
    /// - a highlight on it moves to the next enabled control, or the one before at the end of the
    ///   list (`controlHighlighted`), so a light press there cannot select it.
    /// - with no enabled control left, the controls close (`controlsInactive`, reason `toggle`).
    mutating func setEnabled(_ id: String, _ enabled: Bool, at now: Instant, into actions: inout [Action]) throws(ControlRefusal) {
        let index = try index(of: id)
        guard specs[index].enabled != enabled else { return }
        if !enabled, index == current, case .active(adjusting: true) = state { endAdjusting(at: now, into: &actions) }
        specs[index].enabled = enabled
        actions.append(.enabled(control: id, enabled))
        guard !enabled else { return }
        guard let first = specs.indices.first(where: { specs[$0].enabled }) else {
            if isActive { close(reason: .toggle, at: now, into: &actions) }
            return
        }
        if index == current {
            if case .choosing = state {
                state = .active(adjusting: false)
                actions.append(.chooser(.ended))
            }
            current = first
            actions.append(.selected(control: specs[first].id, display: display(first)))
        } else if case .choosing(index) = state {
            // Another enabled control exists (`first`), so one of the two directions has one.
            let target = nextEnabled(from: index, direction: 1) ?? nextEnabled(from: index, direction: -1) ?? first
            state = .choosing(highlight: target)
            detent = 0
            actions.append(.highlighted(control: specs[target].id))
        }
    }

    /// After this machine took over from one with other controls (a reload, a camera that cannot
    /// serve a control): what changed for the controls both have, as a subscriber would have heard
    /// it. `controlEnabled` for a flag that changed, `controlValue` for a value clamped to a
    /// narrower range or reset (its kind changed), then `controlSelected` when the current control
    /// is another one. Controls that came or went are not reported.
    mutating func reportChanges(since previous: ControlsSnapshot, at now: Instant, into actions: inout [Action]) {
        for index in specs.indices {
            let spec = specs[index]
            guard let old = previous.controls.first(where: { $0.spec.id == spec.id }) else { continue }
            if old.spec.enabled != spec.enabled {
                actions.append(.enabled(control: spec.id, spec.enabled))
            }
            if old.value != values[index] {
                actions.append(.value(control: spec.id, value: values[index], display: display(index)))
            }
        }
        if !specs.isEmpty, let old = previous.current, old != specs[current].id {
            actions.append(.selected(control: specs[current].id, display: display(current)))
        }
    }

    var snapshot: ControlsSnapshot {
        let name: String
        var highlighted: String?
        switch state {
        case .inactive: name = "inactive"
        case .active(let adjusting): name = adjusting ? "adjusting" : "active"
        case .choosing(let highlight):
            name = "choosing"
            highlighted = specs[highlight].id
        }
        return ControlsSnapshot(state: name, current: specs.isEmpty ? nil : specs[current].id, highlighted: highlighted,
                                controls: Array(zip(specs, values)).map { (spec: $0.0, value: $0.1) })
    }
}
