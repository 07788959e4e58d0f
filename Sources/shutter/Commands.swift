#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShutterCore
import ShutterGPIO
import ShutterCapture
import ShutterAPI
import ShutterHTTP
import ShutterMQTT
import ShutterNode
import ShutterService
import ShutterSystem

/// A command: its spec and what it does.
struct Command: Sendable {
    var spec: CommandSpec
    var run: @Sendable (ParsedArguments) throws -> Int32
}

let boardOption = OptionSpec(name: "--board", valueName: "BOARD", help: "the board file (e.g. Boards/simulator.json)")
let simulateOption = OptionSpec(name: "--simulate", valueName: nil,
                                help: "the board's lines on the mock chip, its camera a simulated camera module ('shutter run --help')")
let cameraModuleOption = OptionSpec(name: "--camera-module", valueName: "MODEL",
                                    help: "with --simulate: imx708 (Camera Module 3), imx477 (HQ Camera) or imx219 (Camera Module 2)")

/// What `--simulate` does, for the help of the commands that take it.
let simulateHelp = """
    Simulating a rig (--simulate), to try a board before its parts arrive: the board's lines keep
    their names and roles but sit on shutter's mock chip (the simulator's keys, traces and demo
    session drive them as on Boards/simulator.json), and its camera is replaced by a simulated
    Raspberry Pi camera module, taken through the real libcamera backend (its fake camera with
    the Raspberry Pi pipeline's behaviour): frames come by themselves at the module's full-
    resolution rate and show the synthetic camera's colour bars and chart. The module is
    --camera-module MODEL, else the one the board's camera.device names (imx708, imx477,
    imx219), else imx708 (Camera Module 3, with autofocus); a board naming "synthetic" keeps
    the synthetic camera. Photos go to ./photos unless --output DIR (capture: --out PATH) says
    otherwise; EXIF says Raspberry Pi and the module (imx708). Needs libshutter-libcamera.so.
      shutter run --simulate --board Boards/raspberry-pi-5.json < /dev/null
    """

let explainOption = OptionSpec(name: "--explain", valueName: nil,
                               help: "setup mode: say on standard error why each decision was made")

/// What `--explain` prints, for the help of the commands that take it.
let explainHelp = """
    Setup mode (--explain), for wiring and tuning a rig: the recognizer says on standard error
    why it decided what it did, one line each, with the figures and the board field that decided:
      why 1.204 s  full: 3.2 ms pulse dropped (glitch filter 5 ms)
      why 2.310 s  half: held 410 ms > lightPressMaxMs 350: not a light press
      why 3.020 s  strip: moved 0.5 pad in 140 ms ≤ tapMaxMs 180: a tap
      why 3.330 s  half: no second press within doublePressWindowMs 300: a single light press
    Off, the recognizer builds no explanation at all.
    """

