import ShutterCore
import ShutterService

/// What an HTTP request asks for, decided from its method and (already percent-decoded) path
/// alone: a pure value, so the routing and its refusals are tested without a socket.
///
/// The transport (``HTTPServer``) then checks the token, reads the body and runs the command
/// through the daemon's one command model; this type only names the endpoint.
enum HTTPRoute: Hashable, Sendable {
    /// `/`: the live-view page.
    case page
    /// `GET /api/status`.
    case status
    /// `POST /api/capture`, `/api/set`, `/api/select`, `/api/status`: the socket's command of
    /// that name, its fields from the JSON body.
    case command(String)
    /// `GET /events`: server-sent events, every line the socket's subscribers get.
    case events
    /// `GET /stream`: the previews as `multipart/x-mixed-replace` MJPEG.
    case stream
    /// `GET /snapshot`: the newest preview JPEG.
    case snapshot
    /// `GET /photos/`: the newest photos as JSON.
    case photoList
    /// `GET /photos/NAME`: one photo from the output directory.
    case photo(String)
    /// `GET /thumbs/NAME`: a small JPEG of that photo.
    case thumbnail(String)
    /// `POST /login`: the token form's answer (`token=…`, form-encoded).
    case login
    /// `GET /favicon.svg`: the pages' icon (served without the token: the login page shows it).
    case favicon
    /// Refused before anything runs: the status and why.
    case refused(HTTPRefusal)

    /// The commands that come as `POST /api/NAME`.
    static let commands: Set<String> = ["capture", "set", "select"]

    init(method: String, path: String) {
        let reading = method == "GET" || method == "HEAD"
        func only(_ allowed: String, _ route: HTTPRoute) -> HTTPRoute {
            let methods = allowed == "GET" ? ["GET", "HEAD"] : [allowed]
            return methods.contains(method) ? route : .refused(.methodNotAllowed(allow: methods.joined(separator: ", ")))
        }
        switch path {
        case "/": self = only("GET", .page)
        case "/login": self = only("POST", .login)
        case "/favicon.svg": self = only("GET", .favicon)
        case "/api/status":
            // POST too, as every socket command comes (its body may carry an `id`).
            self = reading ? .status : method == "POST" ? .command("status") : .refused(.methodNotAllowed(allow: "GET, HEAD, POST"))
        case "/events": self = only("GET", .events)
        case "/stream": self = only("GET", .stream)
        case "/snapshot": self = only("GET", .snapshot)
        case "/photos", "/photos/": self = only("GET", .photoList)
        default:
            if path.hasPrefix("/api/") {
                let name = String(path.dropFirst(5))
                self = Self.commands.contains(name) ? only("POST", .command(name)) : .refused(.notFound("no endpoint \(path.prefix(80))"))
            } else if path.hasPrefix("/photos/") || path.hasPrefix("/thumbs/") {
                let name = String(path.dropFirst(8))
                if let refusal = Self.refusal(ofPhotoName: name) {
                    self = .refused(refusal)
                } else {
                    self = only("GET", path.hasPrefix("/photos/") ? .photo(name) : .thumbnail(name))
                }
            } else {
                self = .refused(.notFound("no endpoint \(path.prefix(80))"))
            }
        }
    }

    /// Why `name` cannot name a photo, or nil when it is a plain file name, or a folder and a file
    /// (`SHOT/NODE.jpg`: a rig's shot has a folder of its own): no other `/` (the path was
    /// decoded, so `%2F` is one too), neither part `.`, `..` nor any hidden name (the writer's
    /// temporary files start with a dot), no control characters, at most 255 bytes each.
    static func refusal(ofPhotoName name: String) -> HTTPRefusal? {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { return .badRequest("a photo is a file name, or a folder and a file name (a rig's shot)") }
        for part in parts {
            if part.isEmpty || part.utf8.count > 255 { return .badRequest("a photo name is 1 to 255 bytes") }
            if part.contains("\\") { return .badRequest("a photo name has no '\\'") }
            if part.hasPrefix(".") { return .badRequest("'.', '..' and hidden names are not photos") }
            if part.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) { return .badRequest("a photo name has no control characters") }
        }
        return nil
    }

    /// The width a viewer asks previews at (`?width=N` on `/stream` and `/snapshot`), nil when it
    /// does not ask. Any whole number of pixels above 0 is taken (the feed snaps it to a few
    /// widths within the board's `preview.maxWidth`); anything else is refused.
    static func previewWidth(_ text: String?) -> Result<Int?, HTTPRefusal> {
        guard let text else { return .success(nil) }
        // Digits only: Int() would take a sign; a number past Int is no width either.
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let width = Int(text), width > 0 else {
            return .failure(.badRequest("width is the preview's width in pixels, a whole number above 0 (made at most preview.maxWidth wide)"))
        }
        return .success(width)
    }

    /// Whether the route only looks (the board's `http.viewWithoutToken` lets these through).
    var onlyLooks: Bool {
        switch self {
        case .page, .status, .events, .stream, .snapshot, .photoList, .photo, .thumbnail, .favicon: true
        case .command(let name): name == "status"
        case .login, .refused: false
        }
    }
}

