#if canImport(Glibc)
import Glibc
#endif
import ShutterCapture
import ShutterCore
import ShutterService
import ShutterSystem
import Synchronization

/// The bottom lines of a terminal kept for the overlay, with other lines scrolling above it.
///
/// Every write goes through ``LineWriter/standardOutput`` (its queue keeps the order, and a
/// terminal that stops reading never blocks the loop). The lock makes each "erase the overlay,
/// print above it, draw it again" one piece, so a log line from another thread never lands
/// inside the overlay.
public final class TerminalScreen: Sendable {
    private struct State {
        var overlay: [String] = []
        /// How many lines of overlay are on the screen now (the cursor is at the end of the last).
        var drawn = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// The terminal's width in columns (80 when it cannot be read).
    ///
    /// The corresponding C function is `ioctl(TIOCGWINSZ)`.
    public static func columns(of descriptor: CInt = STDOUT_FILENO) -> Int {
        var size = winsize()
        guard ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }

    /// Prints `text` (one line or several) above the overlay, each line broken at spaces to the
    /// terminal's width with its continuations indented by `indent` columns: a line the terminal
    /// wrapped itself would break mid-word.
    public func print(_ text: String, indent: Int = 2) {
        let width = Self.columns() - 1
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            .flatMap { TerminalText.wrapped(String($0), width: width, indent: indent) }
        state.withLock { state in
            LineWriter.standardOutput.send(Self.erase(state.drawn) + lines.joined(separator: "\n") + "\n" + state.overlay.joined(separator: "\n"))
            state.drawn = state.overlay.count
        }
    }

    /// Replaces the overlay with `lines` (each shorter than the terminal is wide).
    public func draw(_ lines: [String]) {
        state.withLock { state in
            guard lines != state.overlay || state.drawn != lines.count else { return }
            LineWriter.standardOutput.send(Self.erase(state.drawn) + lines.joined(separator: "\n"))
            state.overlay = lines
            state.drawn = lines.count
        }
    }

    /// Leaves the overlay where it is and moves below it, for the shell.
    public func close() {
        state.withLock { state in
            if state.drawn > 0 { LineWriter.standardOutput.send("\n") }
            state.overlay = []
            state.drawn = 0
        }
        LineWriter.standardOutput.flush()
    }

    /// Back to the overlay's first line, and clear from there to the end of the screen.
    private static func erase(_ lines: Int) -> String {
        guard lines > 0 else { return "" }
        return "\r" + (lines > 1 ? "\u{1B}[\(lines - 1)A" : "") + "\u{1B}[J"
    }
}

/// What `shutter run` shows in a terminal: events in words scrolling above an overlay that draws
/// what the live-view page draws (the control and its scale, the chooser, the photo count), and a
/// flash line for each photo. The daemon's log lines, when standard error is the same terminal,
/// go above the overlay too instead of through it.
public final class TerminalOverlay {
    private unowned let daemon: Daemon
    private let screen = TerminalScreen()

    public init(daemon: Daemon) {
        self.daemon = daemon
        if Self.sameTerminal(STDERR_FILENO, STDOUT_FILENO) {
            let screen = screen
            Console.divertErrors { line in screen.print(line) }
        }
        daemon.observeEvents { [unowned self] event in
            screen.print(Self.text(of: event, since: daemon.startedAt), indent: Self.stampColumns)
            redraw()
        }
        redraw()
    }

    deinit { close() }

    /// Prints `line` above the overlay (the simulator's key list).
    public func print(_ line: String) { screen.print(line) }

    /// Gives standard error back and leaves the overlay on screen.
    public func close() {
        Console.divertErrors(nil)
        screen.close()
    }

    private func redraw() {
        screen.draw(ControlsOverlay.lines(daemon.interpreter.machine.controlsSnapshot, photos: daemon.counters.photos,
                                          lastPhoto: daemon.lastPhotoPath, width: TerminalScreen.columns()))
    }

    /// Whether two descriptors are the same terminal (a `2>file` keeps its lines in the file).
    ///
    /// The corresponding C functions are `isatty` and `fstat`.
    static func sameTerminal(_ one: CInt, _ other: CInt) -> Bool {
        guard isatty(one) == 1, isatty(other) == 1 else { return false }
        var first = stat(), second = stat()
        guard fstat(one, &first) == 0, fstat(other, &second) == 0 else { return false }
        return first.st_rdev == second.st_rdev
    }

    /// The columns of an event line's time stamp: where its text, and any continuation, begins.
    static let stampColumns = 13