let commands: [Command] = [
    Command(spec: CommandSpec(
        name: "run", summary: "Run the daemon: watch the buttons and the slider strip, print events as JSON lines.",
        synopsis: "[--board BOARD] [--simulate [--camera-module MODEL]] [--output DIR] [--explain]",
        details: """
        Events go to standard output, one JSON object a line; diagnostics go to standard error.
        When standard output is a terminal, the events are told in words instead (time stamped as
        monitor stamps them), above an overlay: the current control's label and value over a
        scale with ticks under a centre mark (a picker's titles), the chooser with its highlight,
        a flash line for each photo and a status line; log lines on the same terminal go above it.
        Stops cleanly on SIGINT or SIGTERM (a press in progress ends as 'cancelled').
        Each control's last value is kept in a state file, so the rig comes back as it was
        left: by default $STATE_DIRECTORY (set by systemd) or ~/.local/state/shutter,
        file BOARDNAME.controls.json.

        It serves the local API (shutter status, ctl, events, reload) on --socket PATH, else the
        board's api.socket, else your own socket: $XDG_RUNTIME_DIR/shutter/shutter.sock (else
        /tmp/shutter-UID/shutter.sock), in a directory only you may enter, where the client
        commands look first; a daemon already serving that one keeps it (this one serves none).
        Anyone who can open the socket (mode 0660) controls, unless
        --control-group NAME is given: then root, the daemon's own user and the members of NAME
        control, and every other client may only status and subscribe (any other command is
        refused with "permission denied"). With --view-group NAME2 too, only the members of NAME2
        may status and subscribe, every other client is refused when it connects, and the socket
        file is mode 0666 (the credentials decide). Roles come from the peer's credentials on the
        socket. The installed service runs with --socket /run/shutter/shutter.sock
        --control-group shutter --view-group shutter-view.

        With --http ADDR:PORT (or the board's http section; default 127.0.0.1:8080) it serves
        live view over HTTP: the page at / (the picture with Camera Control's overlay, a
        shutter button and a scale to drag, for a phone or a desktop), GET /stream (MJPEG),
        /snapshot (the newest preview JPEG), GET /api/status, POST /api/capture, /api/set,
        /api/select (JSON bodies, the socket's replies), GET /events (server-sent events: the
        socket's event lines), GET /photos/, /photos/NAME and /thumbs/NAME. On loopback no
        token is needed (unless the board's http.requireToken); any other address needs the
        token (128 random bits, made on first start in the state directory, file http-token):
        the printed link /?token=... sets a cookie, scripts send 'Authorization: Bearer TOKEN'.
        The link and its QR code go to a terminal only; 'shutter link' prints them again.

        Without --board: /etc/shutter/board.json when it exists (Deploy/install.sh puts it
        there), else the simulator board: Boards/simulator.json of the checkout the binary was
        built in (looked for up to 5 directories above the binary), else
        /usr/local/share/shutter/boards/simulator.json (installed by Deploy/install.sh).

        On the simulator board (chip "simulator", mock lines, synthetic camera):
        - in a terminal, keys drive the lines (l/space light press, d double light press,
          f/enter full click, b hold for a burst, arrows or , . one step (a finger to the next pad),
          s secondary, q quit),
          listed above the overlay (on standard error when standard output is a pipe);
        - with standard input empty (</dev/null, as under systemd or in CI), a built-in demo
          session plays (light press, zoom, exposure, a filter, a photo, a burst) and shutter
          exits 0, leaving the photos in the board's output directory (or serves on, as below);
        - otherwise standard input is a trace: each line an edge, {"t": 0.12, "line": "full",
          "active": true}, played at its time after start. When it ends, pending timeouts run,
          the photos are saved and shutter exits, unless it serves a socket asked for (--socket
          or api.socket), live view (--http or an http section) or a rig (an mqtt section): then
          it serves on until SIGINT or SIGTERM. Your own socket, served by default, keeps no run
          going. The demo session (standard input empty) ends the same way.

        \(simulateHelp)

        \(explainHelp)
        """,
        options: [boardOption, simulateOption, cameraModuleOption,
                  OptionSpec(name: "--output", valueName: "DIR", help: "write photos to DIR instead of the board's output.directory"),
                  explainOption,
                  OptionSpec(name: "--state", valueName: "FILE", help: "keep control values in FILE"),
                  OptionSpec(name: "--no-state", valueName: nil, help: "start from the board's initial values and save nothing"),
                  OptionSpec(name: "--socket", valueName: "PATH",
                             help: "serve the local API on this Unix socket (default: the board's api.socket, else your own socket)"),
                  OptionSpec(name: "--control-group", valueName: "NAME",
                             help: "API clients in group NAME (and root, the daemon's user) control; others may only status and subscribe"),
                  OptionSpec(name: "--view-group", valueName: "NAME",
                             help: "with --control-group: only clients in group NAME may status and subscribe; the rest are refused"),
                  OptionSpec(name: "--mqtt-node", valueName: "NAME",
                             help: "this camera's node name in the rig (default: the board's mqtt.node, else the host name)"),
                  OptionSpec(name: "--http", valueName: "ADDR:PORT",
                             help: "serve live view over HTTP here (default: the board's http section; none without); not loopback: token required")],
        required: []), run: runDaemon),
    Command(spec: CommandSpec(
        name: "status", summary: "Ask a running daemon how it is: board, camera, controls, counters, last photo.",
        synopsis: "[--socket PATH] [--json]",
        details: """
        Talks to the daemon's local API. Exit status 1 when no daemon listens (the error names
        the sockets tried).

        \(socketHelp)
        """,
        options: [socketOption, OptionSpec(name: "--json", valueName: nil, help: "print the daemon's reply as it came (one JSON line)")]),
        run: showStatus),
    Command(spec: CommandSpec(
        name: "events", summary: "Follow a running daemon's events, one JSON line each, as 'shutter run' prints them.",
        synopsis: "[--socket PATH]",
        details: """
        Runs until the daemon stops or Ctrl-C. A reader too slow to keep up loses the oldest lines
        and is told with {"event":"dropped","count":N}.

        \(socketHelp)
        """,
        options: [socketOption]), run: followEvents),
    Command(spec: CommandSpec(
        name: "ctl", summary: "Drive a running daemon: take a photo, set or select a control, enable or disable.",
        synopsis: "[--socket PATH] [--wait] capture | set CONTROL VALUE|#INDEX|TITLE | select CONTROL | enable|disable capture|CONTROL",
        details: """
        Examples:
          shutter ctl capture                  take a photo now (the event is capture, action remote)
          shutter ctl --wait capture           take a photo and print its path once it is saved
          shutter ctl capture --rig            a shot by the whole rig (board's mqtt section): every
                                               node takes the frame of this instant; the reply names
                                               the shot, and a shotComplete event follows
          shutter ctl set zoom 2               a slider's value; one off the steps is taken as the nearest
                                               step within half a step (zoom 1.9 is 2.0× with steps of 0.5,
                                               exposure 0.33 is +⅓ EV), and the reply says so; refused when
                                               more than half a step out of range
          shutter ctl set exposure 1/3         a fraction (-4/3 too)
          shutter ctl set filter Mono          a picker's item by title (or #1 by index)
          shutter ctl set iso 200              a picker whose titles are numbers: the item titled 200
          shutter ctl select exposure          make exposure the current control
          shutter ctl disable capture          presses and remote captures are refused until enabled
        Prints the daemon's reply: for set, the control's value now ("exposure: +⅓ EV"), or which
        value a number off the steps was taken as ("0.33 taken as +⅓ EV (0.333333)"); exit status 1
        with its error when it refuses. A capture's reply
        says it was accepted; with --wait the command ends when the photo is on disk (exit status 1
        with the reason when the press made no photo).

        \(socketHelp)
        """,
        options: [socketOption, OptionSpec(name: "--wait", valueName: nil, help: "capture: wait for the photo and print its path")],
        positionals: ["COMMAND"], takesWords: true), run: controlDaemon),
    Command(spec: CommandSpec(
        name: "reload", summary: "Make a running daemon read its board file again, and say whether it applied.",
        synopsis: "[--socket PATH]",
        details: """
        What SIGHUP does, with an answer: exit status 0 and the board's name when the board applied,
        1 with the board's error when it was refused (the daemon keeps its running board then). The
        systemd unit's ExecReload, so 'systemctl reload shutter' fails on a bad edit.

        \(socketHelp)
        """,
        options: [socketOption]), run: reloadDaemon),
    Command(spec: CommandSpec(
        name: "link", summary: "Print the live-view link with its token, and its QR code for a phone to scan.",
        synopsis: "[--board BOARD] [--http ADDR:PORT] [--token-file FILE] [--wait SECONDS]",
        details: """
        For a daemon serving live view (the board's http section, or 'shutter run --http ADDR:PORT':
        give the same --http here). The token is the one the daemon made in its state directory
        (default $STATE_DIRECTORY or ~/.local/state/shutter, file http-token; the installed
        service's is /var/lib/shutter/http-token, so: sudo shutter link --token-file
        /var/lib/shutter/http-token). Bound to every address (0.0.0.0), the link names each of
        this machine's own IPv4 addresses. Exit status 1 when live view is off or the token
        file holds no token (with --wait, after waiting that long for the daemon to make it).
        Deploy/install.sh --http prints the same once the service has restarted.
        """,
        options: [boardOption,
                  OptionSpec(name: "--http", valueName: "ADDR:PORT", help: "the address live view is served on (default: the board's http section)"),
                  OptionSpec(name: "--token-file", valueName: "FILE", help: "the daemon's token file (default: http-token in the state directory)"),
                  OptionSpec(name: "--wait", valueName: "SECONDS", help: "wait this long for a daemon just started to make its token")]),
        run: printLiveViewLink),
    Command(spec: CommandSpec(
        name: "check", summary: "Validate a board file and print the rig it describes.",
        synopsis: "BOARD [--simulate [--camera-module MODEL]]",
        details: """
        Exit status 0 when the board is valid, 1 (with the file and the field named) when not.
        When the board's GPIO chip is present, its lines are looked up too, and the camera is
        opened (not streamed): its format, ring and how each control is served. Each control's line
        says what it drives: the camera's zoom, exposure bias or lens, a photo effect per item, a
        camera control (camera.bindings), or "hooks and the API only". A board that names
        no camera.device takes the first camera libcamera lists, else the first V4L2 capture
        device, and check says which it found; the synthetic camera only when named. When the
        libcamera backend (libshutter-libcamera.so) cannot be loaded it goes on to V4L2: check
        says why, and run warns each time it opens that camera. With --simulate, the board is
        checked as 'shutter run --simulate' runs it: lines on the mock chip, the simulated camera
        module opened (see 'shutter run --help').
        On a Raspberry Pi's chip each line's pin on the 40-pin header is shown ('header pin 11'), a
        line the header does not carry is marked NOT ON THE HEADER with the reason (GPIO28 and up,
        a name that is not GPIOn), and settings no wiring can satisfy are warned of (a button to
        GND needs active-low with a pull-up); 'shutter wiring BOARD' draws the header.
        """,
        options: [simulateOption, cameraModuleOption], positionals: ["BOARD"]), run: checkBoard),
    Command(spec: CommandSpec(
        name: "wiring", summary: "Draw where a board's lines go on the Raspberry Pi's 40-pin header, and what to wire to each.",
        synopsis: "BOARD [--svg FILE]",
        details: """
        Prints the header as two columns of pins (1 to 40, with 3V3, 5V, GND and the GPIO numbers),
        the board's lines marked and named at their pins, then for each line its pin, GPIO, role,
        active level and bias and what to connect: a switch to the nearest GND for an active-low
        line with the Pi's pull-up, a TTP223 touch module's OUT for an active-high pad with a
        pull-down. Lines the header does not carry (the mock chip's, gpio-sim's, GPIO28 and up, a
        name that is not GPIOn) are listed with the reason, never drawn. A line's offset is its
        GPIO number on a chip found by a Raspberry Pi's label (pinctrl-rp1, pinctrl-bcm2711,
        pinctrl-bcm2835). With --svg the same drawing is written as an SVG picture ('-' for
        standard output); Docs/wiring/ holds the shipped boards' pictures, made this way:
          shutter wiring Boards/raspberry-pi-5.json --svg Docs/wiring/raspberry-pi-5.svg
        """,
        options: [OptionSpec(name: "--svg", valueName: "FILE", help: "write the drawing as SVG to FILE ('-': standard output)")],
        positionals: ["BOARD"]), run: drawWiring),
    Command(spec: CommandSpec(
        name: "record", summary: "Record edges from the board's GPIO chip as a trace (JSON Lines).",
        synopsis: "--board BOARD [--out FILE] [--seconds N]",
        details: """
        Records until SIGINT/SIGTERM or --seconds. Each edge is written as it happens:
        {"t": 0.12, "line": "full", "active": true}, t in seconds since the recording began
        (kernel CLOCK_MONOTONIC timestamps), active after active-low. Raw edges: bounce is kept,
        so a replay shows what the recognizer made of it. Attach the file to a bug report.
        """,
        options: [boardOption,
                  OptionSpec(name: "--out", valueName: "FILE", help: "write the trace here (default: standard output)"),
                  OptionSpec(name: "--seconds", valueName: "N", help: "stop after N seconds")],
        required: ["--board"]), run: recordTrace),
    Command(spec: CommandSpec(
        name: "replay", summary: "Feed a trace through the recognizer on a virtual clock and print its events.",
        synopsis: "--board BOARD --trace FILE|- [--explain]",
        details: """
        No real waiting: time jumps from edge to edge. After the last edge every pending
        timeout runs, then shutter exits 0. The output for a trace and a board is the same on
        every run; replay starts from the board's initial control values and never reads or
        writes the saved state. A malformed trace is refused with its line number (exit 1).
        With --explain, why each decision was made goes to standard error (see 'shutter run --help').
        """,
        options: [boardOption, OptionSpec(name: "--trace", valueName: "FILE", help: "the trace ('-' for standard input)"),
                  explainOption],
        required: ["--board", "--trace"]), run: replayTrace),
    Command(spec: CommandSpec(
        name: "cameras", summary: "List the libcamera and V4L2 cameras: formats, sizes, controls, and what each can serve.",
        synopsis: "",
        details: """
        First every camera libcamera lists (Raspberry Pi camera modules): its id and model (either
        is usable as a board's camera.device with "backend": "libcamera"), formats and sizes,
        controls with their ranges, and how it serves zoom (ScalerCrop), exposure bias
        (ExposureValue) and focus. Then each /dev/video* capture device: its card name (usable
        as camera.device), driver, formats and sizes, controls, and which of zoom, exposure bias
        and focus it can serve. See Deploy/CAMERAS.md for which backend suits which camera.
        """,
        options: []), run: listCameras),
    Command(spec: CommandSpec(
        name: "capture", summary: "Take one still now with the board's camera and print the photo event.",
        synopsis: "--board BOARD [--out PATH] [--simulate [--camera-module MODEL]]",
        details: """
        Without --out the photo goes to the board's output directory and name template ({seq}
        continues after the highest number already there), and latest.jpg follows it. An
        existing file is never overwritten ('-2' is added). With --simulate the photo is taken
        with the simulated camera module (see 'shutter run --help') and goes to ./photos
        without --out.
        """,
        options: [boardOption, OptionSpec(name: "--out", valueName: "PATH", help: "write the photo here"),
                  simulateOption, cameraModuleOption],
        required: ["--board"]), run: captureStill),
    Command(spec: CommandSpec(
        name: "monitor", summary: "Print edges and events live, for people.",
        synopsis: "--board BOARD [--seconds N] [--explain]",
        details: """
        Each raw edge (bounce included) and each event the recognizer made of it, stamped with
        the seconds since monitoring began, on standard output, each line as it happens. An edge
        names the line, what happened (pressed, released, touched, untouched) and, on a Raspberry
        Pi's header, its GPIO and pin, so each button and pad of a new rig can be tried in turn
        without taking a photo:
              1.204 s  pad0       touched    GPIO17, pin 11
        Lines already active when monitoring starts are listed first ("active now: ..."): a
        button listed there while nobody presses it has the wrong activeLow or bias.

        \(explainHelp)
        """,
        options: [boardOption, OptionSpec(name: "--seconds", valueName: "N", help: "stop after N seconds"), explainOption],
        required: ["--board"]), run: monitorLines),
]

