import ShutterCapture
import ShutterCore

/// The daemon's side of the command model: each ``APICommand`` carried out on the loop's thread.
extension Daemon {
    /// Carries out `request` and returns its result, for the front-end that carried it to frame.
    ///
    /// A refused command changes nothing and emits no event. An accepted `capture` with an `id`
    /// takes that `id` through to its `photo` or `captureFailed` event (`"request": id`).
    public func execute(_ request: APIRequest) -> CommandResult {
        let now = loop.clock.now
        // Let the state machines catch up first, so a command lands after every edge already read.
        try? pump(now: now)
        switch request.command {
        case .status:
            return .status(status(now: now))
        case .reload:
            switch reload(trigger: "reload request") {
            case .reloaded(let path, let name):
                return .reloaded(file: path, board: name)
            case .refused(let message):
                return .refused(CommandRefusal(options.boardPath == nil ? .unavailable : .invalidBoard, message))
            }
        case .capture, .rigCapture:
            let rig = request.command == .rigCapture
            if rig && rigParticipant == nil {
                return .refused(CommandRefusal(.unavailable, "no rig: the board has no 'mqtt' section (a capture with \"rig\": true needs one)"))
            }
            // The shot of the press this capture makes carries its id, and starts a shot for the
            // whole rig when asked (``handle(_:)`` makes it, and publishes the rig's).
            remoteCapture = RemoteCapture(request: request.id, rig: rig)
            defer { remoteCapture = nil }
            guard interpreter.perform({ machine, events in machine.remoteCapture(at: now, into: &events) }) else {
                let refusal = captureRefusal
                return .refused(CommandRefusal(refusal.code, refusal.reason + (refusal.code == .disabled ? Self.enableCaptureHint : "")))
            }
            return .captureAccepted(pressedAt: now, shot: remoteCapture?.shot?.rigShot?.id)
        case .set(let control, let given):
            let setting: ControlSetting
            do throws(ControlRefusal) {
                let value: ControlValue
                switch given {
                case .value(let number):
                    // A picker titled with numbers (ISO 100, 200, 400) takes the number as a title.
                    value = try interpreter.machine.itemIndex(numbered: number, in: control).map(ControlValue.index) ?? .number(number)
                case .index(let index): value = .index(index)
                case .title(let title): value = .index(try interpreter.machine.itemIndex(titled: title, in: control))
                }
                setting = try interpreter.perform { (machine, events) throws(ControlRefusal) in
                    try machine.setControl(control, to: value, at: now, into: &events)
                }
            } catch {
                return .refused(CommandRefusal(error))
            }
            saveState()
            return .set(setting)
        case .select(let control):
            do throws(ControlRefusal) {
                try interpreter.perform { (machine, events) throws(ControlRefusal) in
                    try machine.selectControl(control, at: now, into: &events)
                }
            } catch {
                return .refused(CommandRefusal(error))
            }
            return .done
        case .enable(let target), .disable(let target):
            let enabled: Bool
            if case .enable = request.command { enabled = true } else { enabled = false }
            switch target {
            case .capture:
                setCaptureEnabled(enabled)
            case .control(let control):
                do throws(ControlRefusal) {
                    try interpreter.perform { (machine, events) throws(ControlRefusal) in
                        try machine.setControlEnabled(control, enabled, at: now, into: &events)
                    }
                } catch {
                    return .refused(CommandRefusal(error))
                }
            }
            return .done
        }
    }

    /// The camera's state for `status`: `streaming`, `stopped` (open, idle), `opening` (a reload's new camera) or `absent` (being looked for).
    var cameraState: (name: String, reason: String?) {
        guard capture.service.currentCamera != nil else {
            // A reload's new camera is on its way; a lost one is being looked for.
            if isOpeningReloadedCamera { return ("opening", "the camera is being opened (\(board.camera.deviceDescription))") }
            return ("absent", "no camera (still looking for \(board.camera.deviceDescription))")
        }
        return (capture.service.isStreaming ? "streaming" : "stopped", nil)
    }

    /// The daemon's state now, for `status`.
    public func status(now: Instant) -> ServiceStatus {
        let snapshot = interpreter.machine.controlsSnapshot
        var status = ServiceStatus(
            board: board.name,
            uptime: now - startedAt,
            // A board naming no camera reports the one found (none while it is looked for).
            camera: ServiceStatus.Camera(device: board.camera.device ?? capture.service.currentCamera?.info.path, state: cameraState.name),
            captureAvailable: interpreter.machine.isCaptureAvailable,
            captureEnabled: captureEnabled,
            controlsState: snapshot.state,
            currentControl: snapshot.current,
            highlightedControl: snapshot.highlighted,
            // The events' formatter, so a subscriber reads the same text in `status` as in `controlValue`.
            controls: snapshot.controls.map { spec, value in
                ServiceStatus.Control(spec: spec, value: value, text: ControlDisplay(value, of: spec).text)
            },
            counters: counters,
            lastPhoto: lastPhotoPath,
            clients: nil)
        for transport in transports { transport.report(into: &status) }
        return status
    }
}

/// A `capture` request being carried out: the `id` its photo or failure answers, whether it
/// starts a rig shot, and the shot its press made.
struct RemoteCapture {
    var request: JSONValue?
    var rig: Bool
    var shot: Shot?
}

extension Daemon {
    /// Why this node cannot take a rig shot whose press was at `pressedAt` (on the loop's clock),
    /// or nil when it can: the shot too old or too far ahead, or capture unavailable.
    func rigShotRefusal(pressedAt: Instant, now: Instant, maxAge: Nanoseconds) -> String? {
        let age = now - pressedAt
        if age > maxAge {
            return "the shot is \(Int(age.milliseconds)) ms old, more than mqtt.maxShotAgeMs (\(Int(maxAge.milliseconds)))"
        }
        if age < Nanoseconds(rawValue: -maxAge.rawValue) {
            return "the shot's instant is \(Int(-age.milliseconds)) ms ahead of this node's clock: are the rig's clocks synchronised?"
        }
        guard interpreter.machine.isCaptureAvailable else {
            return captureRefusal.reason
        }
        guard capture.service.isStreaming, capture.service.oldestFrameAt != nil else {
            return "the camera was not streaming at the shot's instant (it streams only around a light press on this board)"
        }
        // Whether the ring still holds the instant is the capture state machine's to say, after
        // it has read the frames queued meanwhile (which may let the instant's frame go).
        return nil
    }
}

extension Daemon {
    /// Why no photo can be taken now, for a remote capture and a rig shot alike: capture turned
    /// off through the API, or the camera not ready (and why).
    /// How a person turns capture back on, said with a refusal for disabled capture: the command
    /// first (whoever reads the reason is likely at a shell), then the API's request.
    static let enableCaptureHint = #" (turn it on with `shutter ctl enable capture`, or the request {"cmd": "enable", "capture": true})"#

    var captureRefusal: (code: CommandRefusal.Kind, reason: String) {
        captureEnabled
            ? (.unavailable, "capture is unavailable: \(cameraState.reason ?? "the camera is not ready")")
            : (.disabled, "capture is disabled")
    }
}
