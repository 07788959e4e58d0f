/// The board's `api` section: the local API's socket.
public struct APISettings: Hashable, Sendable {
    /// The Unix socket path; nil = no API unless `shutter run --socket` names one.
    public var socket: String?

    public init(socket: String? = nil) { self.socket = socket }
}

extension APISettings: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable { case socket }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        socket = try container.decodeIfPresent(String.self, forKey: .socket)
        if let socket, socket.isEmpty || socket.utf8.count > 107 {
            throw container.fail(.socket, "must be a path of 1 to 107 bytes (a Unix socket's limit)")
        }
    }
}

/// The board's `hooks` section: programs run after photos and on events, without a shell.
public struct HookSettings: Hashable, Sendable {
    /// Run after each photo is on disk: an argument vector; `{path}` and other `{field}`s are filled in.
    public var photo: [String]?
    /// Run on the events named in `events`.
    public var event: [String]?
    /// The event names `event` runs on.
    public var events: [String] = []
    /// How long a hook may run before SIGTERM (then SIGKILL after 2 s more).
    public var timeout: Nanoseconds = .seconds(30)
    /// Hooks running at once; more wait in the queue.
    public var maxRunning = 2
    /// Hooks waiting; beyond this the newest is dropped with a log line.
    public var maxQueued = 16

    public init() {}

    public var isEmpty: Bool { photo == nil && event == nil }
}

extension HookSettings: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable { case photo, event, events, timeoutMs, maxRunning, maxQueued }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        photo = try container.decodeIfPresent([String].self, forKey: .photo)
        event = try container.decodeIfPresent([String].self, forKey: .event)
        events = try container.decodeIfPresent([String].self, forKey: .events) ?? []
        if let photo, photo.first?.hasPrefix("/") != true {
            throw container.fail(.photo, "must be an argument vector starting with an absolute program path, e.g. [\"/usr/local/bin/upload\", \"{path}\"]")
        }
        if let event, event.first?.hasPrefix("/") != true {
            throw container.fail(.event, "must be an argument vector starting with an absolute program path")
        }
        if event != nil, events.isEmpty { throw container.fail(.events, "names the events 'event' runs on, e.g. [\"captureFailed\"]") }
        // A day at most: 1e300 ms trapped the conversion to nanoseconds in `shutter check` itself.
        timeout = try container.decodeMilliseconds(forKey: .timeoutMs, in: 1...86_400_000) ?? timeout
        maxRunning = try container.decodeIfPresent(Int.self, forKey: .maxRunning) ?? maxRunning
        if maxRunning < 1 { throw container.fail(.maxRunning, "must be at least 1") }
        maxQueued = try container.decodeIfPresent(Int.self, forKey: .maxQueued) ?? maxQueued
        if maxQueued < 0 { throw container.fail(.maxQueued, "must not be negative") }
    }
}

/// Where the HTTP server listens: a numeric IPv4 or IPv6 address and a port.
///
/// Only numeric addresses: a host name would need a resolver at start-up, and which address a
/// name means decides whether the token is needed (``isLoopback``).
public struct HTTPEndpoint: Hashable, Sendable, CustomStringConvertible {
    public var address: String
    /// 0 lets the kernel choose (tests).
    public var port: Int

    /// Live view's default: loopback only, so nothing is reachable from the network unasked.
    public static let defaultAddress = "127.0.0.1"
    public static let defaultPort = 8080

    public init(address: String = HTTPEndpoint.defaultAddress, port: Int = HTTPEndpoint.defaultPort) {
        self.address = address
        self.port = port
    }

