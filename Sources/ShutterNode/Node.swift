#if canImport(Glibc)
import Glibc
#endif
import ShutterAPI
import ShutterCapture
import ShutterCore
import ShutterHTTP
import ShutterMQTT
import ShutterService
import ShutterSystem

/// How `shutter run` was asked to run: the service's options and its transports'.
@dynamicMemberLookup
public struct NodeOptions: Sendable {
    /// The service's own: board file, state, what it prints.
    public var service = ServiceOptions()
    /// The API socket (`--socket`, or the board's `api.socket`); nil = no API, unless
    /// ``userSocketDirectory`` says otherwise.
    public var socketPath: String?
    /// Where a development run serves its API when neither ``socketPath`` nor the board's
    /// `api.socket` names a socket: `shutter.sock` in this directory (made mode 0700), found by
    /// the clients without options (``APISocketPaths``). Unlike a socket asked for, it keeps no
    /// daemon running once a trace has ended, and a socket another daemon serves is left to it.
    public var userSocketDirectory: String?
    /// What API clients may cost the daemon (tests make the limits small).
    public var apiLimits = APIServer.Limits()
    /// The group whose members (with root and the daemon's own user) control the daemon through
    /// the API (`--control-group`); every other client may only `status` and `subscribe`.
    /// nil: every client that can connect controls.
    public var controlGroup: String?
    /// With ``controlGroup``: the group whose members may only `status` and `subscribe`
    /// (`--view-group`); clients in neither group are refused. nil: every other client that can
    /// connect looks.
    public var viewGroup: String?
    /// Who controls, given outright instead of by ``controlGroup`` (tests: a control group
    /// without the root and own-user exception).
    var apiAccess: APIAccess?
    /// Live view over HTTP (`--http`, or the board's `http` section); nil = the board's.
    public var http: HTTPSettings?
    /// What HTTP clients may cost the daemon (tests make the limits small).
    public var httpLimits = HTTPServer.Limits()
    /// Where the HTTP token is kept; nil = `http-token` in the state directory.
    public var httpTokenPath: String?
    /// Whether the HTTP token is required whatever the address (tests bind 127.0.0.1 only).
    var httpRequiresToken: Bool?
    /// This node's name in the rig (`--mqtt-node`); nil = the board's `mqtt.node`, else the host name.
    public var mqttNode: String?

    public init() {}

    /// The service's options read and set as the node's own (`options.boardPath`).
    public subscript<Value>(dynamicMember keyPath: WritableKeyPath<ServiceOptions, Value>) -> Value {
        get { service[keyPath: keyPath] }
        set { service[keyPath: keyPath] = newValue }
    }
}

/// One node of a rig as `shutter run` runs it: the service, and the transports that serve it
/// (the API socket, live view over HTTP, the rig's MQTT node), each attached to the service
/// through its port.
///
/// The service knows no transport by name: this is the one place that makes them, from the
/// board and the options, in the order their clients hear each event (API, HTTP, MQTT).
public final class Node {
    public let service: Daemon
    public let options: NodeOptions
    /// The local API, when a socket was asked for.
    public private(set) var api: APIServer?
    /// Live view over HTTP, when asked for.
    public private(set) var http: HTTPServer?
    /// This node of a multi-camera rig on MQTT, when the board has an `mqtt` section.
    public private(set) var mqtt: MQTTNode?

