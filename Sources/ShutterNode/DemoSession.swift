#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import ShutterService
import ShutterSystem

/// The session `shutter run` plays on the simulator board when standard input is empty and no
/// terminal: every gesture once, so a first run shows what the rig does.
public enum DemoSession {
    /// Each gesture, with the pause before it (milliseconds): room for the recognizer's windows.
    public static let steps: [(gesture: SimulatedGesture, pauseMs: Double)] = [
        (.lightPress, 300),        // the controls appear: zoom
        (.swipeRight, 500),        // zoom in
        (.doubleLightPress, 600),  // the chooser opens
        (.stepRight, 500),         // highlight the next control: exposure
        (.lightPress, 500),        // select it
        (.swipeLeft, 600),         // adjust it
        (.doubleLightPress, 600),  // the chooser again
        (.stepRight, 500),         // highlight the filter
        (.lightPress, 500),        // select it
        (.swipeRight, 600),        // pick a filter
        (.fullClick, 600),         // a photo
        (.burst, 1_000),           // hold: a burst
    ]

    /// Queues the whole session on `player`, and stops the loop once it is played, every
    /// deadline has run and every photo is on disk, unless the daemon serves a socket, live view
    /// or a rig that was asked for: those it serves on until SIGINT or SIGTERM.
    public static func play(on player: GesturePlayer, daemon: Daemon) {
        for step in steps { player.play(step.gesture, after: .milliseconds(step.pauseMs)) }
        let loop = daemon.loop
        let afterWake = loop.afterWake
        loop.afterWake = { [unowned daemon, unowned player] in
            try afterWake()
            if !daemon.servesUntilStopped, player.isIdle, daemon.interpreter.nextDeadline == nil,
               daemon.capture.service.pendingCount == 0, daemon.capture.service.inFlightCount == 0 {
                loop.stop()
            }
        }
    }
}