    /// Parses `ADDR:PORT`, `[IPV6]:PORT`, or `ADDR` alone (the default port).
    ///
    /// - Throws: ``HTTPEndpoint/Invalid`` saying what is wrong.
    public init(parsing text: String) throws(Invalid) {
        var address = Substring(text)
        var port = Self.defaultPort
        if address.hasPrefix("[") {
            guard let close = address.firstIndex(of: "]") else { throw Invalid("'\(text)': an IPv6 address in brackets needs its ']'") }
            let rest = address[address.index(after: close)...]
            address = address[address.index(after: address.startIndex)..<close]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { throw Invalid("'\(text)': expected ':PORT' after ']'") }
                port = try Self.port(String(rest.dropFirst()), in: text)
            }
        } else if address.filter({ $0 == ":" }).count == 1, let colon = address.firstIndex(of: ":") {
            port = try Self.port(String(address[address.index(after: colon)...]), in: text)
            address = address[..<colon]
        }
        try Self.validate(address: String(address))
        self.init(address: String(address), port: port)
    }

    private static func port(_ text: String, in whole: String) throws(Invalid) -> Int {
        guard let port = Int(text), (0...65535).contains(port) else {
            throw Invalid("'\(whole)': the port must be a number from 0 to 65535")
        }
        return port
    }

    /// Checks that `address` is a numeric IPv4 address (four numbers 0-255) or looks like an IPv6
    /// one (hex digits and colons; the daemon's `inet_pton` has the last word).
    public static func validate(address: String) throws(Invalid) {
        if address.contains(":") {
            let allowed = Set("0123456789abcdefABCDEF:.")
            guard address.count >= 2, address.allSatisfy(allowed.contains) else {
                throw Invalid("'\(address)' is not a numeric IPv6 address")
            }
            return
        }
        guard ipv4Octets(address) != nil else {
            throw Invalid("'\(address)' is not a numeric IPv4 or IPv6 address (such as 127.0.0.1, 0.0.0.0 or ::1); host names are not looked up")
        }
    }

    private static func ipv4Octets(_ address: String) -> [Int]? {
        let parts = address.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var octets: [Int] = []
        for part in parts {
            guard !part.isEmpty, part.count <= 3, part.allSatisfy(\.isASCII), let value = Int(part), (0...255).contains(value) else { return nil }
            octets.append(value)
        }
        return octets
    }

    /// Whether only this machine can connect: 127.0.0.0/8 or ::1. Anything else needs the token.
    public var isLoopback: Bool {
        if let octets = Self.ipv4Octets(address) { return octets[0] == 127 }
        let lowered = address.lowercased()
        return lowered == "::1" || lowered == "0:0:0:0:0:0:0:1" || lowered.hasPrefix("::ffff:127.")
    }

    /// `ADDR:PORT`, with an IPv6 address in brackets (as a URL writes it).
    public var description: String {
        address.contains(":") ? "[\(address)]:\(port)" : "\(address):\(port)"
    }

    /// A malformed endpoint, with what to write instead.
    public struct Invalid: Error, Hashable, Sendable, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }
}

/// The board's `http` section: live view over HTTP. Present = served (as `shutter run --http`).
public struct HTTPSettings: Hashable, Sendable {
    public var endpoint = HTTPEndpoint()
    /// Connections at once: the live view's viewers take three quarters of them at most (18),
    /// the rest are kept for requests; more wait until one frees.
    public var maxClients = 24
    /// Whether looking (the page, `/events`, `/api/status`, `/photos/`) needs no token when the
    /// token is required; the commands always need it.
    public var viewWithoutToken = false
    /// Whether a loopback server requires the token too (a reverse proxy on the rig forwards
    /// other machines' requests from 127.0.0.1); any other address always requires it.
    public var requireToken = false

    public init(endpoint: HTTPEndpoint = HTTPEndpoint(), maxClients: Int = 24, viewWithoutToken: Bool = false,
                requireToken: Bool = false) {
        self.endpoint = endpoint
        self.maxClients = maxClients
        self.viewWithoutToken = viewWithoutToken
        self.requireToken = requireToken
    }

    /// Whether the server requires the token: on any address but loopback, or when asked.
    public var requiresToken: Bool { requireToken || !endpoint.isLoopback }
}

