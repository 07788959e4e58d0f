// shutter-capture-check: drives the capture module from the command line for the VM checks and
// the benchmark, until `shutter` wires in `cameras` and `capture`. Its command line is read as
// `shutter`'s is (ParsedArguments): an option a command does not take is refused, exit status 2.
//
// `shutter-capture-check --help` (or `--help` after any command) lists the commands and their
// options (`usage` below). `preview` measures the live view's cost: S seconds streaming
// unwatched, then S watched; CPU per preview. `run --stop-file PATH` ends the presses early once
// PATH exists; `--one-at-a-time`: no press while another waits for its frame, for a camera
// slower than the presses. `encode` is frame → JPEG only, no camera.
import Foundation
import ShutterCapture
import ShutterCore
import ShutterSystem

let command = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "help"

/// Each command's options. Their help is `usage` below, so none carries its own.
let commandOptions: [String: [OptionSpec]] = {
    func value(_ name: String, _ valueName: String) -> OptionSpec { OptionSpec(name: name, valueName: valueName, help: "") }
    func flag(_ name: String) -> OptionSpec { OptionSpec(name: name, valueName: nil, help: "") }
    let board = value("--board", "B")
    let overrides = [value("--device", "D"), value("--size", "WxH"), value("--format", "FOURCC"), value("--fps", "N"),
                     value("--dir", "DIR"), value("--ring", "N"), value("--warmup", "N"), flag("--low-power"),
                     value("--bind", "ID=NAME"), value("--digital-zoom", "scale|crop")]
    return [
        "cameras": [],
        "check": [board] + overrides,
        "capture": [board, value("--out", "PATH")] + overrides,
        "run": [board, value("--seconds", "S"), value("--press-every-ms", "M"), value("--zoom", "F"),
                value("--stop-file", "PATH"), flag("--one-at-a-time")] + overrides,
        "verify": [value("--jpeg", "PATH"), value("--width", "W"), value("--height", "H"), flag("--bars"),
                   value("--zoom", "F"), value("--exif", "TEXT")],
        "bench": [board, value("--shots", "N")] + overrides,
        "encode": [value("--size", "WxH"), value("--format", "FOURCC"), value("--range", "full|limited"),
                   value("--strips", "N"), value("--shots", "N"), value("--zoom", "F"), flag("--crop"), value("--effect", "E")],
        "preview": [board, value("--seconds", "S"), value("--width", "W"), value("--quality", "Q"),
                    value("--preview-fps", "N")] + overrides,
        "control": [board, value("--set", "ID=VALUE")] + overrides,
    ]
}()

/// The command's options; nil for `help` and a command not known, which show the usage.
let arguments: ParsedArguments? = {
    guard let options = commandOptions[command] else { return nil }
    let spec = CommandSpec(program: "shutter-capture-check", name: command, summary: "", synopsis: "", options: options)
    do {
        return try ParsedArguments(Array(CommandLine.arguments.dropFirst(2)), spec: spec)
    } catch let error as UsageError {
        fail(error.message)
    } catch {
        fail("\(error)")
    }
}()

/// Writes a line to stdout at once (not buffered): the VM checks watch events as they come.
func out(_ item: Any, newline: Bool = true) {
    let text = "\(item)" + (newline ? "\n" : "")
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        if written <= 0 { return }
        bytes = bytes.dropFirst(written)
    }
}

func value(_ name: String) -> String? { arguments?.value(name) }
func values(_ name: String) -> [String] { arguments?.values(name) ?? [] }
func flag(_ name: String) -> Bool { arguments?.has(name) ?? false }
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("shutter-capture-check: \(message)\n".utf8))
    exit(2)
}

