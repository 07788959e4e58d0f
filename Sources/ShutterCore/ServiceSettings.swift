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