extension HTTPSettings: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable { case address, port, maxClients, viewWithoutToken, requireToken }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let address = try container.decodeIfPresent(String.self, forKey: .address) {
            do throws(HTTPEndpoint.Invalid) {
                try HTTPEndpoint.validate(address: address)
            } catch {
                throw container.fail(.address, error.description)
            }
            endpoint.address = address
        }
        if let port = try container.decodeIfPresent(Int.self, forKey: .port) {
            guard (1...65535).contains(port) else { throw container.fail(.port, "must be a port from 1 to 65535") }
            endpoint.port = port
        }
        maxClients = try container.decodeIfPresent(Int.self, forKey: .maxClients) ?? maxClients
        // The library counts connections in an unsigned int; a few hundred is far more than a
        // Pi serves viewers, and each costs a descriptor and its buffers.
        guard (1...1024).contains(maxClients) else { throw container.fail(.maxClients, "must be from 1 to 1024") }
        viewWithoutToken = try container.decodeIfPresent(Bool.self, forKey: .viewWithoutToken) ?? viewWithoutToken
        requireToken = try container.decodeIfPresent(Bool.self, forKey: .requireToken) ?? requireToken
    }
}

/// The board's `mqtt` section: the rig's broker, and this camera's place among the rig's nodes.
///
/// Present = the daemon connects (an unreachable broker never stops local capture: it is retried
/// with backoff). Topics are `<topicPrefix>/<rig>/<node>/…` and `<topicPrefix>/<rig>/shot`.
public struct MQTTSettings: Hashable, Sendable {
    /// The broker's host name or address.
    public var host: String
    public var port = 1883
    public var username: String?
    /// A file whose first line is the password (kept out of the board file, which many can read).
    public var passwordFile: String?
    /// TLS: the CA certificate that signed the broker's; with a client certificate and its key,
    /// the broker may know the node by it. Any of them turns TLS on.
    public var caFile: String?
    public var certFile: String?
    public var keyFile: String?
    /// The rig's name: the nodes of one rig share it and take each other's shots.
    public var rig: String
    /// This node's name in the rig; nil = the host name (`shutter run --mqtt-node` overrides it).
    public var node: String?
    /// The first level of every topic.
    public var topicPrefix = "shutter"
    /// MQTT keep-alive: the broker publishes the last will (`offline`) after 1.5 times this silence.
    public var keepAlive: Nanoseconds = .seconds(30)
    /// A shot older than this when it arrives is answered `missed` (the ring holds seconds, not more).
    public var maxShotAge: Nanoseconds = .seconds(5)
    /// How long the origin of a shot collects the nodes' results before `shotComplete`.
    public var shotTimeout: Nanoseconds = .seconds(3)
    /// A shot's photo file name, relative to the output directory: `{shot}` and `{node}` are filled in.
    public var shotTemplate = "{shot}/{node}.jpg"
    /// Whether `set` of zoom and exposure (a swipe, a command) is carried to every node of the rig.
    public var syncControls = false
    /// Whether Home Assistant's MQTT discovery is published (one device per node).
    public var discovery = true
    /// Home Assistant's discovery prefix.
    public var discoveryPrefix = "homeassistant"

    public init(host: String, port: Int = 1883, rig: String, node: String? = nil) {
        self.host = host
        self.port = port
        self.rig = rig
        self.node = node
    }

    /// Whether the connection uses TLS.
    public var usesTLS: Bool { caFile != nil || certFile != nil || keyFile != nil }

    /// Why `name` cannot be one level of a topic, or nil when it can: not empty, no `/`, `+`,
    /// `#` (MQTT's separator and wildcards), no NUL and no control characters, at most 64 bytes.
    public static func topicLevelProblem(_ name: String) -> String? {
        if name.isEmpty { return "must not be empty" }
        if name.utf8.count > 64 { return "must be at most 64 bytes" }
        if name.contains(where: { "/+#".contains($0) }) { return "must not contain '/', '+' or '#' (MQTT's topic separator and wildcards)" }
        if name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) { return "must not contain control characters" }
        return nil
    }
}

