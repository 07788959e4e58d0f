#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import ShutterService
import ShutterSystem

/// The simulator's keys in a terminal: each plays a gesture on the mock chip.
///
/// What the daemon does shows in the ``TerminalOverlay`` when standard output is a terminal too
/// (the key list is printed above it); with standard output a pipe the event lines stay JSON there
/// and the key list goes to standard error.
///
/// The terminal is put in non-canonical mode without echo (Ctrl-C still stops the daemon) and
/// restored by ``restore()``.
public final class SimulatorTerminal {
    private unowned let daemon: Daemon
    private let player: GesturePlayer
    private var saved = termios()
    private var pending: [UInt8] = []
    private var restored = false

    /// The keys, as the screen lists them.
    public static let keys: [(key: String, gesture: SimulatedGesture?, what: String)] = [
        ("l / space", .lightPress, "light press (half press)"),
        ("d", .doubleLightPress, "double light press (chooser)"),
        ("f / enter", .fullClick, "full click (photo)"),
        ("b", .burst, "hold for a burst"),
        ("← / ,", .stepLeft, "one step left (a finger to the next pad)"),
        ("→ / .", .stepRight, "one step right"),
        ("s", .secondary, "secondary button"),
        ("q", nil, "quit"),
    ]

    public init(daemon: Daemon, player: GesturePlayer, overlay: TerminalOverlay?) {
        self.daemon = daemon
        self.player = player
        tcgetattr(STDIN_FILENO, &saved)
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        tcsetattr(STDIN_FILENO, TCSANOW, &raw)
        _ = fcntl(STDIN_FILENO, F_SETFL, fcntl(STDIN_FILENO, F_GETFL) | O_NONBLOCK)
        let list = Self.keys.map { "\($0.key): \($0.what)" }.joined(separator: " · ")
        let help = "shutter simulator, board \(daemon.board.name). Keys: \(list)"
        if let overlay { overlay.print(help) } else { Console.error(help) }
        daemon.loop.watch(STDIN_FILENO) { [unowned self] in readKeys() }
    }

    deinit { restore() }

    /// Gives the terminal back as it was.
    public func restore() {
        guard !restored else { return }
        restored = true
        tcsetattr(STDIN_FILENO, TCSANOW, &saved)
    }

    private func readKeys() {
        var chunk = [UInt8](repeating: 0, count: 64)
        let count = read(STDIN_FILENO, &chunk, chunk.count)
        if count == 0 { daemon.loop.stop(); return }
        guard count > 0 else { return }
        pending.append(contentsOf: chunk.prefix(count))
        while !pending.isEmpty {
            // Arrow keys arrive as ESC [ C / ESC [ D.
            if pending[0] == 0x1B {
                guard pending.count >= 3 else { if pending.count == 1 || pending[1] == UInt8(ascii: "[") { return }; pending.removeFirst(); continue }
                let code = pending[2]
                pending.removeFirst(3)
                if code == UInt8(ascii: "C") { player.play(.stepRight) }
                if code == UInt8(ascii: "D") { player.play(.stepLeft) }
                continue
            }
            let key = pending.removeFirst()
            switch key {
            case UInt8(ascii: "l"), UInt8(ascii: " "): player.play(.lightPress)
            case UInt8(ascii: "d"): player.play(.doubleLightPress)
            case UInt8(ascii: "f"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): player.play(.fullClick)
            case UInt8(ascii: "b"): player.play(.burst)
            case UInt8(ascii: ","): player.play(.stepLeft)
            case UInt8(ascii: "."): player.play(.stepRight)
            case UInt8(ascii: "s"): player.play(.secondary)
            case UInt8(ascii: "q"): daemon.loop.stop()
            default: break
            }
        }
    }
}
