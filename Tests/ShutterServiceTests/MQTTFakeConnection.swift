#if canImport(Glibc)
import Glibc
#endif
@testable import ShutterMQTT
@testable import ShutterService

/// A broker connection that records what the node publishes, and hands it
/// messages as libmosquitto's callbacks would; its socket is one end of a socket pair that
/// never becomes readable.
final class FakeMQTTConnection: MQTTConnection {
    struct Published {
        var topic: String
        var payload: String
    }

    var connected: (_ reason: CInt) -> Void = { _ in }
    var disconnected: (_ reason: CInt) -> Void = { _ in }
    var received: (MQTTClient.Message) -> Void = { _ in }
    private(set) var isInCallback = false
    private(set) var published: [Published] = []
    private var pair: [CInt] = [-1, -1]
    var socket: CInt { pair[0] }
    var wantsWrite: Bool { false }

    init() {
        _ = socketpair(AF_UNIX, CInt(SOCK_STREAM.rawValue), 0, &pair)
    }

    deinit {
        for fd in pair where fd >= 0 { close(fd) }
    }

    func connect(host: String, port: Int, keepAliveSeconds: Int) throws(MQTTClient.Failure) {}
    func read() -> MQTTClient.Failure? { nil }
    func write() -> MQTTClient.Failure? { nil }
    func misc() -> MQTTClient.Failure? { nil }
    func disconnect() {}

    func publish(topic: String, payload: String, qos: CInt, retain: Bool, expirySeconds: UInt32?,
                 correlationData: [UInt8]?) -> MQTTClient.Failure? {
        published.append(Published(topic: topic, payload: payload))
        return nil
    }

    func subscribe(filter: String, qos: CInt, noLocal: Bool, retainAsPublished: Bool) -> MQTTClient.Failure? {
        nil
    }

    /// The broker accepts the node's CONNECT.
    func accept() {
        callingBack { connected(0) }
    }

    /// A message from the broker, as the library's message callback hands it over.
    func deliver(_ topic: String, _ payload: [UInt8], retained: Bool = false) {
        callingBack { received(MQTTClient.Message(topic: topic, payload: payload, retained: retained)) }
    }

    func deliver(_ topic: String, _ payload: String, retained: Bool = false) {
        deliver(topic, Array(payload.utf8), retained: retained)
    }

    /// What was published on `topic`.
    func payloads(on topic: String) -> [String] {
        published.filter { $0.topic == topic }.map(\.payload)
    }

    private func callingBack(_ body: () -> Void) {
        isInCallback = true
        defer { isInCallback = false }
        body()
    }
}