/// The top-level help.
func mainHelp() -> String {
    var text = """
    usage: shutter COMMAND [OPTIONS]

    shutter turns a camera rig's buttons and touch slider into Camera Control events.

    commands:

    """
    let width = commands.map(\.spec.name.count).max() ?? 0
    for command in commands {
        text += "  \(command.spec.name)" + String(repeating: " ", count: width - command.spec.name.count + 2)
            + command.spec.summary + "\n"
    }
    text += """

    options:
      --help      show this help ('shutter COMMAND --help' for a command's)
      --version   show the version and the libgpiod it uses

    Start with: shutter run --board Boards/simulator.json
    """
    return text
}

// MARK: - check

func checkBoard(_ arguments: ParsedArguments) throws -> Int32 {
    let path = arguments.positionals[0]
    var board = try loadBoard(path)
    // Where the lines go on the header is the board file's, simulated or not.
    let wiring = WiringDiagram(board: board)
    let rig = try simulatedRig(board, arguments)
    if let rig { board = rig.board }
    if let mqtt = board.mqtt {
        // The files the daemon reads at start: a missing one is this board's error, named by its field.
        for (field, file) in [("passwordFile", mqtt.passwordFile), ("caFile", mqtt.caFile), ("certFile", mqtt.certFile), ("keyFile", mqtt.keyFile)] {
            guard let file, access(file, R_OK) != 0 else { continue }
            throw CommandFailure("\(path): mqtt.\(field): cannot read \(file): \(String(cString: strerror(errno)))")
        }
    }
    var text = "board \(board.name) (\(path)): valid\n"
    if let summary = board.summary { text += "  \(summary)\n" }
    if let rig { text += "\(rig.summary)\n" }
    text += "chip: \(board.chip)\n"
    var offsets: [LineIndex: String] = [:]
    if board.chip == .simulator {
        text += "  shutter's in-process mock chip: no hardware needed\n"
    } else {
        do {
            let chip = try GPIODChip(board.chip)
            text += "  found: \(chip.summary)\n"
            for index in board.lines.indices {
                do {
                    let offset = try chip.offset(of: board.lines[index])
                    let info = chip.lineInfo(offset: offset)
                    var note = "offset \(offset)"
                    if let info, info.used { note += ", in use by '\(info.consumer)'" }
                    offsets[LineIndex(index)] = note
                } catch {
                    offsets[LineIndex(index)] = "NOT FOUND: \(error)"
                }
            }
        } catch {
            text += "  not checked against hardware: \(error)\n"
        }
    }
    text += "libgpiod: \(LibGPIOD.summary)\n"
    text += "lines:\n"
    let nameWidth = board.lines.map(\.name.count).max() ?? 0
    for (index, line) in board.lines.enumerated() {
        var row = "  " + line.name.padded(to: nameWidth + 2)
        row += "role \(line.role.rawValue)".padded(to: 16)
        row += "line \(line.selector)".padded(to: 18)
        row += (line.activeLow ? "active-low" : "active-high").padded(to: 12)
        row += "bias \(line.bias.rawValue)".padded(to: 16)
        row += "debounce \(line.debounce.milliseconds.shortDescription) ms"
        if let connection = wiring.connection(of: line) {
            row += "  header pin \(connection.pin)"
        } else if case .raspberryPi = wiring.headerChip, let unplaced = wiring.unplaced.first(where: { $0.name == line.name }) {
            // Only on a chip known to be the header is a line off it a mistake: on one named by
            // number an offset may well be on the header, and the drawing just cannot tell.
            row += "  NOT ON THE HEADER: \(unplaced.reason)"
        }
        if let note = offsets[LineIndex(index)] { row += "  [\(note)]" }
        text += row + "\n"
    }
    for connection in wiring.connections {
        if let warning = connection.warning { text += "warning: \(connection.name) (pin \(connection.pin)): \(warning)\n" }
    }
    if !wiring.connections.isEmpty { text += "wiring: 'shutter wiring \(path)' draws the header with these lines (Docs/wiring.md)\n" }
    let g = board.gestures
    func ms(_ span: Nanoseconds) -> String { "\(span.milliseconds.shortDescription) ms" }
    text += "gestures: glitch filter \(ms(g.glitchFilter)), light press up to \(ms(g.lightPressMaximum)), "
        + "double press within \(ms(g.doublePressWindow)), tap up to \(ms(g.tapMaximum)), "
        + "prepare after \(ms(g.prepareAfter)), burst \(g.burstEnabled ? "after \(ms(g.burstAfter)) every \(ms(g.burstInterval))" : "off"), "
        + "controls idle \(ms(g.controlsIdleTimeout)), coalescing \(ms(g.coalescingInterval)), lift grace \(ms(g.liftGrace)), "
        + "capture on \(g.captureOn.rawValue), secondary: \(g.secondaryAction.rawValue), "
        + "wake ahead of a decision \(g.wakeAhead == .zero ? "off" : ms(g.wakeAhead)), "
        + "camera held before a decision \(g.holdCamera == .zero ? "off" : ms(g.holdCamera))\n"
    text += "controls (\(board.controls.count) of at most \(Board.maximumControls)):\n"
    for control in board.controls {
        var row = "  \(control.id) (\(control.label)): \(control.kind.name)"
        switch control.kind {
        case .picker(let count, let titles):
            row += titles.map { " " + $0.joined(separator: " | ") } ?? " \(count) items"
        case .slider(let values), .systemZoom(let values), .systemExposureBias(let values), .lensPosition(let values):
            switch values {
            case .range(let range, let step):
                row += " \(range.lowerBound.shortDescription)...\(range.upperBound.shortDescription)"
                if let step { row += " step \(JSONLine.number(step, decimals: 4))" }
            case .list(let list):
                row += " values " + list.map(\.shortDescription).joined(separator: ", ")
            }
        }
        switch control.initial {
        case .number(let value):
            row += ", starts at \(value.shortDescription)"
            if let written = control.initialWritten { row += " (initial \(written.shortDescription) taken as the nearest step)" }
        case .index(let index): row += ", starts at index \(index)"
        }
        if !control.enabled { row += " (disabled)" }
        text += row + "; drives \(board.drive(of: control))\n"
    }
    let c = board.camera
    let firstFound = c.backend == .auto ? "the first libcamera camera, else the first V4L2 capture device"
        : c.backend == .libcamera ? "the first libcamera camera" : "the first V4L2 capture device"
    text += "camera: \(c.device ?? "not named (\(firstFound))")"
    if let width = c.width, let height = c.height { text += " \(width)x\(height)" }
    if let format = c.pixelFormat { text += " \(format)" }
    text += ", JPEG quality \(c.quality)\n"
    do {
        for line in try CameraCommands.checkCamera(board: board, simulating: rig?.module) { text += "  \(line)\n" }
    } catch {
        text += "  not checked against hardware: \(error)\n"
    }
    text += "output: \(board.output.directory)/\(board.output.template)"
    if let http = board.http {
        text += "\nhttp: \(http.endpoint), at most \(http.maxClients) clients, "
            + (!http.requiresToken ? "loopback: no token" : "token required" + (http.viewWithoutToken ? " to control (viewing is open)" : ""))
    }
    if let mqtt = board.mqtt {
        let node = mqtt.node ?? "\(MQTTSettings.hostNodeName) (the host name)"
        text += "\nmqtt: broker \(mqtt.host):\(mqtt.port)" + (mqtt.usesTLS ? " over TLS" : "")
            + (mqtt.username.map { " as \($0)" } ?? " without a user") + "; rig \(mqtt.rig), node \(node)\n"
        text += "  topics \(mqtt.topicPrefix)/\(mqtt.rig)/NODE/{event,status,availability,cmd,reply,shot/ID} and \(mqtt.topicPrefix)/\(mqtt.rig)/shot\n"
        text += "  shots: taken when at most \(Int(mqtt.maxShotAge.milliseconds)) ms old, results collected for "
            + "\(Int(mqtt.shotTimeout.milliseconds)) ms, saved as \(board.output.directory)/\(mqtt.shotTemplate)"
            + (mqtt.syncControls ? "; zoom and exposure rig-wide" : "") + "\n"
        let discovery = HomeAssistantDiscovery(node: mqtt.node ?? MQTTSettings.hostNodeName, rig: mqtt.rig, topicPrefix: mqtt.topicPrefix,
                                               discoveryPrefix: mqtt.discoveryPrefix, board: board)
        text += "  Home Assistant discovery: " + (mqtt.discovery ? "on (\(discovery.topic))" : "off")
    }
    Console.out(text)
    return ExitStatus.success
}