func loadBoard() -> Board {
    guard let path = value("--board") else { fail("--board is required") }
    var board: Board
    do { board = try Board.load(path: path) } catch { fail("\(error)") }
    if let device = value("--device") { board.camera.device = device }
    if let size = value("--size") {
        let parts = size.split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2 else { fail("--size expects WxH") }
        board.camera.width = parts[0]
        board.camera.height = parts[1]
    }
    if let format = value("--format") { board.camera.pixelFormat = format }
    if let fps = value("--fps") {
        guard let rate = Double(fps), rate >= 0.1, rate <= 1000 else { fail("--fps expects frames per second, 0.1...1000") }
        board.camera.fps = rate
    }
    if let dir = value("--dir") { board.output.directory = dir }
    if let ring = value("--ring").flatMap(Int.init) { board.camera.ringFrames = ring }
    if let warmup = value("--warmup").flatMap(Int.init) { board.camera.warmupFrames = warmup }
    if flag("--low-power") { board.camera.keepStreaming = false }
    if let mode = value("--digital-zoom") {
        guard let output = DigitalZoomOutput(rawValue: mode) else { fail("--digital-zoom expects 'scale' or 'crop'") }
        board.camera.digitalZoom = output
    }
    for binding in values("--bind") {
        let parts = binding.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { fail("--bind expects CONTROL_ID=V4L2 control name") }
        board.camera.bindings[parts[0]] = parts[1]
    }
    return board
}

/// Polls the service until `body` says stop or `until` passes; events go to `body`.
func pump(_ service: CaptureService, until deadline: Instant, _ body: (CaptureEvent?) -> Bool) {
    while monotonicNow() < deadline {
        var fds = service.pollDescriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        _ = poll(&fds, nfds_t(fds.count), 20)
        let events = service.handleReadable()
        for event in events where !body(event) { return }
        if !body(nil) { return }
    }
}

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
}

func stats(_ name: String, _ samples: [Double]) -> JSONLine {
    let sorted = samples.sorted()
    var line = JSONLine()
    line.add("n", sorted.count)
    line.add("min", sorted.first ?? .nan, decimals: 2)
    line.add("p50", percentile(sorted, 0.5), decimals: 2)
    line.add("p90", percentile(sorted, 0.9), decimals: 2)
    line.add("max", sorted.last ?? .nan, decimals: 2)
    return line
}

/// The commands and their options.
let usage = """
    usage:
      shutter-capture-check cameras
      shutter-capture-check check --board B [overrides]
      shutter-capture-check capture --board B [--out PATH] [overrides]
      shutter-capture-check run --board B --seconds S [--press-every-ms M] [--zoom F] [--stop-file PATH] [--one-at-a-time] [overrides]
      shutter-capture-check verify --jpeg PATH --width W --height H [--bars [--zoom F]] [--exif TEXT]...
      shutter-capture-check bench --board B --shots N [overrides]
      shutter-capture-check encode --size WxH --format FOURCC [--range full|limited] [--strips N] [--shots N] [--zoom F [--crop]] [--effect E]
      shutter-capture-check preview --board B [--seconds S] [--width W] [--quality Q] [--preview-fps N] [overrides]
      shutter-capture-check control --board B [--bind ID=NAME]... [--set ID=VALUE]... [overrides]
    overrides: --device D  --size WxH  --format FOURCC  --fps N  --dir DIR  --ring N  --warmup N  --low-power  --bind ID=NAME
               --digital-zoom scale|crop
    """
// `help`, `--help` or `-h` as the command, or `--help` after any command, shows the usage
// rather than running it.
if ["help", "--help", "-h"].contains(command) || arguments?.wantsHelp == true {
    out(usage)
    exit(0)
}

