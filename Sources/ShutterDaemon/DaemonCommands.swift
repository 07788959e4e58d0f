import ShutterCapture
import ShutterCore

/// The daemon's side of the command model: each ``APICommand`` carried out on the loop's thread.
extension Daemon {
    /// The outcome of a command: the reply line, and whether the session now receives events.
    public struct CommandOutcome: Sendable {
        public var reply: String
        public var subscribes = false
    }

    /// Carries out `request` and returns its one reply.
    public func execute(_ request: APIRequest) -> CommandOutcome {
        let id = request.id
        let now = loop.clock.now
        func done() -> CommandOutcome { CommandOutcome(reply: APIReply.success(id: id)) }
        func refused(_ message: String) -> CommandOutcome { CommandOutcome(reply: APIReply.failure(id: id, message)) }
        // Let the state machines catch up first, so a command lands after every edge already read.
        try? pump(now: now)
        switch request.command {
        case .status:
            return CommandOutcome(reply: APIReply.success(id: id) { status(into: &$0, now: now) })
        case .subscribe:
            return CommandOutcome(reply: APIReply.success(id: id), subscribes: true)
        case .reload:
            switch reload(trigger: "reload request") {
            case .reloaded(let path, let name):
                return CommandOutcome(reply: APIReply.success(id: id) { $0.add("file", path); $0.add("board", name) })
            case .refused(let message):
                return refused(message)
            }
        case .capture:
            guard interpreter.perform({ machine, events in machine.remoteCapture(at: now, into: &events) }) else {
                return refused(captureEnabled ? "capture is unavailable: \(cameraState.reason ?? "the camera is not ready")"
                                              : "capture is disabled (send {\"cmd\":\"enable\",\"capture\":true})")
            }
            return CommandOutcome(reply: APIReply.success(id: id) { $0.add("pressedAt", now) })
        case .set(let control, let given):
            do throws(ControlRefusal) {
                let value: ControlValue
                switch given {
                case .value(let number):
                    // A picker titled with numbers (ISO 100, 200, 400) takes the number as a title.
                    value = try interpreter.machine.itemIndex(numbered: number, in: control).map(ControlValue.index) ?? .number(number)
                case .index(let index): value = .index(index)
                case .title(let title): value = .index(try interpreter.machine.itemIndex(titled: title, in: control))
                }
                try interpreter.perform { (machine, events) throws(ControlRefusal) in
                    try machine.setControl(control, to: value, at: now, into: &events)
                }
            } catch {
                return refused(error.description)
            }
            saveState()
            return done()
        case .select(let control):
            do throws(ControlRefusal) {
                try interpreter.perform { (machine, events) throws(ControlRefusal) in
                    try machine.selectControl(control, at: now, into: &events)
                }
            } catch {
                return refused(error.description)
            }
            return done()
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
                    return refused(error.description)
                }
            }
            return done()
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

    private func status(into line: inout JSONLine, now: Instant) {
        line.add("board", board.name)
        line.add("uptime", (now - startedAt).milliseconds / 1000, decimals: 3)
        var camera = JSONLine()
        // A board naming no camera reports the one found (none while it is looked for).
        if let device = board.camera.device ?? capture.service.currentCamera?.info.path { camera.add("device", device) }
        camera.add("state", cameraState.name)
        line.add("camera", camera)
        line.add("captureAvailable", interpreter.machine.isCaptureAvailable)
        line.add("captureEnabled", captureEnabled)
        let snapshot = interpreter.machine.controlsSnapshot
        line.add("controlsState", snapshot.state)
        if let current = snapshot.current { line.add("currentControl", current) }
        if let highlighted = snapshot.highlighted { line.add("highlightedControl", highlighted) }
        let controls = snapshot.controls.map { spec, value in Self.describe(spec, value: value).description }
        line.add("controls", json: "[" + controls.joined(separator: ",") + "]")
        var counts = JSONLine()
        counts.add("presses", counters.presses)
        counts.add("photos", counters.photos)
        counts.add("failures", counters.failures)
        counts.add("lostEdges", counters.lostEdges)
        line.add("counters", counts)
        line.add("lastPhoto", json: lastPhotoPath.map(JSONLine.quoted) ?? "null")
        // Who is listening: a script can wait until its `events` follower is subscribed before
        // it presses, instead of sleeping and hoping the follower has started.
        if let api {
            var clients = JSONLine()
            clients.add("connected", api.clientCount)
            clients.add("subscribed", api.subscriberCount)
            line.add("clients", clients)
        }
    }

    /// One control as `status` lists it.
    static func describe(_ spec: ControlSpec, value: ControlValue) -> JSONLine {
        var line = JSONLine()
        line.add("id", spec.id)
        line.add("label", spec.label)
        line.add("kind", spec.kind.name)
        switch spec.kind {
        case .picker(let count, let titles):
            let names = titles ?? (0..<count).map(String.init)
            line.add("titles", json: "[" + names.map(JSONLine.quoted).joined(separator: ",") + "]")
        case .slider(let values), .systemZoom(let values), .systemExposureBias(let values), .lensPosition(let values):
            switch values {
            case .range(let range, let step):
                line.add("range", json: "[\(JSONLine.number(range.lowerBound, decimals: 12)),\(JSONLine.number(range.upperBound, decimals: 12))]")
                if let step { line.add("step", step, decimals: 12) }
            case .list(let list):
                line.add("values", json: "[" + list.map { JSONLine.number($0, decimals: 12) }.joined(separator: ",") + "]")
            }
        }
        switch value {
        case .number(let number): line.add("value", number, decimals: 12)
        case .index(let index): line.add("index", index)
        }
        // The events' formatter, so a subscriber reads the same text in `status` as in `controlValue`.
        line.add("text", ControlDisplay(value, of: spec).text)
        line.add("enabled", spec.enabled)
        return line
    }
}