// MARK: - cameras, capture

func listCameras(_ arguments: ParsedArguments) throws -> Int32 {
    Console.write(CameraCommands.listCameras(), to: STDOUT_FILENO)
    return ExitStatus.success
}

func captureStill(_ arguments: ParsedArguments) throws -> Int32 {
    var board = try loadBoard(arguments.value("--board")!)
    let rig = try simulatedRig(board, arguments)
    if let rig { board = rig.board }
    do {
        Console.out(try CameraCommands.captureOnce(board: board, out: arguments.value("--out"), simulating: rig?.module).description)
    } catch {
        throw CommandFailure(error.description)
    }
    return ExitStatus.success
}

// MARK: - replay

func replayTrace(_ arguments: ParsedArguments) throws -> Int32 {
    let board = try loadBoard(arguments.value("--board")!)
    let source = arguments.value("--trace")!
    let text: String
    if source == "-" {
        text = String(decoding: try readStandardInput(), as: UTF8.self)
    } else {
        guard let data = FileManager.default.contents(atPath: source) else {
            throw CommandFailure("\(source): cannot read the trace (\(FileManager.default.fileExists(atPath: source) ? "permission denied" : "no such file"))")
        }
        text = String(decoding: data, as: UTF8.self)
    }
    let trace: Trace
    do {
        trace = try Trace.parse(text, board: board, source: source == "-" ? "<stdin>" : source)
    } catch {
        throw CommandFailure(error.description)
    }
    // Lines go out in chunks as they are made: a day's trace makes more lines than are worth
    // holding, and a reader sees the first ones at once.
    let chunk = 1 << 16
    var output: [UInt8] = []
    output.reserveCapacity(chunk + 4096)
    var written = true
    let explain: ((Explanation) -> Void)? = arguments.has("--explain")
        ? { Console.error("why \(JSONLine.seconds($0.time)) s  \($0.line)") } : nil
    try replay(trace, board: board, explain: explain) { event in
        event.appendJSONLine(to: &output)
        if output.count >= chunk {
            written = written && Console.write(output, to: STDOUT_FILENO)
            output.removeAll(keepingCapacity: true)
        }
    }
    guard written, Console.write(output, to: STDOUT_FILENO) else { throw CommandFailure("cannot write to standard output") }
    return ExitStatus.success
}

