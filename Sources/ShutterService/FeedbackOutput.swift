import ShutterCore
import ShutterGPIO
import ShutterSystem

/// Drives the board's LED and buzzer from a ``FeedbackStateMachine``: the machine decides the
/// levels and its next deadline; this writes a line only when its level changes.
///
/// A line that cannot be set is reported once and then left alone: feedback never stops the rig.
final class FeedbackOutput {
    private var machine = FeedbackStateMachine()
    private let driver: any OutputDriver
    private let roles: [FeedbackRole]
    private var written: [Bool]
    private var failed = false

    /// Requests the board's feedback lines on `chip`; nil when the board has none.
    ///
    /// - Throws: ``CommandFailure`` naming the line that could not be requested.
    init?(board: Board, chip: any GPIOChip) throws {
        guard !board.feedback.isEmpty else { return nil }
        guard let outputs = chip as? any OutputChip else {
            throw CommandFailure("the board has feedback lines, but its chip cannot drive outputs")
        }
        do {
            driver = try outputs.drive(board.feedback, consumer: "shutter")
        } catch let error as GPIOError {
            throw CommandFailure(error.description)
        }
        roles = board.feedback.map(\.role)
        written = Array(repeating: false, count: roles.count)
    }

    /// The instant the loop must wake at for the next change of a pattern.
    var nextDeadline: Instant? { machine.nextDeadline }

    /// One recognizer event (controls, chooser), then the lines as they should be now.
    func handle(_ event: ShutterEvent, now: Instant) {
        machine.event(event)
        update(now: now)
    }

    /// A photo on disk, or a failed capture.
    func handle(_ event: CaptureEventKind, now: Instant) {
        switch event {
        case .photo: machine.photoSaved(at: now)
        case .failure: machine.captureFailed(at: now)
        }
        update(now: now)
    }

    enum CaptureEventKind { case photo, failure }

    /// Lets the patterns run to `now` and writes the lines whose level changed.
    func update(now: Instant) {
        let levels = machine.advance(to: now)
        for (index, role) in roles.enumerated() {
            let level = levels.level(of: role)
            guard level != written[index], !failed else { continue }
            do {
                try driver.set(index, active: level)
                written[index] = level
            } catch {
                failed = true
                Log.warning("shutter: \(error); the LED and buzzer stay as they are")
            }
        }
    }

    /// Leaves the LED dark and the buzzer silent, then releases the lines.
    func close() {
        for index in roles.indices where written[index] && !failed {
            try? driver.set(index, active: false)
        }
        driver.close()
    }
}