/// A request refused by the transport itself, before any command: an HTTP status and a message.
struct HTTPRefusal: Hashable, Sendable, Error {
    var status: Int
    var message: String
    /// `Allow:` for 405.
    var allow: String?

    static func badRequest(_ message: String) -> HTTPRefusal { HTTPRefusal(status: 400, message: message) }
    static func notFound(_ message: String) -> HTTPRefusal { HTTPRefusal(status: 404, message: message) }
    static func methodNotAllowed(allow: String) -> HTTPRefusal {
        HTTPRefusal(status: 405, message: "method not allowed here (allowed: \(allow))", allow: allow)
    }

    /// The body: the socket's failure line, with the kind named after the status.
    var json: String {
        var line = JSONLine()
        line.add("ok", false)
        line.add("kind", Self.kind(of: status))
        line.add("error", message)
        return line.description
    }

    static func kind(of status: Int) -> String {
        switch status {
        case 401: "unauthorized"
        case 403: "forbidden"
        case 404: "notFound"
        case 405: "methodNotAllowed"
        case 413: "tooLarge"
        case 415: "unsupportedMediaType"
        case 503: "unavailable"
        default: "invalidRequest"
        }
    }
}

/// Who may do what over HTTP: the token decides when it is required (any address but loopback),
/// and a loopback server checks the `Host` header instead, so a web page elsewhere cannot reach
/// it through a name that resolves to 127.0.0.1 (DNS rebinding).
struct HTTPAccessPolicy: Hashable, Sendable {
    /// The token, when one is required.
    var token: HTTPToken?
    var viewWithoutToken: Bool

    /// What a request may do.
    enum Decision: Hashable, Sendable {
        case allowed
        /// No or a wrong token: 401 (the page answers with the login page).
        case unauthorized
        /// A loopback server asked under another host name.
        case forbiddenHost
    }

    /// - Parameters:
    ///   - presented: the tokens the request carries (bearer, the link's), any of which may match.
    ///   - session: the session cookie (``HTTPToken/session``).
    ///   - host: the `Host` header.
    func decide(_ route: HTTPRoute, presented: [String], session: String? = nil, host: String?) -> Decision {
        guard let token else {
            return Self.isLoopbackHost(host) ? .allowed : .forbiddenHost
        }
        // The login form checks the token it is sent itself; the icon is on the login page too.
        if route == .login || route == .favicon { return .allowed }
        if presented.contains(where: token.matches) || session.map(token.matchesSession) == true { return .allowed }
        if viewWithoutToken, route.onlyLooks { return .allowed }
        return .unauthorized
    }

    /// Whether `host` (a `Host` header: name or address, maybe a port) names this machine's
    /// loopback: `localhost`, `127.x.x.x`, `[::1]`.
    static func isLoopbackHost(_ host: String?) -> Bool {
        guard var name = host?.lowercased(), !name.isEmpty else { return false }
        if name.hasPrefix("[") {
            guard let close = name.firstIndex(of: "]") else { return false }
            name = String(name[name.index(after: name.startIndex)..<close])
            return name == "::1"
        }
        if let colon = name.lastIndex(of: ":") { name = String(name[..<colon]) }
        if name == "localhost" || name.hasSuffix(".localhost") { return true }
        return HTTPEndpoint(address: name, port: 0).isLoopback && (try? HTTPEndpoint.validate(address: name)) != nil
    }
}