extension MQTTSettings: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case host, port, username, passwordFile, caFile, certFile, keyFile, rig, node, topicPrefix, keepAliveS
        case maxShotAgeMs, shotTimeoutMs, shotTemplate, syncControls, discovery, discoveryPrefix
    }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        host = try container.decode(String.self, forKey: .host)
        if host.isEmpty || host.contains(where: { $0.isWhitespace || $0 == "/" }) {
            throw container.fail(.host, "must be the broker's host name or numeric address, such as 192.168.1.10 or broker.local")
        }
        if let port = try container.decodeIfPresent(Int.self, forKey: .port) {
            guard (1...65535).contains(port) else { throw container.fail(.port, "must be a port from 1 to 65535 (MQTT's is 1883, over TLS 8883)") }
            self.port = port
        }
        rig = try container.decode(String.self, forKey: .rig)
        if let problem = Self.topicLevelProblem(rig) { throw container.fail(.rig, problem) }
        node = try container.decodeIfPresent(String.self, forKey: .node)
        if let node, let problem = Self.topicLevelProblem(node) { throw container.fail(.node, problem) }
        topicPrefix = try container.decodeIfPresent(String.self, forKey: .topicPrefix) ?? topicPrefix
        for level in topicPrefix.split(separator: "/", omittingEmptySubsequences: false) {
            if let problem = Self.topicLevelProblem(String(level)) {
                throw container.fail(.topicPrefix, "'\(topicPrefix)': each level \(problem)")
            }
        }
        username = try container.decodeIfPresent(String.self, forKey: .username)
        if let username, username.isEmpty { throw container.fail(.username, "must not be empty (leave it out for a broker without users)") }
        for key in [CodingKeys.passwordFile, .caFile, .certFile, .keyFile] {
            guard let path = try container.decodeIfPresent(String.self, forKey: key) else { continue }
            guard path.hasPrefix("/") else { throw container.fail(key, "must be an absolute path") }
            switch key {
            case .passwordFile: passwordFile = path
            case .caFile: caFile = path
            case .certFile: certFile = path
            default: keyFile = path
            }
        }
        if passwordFile != nil, username == nil { throw container.fail(.passwordFile, "needs 'username' (the broker checks a password against a user)") }
        if (certFile == nil) != (keyFile == nil) {
            throw container.fail(certFile == nil ? .keyFile : .certFile, "needs both 'certFile' and 'keyFile' (a client certificate and its private key)")
        }
        if certFile != nil, caFile == nil { throw container.fail(.caFile, "is needed with a client certificate (the CA that signed the broker's certificate)") }
        if let seconds = try container.decodeIfPresent(Int.self, forKey: .keepAliveS) {
            // libmosquitto refuses less than 5 s; MQTT's field is 16 bits.
            guard (5...65535).contains(seconds) else { throw container.fail(.keepAliveS, "must be from 5 to 65535 seconds") }
            keepAlive = .seconds(Double(seconds))
        }
        maxShotAge = try container.decodeMilliseconds(forKey: .maxShotAgeMs, in: 1...600_000) ?? maxShotAge
        shotTimeout = try container.decodeMilliseconds(forKey: .shotTimeoutMs, in: 1...600_000) ?? shotTimeout
        shotTemplate = try container.decodeIfPresent(String.self, forKey: .shotTemplate) ?? shotTemplate
        let parts = shotTemplate.split(separator: "/", omittingEmptySubsequences: false)
        if !shotTemplate.contains("{shot}") || shotTemplate.hasPrefix("/") || parts.count > 2
            || parts.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) {
            throw container.fail(.shotTemplate, "must name a file in the output directory (or one folder below it) with {shot} in it, such as \"{shot}/{node}.jpg\" or \"{shot}_{node}.jpg\"")
        }
        syncControls = try container.decodeIfPresent(Bool.self, forKey: .syncControls) ?? syncControls
        discovery = try container.decodeIfPresent(Bool.self, forKey: .discovery) ?? discovery
        discoveryPrefix = try container.decodeIfPresent(String.self, forKey: .discoveryPrefix) ?? discoveryPrefix
        if let problem = Self.topicLevelProblem(discoveryPrefix) { throw container.fail(.discoveryPrefix, problem) }
    }
}