switch command {
case "cameras":
    out(CameraCommands.listCameras(), newline: false)

case "check":
    do {
        for line in try CameraCommands.checkCamera(board: loadBoard()) { out(line) }
    } catch {
        out("camera: \(error)")
        exit(1)
    }

case "capture":
    let board = loadBoard()
    do {
        out(try CameraCommands.captureOnce(board: board, out: value("--out")))
    } catch {
        var line = JSONLine(event: "captureFailed", at: monotonicNow())
        line.add("kind", error.kind)
        line.add("reason", error.description)
        out(line)
        exit(1)
    }

case "run":
    // A stand-in for the daemon: presses every M ms with kernel-like timestamps slightly in the
    // past, printing every event; a summary line at the end.
    let board = loadBoard()
    let seconds = Double(value("--seconds") ?? "5") ?? 5
    // --stop-file PATH: stop pressing as soon as PATH exists (the VM checks end a run when they have seen enough).
    let stopFile = value("--stop-file")
    let every = Double(value("--press-every-ms") ?? "400") ?? 400
    // --one-at-a-time: a camera streaming slower than the presses (libcamera 0.4's vimc under
    // emulation: ~1 fps) would queue them, each waiting for a frame of its own; the zero-shutter-lag
    // checks want each press's own frame choice, not a queue's.
    let oneAtATime = flag("--one-at-a-time")
    let service: CaptureService
    do { service = try CaptureService(board: board) } catch { fail("\(error)") }
    if let zoom = value("--zoom").flatMap(Double.init) { service.setZoom(zoom) }
    let nominalInterval = service.currentCamera?.frameInterval
    var photos = 0, failures = 0, presses = 0
    var offsets: [Double] = [], brackets: [Double] = []
    var outside = 0
    // A photo saved before any frame after its press had arrived carries no bracket (the service
    // knew only the frame before). Its bracket is measured here from the frames this loop sees
    // arrive: (frames received, newest frame's time) whenever the newest changes, and the photo's
    // press is resolved at the end against the first frame after it, when that frame came right
    // after the one before the press (no frame unseen between). Failing that, it is held to the
    // frame interval the service assumed (`frameIntervalMs`): its frame must be the one exposing
    // at the press, no later than it and starting less than that interval before it. A photo with
    // none of these is counted in `withoutBracket`: the checks require it to be 0, so a run whose
    // photos have no bracket cannot pass as "within one frame interval".
    var seenFrames: [(count: Int, at: Instant)] = []
    var unbracketed: [(pressedAt: Instant, offset: Nanoseconds, assumed: Nanoseconds?)] = []
    func noteNewestFrame() {
        guard let newest = service.newestFrameAt, newest != seenFrames.last?.at else { return }
        seenFrames.append((service.framesReceived, newest))
    }
    var stoppedBetweenShots = 0
    var stoppedSincePress = false
    var nextPress = monotonicNow() + .milliseconds(every)
    let deadline = monotonicNow() + .seconds(seconds)
    var generator = SystemRandomNumberGenerator()
    var stopPressingAt = deadline - .milliseconds(1500)
    if stopPressingAt < monotonicNow() { stopPressingAt = deadline }
    pump(service, until: deadline + .seconds(30)) { event in
        if let event {
            out(event.json)
            switch event {
            case .photo(let photo):
                photos += 1
                offsets.append(photo.offset.milliseconds)
                if let bracket = photo.bracket {
                    brackets.append(bracket.milliseconds)
                    if !isFrameAtPress(offset: photo.offset, bracket: bracket, interval: photo.frameInterval) { outside += 1 }
                } else {
                    unbracketed.append((photo.pressedAt, photo.offset, photo.frameInterval))
                }
            case .captureFailed(let failure): if failure.pressedAt != nil { failures += 1 }
            case .cameraReady, .focusMode: break
            }
            return true
        }
        noteNewestFrame()
        // Low power: the camera must stop between one shot's frame and the next press (the photo
        // event itself may come after the next press has started the camera again).
        if !board.camera.keepStreaming, presses > 0, service.pendingCount == 0, !service.isStreaming {
            stoppedSincePress = true
        }
        var now = monotonicNow()
        if let stopFile, now < stopPressingAt, access(stopFile, F_OK) == 0 { stopPressingAt = now }
        now = monotonicNow()
        let warm = !board.camera.keepStreaming || service.framesReceived > board.camera.warmupFrames
        if now >= nextPress, now < stopPressingAt, service.isReady, warm, service.pendingCount == 0 || (board.camera.keepStreaming && !oneAtATime) {
            // A GPIO edge is stamped by the kernel before the loop sees it: 0-40 ms ago.
            let pressedAt = now - .milliseconds(Double.random(in: 0...40, using: &generator))
            if stoppedSincePress { stoppedBetweenShots += 1 }
            stoppedSincePress = false
            service.capture(Shot(pressedAt: pressedAt), now: now)
            presses += 1
            nextPress = now + .milliseconds(every)
        }
        let idle = service.pendingCount == 0 && service.inFlightCount == 0
        // Past the run's time, photos still being saved are waited for (a loaded machine encodes slowly).
        if now >= deadline, idle { return false }
        return !(now >= stopPressingAt && idle && presses > 0)
    }
    service.shutdown()
    var measuredBrackets = 0, heldToAssumed = 0, withoutBracket = 0
    for photo in unbracketed {
        guard let after = seenFrames.firstIndex(where: { $0.at > photo.pressedAt }), after > 0,
              seenFrames[after - 1].at <= photo.pressedAt, seenFrames[after].count - seenFrames[after - 1].count == 1
        else {
            guard let assumed = photo.assumed else { withoutBracket += 1; continue }
            heldToAssumed += 1
            if !isFrameAtPress(offset: photo.offset, bracket: nil, interval: assumed) { outside += 1 }
            continue
        }
        let bracket = seenFrames[after].at - seenFrames[after - 1].at
        measuredBrackets += 1
        brackets.append(bracket.milliseconds)
        if !isFrameAtPress(offset: photo.offset, bracket: bracket, interval: photo.assumed) { outside += 1 }
    }
    var summary = JSONLine(event: "summary", at: monotonicNow())
    summary.add("presses", presses)
    summary.add("photos", photos)
    summary.add("failures", failures)
    if let interval = nominalInterval { summary.add("nominalFrameIntervalMs", interval.milliseconds, decimals: 3) }
    summary.add("offsetMs", stats("offset", offsets))
    summary.add("bracketMs", stats("bracket", brackets))
    summary.add("outsideBracket", outside)
    summary.add("withoutBracket", withoutBracket)
    summary.add("bracketsMeasuredByLoop", measuredBrackets)
    summary.add("heldToAssumedInterval", heldToAssumed)
    if !board.camera.keepStreaming { summary.add("stoppedBetweenShots", stoppedBetweenShots + (stoppedSincePress ? 1 : 0)) }
    summary.add("absOffsetMaxMs", offsets.map(abs).max() ?? .nan, decimals: 3)
    out(summary)

case "control":
    // Sets board controls while the camera streams: how they are served, and how long apply() took.
    let board = loadBoard()
    let service: CaptureService
    do { service = try CaptureService(board: board) } catch { fail("\(error)") }
    pump(service, until: monotonicNow() + .seconds(10)) { _ in service.framesReceived < 2 }
    for report in service.controlReport() {
        out("\(report.id): \(report.how)")
    }
    for setting in values("--set") {
        let parts = setting.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, let number = Double(parts[1]) else { fail("--set expects ID=VALUE") }
        let isPicker = board.controls.first { $0.id == parts[0] }.map { if case .picker = $0.kind { true } else { false } } ?? false
        let started = monotonicNow()
        service.apply(controlID: parts[0], value: isPicker ? .index(Int(number)) : .number(number))
        out("set \(parts[0]) = \(parts[1]): apply took \(JSONLine.number((monotonicNow() - started).milliseconds, decimals: 3)) ms")
    }
    let before = service.framesReceived
    pump(service, until: monotonicNow() + .seconds(10)) { event in
        if let event { out(event.json) }
        return service.framesReceived < before + 2
    }
    (service.currentCamera as? V4L2Camera)?.flushControls()
    out("frames kept coming: \(service.framesReceived - before)")
    service.shutdown()

case "verify":
    guard let path = value("--jpeg"), let width = value("--width").flatMap(Int.init), let height = value("--height").flatMap(Int.init)
    else { fail("verify needs --jpeg, --width, --height") }
    guard let data = FileManager.default.contents(atPath: path) else { out("cannot read \(path)"); exit(1) }
    let bytes = [UInt8](data)
    do {
        let image = try JPEGDecoder().decode(bytes)
        guard image.width == width, image.height == height else {
            out("\(path): \(image.width)x\(image.height), expected \(width)x\(height)")
            exit(1)
        }
        if flag("--bars") {
            // 75 % colour bars, left to right: white, yellow, cyan, green, magenta, red, blue, black.
            let expected: [(Bool, Bool, Bool)] = [(true, true, true), (true, true, false), (false, true, true), (false, true, false),
                                                  (true, false, true), (true, false, false), (false, false, true), (false, false, false)]
            // --zoom F: the picture is the centred 1/F of the bars, so only the middle ones show, F times as wide.
            let zoom = value("--zoom").flatMap(Double.init) ?? 1
            var seen: [String] = []
            var good = true
            for bar in 0..<8 {
                let x = Int((Double(width) / 2 + (Double(width * (2 * bar + 1)) / 16 - Double(width) / 2) * zoom).rounded(.down))
                guard (0..<width).contains(x) else { continue }
                let p = image.pixel(x: x, y: height * 3 / 4)
                let on = (p.r > 100, p.g > 100, p.b > 100)
                seen.append("\(p.r)/\(p.g)/\(p.b)")
                if on != expected[bar] { good = false }
            }
            if !good { out("\(path): not colour bars: \(seen.joined(separator: " "))"); exit(1) }
        }
        let text = String(decoding: bytes.prefix(4096).map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
        for needle in values("--exif") where !text.contains(needle) {
            out("\(path): EXIF lacks '\(needle)'")
            exit(1)
        }
        out("\(path): ok \(image.width)x\(image.height) \(bytes.count) bytes")
    } catch {
        out("\(path): \(error)")
        exit(1)
    }

case "bench":
    // Press → JPEG on disk and frame → JPEG encode, over N presses spaced so each finishes first.
    let board = loadBoard()
    let shots = Int(value("--shots") ?? "10") ?? 10
    let service: CaptureService
    do { service = try CaptureService(board: board) } catch { fail("\(error)") }
    var pressToDisk: [Double] = [], encode: [Double] = [], write: [Double] = [], offsets: [Double] = []
    var waiting = false
    var failures = 0
    let deadline = monotonicNow() + .seconds(Double(shots) * 5 + 10)
    pump(service, until: deadline) { event in
        if case .photo(let photo)? = event {
            let pressedAt = photo.pressedAt
            pressToDisk.append((photo.at - pressedAt).milliseconds)
            encode.append(photo.encodeTime.milliseconds)
            write.append(photo.writeTime.milliseconds)
            offsets.append(photo.offset.milliseconds)
            waiting = false
        } else if case .captureFailed = event {
            failures += 1
            waiting = false
        }
        if event == nil, !waiting, service.framesReceived > board.camera.warmupFrames, pressToDisk.count + failures < shots {
            let now = monotonicNow()
            service.capture(pressedAt: now, now: now)
            waiting = true
        }
        return pressToDisk.count + failures < shots
    }
    service.shutdown()
    var line = JSONLine(event: "bench", at: monotonicNow())
    line.add("device", board.camera.deviceDescription)
    line.add("width", board.camera.width ?? 0)
    line.add("height", board.camera.height ?? 0)
    line.add("failures", failures)
    line.add("pressToDiskMs", stats("", pressToDisk))
    line.add("encodeMs", stats("", encode))
    line.add("writeMs", stats("", write))
    line.add("offsetMs", stats("", offsets))
    out(line)

case "encode":
    // Frame → JPEG for one layout, no camera: TurboJPEG straight from the planes (YU12), with
    // libyuv's chroma split (NV12), or packed (BGR3/RGB3), whole or a digital-zoom crop.
    let size = (value("--size") ?? "4608x2592").split(separator: "x").compactMap { Int($0) }
    guard size.count == 2, let format = PixelFormat(fourcc: value("--format") ?? "YU12") else { fail("--size WxH --format FOURCC") }
    let shots = Int(value("--shots") ?? "10") ?? 10
    // --range limited: a webcam's or vivid's frame, expanded to JPEG's full range on the way.
    guard let range = YUVRange(rawValue: value("--range") ?? "full") else { fail("--range expects full or limited") }
    let frameFormat = FrameFormat(width: size[0], height: size[1], pixelFormat: format, yuvRange: range)
    guard let frameBytes = frameFormat.frameBytes else { fail("\(format) is not an uncompressed format") }
    var bytes = [UInt8](repeating: 128, count: frameBytes)
    for index in stride(from: 0, to: bytes.count, by: 7) { bytes[index] = UInt8(truncatingIfNeeded: index) }
    let frame = Frame(timestamp: .zero, sequence: 0, format: frameFormat, bytes: bytes)
    let crop = Double(value("--zoom") ?? "1").flatMap { $0 > 1 ? CropRect.digitalZoom(width: size[0], height: size[1], factor: $0) : nil }
    // --crop saves digital zoom's crop at its own size (the board's `digitalZoom: "crop"`); by default it is scaled back.
    guard let effect = PhotoEffect(rawValue: value("--effect") ?? "none") else { fail("--effect expects none, mono, vivid or warm") }
    let processing = PhotoProcessing(crop: crop, scaleToFrame: !flag("--crop"), effect: effect)
    // --strips N: at most N strips at once (1: whole); by default as photos are (one per core).
    let strips = value("--strips").map { Int($0) ?? 0 } ?? JPEGEncoder.photoStrips
    guard strips >= 1 else { fail("--strips expects a whole number of at least 1") }
    var times: [Double] = [], jpegBytes = 0
    do {
        let encoder = try JPEGEncoder(strips: strips)
        for _ in 0..<shots {
            let started = monotonicNow()
            jpegBytes = try encodePhoto(frame, processing: processing, quality: 93, encoder: encoder).jpeg.count
            times.append((monotonicNow() - started).milliseconds)
        }
    } catch { fail("\(error)") }
    var line = JSONLine(event: "encode", at: monotonicNow())
    line.add("format", format.fourcc)
    line.add("range", range.rawValue)
    line.add("maxStrips", strips)
    line.add("width", size[0])
    line.add("height", size[1])
    line.add("bytes", jpegBytes)
    line.add("encodeMs", stats("", times))
    out(line)

case "preview":
    // The live view's cost on this camera: the service streams S seconds with nobody watching,
    // then S seconds with one viewer. Per preview: the preview queue's own CPU time (downscale
    // and encode, CLOCK_THREAD_CPUTIME_ID), and the process's extra CPU time while watched.
    var board = loadBoard()
    let seconds = Double(value("--seconds") ?? "5") ?? 5
    if let width = value("--width").flatMap(Int.init) { board.preview.width = width }
    if let quality = value("--quality").flatMap(Int.init) { board.preview.quality = quality }
    if let rate = value("--preview-fps").flatMap(Int.init) { board.preview.fps = rate }
    let service: CaptureService
    do { service = try CaptureService(board: board) } catch { fail("\(error)") }
    func processCPU() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &spec)
        return Double(spec.tv_sec) * 1000 + Double(spec.tv_nsec) / 1e6
    }
    func phase() -> (cpuMs: Double, frames: Int) {
        let frames = service.framesReceived, cpu = processCPU()
        pump(service, until: monotonicNow() + .seconds(seconds)) { _ in true }
        service.waitForPreviews()
        return (processCPU() - cpu, service.framesReceived - frames)
    }
    pump(service, until: monotonicNow() + .seconds(1)) { _ in true }  // started, warmed up
    let unwatched = phase()
    let before = service.preview.statistics
    service.preview.startWatching()
    let watched = phase()
    service.preview.stopWatching()
    let after = service.preview.statistics
    let previews = after.encoded - before.encoded
    guard previews > 0, let latest = service.preview.latest() else { fail("no preview was made: \(after.lastFailure ?? "no frames")") }
    var line = JSONLine(event: "preview", at: monotonicNow())
    line.add("camera", service.currentCamera?.format.description ?? "none")
    line.add("width", latest.width)
    line.add("height", latest.height)
    line.add("quality", board.preview.quality)
    line.add("fps", board.preview.fps)
    line.add("seconds", seconds, decimals: 1)
    line.add("framesWatched", watched.frames)
    line.add("previews", previews)
    line.add("skippedBusy", after.skippedBusy - before.skippedBusy)
    line.add("failed", after.failed - before.failed)
    line.add("jpegBytes", latest.jpeg.count)
    line.add("previewCpuMsPerFrame", Double(after.cpuTime.rawValue - before.cpuTime.rawValue) / 1e6 / Double(previews), decimals: 3)
    line.add("processCpuMsPerSecondUnwatched", unwatched.cpuMs / seconds, decimals: 2)
    line.add("processCpuMsPerSecondWatched", watched.cpuMs / seconds, decimals: 2)
    line.add("extraProcessCpuMsPerPreview", (watched.cpuMs - unwatched.cpuMs) / Double(previews), decimals: 3)
    out(line)
    service.shutdown()

default:
    out(usage)
    exit(2)
}