    /// Makes the service (see ``Daemon/init(board:options:chip:captureService:cameraFactory:clock:)``)
    /// and its transports.
    ///
    /// - Throws: ``CommandFailure`` naming the line, camera directory, state file, socket,
    ///   address or rig setting that failed.
    public init(board: Board, options: NodeOptions = NodeOptions(), chip: (any GPIOChip)? = nil,
                captureService: CaptureService? = nil, cameraFactory: CameraFactory? = nil,
                clock: (any MonotonicClock)? = nil) throws {
        self.options = options
        service = try Daemon(board: board, options: options.service, chip: chip, captureService: captureService,
                             cameraFactory: cameraFactory, clock: clock)
        if let path = options.socketPath ?? service.board.api.socket {
            let access = try options.apiAccess ?? APIAccess(controlGroupNamed: options.controlGroup, viewGroupNamed: options.viewGroup)
            do throws(APIServer.Failure) {
                let server = try APIServer(path: path, service: service, limits: options.apiLimits, access: access)
                api = server
                service.attach(server)
            } catch {
                throw CommandFailure(error.description)
            }
        } else if let directory = options.userSocketDirectory {
            try serveUserSocket(in: directory)
        }
        if let settings = options.http ?? service.board.http {
            var configuration = HTTPServer.Configuration(settings: settings,
                                                         tokenPath: options.httpTokenPath ?? ControlState.stateDirectory(for: options.service) + "/http-token",
                                                         limits: options.httpLimits)
            configuration.requiresToken = options.httpRequiresToken
            // A control group decides who may command the rig: loopback HTTP, open to every local
            // user, would be a way around it, so there commands need the token too.
            let controlGroup = options.apiAccess.map { $0.controlGroup?.name } ?? options.controlGroup
            if configuration.requiresToken == nil, let controlGroup, !settings.requiresToken {
                configuration.requiresToken = true
                Log.notice("shutter: live view on loopback asks for the token: the API's control group '\(controlGroup)' decides who commands the rig")
            }
            do throws(HTTPServer.Failure) {
                let server = try HTTPServer(configuration: configuration, service: service)
                http = server
                service.attach(server)
            } catch {
                api?.close()
                throw CommandFailure(error.description)
            }
        }
        if let settings = service.board.mqtt {
            let node = options.mqttNode ?? settings.node ?? MQTTSettings.hostNodeName
            if let problem = MQTTSettings.topicLevelProblem(node) {
                api?.close()
                http?.close()
                throw CommandFailure("the rig's node name '\(node)' \(problem) (set mqtt.node in the board, or --mqtt-node)")
            }
            do {
                let node = try MQTTNode(settings: settings, node: node, service: service, liveViewURL: http?.photoBaseURL)
                mqtt = node
                service.rigParticipant = node
                service.attach(node)
            } catch {
                api?.close()
                http?.close()
                throw error
            }
        }
    }

    /// Serves the API on the per-user socket in `directory`, or says why not: the daemon runs
    /// on without it, as it would have without the default.
    ///
    /// - Throws: ``CommandFailure`` when `--control-group` or `--view-group` names no group.
    private func serveUserSocket(in directory: String) throws {
        let path = directory + "/shutter.sock"
        let access = try options.apiAccess ?? APIAccess(controlGroupNamed: options.controlGroup, viewGroupNamed: options.viewGroup)
        if let problem = APISocketPaths.prepareUserDirectory(directory, of: geteuid()) {
            Log.notice("shutter: no local API: \(problem)")
            return
        }
        do throws(APIServer.Failure) {
            let server = try APIServer(path: path, service: service, limits: options.apiLimits, access: access)
            api = server
            service.attach(server, keepsRunning: false)
            Log.info("shutter: local API on \(path) (shutter status, ctl, events find it)")
        } catch {
            Log.notice("shutter: no local API on \(path): \(error.description)")
        }
    }

    /// Runs the service until SIGINT/SIGTERM (or the simulator's input is over), then ends cleanly.
    public func run() throws {
        try service.run(started: { [self] in if let http { announce(http) } })
    }

    /// Ends the service and closes the transports (see ``Daemon/finish()``).
    public func finish() {
        service.finish()
        api = nil
        http = nil
        mqtt = nil
    }

    /// Says where live view is. The link with the token goes only to a terminal: under systemd,
    /// standard error is the journal, which more users read than the token file's owner.
    private func announce(_ http: HTTPServer) {
        guard http.requiresToken else {
            Log.notice("shutter: live view on \(http.link) (loopback only: no token needed)")
            return
        }
        if isatty(STDERR_FILENO) == 1 {
            let links = liveViewLinks(http.link, endpoint: http.endpoint)
            Log.notice("shutter: live view on " + links.joined(separator: " or ")
                + " (the link carries the token: share it only with who may control the rig)")
            // A phone scans the first link off the screen instead of typing a 32-digit token.
            if let code = try? QRCode(encoding: links[0]) { Log.notice(code.terminalText) }
        } else {
            Log.notice("shutter: live view on http://\(http.endpoint)/; the token is in \(options.httpTokenPath ?? ControlState.stateDirectory(for: options.service) + "/http-token") (open http://ADDRESS:\(http.endpoint.port)/?token=TOKEN)")
        }
    }
}
