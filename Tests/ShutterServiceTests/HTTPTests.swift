#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import ShutterCore
@testable import ShutterAPI
@testable import ShutterHTTP
@testable import ShutterNode
@testable import ShutterService

/// Routing, names and the token, without a socket.
@Suite struct HTTPRouteTests {
    @Test(arguments: [
        ("GET", "/", HTTPRoute.page),
        ("HEAD", "/", .page),
        ("GET", "/api/status", .status),
        ("POST", "/api/status", .command("status")),
        ("POST", "/api/capture", .command("capture")),
        ("POST", "/api/set", .command("set")),
        ("POST", "/api/select", .command("select")),
        ("GET", "/events", .events),
        ("GET", "/photos/", .photoList),
        ("GET", "/photos/IMG_1.jpg", .photo("IMG_1.jpg")),
        ("GET", "/photos/5f0c/cam-2.jpg", .photo("5f0c/cam-2.jpg")),
    ])
    func routesEachEndpoint(method: String, path: String, route: HTTPRoute) {
        #expect(HTTPRoute(method: method, path: path) == route)
    }

    @Test(arguments: [
        ("GET", "/api/capture", 405),
        ("PUT", "/api/set", 405),
        ("DELETE", "/api/status", 405),
        ("POST", "/events", 405),
        ("POST", "/photos/x.jpg", 405),
        ("POST", "/api/reload", 404),
        ("GET", "/api/", 404),
        ("GET", "/etc/passwd", 404),
        ("GET", "/photos/../x", 400),
        ("GET", "/photos/..", 400),
        ("GET", "/photos/.", 400),
        ("GET", "/photos/.IMG_1.jpg.tmp", 400),
        ("GET", "/photos/a/b/c.jpg", 400),
        ("GET", "/photos/a/.b.jpg", 400),
        ("GET", "/photos/../b.jpg", 400),
        ("GET", "/photos//b.jpg", 400),
        ("GET", "/photos/a\\b.jpg", 400),
        ("GET", "/photos/a\u{1}.jpg", 400),
    ])
    func refusesWhatNoEndpointServes(method: String, path: String, status: Int) {
        guard case .refused(let refusal) = HTTPRoute(method: method, path: path) else {
            Issue.record("\(method) \(path) was routed")
            return
        }
        #expect(refusal.status == status)
        if status == 405 { #expect(refusal.allow != nil) }
    }

    @Test func aCommandsBodyBecomesTheSocketsRequest() throws {
        let set = try HTTPServer.request("set", body: Array(#"{"id":"a","control":"zoom","value":2}"#.utf8)).get()
        #expect(set == APIRequest(id: .string("a"), command: .set(control: "zoom", to: .value(2))))
        #expect(try HTTPServer.request("capture", body: []).get() == APIRequest(id: nil, command: .capture))
        #expect(try HTTPServer.request("capture", body: Array(" \n".utf8)).get().command == .capture)
        // The path names the command: a body that names another is refused, not obeyed.
        #expect(throws: APIRequestError.self) { try HTTPServer.request("select", body: Array(#"{"cmd":"capture"}"#.utf8)).get() }
        #expect(throws: APIRequestError.self) { try HTTPServer.request("set", body: Array("[1]".utf8)).get() }
        #expect(throws: APIRequestError.self) { try HTTPServer.request("set", body: Array("{".utf8)).get() }
        #expect(throws: APIRequestError.self) { try HTTPServer.request("select", body: Array(#"{"control":"zoom","x":1}"#.utf8)).get() }
    }

    @Test func endpointsParseAndKnowLoopback() throws {
        #expect(try HTTPEndpoint(parsing: "0.0.0.0:9000") == HTTPEndpoint(address: "0.0.0.0", port: 9000))
        #expect(try HTTPEndpoint(parsing: "[::1]:81") == HTTPEndpoint(address: "::1", port: 81))
        #expect(try HTTPEndpoint(parsing: "127.0.0.1") == HTTPEndpoint(address: "127.0.0.1", port: 8080))
        #expect(try HTTPEndpoint(parsing: "::") == HTTPEndpoint(address: "::", port: 8080))
        for bad in ["localhost:80", "1.2.3:80", "1.2.3.256:80", "127.0.0.1:70000", "127.0.0.1:x", "[::1", "[::1]80", ""] {
            #expect(throws: HTTPEndpoint.Invalid.self, "\(bad)") { try HTTPEndpoint(parsing: bad) }
        }
        #expect(HTTPEndpoint(address: "127.0.0.1").isLoopback)
        #expect(HTTPEndpoint(address: "127.3.2.1").isLoopback)
        #expect(HTTPEndpoint(address: "::1").isLoopback)
        #expect(!HTTPEndpoint(address: "0.0.0.0").isLoopback)
        #expect(!HTTPEndpoint(address: "::").isLoopback)
        #expect(!HTTPEndpoint(address: "192.168.1.2").isLoopback)
    }

    @Test func aLoopbackServerAnswersOnlyToLoopbackNames() {
        for host in ["127.0.0.1", "127.0.0.1:8080", "localhost", "LOCALHOST:1", "[::1]:8080", "[::1]"] {
            #expect(HTTPAccessPolicy.isLoopbackHost(host), "\(host)")
        }
        for host in ["evil.example", "evil.example:8080", "127.0.0.1.evil.example", "[::2]:80", "", "10.0.0.1"] {
            #expect(!HTTPAccessPolicy.isLoopbackHost(host), "\(host)")
        }
        #expect(!HTTPAccessPolicy.isLoopbackHost(nil))
    }

    @Test func theTokenDecidesAndViewingMayBeOpen() throws {
        let token = HTTPToken.random()
        #expect(token.text.count == 32)
        #expect(token != HTTPToken.random())
        #expect(token.matches(token.text))
        #expect(!token.matches(String(token.text.dropLast()) + (token.text.last == "0" ? "1" : "0")))
        #expect(!token.matches(""))
        let closed = HTTPAccessPolicy(token: token, viewWithoutToken: false)
        #expect(closed.decide(.status, presented: [], host: "rig") == .unauthorized)
        #expect(closed.decide(.status, presented: ["wrong", token.text], host: "rig") == .allowed)
        let open = HTTPAccessPolicy(token: token, viewWithoutToken: true)
        #expect(open.decide(.events, presented: [], host: "rig") == .allowed)
        #expect(open.decide(.command("status"), presented: [], host: "rig") == .allowed)
        #expect(open.decide(.command("capture"), presented: [], host: "rig") == .unauthorized)
        let loopback = HTTPAccessPolicy(token: nil, viewWithoutToken: false)
        #expect(loopback.decide(.command("capture"), presented: [], host: "localhost:8080") == .allowed)
        #expect(loopback.decide(.command("capture"), presented: [], host: "evil.example") == .forbiddenHost)
    }

    /// A token file that holds no token (edited by hand, cut short) is replaced by a new token,
    /// atomically, and the daemon starts; a good one is kept as it is.
    @Test func aDamagedTokenFileIsReplacedNotFatal() throws {
        let directory = NSTemporaryDirectory() + "shutter-token-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/http-token"
        try #require(FileManager.default.createFile(atPath: path, contents: Data("NOT-A-TOKEN\n".utf8)))
        let token = try HTTPToken.loadOrCreate(path: path)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == token.text + "\n")
        #expect(try HTTPToken.loadOrCreate(path: path) == token, "the new token is kept")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["http-token"], "no temporary file left")
    }

    @Test func theBoardsHttpSectionIsCheckedFieldByField() throws {
        func board(_ http: String) throws -> Board {
            let json = TestRig.simulatorBoard.replacingOccurrences(of: "\"output\":", with: "\"http\": \(http), \"output\":")
            return try Board.decode(Data(json.utf8), file: "b.json")
        }
        let defaults = try #require(try board("{}").http)
        #expect(defaults == HTTPSettings())
        #expect(defaults.endpoint.description == "127.0.0.1:8080")
        #expect(defaults.maxClients == 24 && !defaults.viewWithoutToken)
        let given = try #require(try board(#"{"address": "0.0.0.0", "port": 9000, "maxClients": 4, "viewWithoutToken": true}"#).http)
        #expect(given == HTTPSettings(endpoint: HTTPEndpoint(address: "0.0.0.0", port: 9000), maxClients: 4, viewWithoutToken: true))
        #expect(given.requiresToken && !defaults.requiresToken)
        let proxied = try #require(try board(#"{"requireToken": true}"#).http)
        #expect(proxied.endpoint.isLoopback && proxied.requiresToken)
        for (http, field) in [(#"{"address": "rig.local"}"#, "http.address"), (#"{"port": 0}"#, "http.port"),
                              (#"{"maxClients": 0}"#, "http.maxClients"), (#"{"prot": 1}"#, "prot"),
                              (#"{"requireToken": "yes"}"#, "requireToken")] {
            do {
                _ = try board(http)
                Issue.record("\(http) was accepted")
            } catch {
                #expect("\(error)".contains(field), "\(error)")
            }
        }
    }
}

/// The server on the simulator board, on 127.0.0.1 only, with real HTTP requests.
@Suite(.serialized) struct HTTPServerTests {
    @Test func statusIsTheSocketsStatus() throws {
        let rig = try TestRig.withHTTP(HTTPSettings(endpoint: HTTPEndpoint(address: "127.0.0.1", port: 0)), api: true)
        defer { rig.close() }
        let socket = try TestClient(rig)
        _ = try socket.call(#"{"cmd":"set","control":"zoom","value":3}"#)
        // The camera starts off the loop: both are asked once it streams, or one may see it stopped.
        try rig.waitFor {
            guard case .object(let camera)? = (try? socket.call(#"{"cmd":"status"}"#))?["camera"] else { return false }
            return camera["state"] == .string("streaming")
        }
        var fromSocket = try socket.call(#"{"cmd":"status"}"#)
        let response = try rig.http("GET", "/api/status")
        #expect(response.status == 200)
        #expect(response.headers["content-type"] == "application/json")
        var fromHTTP = try #require(response.json)
        // Everything but the time it was asked at (and the socket's own client count, which the
        // socket's reply was asked over).
        for key in ["uptime", "clients"] {
            fromSocket[key] = nil
            fromHTTP[key] = nil
        }
        #expect(fromHTTP == fromSocket)
        #expect(fromHTTP["board"] == .string("test"))
    }

    /// With a control group on the socket (`--control-group`), loopback HTTP is no way around
    /// it: a local user outside the group would otherwise capture by POST. Commands there need
    /// the token too; without the group, loopback stays open as before.
    @Test func aControlGroupMakesLoopbackHTTPAskForTheToken() throws {
        var options = NodeOptions()
        options.http = HTTPSettings(endpoint: HTTPEndpoint(address: "127.0.0.1", port: 0))
        options.apiAccess = APIAccess(controlGroup: .init(name: "shutter-control", id: 990), privilegedUsers: [])
        let rig = try TestRig(options: options, api: true)
        defer { rig.close() }
        #expect(rig.node.http?.requiresToken == true)
        let refused = try rig.http("POST", "/api/capture", body: "{}")
        #expect(refused.status == 401)
        let token = try String(contentsOfFile: rig.directory + "/http-token", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let accepted = try rig.http("POST", "/api/capture", body: "{}", headers: ["Authorization: Bearer \(token)"])
        #expect(accepted.status == 202)
        let open = try TestRig.withHTTP()
        defer { open.close() }
        #expect(open.node.http?.requiresToken == false)
    }

    @Test func aCaptureByPostMakesAPhotoThatTheStreamAndThePhotoListShow() throws {
        let rig = try TestRig.withHTTP()
        defer { rig.close() }
        let stream = try rig.followEvents()
        #expect(rig.node.http?.streamCount == 1)
        let accepted = try rig.http("POST", "/api/capture", body: #"{"id":"web-1"}"#)
        #expect(accepted.status == 202)
        #expect(accepted.json?["ok"] == .bool(true))
        #expect(accepted.json?["request"] == .string("web-1"))
        try stream.wait("the photo event") { text in eventObjects(text).contains { $0["event"] == .string("photo") } }
        let events = eventObjects(stream.text)
        #expect(events.contains { $0["event"] == .string("capture") && $0["action"] == .string("remote") })
        let photo = try #require(events.first { $0["event"] == .string("photo") })
        #expect(photo["request"] == .string("web-1"))
        guard case .string(let path)? = photo["path"] else {
            Issue.record("no path in \(photo)")
            return
        }
        #expect(FileManager.default.fileExists(atPath: path))
        // The stream's lines are exactly the ones standard output and the socket get.
        let photoLine = try #require(stream.text.components(separatedBy: "\n").first { $0.hasPrefix("data: ") && $0.contains("\"photo\"") })
        #expect(rig.lines.contains { $0.line == String(photoLine.dropFirst(6)) })

        let name = (path as NSString).lastPathComponent
        let list = try rig.http("GET", "/photos/")
        #expect(list.status == 200)
        guard case .array(let photos)? = list.json?["photos"], case .object(let first)? = photos.first else {
            Issue.record("no photos listed: \(list.body)")
            return
        }
        #expect(first["name"] == .string(name))
        let file = try rig.http("GET", "/photos/\(name)")
        #expect(file.status == 200)
        #expect(file.headers["content-type"] == "image/jpeg")
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int
        #expect(Int(file.headers["content-length"] ?? "") == size)
    }

    /// `/photos/` scans the output directory off the loop (the loop answers meanwhile, and two
    /// requests share one scan), answers later pages from that listing, scans again once a
    /// photo is saved, and pages the list.
    @Test func thePhotoListIsScannedOffTheLoopOnceAndPaged() throws {
        let rig = try TestRig.withHTTP()
        defer { rig.close() }
        let output = rig.daemon.board.output.directory
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        for index in 0..<120 {
            let path = output + "/photo-\(1000 + index).jpg"
            try Data([0xFF, 0xD8, 0xFF, 0xD9]).write(to: URL(fileURLWithPath: path))
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_700_000_000 + Double(index))], ofItemAtPath: path)
        }
        let held = HeldJobs()
        let server = try #require(rig.node.http)
        server.runPhotoScan = { held.add($0) }
        let first = try HTTPTestClient(rig), second = try HTTPTestClient(rig)
        try first.send("GET /photos/?limit=50 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        try second.send("GET /photos/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        for _ in 0..<20 {
            try rig.daemon.loop.runOnce(timeoutMilliseconds: 2)
            first.pull()
        }
        #expect(HTTPTestResponse(first.received) == nil, "the list was made on the loop: \(first.text.prefix(200))")
        #expect(held.count == 1)
        #expect(try rig.http("GET", "/api/status").status == 200)
        held.runAll()
        let page = try first.response("the first page")
        #expect(page.json?["total"] == .number(120, text: "120"))
        #expect(page.json?["next"] == .string("/photos/?offset=50&limit=50"))
        guard case .array(let photos)? = page.json?["photos"], case .object(let newest)? = photos.first else {
            Issue.record("no photos: \(page.body.prefix(300))")
            return
        }
        #expect(photos.count == 50 && newest["name"] == .string("photo-1119.jpg"))
        #expect(try second.response("the second request, from the same scan").json?["total"] == .number(120, text: "120"))
        // The last page, from the same listing.
        let last = try rig.http("GET", "/photos/?offset=100&limit=50")
        guard case .array(let rest)? = last.json?["photos"], case .object(let oldest)? = rest.last else {
            Issue.record("no last page: \(last.body.prefix(300))")
            return
        }
        #expect(rest.count == 20 && oldest["name"] == .string("photo-1000.jpg") && last.json?["next"] == nil)
        #expect(held.count == 0)
        #expect(try rig.http("GET", "/photos/?offset=-1").status == 400)
        #expect(try rig.http("GET", "/photos/?limit=many").status == 400)
        // A photo saved: the next list scans again, and shows it.
        try rig.click()
        try rig.waitFor { rig.names.contains("photo") }
        let after = try HTTPTestClient(rig)
        try after.send("GET /photos/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        try rig.waitFor("a second scan") { held.count == 1 }
        held.runAll()
        #expect(try after.response("the list after the photo").json?["total"] == .number(121, text: "121"))
    }

    @Test func aRigShotsFolderIsListedAndServedButNoLinkIsFollowed() throws {
        let rig = try TestRig.withHTTP()
        defer { rig.close() }
        let output = rig.daemon.board.output.directory
        try FileManager.default.createDirectory(atPath: output + "/shot-1", withIntermediateDirectories: true)
        try Data([0xFF, 0xD8, 0xFF, 0xD9]).write(to: URL(fileURLWithPath: output + "/shot-1/cam-2.jpg"))
        try Data([1]).write(to: URL(fileURLWithPath: output + "/shot-1/.shutter-tmp-1.jpg"))
        try FileManager.default.createDirectory(atPath: output + "/shot-1/deeper", withIntermediateDirectories: true)
        try Data([2]).write(to: URL(fileURLWithPath: output + "/shot-1/deeper/x.jpg"))
        // A link to a folder outside the output directory is neither listed nor served.
        try FileManager.default.createSymbolicLink(atPath: output + "/elsewhere", withDestinationPath: "/etc")
        let list = try rig.http("GET", "/photos/")
        guard case .array(let photos)? = list.json?["photos"] else {
            Issue.record("no list: \(list.body)")
            return
        }
        let names = photos.compactMap { photo -> String? in
            if case .object(let members) = photo, case .string(let name)? = members["name"] { return name }
            return nil
        }
        #expect(names == ["shot-1/cam-2.jpg"])
        let file = try rig.http("GET", "/photos/shot-1%2Fcam-2.jpg")
        #expect(file.status == 200 && file.headers["content-length"] == "4")
        #expect(try rig.http("GET", "/photos/shot-1/cam-2.jpg").status == 200)
        #expect(try rig.http("GET", "/photos/elsewhere/passwd").status == 404)
        #expect(try rig.http("GET", "/photos/shot-1/deeper/x.jpg").status == 400)
    }

    @Test func setAndSelectAnswerAsTheSocketDoes() throws {
        let rig = try TestRig.withHTTP()
        defer { rig.close() }
        let set = try rig.http("POST", "/api/set", body: #"{"control":"zoom","value":2}"#)
        #expect(set.status == 200)
        #expect(set.json?["ok"] == .bool(true))
        #expect(set.json?["text"] == .string("2.0×"))
        #expect(set.json?["note"] == nil)
        #expect(rig.daemon.interpreter.machine.controlValues["zoom"] == .number(2))
        // A value off the steps, as a string too, is the nearest step, and the answer says so.
        let snapped = try rig.http("POST", "/api/set", body: #"{"control":"zoom","value":"2.6"}"#)
        #expect(snapped.status == 200)
        #expect(snapped.json?["note"] == .string("2.6 taken as 2.5× (2.5)"))
        #expect(rig.daemon.interpreter.machine.controlValues["zoom"] == .number(2.5))
        _ = try rig.http("POST", "/api/set", body: #"{"control":"zoom","value":2}"#)
        let outOfRange = try rig.http("POST", "/api/set", body: #"{"id":3,"control":"zoom","value":99}"#)
        #expect(outOfRange.status == 422)
        #expect(outOfRange.json?["kind"] == .string("outOfRange"))
        #expect(outOfRange.json?["id"].map { if case .number(3, _) = $0 { true } else { false } } == true)
        #expect(rig.daemon.interpreter.machine.controlValues["zoom"] == .number(2))
        let unknown = try rig.http("POST", "/api/select", body: #"{"control":"nope"}"#)
        #expect(unknown.status == 404)
        #expect(unknown.json?["kind"] == .string("notFound"))
        #expect(try rig.http("POST", "/api/select", body: #"{"control":"filter"}"#).status == 200)
        #expect(try rig.http("POST", "/api/status", body: #"{"id":"s"}"#).json?["id"] == .string("s"))
        // A disabled capture is 409, as its kind says.
        _ = rig.daemon.execute(APIRequest(id: nil, command: .disable(.capture)))
        let disabled = try rig.http("POST", "/api/capture", body: "{}")
        #expect(disabled.status == 409)
        #expect(disabled.json?["kind"] == .string("disabled"))
    }

    /// Each bad request gets its 4xx, and the daemon goes on serving.
    @Test(arguments: BadRequest.all)
    func badRequestsGetTheirStatusAndTheDaemonGoesOn(_ bad: BadRequest) throws {
        let (requestLine, body, type, headers, status) = (bad.line, bad.body, bad.type, bad.headers, bad.status)
        let rig = try TestRig.withHTTP()
        defer { rig.close() }
        let photos = rig.directory + "/photos"
        try FileManager.default.createDirectory(atPath: photos + "/subdirectory", withIntermediateDirectories: true)
        try "secret".write(toFile: rig.directory + "/state-secret", atomically: false, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: photos + "/link.jpg", withDestinationPath: rig.directory + "/state-secret")
        let client = try HTTPTestClient(rig)
        var request = requestLine + "\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        for header in headers { request += header + "\r\n" }
        if let type { request += "Content-Type: \(type)\r\n" }
        if let body { request += "Content-Length: \(body.utf8.count)\r\n" }
        request += "\r\n" + (body ?? "")
        try client.send(request)
        let response = try client.response(requestLine)
        #expect(response.status == status, "\(requestLine): \(response.body)")
        #expect(!response.body.contains("secret"))
        #expect(try rig.http("GET", "/api/status").status == 200)
    }

    /// A body where none is read (a GET's, a refused POST's) is dropped: the request is answered
    /// once, and the connection serves the next request.
    @Test func aBodyThatIsNotReadIsDroppedAndTheConnectionGoesOn() throws {
        let rig = try TestRig.withHTTP()
        defer { rig.close() }
        let client = try HTTPTestClient(rig)
        try client.send("GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello"
            + "POST /api/capture HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}"
            + "GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        try client.wait("the responses") { _ in false }
        let statuses = client.text.components(separatedBy: "\r\n").filter { $0.hasPrefix("HTTP/1.1 ") }
        // The refused POST may close the connection (its body unread) or go on; either way the
        // GET before it is answered exactly once, and nothing is answered twice.
        #expect(statuses.first == "HTTP/1.1 200 OK")
        #expect(statuses.count <= 3)
        #expect(statuses.dropFirst().first?.hasPrefix("HTTP/1.1 415") ?? true)
        #expect(rig.daemon.counters.presses == 0 && !rig.names.contains("capture"))
        #expect(try rig.http("GET", "/api/status").status == 200)
    }

    @Test func aLoopbackServerRefusesAnotherHostName() throws {
        let rig = try TestRig.withHTTP()
        defer { rig.close() }
        let client = try HTTPTestClient(rig)
        try client.send("GET /api/status HTTP/1.1\r\nHost: rebound.example:8080\r\nConnection: close\r\n\r\n")
        #expect(try client.response().status == 403)
        let capture = try HTTPTestClient(rig)
        try capture.send("POST /api/capture HTTP/1.1\r\nHost: rebound.example\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
        #expect(try capture.response().status == 403)
        #expect(rig.daemon.counters.presses == 0)
        #expect(!rig.names.contains("capture"))
    }

    /// The token forced on while bound to 127.0.0.1 (as any other address has it).
    @Test func withTheTokenOnlyTheLoginPageAnswersWithoutIt() throws {
        let rig = try TestRig.withHTTP(requiresToken: true)
        defer { rig.close() }
        let http = try #require(rig.node.http)
        let token = try #require(http.policy.token).text
        #expect(http.link.hasSuffix("/?token=\(token)"))
        // Kept in the state directory, for the owner only.
        let tokenPath = rig.directory + "/http-token"
        #expect(try String(contentsOfFile: tokenPath, encoding: .utf8) == token + "\n")
        let mode = try FileManager.default.attributesOfItem(atPath: tokenPath)[.posixPermissions] as? Int
        #expect(mode == 0o600)

        let page = try rig.http("GET", "/")
        #expect(page.status == 401)
        #expect(page.headers["content-type"]?.hasPrefix("text/html") == true)
        #expect(page.body.contains("<form"))
        #expect(!page.body.contains(token))
        for (method, path) in [("GET", "/api/status"), ("GET", "/events"), ("GET", "/photos/"), ("GET", "/nothing")] {
            let refused = try rig.http(method, path)
            #expect(refused.status == 401, "\(path)")
            #expect(refused.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
        }
        let capture = try rig.http("POST", "/api/capture", body: "{}")
        #expect(capture.status == 401)
        #expect(try rig.http("GET", "/api/status", headers: ["Authorization: Bearer 0123456789abcdef0123456789abcdef"]).status == 401)
        #expect(try rig.http("GET", "/?token=wrong").status == 401)
        #expect(rig.daemon.counters.presses == 0 && !rig.names.contains("capture"))

        #expect(try rig.http("GET", "/api/status", headers: ["Authorization: Bearer \(token)"]).status == 200)
        #expect(try rig.http("POST", "/api/capture", body: "{}", headers: ["Authorization: Bearer \(token)"]).status == 202)
        // The link sets the session cookie and drops the token from the address.
        let link = try rig.http("GET", "/?token=\(token)")
        #expect(link.status == 303)
        #expect(link.headers["location"] == "/")
        let cookie = try #require(link.headers["set-cookie"])
        let session = try #require(sessionValue(cookie))
        #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"))
        #expect(try rig.http("GET", "/", headers: ["Cookie: shutter_session=\(session)"]).status == 200)
        #expect(try rig.http("GET", "/api/status", headers: ["Cookie: shutter_session=\(session)"]).status == 200)
        // With the token, another host name is fine (the rig's address or name on the network).
        let named = try HTTPTestClient(rig)
        try named.send("GET /api/status HTTP/1.1\r\nHost: rig.local:8080\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n")
        #expect(try named.response().status == 200)
    }

    /// The login form posts the token (it never lands in the address or a proxy's log); the
    /// cookie it sets holds a session value made from the token, not the token, which another
    /// service on the host (browsers send it to every port) cannot use as the token.
    @Test func theLoginFormPostsTheTokenAndTheCookieIsASessionNotTheToken() throws {
        let rig = try TestRig.withHTTP(requiresToken: true)
        defer { rig.close() }
        let token = try #require(rig.node.http?.policy.token?.text)
        let page = try rig.http("GET", "/")
        #expect(page.status == 401 && page.body.contains(#"<form method="post" action="/login">"#))
        let form = "application/x-www-form-urlencoded"
        let login = try rig.http("POST", "/login", body: "token=\(token)", contentType: form)
        #expect(login.status == 303 && login.headers["location"] == "/")
        let cookie = try #require(login.headers["set-cookie"])
        let session = try #require(sessionValue(cookie))
        #expect(!cookie.contains(token) && session.utf8.count == 64)
        #expect(try rig.http("GET", "/api/status", headers: ["Cookie: shutter_session=\(session)"]).status == 200)
        // The token itself in the cookie, or the session as a bearer token, opens nothing.
        #expect(try rig.http("GET", "/api/status", headers: ["Cookie: shutter_session=\(token)"]).status == 401)
        #expect(try rig.http("GET", "/api/status", headers: ["Authorization: Bearer \(session)"]).status == 401)
        #expect(try rig.http("POST", "/login", body: "token=0123", contentType: form).status == 401)
        #expect(try rig.http("POST", "/login", body: "token=\(token)", contentType: "text/plain").status == 415)
        #expect(try rig.http("GET", "/login", headers: ["Cookie: shutter_session=\(session)"]).status == 405)
    }

    /// A token pasted with white space around it (spaces, a line break, a no-break space from a
    /// web page) is the token, in the form, the link and the bearer header alike.
    @Test(arguments: ["%20TOKEN%20", "TOKEN%0A", "%0D%0ATOKEN%0D%0A", "%09TOKEN", "%C2%A0TOKEN%C2%A0", "+TOKEN+"])
    func aPastedTokenWithWhiteSpaceAroundItOpens(wrapped: String) throws {
        let rig = try TestRig.withHTTP(requiresToken: true)
        defer { rig.close() }
        let token = try #require(rig.node.http?.policy.token?.text)
        let given = wrapped.replacingOccurrences(of: "TOKEN", with: token)
        let login = try rig.http("POST", "/login", body: "token=\(given)", contentType: "application/x-www-form-urlencoded")
        #expect(login.status == 303, "token=\(wrapped)")
        let link = try rig.http("GET", "/?token=\(given)")
        #expect(link.status == 303, "?token=\(wrapped)")
        #expect(try rig.http("GET", "/api/status", headers: ["Authorization: Bearer \(token)\t"]).status == 200)
        // Inside the token, white space is no part of it.
        let split = String(token.prefix(16)) + "%20" + String(token.dropFirst(16))
        #expect(try rig.http("POST", "/login", body: "token=\(split)", contentType: "application/x-www-form-urlencoded").status == 401)
    }

    /// The pages' icon is an SVG of the server's own, served without the token (the login page
    /// shows it), and both pages link it.
    @Test func theFaviconIsServedWithoutTheTokenAndLinkedFromBothPages() throws {
        let rig = try TestRig.withHTTP(requiresToken: true)
        defer { rig.close() }
        let icon = try rig.http("GET", "/favicon.svg")
        #expect(icon.status == 200)
        #expect(icon.headers["content-type"] == "image/svg+xml")
        #expect(icon.body.hasPrefix("<svg") && icon.body.contains("</svg>"))
        let login = try rig.http("GET", "/")
        #expect(login.status == 401 && login.body.contains(#"<link rel="icon" href="/favicon.svg""#))
        #expect(HTTPPages.liveView.contains(#"<link rel="icon" href="/favicon.svg""#))
    }

    /// Wrong tokens are logged (rate-limited) and, past ten a minute from one address, that
    /// address's tokens are not checked until its oldest is a minute old: even the right one
    /// waits there, while another address, and a browser that has its session, go on.
    @Test func wrongTokensAreLoggedAndGuessingIsSlowed() throws {
        let rig = try TestRig.withHTTP(requiresToken: true)
        defer { rig.close() }
        let server = try #require(rig.node.http)
        var logged: [String] = []
        server.log = { message, _ in logged.append(message) }
        let token = try #require(server.policy.token?.text)
        let setCookie = try #require(try rig.http("GET", "/?token=\(token)", from: "127.0.0.2").headers["set-cookie"])
        let session = try #require(sessionValue(setCookie))
        let form = "application/x-www-form-urlencoded"
        for guess in 0..<10 {
            #expect(try rig.http("POST", "/login", body: "token=guess\(guess)", contentType: form, from: "127.0.0.2").status == 401)
        }
        #expect(logged.filter { $0.contains("a wrong token for POST /login from 127.0.0.2") }.count == 10, "\(logged)")
        let slowed = try rig.http("POST", "/login", body: "token=\(token)", contentType: form, from: "127.0.0.2")
        #expect(slowed.status == 429 && slowed.headers["retry-after"] != nil)
        #expect(try rig.http("GET", "/api/status", headers: ["Authorization: Bearer \(token)"], from: "127.0.0.2").status == 429)
        #expect(try rig.http("GET", "/api/status", headers: ["Cookie: shutter_session=\(session)"], from: "127.0.0.2").status == 200)
        #expect(try rig.http("GET", "/api/status", headers: ["Authorization: Bearer \(token)"]).status == 200)
        try rig.advance(by: .seconds(61))
        #expect(try rig.http("POST", "/login", body: "token=\(token)", contentType: form, from: "127.0.0.2").status == 303)
    }

    /// A new token written into the token file while the daemon runs replaces the old one
    /// within a second: the old token and its sessions open nothing, the new one does.
    @Test func aNewTokenInTheFileEndsTheOldOneAndItsSessions() throws {
        let rig = try TestRig.withHTTP(requiresToken: true)
        defer { rig.close() }
        let server = try #require(rig.node.http)
        var logged: [String] = []
        server.log = { message, _ in logged.append(message) }
        let old = try #require(server.policy.token)
        #expect(try rig.http("GET", "/api/status", headers: ["Cookie: shutter_session=\(old.session)"]).status == 200)
        let new = HTTPToken.random()
        let path = rig.directory + "/http-token"
        try (new.text + "\n").write(toFile: path + ".new", atomically: false, encoding: .utf8)
        #expect(rename(path + ".new", path) == 0)
        try rig.advance(by: .seconds(1.1))
        #expect(try rig.http("GET", "/api/status", headers: ["Authorization: Bearer \(old.text)"]).status == 401)
        #expect(try rig.http("GET", "/api/status", headers: ["Cookie: shutter_session=\(old.session)"]).status == 401)
        #expect(try rig.http("GET", "/api/status", headers: ["Authorization: Bearer \(new.text)"]).status == 200)
        #expect(logged.contains { $0.contains("holds a new token") }, "\(logged)")
        // Removed, the file changes nothing until the next start.
        unlink(path)
        try rig.advance(by: .seconds(1.1))
        #expect(try rig.http("GET", "/api/status", headers: ["Authorization: Bearer \(new.text)"]).status == 200)
    }

    @Test func theTokenIsKeptAcrossRestarts() throws {
        let first = try TestRig.withHTTP(requiresToken: true)
        let token = try #require(first.node.http?.policy.token)
        let tokenPath = first.directory + "/http-token"
        first.daemon.finish()
        var options = NodeOptions()
        options.http = HTTPSettings(endpoint: HTTPEndpoint(address: "127.0.0.1", port: 0))
        options.httpRequiresToken = true
        options.httpTokenPath = tokenPath
        let second = try TestRig(options: options)
        defer {
            second.close()
            try? FileManager.default.removeItem(atPath: first.directory)
        }
        #expect(second.node.http?.policy.token == token)
    }

    @Test func viewWithoutTokenOpensLookingOnly() throws {
        let rig = try TestRig.withHTTP(HTTPSettings(endpoint: HTTPEndpoint(address: "127.0.0.1", port: 0), viewWithoutToken: true),
                              requiresToken: true)
        defer { rig.close() }
        #expect(try rig.http("GET", "/api/status").status == 200)
        #expect(try rig.http("GET", "/photos/").status == 200)
        _ = try rig.followEvents()
        #expect(try rig.http("POST", "/api/capture", body: "{}").status == 401)
        #expect(try rig.http("POST", "/api/set", body: #"{"control":"zoom","value":2}"#).status == 401)
        #expect(rig.daemon.interpreter.machine.controlValues["zoom"] == .number(1))
    }

    /// A viewer that never reads: its queue stays at the limit (the oldest lines dropped and
    /// counted), and the others still get every line.
    @Test func aViewerThatNeverReadsCostsABoundedQueue() throws {
        var limits = HTTPServer.Limits()
        limits.subscriberQueueLimit = 16
        limits.sendBufferBytes = 4096
        let rig = try TestRig.withHTTP(limits: limits)
        defer { rig.close() }
        // A tiny receive window, so the kernel's buffers fill quickly and the rest waits in the daemon.
        let stuck = try HTTPTestClient(rig, receiveBuffer: 1024)
        try stuck.send("GET /events HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        let reader = try rig.followEvents()
        for _ in 0..<20 { try rig.daemon.loop.runOnce(timeoutMilliseconds: 2) }
        #expect(rig.node.http?.streamCount == 2)
        var largest = 0
        for round in 0..<3000 {
            let value = round % 2 == 0 ? 2.0 : 3.0
            _ = rig.daemon.execute(APIRequest(id: nil, command: .set(control: "zoom", to: .value(value))))
            try rig.daemon.loop.runOnce(timeoutMilliseconds: 0)
            if round % 10 == 0 { reader.pull() }
            largest = max(largest, rig.node.http?.streamBacklogs.map(\.events).max() ?? 0)
        }
        #expect(largest <= 16)
        let bytes = rig.node.http?.streamBacklogs.map(\.bytes).max() ?? 0
        #expect(bytes < 16 * 1024)
        // The reader that reads got every line, in order (3000 controlValue lines at least).
        try reader.wait("the last value") { eventObjects($0).filter { $0["event"] == .string("controlValue") }.count >= 3000 }
        #expect(!eventObjects(reader.text).contains { $0["event"] == .string("dropped") })
        // The stuck one, once it reads, is told how many it lost.
        try stuck.wait("the dropped notice") { $0.contains("\"event\": \"dropped\"") }
        #expect(stuck.text.contains("\"event\": \"dropped\""))
        #expect(try rig.http("GET", "/api/status").status == 200)
    }

    /// Streams may take only part of `maxClients`: a viewer beyond is answered 503 at once, and
    /// a request still gets a slot while the streams follow.
    @Test func streamsLeaveRoomForRequests() throws {
        let rig = try TestRig.withHTTP(HTTPSettings(endpoint: HTTPEndpoint(address: "127.0.0.1", port: 0), maxClients: 4))
        defer { rig.close() }
        let followers = try (0..<3).map { _ in try rig.followEvents() }
        let fourth = try HTTPTestClient(rig)
        try fourth.send("GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        let refused = try fourth.response("the fourth viewer's answer")
        #expect(refused.status == 503)
        #expect(refused.body.contains("http.maxClients 4"))
        #expect(rig.node.http?.streamCount == 3)
        #expect(try rig.http("GET", "/api/status").status == 200)
        // One leaves: a viewer may follow again.
        followers[0].closeNow()
        _ = try rig.followEvents()
        withExtendedLifetime(followers) {}
    }

    /// With every slot streaming (or being answered) a new client waits in the listen backlog,
    /// unanswered, and is served once a slot frees.
    @Test func withEverySlotStreamingANewClientWaitsUntilOneLeaves() throws {
        let rig = try TestRig.withHTTP(HTTPSettings(endpoint: HTTPEndpoint(address: "127.0.0.1", port: 0), maxClients: 1))
        defer { rig.close() }
        let viewer = try rig.followEvents()
        let waiting = try HTTPTestClient(rig)
        try waiting.send("GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        for _ in 0..<100 {
            try rig.daemon.loop.runOnce(timeoutMilliseconds: 2)
            waiting.pull()
        }
        #expect(HTTPTestResponse(waiting.received) == nil && !waiting.closedByServer, "served or refused beyond the limit: \(waiting.text.prefix(200))")
        viewer.closeNow()
        #expect(try waiting.response("the waiting client, once there is room").status == 200)
    }

    /// Connections that never complete a request (a slowloris, a header byte now and then)
    /// cannot hold the slots: a client that asks gets one in the place of the one waiting
    /// longest, and is answered.
    @Test func halfRequestsCannotTakeTheSlotsOfAClientThatAsks() throws {
        let rig = try TestRig.withHTTP(HTTPSettings(endpoint: HTTPEndpoint(address: "127.0.0.1", port: 0), maxClients: 4))
        defer { rig.close() }
        let viewer = try rig.followEvents()
        var slow: [HTTPTestClient] = []
        for round in 0..<12 {
            let client = try HTTPTestClient(rig)
            try client.send("GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            slow.append(client)
            for other in slow {
                try other.send("a")
                other.pull()
            }
            try rig.daemon.loop.runOnce(timeoutMilliseconds: 2)
            if round % 3 == 2 { #expect(try rig.http("GET", "/api/status").status == 200, "round \(round)") }
        }
        for client in slow { client.pull() }
        // All but the newest few were let go, unanswered, to make room.
        let letGo = slow.filter { $0.closedByServer && HTTPTestResponse($0.received) == nil }.count
        #expect(letGo >= 12 - 4, "\(letGo) of 12 half requests were let go")
        // A viewer that had completed its request kept its slot through it all.
        viewer.pull()
        #expect(!viewer.closedByServer && rig.node.http?.streamCount == 1)
    }

    /// A connection that has not completed its request by ``HTTPServer/Limits/requestDeadline``
    /// is let go, however often it sends a byte (the library's own timeout counts only silence).
    @Test func aRequestNotCompletedByTheDeadlineIsLetGo() throws {
        var limits = HTTPServer.Limits()
        limits.requestDeadline = .seconds(3)
        let rig = try TestRig.withHTTP(limits: limits)
        defer { rig.close() }
        let slow = try HTTPTestClient(rig)
        try slow.send("GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        let prompt = try HTTPTestClient(rig)
        try prompt.send("GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        try prompt.wait("the prompt client's answer") { HTTPTestResponse(Array($0.utf8)) != nil }
        let deadline = try #require(rig.node.http?.nextDeadline)
        #expect(deadline - rig.chip.clock.now <= .seconds(3))
        for _ in 0..<5 {
            try slow.send("a")
            try rig.advance(by: .seconds(0.7))
        }
        try slow.wait("the slow client let go") { _ in false }
        #expect(slow.closedByServer)
        #expect(HTTPTestResponse(slow.received) == nil, "the half request was answered: \(slow.text.prefix(200))")
        // The prompt client, waiting for its next request on a kept-alive connection, ran out
        // of time the same way.
        prompt.pull()
        #expect(prompt.closedByServer)
    }

    /// A client that sends half a request and stops is closed after the connection timeout; a
    /// client that asks meanwhile is served. (The library keeps its own real time: the test
    /// waits a real second and a half, and moves the loop's virtual clock past the deadline.)
    @Test func aSlowRequestIsClosedAfterTheTimeout() throws {
        var limits = HTTPServer.Limits()
        limits.connectionTimeoutSeconds = 1
        let rig = try TestRig.withHTTP(limits: limits)
        defer { rig.close() }
        let slow = try HTTPTestClient(rig)
        try slow.send("GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        #expect(try rig.http("GET", "/api/status").status == 200)
        let deadline = try #require(rig.node.http?.nextDeadline, "no deadline for the slow client's timeout")
        #expect(deadline - rig.chip.clock.now <= .seconds(1.01))
        let started = Date()
        while Date().timeIntervalSince(started) < 1.5 {
            try rig.daemon.loop.runOnce(timeoutMilliseconds: 10)
            slow.pull()
        }
        try rig.advance(by: .seconds(2))
        try slow.wait("the slow client closed") { _ in false }
        #expect(slow.closedByServer)
        #expect(HTTPTestResponse(slow.received) == nil, "the half request was answered: \(slow.text.prefix(200))")
    }

    /// The live-view page comes from the binary and asks only this server for anything (no CDN:
    /// it works offline); the browser test (Tests/Browser) drives it.
    @Test func theLiveViewPageIsServedFromTheBinary() throws {
        let rig = try TestRig.withHTTP()
        defer { rig.close() }
        let page = try rig.http("GET", "/")
        #expect(page.status == 200)
        #expect(page.headers["content-type"] == "text/html; charset=utf-8")
        for endpoint in ["EventSource('/events')", "'/stream?width='", "'/snapshot?width='", "/favicon.svg", "'/api/capture'", "/api/set", "/api/status", "/photos/", "/thumbs/"] {
            #expect(page.body.contains(endpoint), "the page does not use \(endpoint)")
        }
        #expect(!page.body.contains("http://") && !page.body.contains("https://") && !page.body.contains("//cdn"))
    }
}

/// A request the server must refuse, and the status it answers with.
struct BadRequest: Sendable, CustomTestStringConvertible {
    var line: String
    var body: String? = nil
    var type: String? = nil
    var headers: [String] = []
    var status: Int
    var testDescription: String { "\(line) → \(status)" }

    static let all: [BadRequest] = [
        BadRequest(line: "GET /api/capture HTTP/1.1", status: 405),
        BadRequest(line: "DELETE /api/status HTTP/1.1", status: 405),
        BadRequest(line: "POST /api/capture HTTP/1.1", body: "{}", type: "text/plain", status: 415),
        BadRequest(line: "POST /api/capture HTTP/1.1", body: "{}", status: 415),
        BadRequest(line: "POST /api/set HTTP/1.1", body: "control=zoom", type: "application/x-www-form-urlencoded", status: 415),
        BadRequest(line: "POST /api/set HTTP/1.1", body: "{not json", type: "application/json", status: 400),
        BadRequest(line: "POST /api/set HTTP/1.1", body: #"{"control":"zoom"}"#, type: "application/json", status: 400),
        BadRequest(line: "POST /api/set HTTP/1.1", body: String(repeating: " ", count: 20_000) + "{}", type: "application/json", status: 413),
        BadRequest(line: "GET /photos/../state.json HTTP/1.1", status: 400),
        BadRequest(line: "GET /photos/%2e%2e HTTP/1.1", status: 400),
        BadRequest(line: "GET /photos/%2e%2e%2fstate.json HTTP/1.1", status: 400),
        BadRequest(line: "GET /photos/..%2F..%2Fetc%2Fpasswd HTTP/1.1", status: 400),
        BadRequest(line: "GET /photos/IMG_9999.jpg HTTP/1.1", status: 404),
        BadRequest(line: "GET /photos/link.jpg HTTP/1.1", status: 404),
        BadRequest(line: "GET /photos/subdirectory HTTP/1.1", status: 404),
        BadRequest(line: "GET /nothing HTTP/1.1", status: 404),
        BadRequest(line: "GET /api/status HTTP/1.1", headers: ["X-Big: " + String(repeating: "a", count: 40_000)], status: 431),
    ]
}

/// Jobs a test holds instead of running them off the loop, and runs when it chooses.
final class HeldJobs: @unchecked Sendable {
    private let lock = NSLock()
    private var jobs: [@Sendable () -> Void] = []

    func add(_ job: @escaping @Sendable () -> Void) { lock.withLock { jobs.append(job) } }
    var count: Int { lock.withLock { jobs.count } }

    /// Runs every job held, on the calling thread.
    func runAll() {
        let taken = lock.withLock { let taken = jobs; jobs = []; return taken }
        for job in taken { job() }
    }
}

/// The value of the session cookie a `Set-Cookie` header sets.
func sessionValue(_ setCookie: String) -> String? {
    guard setCookie.hasPrefix("shutter_session=") else { return nil }
    return setCookie.dropFirst("shutter_session=".count).split(separator: ";").first.map(String.init)
}