    /// One event in words, stamped with the seconds since `origin`, as `monitor` stamps lines; a
    /// photo is a flash line (inverse video) that names the file.
    public static func text(of event: ServiceEvent, since origin: Instant) -> String {
        let stamp = event.time.map { time -> String in
            // Always three decimals, so the stamps line up as the lines scroll.
            let milliseconds = (time - origin).rawValue / 1_000_000
            let fraction = String(abs(milliseconds % 1000))
            let seconds = (milliseconds < 0 ? "-" : "") + "\(abs(milliseconds / 1000))."
                + String(repeating: "0", count: 3 - fraction.count) + fraction
            return String(repeating: " ", count: max(0, 9 - seconds.count)) + seconds + " s  "
        } ?? String(repeating: " ", count: stampColumns)
        if case .capture(.photo(let photo), _) = event.kind {
            let kilobytes = (photo.bytes + 512) / 1024
            let offset = JSONLine.number(photo.offset.milliseconds, decimals: 1)
            return stamp + "\u{1B}[7m ◉ PHOTO \u{1B}[0m \(photo.path) (\(photo.width)×\(photo.height), \(kilobytes) kB, "
                + "frame \(offset.hasPrefix("-") ? "" : "+")\(offset) ms from the press)"
        }
        return stamp + words(for: event)
    }

    /// What an event says, in words.
    static func words(for event: ServiceEvent) -> String {
        switch event.kind {
        case .gesture(let event):
            return words(for: event)
        case .capture(.captureFailed(let failure), _):
            return (failure.pressedAt == nil ? "camera failed: " : "no photo: ") + failure.error.description
        case .capture:
            return generic(event)
        case .edgesLost(let count, let resynchronised, _):
            return "\(count) edges lost (the kernel's queue overflowed)" + (resynchronised ? "; lines read again" : "")
        case .rig(.complete(let completion, _)):
            return "rig shot: \(completion.photos) of \(completion.nodes) nodes took it"
                + (completion.spread.map { ", spread \(JSONLine.number($0.milliseconds, decimals: 1)) ms" } ?? "")
        case .rig(.connection(let connected, let broker, let reason, _)):
            return connected ? "broker \(broker) connected" : "broker \(broker) lost: \(reason ?? "")"
        case .rig:
            return generic(event)
        }
    }

    private static func words(for event: ShutterEvent) -> String {
        switch event {
        case .capture(let phase, let action, _, _, let photo, let reason, _):
            return "capture \(phase.rawValue) (\(action.rawValue))" + (photo ? ": photo" : "")
                + (reason.map { ", \($0.rawValue)" } ?? "")
        case .burst(let phase, _, let shot, _):
            return phase == .ended ? "burst ended after \(shot) shots" : "burst shot \(shot)"
        case .prepare(let phase, _, _):
            return phase == .began ? "prepare (focus) began" : "prepare ended"
        case .lightPress(let source, _, _, _):
            return "light press (\(source.rawValue))"
        case .doubleLightPress(let source, _, _):
            return "double light press (\(source.rawValue))"
        case .swipe(let phase, let position, _, _, let flick, _):
            return "swipe \(phase.rawValue) at \(Int((position * 100).rounded())) %" + (flick ? ", a flick" : "")
        case .controlsActive(_, let display, _):
            return "controls shown: \(display.label) \(display.text)"
        case .controlsAdjusting(let phase, let control, _):
            return phase == .began ? "adjusting \(control)" : "done adjusting \(control)"
        case .controlsInactive(let reason, _):
            return "controls hidden (\(reason.rawValue))"
        case .controlValue(_, _, let display, _):
            return "\(display.label) \(display.text)"
        case .chooser(let phase, _):
            return phase == .began ? "chooser opened" : "chooser closed"
        case .controlHighlighted(let control, _):
            return "chooser on \(control)"
        case .controlSelected(_, let display, _):
            return "selected \(display.label) (\(display.text))"
        case .lineStuck(let line, _):
            return "line \(line) stuck: ignored until it releases"
        case .lineFreed(let line, _):
            return "line \(line) released: counts again"
        case .controlEnabled(let control, let enabled, _):
            return "\(control) \(enabled ? "enabled" : "disabled")"
        case .captureEnabled(let enabled, _):
            return enabled ? "capture available" : "capture unavailable"
        }
    }

    /// The event's name and members, `key value`, for events without words of their own.
    private static func generic(_ event: ServiceEvent) -> String {
        ([event.name] + event.fields.filter { $0.key != "event" && $0.key != "t" }.map { "\($0.key) \($0.text)" })
            .joined(separator: "  ")
    }
}

extension ServiceEvent {
    /// When the event happened, when it says.
    public var time: Instant? {
        switch kind {
        case .gesture(let event): event.time
        case .capture(.photo(let photo), _): photo.at
        case .capture(.captureFailed(let failure), _): failure.at
        case .capture(.cameraReady(let at, _, _, _, _), _): at
        case .capture(.focusMode(let change), _): change.at
        case .edgesLost(_, _, let at): at
        case .rig(.shot(_, _, let at)), .rig(.missed(_, _, let at)), .rig(.complete(_, let at)), .rig(.connection(_, _, _, let at)): at
        }
    }
}
