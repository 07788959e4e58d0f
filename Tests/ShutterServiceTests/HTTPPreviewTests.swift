#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import ShutterCapture
import ShutterCore
@testable import ShutterHTTP
@testable import ShutterNode
@testable import ShutterService
import ShutterTestSupport

/// `/stream`, `/snapshot` and `/thumbs/`: the synthetic camera's previews over real HTTP on
/// 127.0.0.1, the daemon's loop turned by the test.
@Suite(.serialized) struct HTTPPreviewTests {
    @Test func routes() {
        #expect(HTTPRoute(method: "GET", path: "/stream") == .stream)
        #expect(HTTPRoute(method: "GET", path: "/snapshot") == .snapshot)
        #expect(HTTPRoute(method: "GET", path: "/thumbs/IMG_1.jpg") == .thumbnail("IMG_1.jpg"))
        #expect(HTTPRoute(method: "GET", path: "/thumbs/shot-1/cam-2.jpg") == .thumbnail("shot-1/cam-2.jpg"))
        for (method, path, status) in [("POST", "/stream", 405), ("POST", "/snapshot", 405), ("GET", "/thumbs/..", 400),
                                       ("GET", "/thumbs/a/b/c.jpg", 400), ("GET", "/thumbs/a/.x.tmp", 400), ("DELETE", "/thumbs/x.jpg", 405)] {
            guard case .refused(let refusal) = HTTPRoute(method: method, path: path) else {
                Issue.record("\(method) \(path) was routed")
                continue
            }
            #expect(refusal.status == status, "\(method) \(path)")
        }
        #expect(HTTPRoute.stream.onlyLooks && HTTPRoute.snapshot.onlyLooks && HTTPRoute.thumbnail("a.jpg").onlyLooks)
        #expect(HTTPPhotos.percentEncoded("IMG 1+ä.jpg") == "IMG%201%2B%C3%A4.jpg")
    }

