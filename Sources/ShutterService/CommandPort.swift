import ShutterSystem
extension Daemon {
    /// The command model for a transport that runs on a thread of its own (an HTTP server's,
    /// an MQTT client's): ``submit(_:reply:)`` from that thread, the command runs on the loop
    /// through ``Daemon/execute(_:)``, and its result comes back through a callback.
    ///
    /// A value, safe to copy to any thread. It holds the daemon weakly: a port outliving its
    /// daemon only refuses.
    public struct CommandPort: Sendable {
        let mailbox: LoopMailbox
        let daemon: LoopBound<Daemon>

        /// Runs `request` on the daemon's loop and calls `reply` with its result; callable from
        /// any thread.
        ///
        /// `reply` is called exactly once: on the loop's thread with what ``Daemon/execute(_:)``
        /// returned; or with a refusal saying why the request did not run, on the thread
        /// that found out: this one when too many requests already wait for the loop
        /// (``LoopMailbox/capacity``) or the daemon is stopping, the one that closed the loop's
        /// mailbox when the daemon stopped before the request's turn. It must not block: hand the
        /// result to the transport's own thread (its queue, its wake-up) and return. Events are
        /// not commands: the transport follows them itself (``Daemon/observeEvents(_:)``,
        /// registered through ``perform(_:)``).
        public func submit(_ request: APIRequest, reply: @escaping @Sendable (CommandResult) -> Void) {
            let daemon = daemon
            mailbox.post({
                guard let daemon = daemon.object else {
                    reply(Daemon.result(droppedBecause: .closed))
                    return
                }
                reply(daemon.execute(request))
            }, ifDropped: { drop in
                reply(Daemon.result(droppedBecause: drop))
            })
        }

        /// Runs `work` on the daemon's loop with the daemon, from any thread (a transport
        /// registering its subscribers, reading counters). False when it will not run: the daemon
        /// is stopping, or too much work already waits for the loop.
        @discardableResult
        public func perform(_ work: @escaping @Sendable (Daemon) -> Void) -> Bool {
            let daemon = daemon
            return mailbox.post {
                if let daemon = daemon.object { work(daemon) }
            }
        }
    }

    /// A port for submitting commands from other threads. Ask for it on the loop's thread (when
    /// setting up the transport), then hand it to the transport's thread.
    public var commandPort: CommandPort {
        CommandPort(mailbox: loop.mailbox, daemon: LoopBound(self))
    }

    /// The result of a request that will not run.
    static func result(droppedBecause drop: LoopMailbox.Drop) -> CommandResult {
        switch drop {
        case .closed:
            .refused(CommandRefusal(.unavailable, "shutter is stopping: the request was not run"))
        case .full:
            .refused(CommandRefusal(.busy, "shutter is busy: too many requests wait for its loop; try again later"))
        }
    }
}