/// Runs `trace` through the mock chip and the state machines on a virtual clock.
func replay(_ trace: Trace, board: Board, explain: ((Explanation) -> Void)? = nil,
            emit: @escaping (ShutterEvent) -> Void) throws {
    let chip = MockChip()
    let watcher = try chip.watch(board.lines, consumer: "shutter-replay")
    let interpreter = GestureDriver(board: board, watcher: watcher)
    interpreter.emit = emit
    interpreter.explain = explain
    interpreter.reportLostEdges = { count, time in
        Console.error("shutter: replay: \(count) edges dropped at t \(JSONLine.seconds(time)) (more than \(chip.queueCapacityPerLine) queued on one line)")
    }
    var index = 0
    let edges = trace.edges
    while index < edges.count {
        // Deliver every edge that shares this instant, then let the interpreter catch up to it;
        // the state machines fire deadlines due before an edge at their own time.
        let now = edges[index].time
        chip.clock.advance(to: now)
        while index < edges.count, edges[index].time == now {
            chip.set(edges[index].line, active: edges[index].active, at: now)
            index += 1
        }
        try interpreter.pump(now: now)
    }
    // finish runs every pending deadline at its own time, then ends what is still in progress.
    interpreter.finish(at: chip.clock.now)
}

/// All of standard input, to its end (a trace piped in). The corresponding C function is `read`.
///
/// - Throws: ``CommandFailure`` with `read`'s error.
func readStandardInput() throws(CommandFailure) -> [UInt8] {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        switch valueOrErrno({ read(STDIN_FILENO, &chunk, chunk.count) }) {
        case .success(0): return bytes
        case .success(let count): bytes += chunk[..<count]
        case .failure(let errno): throw CommandFailure("standard input: cannot read the trace (\(errno))")
        }
    }
}

extension String {
    /// The text cut or filled with spaces to `width` characters: a table's column, as
    /// Foundation's `padding(toLength:withPad: " ", startingAt: 0)` made it for these ASCII names.
    func padded(to width: Int) -> String {
        count >= width ? String(prefix(width)) : self + String(repeating: " ", count: width - count)
    }
}
