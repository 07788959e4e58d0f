extension Daemon {
    /// The command model for a transport that runs on a thread of its own (an HTTP server's,
    /// an MQTT client's): ``submit(_:reply:)`` from that thread, the command runs on the loop
    /// through ``Daemon/execute(_:)``, and the outcome comes back through a callback.
    ///
    /// A value, safe to copy to any thread. It holds the daemon weakly: a port outliving its
    /// daemon only refuses.
    public struct CommandPort: Sendable {
        let mailbox: LoopMailbox
        let daemon: LoopBound<Daemon>

        /// Runs `request` on the daemon's loop and calls `reply` with its outcome; callable from
        /// any thread.
        ///
        /// `reply` is called exactly once: on the loop's thread with what ``Daemon/execute(_:)``
        /// returned, or, when the daemon is stopping (or gone) before the request ran, with a
        /// failure reply saying so, on the thread that found out (this one, or the one that
        /// closed the loop's mailbox). It must not block: hand the outcome to the transport's own
        /// thread (its queue, its wake-up) and return. An outcome that subscribes is only the
        /// reply: the transport follows events itself (``Daemon/observeLines(_:)``, through a post).
        public func submit(_ request: APIRequest, reply: @escaping @Sendable (CommandOutcome) -> Void) {
            let daemon = daemon
            mailbox.post({
                guard let daemon = daemon.object else {
                    reply(Daemon.stoppingOutcome(for: request))
                    return
                }
                reply(daemon.execute(request))
            }, ifDropped: {
                reply(Daemon.stoppingOutcome(for: request))
            })
        }

        /// Runs `work` on the daemon's loop with the daemon, from any thread (a transport
        /// registering its subscribers, reading counters). False when the daemon is stopping.
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

    /// The reply to a request that will not run: the daemon is stopping.
    static func stoppingOutcome(for request: APIRequest) -> CommandOutcome {
        CommandOutcome(reply: APIReply.failure(id: request.id, "shutter is stopping: the request was not run"))
    }
}

/// A weak reference to an object of the loop, carried through other threads but read only on
/// the loop's thread (in work the loop's mailbox runs): hence unchecked.
struct LoopBound<Object: AnyObject>: @unchecked Sendable {
    weak var object: Object?

    init(_ object: Object) { self.object = object }
}