    /// Each part is a whole JPEG with its length, its frame's time and a number that grows; the
    /// feed is watched while the viewer is there and not after it leaves.
    @Test func theStreamSendsEachNewerPreviewAsAPart() throws {
        let rig = try TestRig.withHTTP()
        defer { rig.close() }
        #expect(!rig.daemon.preview.isWatched)
        let viewer = try HTTPTestClient(rig)
        try viewer.send("GET /stream HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        try viewer.wait("three parts") { _ in MJPEGStream(viewer.received).parts.count >= 3 }
        let stream = MJPEGStream(viewer.received)
        #expect(stream.headers["content-type"] == "multipart/x-mixed-replace;boundary=shutterframe")
        #expect(rig.node.http?.viewerCount == 1)
        #expect(rig.daemon.preview.isWatched)
        var numbers: [Int] = []
        for part in stream.parts {
            #expect(part.headers["content-type"] == "image/jpeg")
            #expect(Int(part.headers["content-length"] ?? "") == part.body.count)
            #expect(part.body.starts(with: [0xFF, 0xD8]) && Array(part.body.suffix(2)) == [0xFF, 0xD9])
            #expect(JPEGSize(part.body)?.width == 320)
            #expect(Double(part.headers["x-timestamp"] ?? "") != nil)
            numbers.append(Int(part.headers["x-frame"] ?? "") ?? -1)
        }
        #expect(numbers == numbers.sorted() && Set(numbers).count == numbers.count, "\(numbers)")
        let times = stream.parts.compactMap { Double($0.headers["x-timestamp"] ?? "") }
        #expect(times == times.sorted())

        viewer.closeNow()
        try rig.waitFor { rig.node.http?.viewerCount == 0 }
        #expect(!rig.daemon.preview.isWatched)
    }

    /// A viewer that stops reading is sent no more than its socket takes: previews go on being
    /// made for the viewer that reads, and the stuck one skips them rather than queueing them.
    @Test func aViewerThatStopsReadingSkipsPreviews() throws {
        var limits = HTTPServer.Limits()
        limits.sendBufferBytes = 4096
        let rig = try TestRig.withHTTP(limits: limits)
        defer { rig.close() }
        let stuck = try HTTPTestClient(rig, receiveBuffer: 1024)
        try stuck.send("GET /stream HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        let reader = try HTTPTestClient(rig)
        try reader.send("GET /stream HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        try reader.wait("the reader's first parts") { _ in MJPEGStream(reader.received).parts.count >= 2 }
        let published = rig.daemon.preview.statistics.encoded
        try reader.wait("15 more parts") { _ in MJPEGStream(reader.received).parts.count >= 17 }
        #expect(rig.daemon.preview.statistics.encoded >= published + 15)
        let sent = try #require(rig.node.http?.previewsSent.sorted())
        #expect(sent.count == 2)
        // The stuck viewer took one or two parts before its window closed; the reader, all.
        #expect(sent[0] <= 3, "\(sent)")
        #expect(sent[1] >= 17)
        withExtendedLifetime(stuck) {}
    }

    /// The first `/snapshot` starts the previews and waits for one; polls keep them coming for
    /// the lease, after which nothing is made.
    @Test func aSnapshotWaitsForTheFirstPreviewAndPollsKeepThemComing() throws {
        var limits = HTTPServer.Limits()
        limits.snapshotLease = .milliseconds(500)
        let rig = try TestRig.withHTTP(limits: limits)
        defer { rig.close() }
        let first = try rig.http("GET", "/snapshot")
        #expect(first.status == 200)
        #expect(first.headers["content-type"] == "image/jpeg")
        #expect(first.headers["cache-control"] == "no-store")
        let number = try #require(Int(first.headers["x-frame"] ?? ""))
        #expect(rig.daemon.preview.isWatched)
        try rig.waitFor { (rig.daemon.preview.latest()?.number ?? 0) > number }
        let second = try rig.http("GET", "/snapshot")
        #expect((Int(second.headers["x-frame"] ?? "") ?? 0) > number)
        // The lease runs out on the loop's clock.
        try rig.advance(by: .milliseconds(600))
        #expect(!rig.daemon.preview.isWatched)
    }

    /// After a lease ran out, the preview left from it is stale: the next poll waits for a new one.
    @Test func aSnapshotAfterALeaseIsNotTheOldPreview() throws {
        var limits = HTTPServer.Limits()
        limits.snapshotLease = .milliseconds(100)
        let rig = try TestRig.withHTTP(limits: limits)
        defer { rig.close() }
        let first = try rig.http("GET", "/snapshot")
        try rig.advance(by: .milliseconds(200))
        #expect(!rig.daemon.preview.isWatched)
        let newest = try #require(rig.daemon.preview.latest()?.number)
        let second = try rig.http("GET", "/snapshot")
        #expect(second.status == 200)
        #expect((Int(second.headers["x-frame"] ?? "") ?? 0) > newest, "served the preview left from the lease before")
        withExtendedLifetime(first) {}
    }

    /// No preview in time (a camera still starting): 503 with the socket's failure fields, and
    /// the server goes on.
    @Test func aSnapshotWithNoPreviewInTimeIs503() throws {
        var options = NodeOptions()
        options.http = HTTPSettings(endpoint: HTTPEndpoint(address: "127.0.0.1", port: 0))
        options.httpLimits.snapshotWait = .milliseconds(50)
        let rig = try TestRig(options: options, cameraFactory: { (_: CameraSettings) throws(CaptureError) -> any Camera in
            do {
                return try SlowStartCamera(startDelay: .seconds(1))
            } catch {
                throw CaptureError.noDevice(requested: "slow", available: [])
            }
        })
        defer { rig.close() }
        let client = try HTTPTestClient(rig)
        try client.send("GET /snapshot HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        for _ in 0..<5 { try rig.turn() }
        client.pull()
        #expect(client.received.isEmpty, "answered before the wait: \(client.text.prefix(200))")
        try rig.advance(by: .milliseconds(60))
        let answer = try client.response()
        #expect(answer.status == 503)
        #expect(answer.json?["kind"] == .string("unavailable"))
        #expect(try rig.http("GET", "/api/status").status == 200)
    }

    /// A photo's thumbnail: 320 pixels wide, made once, then from the cache until the file
    /// changes; a file that is not a JPEG, or none, is refused.
    @Test func thumbnailsAreMadeOnceAndRefusedForWhatIsNoPhoto() throws {
        let board = TestRig.simulatorBoard.replacingOccurrences(of: "\"width\": 320, \"height\": 240", with: "\"width\": 640, \"height\": 480")
        var options = NodeOptions()
        options.http = HTTPSettings(endpoint: HTTPEndpoint(address: "127.0.0.1", port: 0))
        let rig = try TestRig(boardJSON: board, options: options)
        defer { rig.close() }
        try rig.click()
        try rig.waitFor { rig.names.contains("photo") }
        let list = try rig.http("GET", "/photos/")
        guard case .array(let photos)? = list.json?["photos"], case .object(let photo)? = photos.first,
              case .string(let name)? = photo["name"] else {
            Issue.record("no photo listed: \(list.body)")
            return
        }
        #expect(photo["thumbnail"] == .string("/thumbs/\(name)"))
        let thumbnail = try rig.http("GET", "/thumbs/\(name)")
        #expect(thumbnail.status == 200)
        #expect(thumbnail.headers["content-type"] == "image/jpeg")
        // One Cache-Control (the test client joins repeated headers with ", "): a browser may keep it.
        #expect(thumbnail.headers["cache-control"] == "private, max-age=3600")
        #expect(rig.node.http?.thumbnailCacheUse.count == 1)
        let raw = try rawGet(rig, "/thumbs/\(name)")
        #expect(JPEGSize(raw)?.width == 320 && JPEGSize(raw)?.height == 240)
        #expect(rig.node.http?.thumbnailCacheUse.count == 1)

        let directory = rig.directory + "/photos"
        try Data("not a jpeg".utf8).write(to: URL(fileURLWithPath: directory + "/notes.jpg"))
        let refused = try rig.http("GET", "/thumbs/notes.jpg")
        #expect(refused.status == 415)
        #expect(try rig.http("GET", "/thumbs/IMG_404.jpg").status == 404)
        try FileManager.default.createSymbolicLink(atPath: directory + "/link.jpg", withDestinationPath: directory + "/" + name)
        #expect(try rig.http("GET", "/thumbs/link.jpg").status == 404)
        #expect(rig.node.http?.thumbnailCacheUse.count == 1)
    }

    @Test func theThumbnailCacheKeepsTheNewestWithinItsBytes() {
        var cache = ThumbnailCache(byteLimit: 10)
        let version = ThumbnailCache.Version(size: 1, modified: 1)
        cache.keep([1, 2, 3, 4], of: "a", version: version)
        cache.keep([1, 2, 3, 4], of: "b", version: version)
        #expect(cache.thumbnail(of: "a", version: version) != nil)  // a is now newer than b
        cache.keep([1, 2, 3, 4], of: "c", version: version)
        #expect(cache.count == 2 && cache.byteCount == 8)
        #expect(cache.thumbnail(of: "b", version: version) == nil)
        #expect(cache.thumbnail(of: "a", version: ThumbnailCache.Version(size: 2, modified: 1)) == nil, "a changed file is not its old thumbnail")
        cache.keep([9], of: "a", version: ThumbnailCache.Version(size: 2, modified: 1))
        #expect(cache.byteCount == 5)
    }

    /// A viewer that comes after everyone left gets no preview left from before it connected
    /// (it could be minutes old): its first part shows a frame taken after it connected.
    @Test func aNewViewerGetsNoPreviewMadeBeforeItConnected() throws {
        let rig = try TestRig.withHTTP()
        defer { rig.close() }
        let first = try HTTPTestClient.viewer(of: rig)
        try first.waitForPart()
        first.closeNow()
        try rig.waitFor { rig.node.http?.viewerCount == 0 }
        rig.daemon.capture.service.waitForPreviews()
        let left = try #require(rig.daemon.preview.latest())
        // The camera goes on; the preview left behind grows old.
        try rig.waitFor { (rig.daemon.capture.service.newestFrameAt ?? left.timestamp) > left.timestamp + .milliseconds(200) }
        let connectedAt = try #require(rig.daemon.capture.service.newestFrameAt)

        let viewer = try HTTPTestClient.viewer(of: rig)
        try viewer.waitForPart()
        let part = try #require(MJPEGStream(viewer.received).parts.first)
        let shown = try #require(Double(part.headers["x-timestamp"] ?? ""))
        #expect(Int(part.headers["x-frame"] ?? "") != left.number)
        #expect(shown >= connectedAt.seconds, "the first part shows a frame from \(connectedAt.seconds - shown) s before the viewer connected")
    }

    /// A rig whose camera is 1280 pixels wide, previews 320 wide unless a viewer asks, at most 640.
    private static func wideRig() throws -> TestRig {
        var options = NodeOptions()
        options.http = HTTPSettings(endpoint: HTTPEndpoint(address: "127.0.0.1", port: 0))
        return try TestRig(options: options, edit: { board in
            board.camera.width = 1280
            board.camera.height = 720
            board.preview.width = 320
            board.preview.maxWidth = 640
        })
    }

    /// `?width=` asks for previews that wide, snapped to a few widths and never past the board's
    /// `preview.maxWidth`; what is no width is refused.
    @Test func aViewerAsksForItsWidthWithinTheBound() throws {
        let rig = try Self.wideRig()
        defer { rig.close() }
        let asked = try HTTPTestClient.viewer(of: rig, "/stream?width=400")
        try asked.waitForPart(width: 480)
        asked.closeNow()
        try rig.waitFor { rig.node.http?.viewerCount == 0 }

        let greedy = try HTTPTestClient.viewer(of: rig, "/stream?width=100000")
        try greedy.waitForPart(width: 640)
        #expect(!MJPEGStream(greedy.received).parts.contains { (JPEGSize($0.body)?.width ?? 0) > 640 })
        greedy.closeNow()
        try rig.waitFor { rig.node.http?.viewerCount == 0 }

        let snapshot = try rawGet(rig, "/snapshot?width=200")
        #expect(JPEGSize(snapshot) != nil)
        for hostile in ["abc", "-5", "0", "", "1e3", "99999999999999999999", "%20640"] {
            let answer = try rig.http("GET", "/stream?width=\(hostile)")
            #expect(answer.status == 400, "width=\(hostile)")
            #expect(try rig.http("GET", "/snapshot?width=\(hostile)").status == 400, "width=\(hostile)")
        }
    }

    /// Two viewers of different widths share one preview, the wider's: one preview per frame.
    @Test func viewersShareTheWidestWidth() throws {
        let rig = try Self.wideRig()
        defer { rig.close() }
        let small = try HTTPTestClient.viewer(of: rig)
        try small.waitForPart()
        #expect(JPEGSize(try #require(MJPEGStream(small.received).parts.first).body)?.width == 320)
        let wide = try HTTPTestClient.viewer(of: rig, "/stream?width=600")
        try wide.waitForPart(width: 640)
        try small.waitForPart(width: 640)
        wide.closeNow()
        try rig.waitFor { rig.node.http?.viewerCount == 1 }
        #expect(rig.daemon.preview.requestedWidth == nil)
    }

    @Test func theTokenGuardsThePreviews() throws {
        let rig = try TestRig.withHTTP(HTTPSettings(endpoint: HTTPEndpoint(address: "127.0.0.1", port: 0), requireToken: true))
        defer { rig.close() }
        #expect(rig.node.http?.requiresToken == true)
        #expect(try rig.http("GET", "/snapshot").status == 401)
        #expect(try rig.http("GET", "/stream").status == 401)
        #expect(try rig.http("GET", "/thumbs/x.jpg").status == 401)
        let token = try String(contentsOfFile: rig.directory + "/http-token", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try rig.http("GET", "/snapshot", headers: ["Authorization: Bearer \(token)"]).status == 200)
    }
}

extension HTTPTestClient {
    /// A viewer of `target` (`/stream` and its query) on `rig`, its request sent.
    static func viewer(of rig: TestRig, _ target: String = "/stream") throws -> HTTPTestClient {
        let client = try HTTPTestClient(rig)
        try client.send("GET \(target) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        return client
    }

    /// Waits for a whole MJPEG part, `width` pixels wide when given.
    func waitForPart(width: Int? = nil) throws {
        try wait(width.map { "a part \($0) wide" } ?? "a part") { _ in
            MJPEGStream(received).parts.contains { part in width.map { JPEGSize(part.body)?.width == $0 } ?? true }
        }
    }
}

/// A GET's body as bytes (the test client's `text` is UTF-8 and mangles a JPEG).
func rawGet(_ rig: TestRig, _ target: String) throws -> [UInt8] {
    let client = try HTTPTestClient(rig)
    try client.send("GET \(target) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
    try client.wait(target) { _ in false }
    let bytes = client.received
    guard let end = bytes.firstRange(of: [0x0D, 0x0A, 0x0D, 0x0A]) else { return [] }
    return Array(bytes[end.upperBound...])
}

/// A `multipart/x-mixed-replace` response as it has arrived: its headers and its whole parts.
struct MJPEGStream {
    struct Part {
        var headers: [String: String]
        var body: [UInt8]
    }

    var headers: [String: String] = [:]
    var parts: [Part] = []

    init(_ bytes: [UInt8]) {
        let separator: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A]
        guard let end = bytes.firstRange(of: separator) else { return }
        headers = Self.fields(bytes[..<end.lowerBound])
        var rest = bytes[end.upperBound...]
        while let head = rest.firstRange(of: separator) {
            let fields = Self.fields(rest[..<head.lowerBound])
            guard let length = Int(fields["content-length"] ?? ""), rest.distance(from: head.upperBound, to: rest.endIndex) >= length + 2 else { return }
            let body = rest[head.upperBound..<(head.upperBound + length)]
            parts.append(Part(headers: fields, body: Array(body)))
            rest = rest[(head.upperBound + length + 2)...]
        }
    }

    private static func fields(_ bytes: ArraySlice<UInt8>) -> [String: String] {
        var fields: [String: String] = [:]
        for line in String(decoding: bytes, as: UTF8.self).components(separatedBy: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return fields
    }
}

/// A baseline JPEG's size, from its SOF0 segment.
struct JPEGSize {
    var width: Int
    var height: Int

    init?(_ jpeg: [UInt8]) {
        var index = 2
        while index + 9 < jpeg.count {
            guard jpeg[index] == 0xFF else { return nil }
            let marker = jpeg[index + 1]
            let length = Int(jpeg[index + 2]) << 8 | Int(jpeg[index + 3])
            if marker == 0xC0 || marker == 0xC2 {
                height = Int(jpeg[index + 5]) << 8 | Int(jpeg[index + 6])
                width = Int(jpeg[index + 7]) << 8 | Int(jpeg[index + 8])
                return
            }
            index += 2 + length
        }
        return nil
    }
}
