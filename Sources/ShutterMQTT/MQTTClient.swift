#if canImport(Glibc)
import Glibc
#endif
import CMosquitto
import ShutterService

/// What ``MQTTNode`` needs of its connection to the broker: ``MQTTClient`` on libmosquitto, or
/// a test's fake that records what is published and hands messages in, on the loop's thread.
protocol MQTTConnection: AnyObject {
    /// Called when the broker answered CONNECT: `reason` 0 is accepted (MQTT v5 reason codes otherwise).
    var connected: (_ reason: CInt) -> Void { get set }
    /// Called when the connection ended: `reason` 0 is our own disconnect.
    var disconnected: (_ reason: CInt) -> Void { get set }
    var received: (MQTTClient.Message) -> Void { get set }
    /// Whether a callback is running: what it publishes is written after it returns.
    var isInCallback: Bool { get }
    /// The connection's socket, or -1 while there is none.
    var socket: CInt { get }
    /// Whether packets wait to be written.
    var wantsWrite: Bool { get }
    func connect(host: String, port: Int, keepAliveSeconds: Int) throws(MQTTClient.Failure)
    func read() -> MQTTClient.Failure?
    func write() -> MQTTClient.Failure?
    func misc() -> MQTTClient.Failure?
    func publish(topic: String, payload: String, qos: CInt, retain: Bool, expirySeconds: UInt32?,
                 correlationData: [UInt8]?) -> MQTTClient.Failure?
    func subscribe(filter: String, qos: CInt, noLocal: Bool, retainAsPublished: Bool) -> MQTTClient.Failure?
    func disconnect()
}

extension MQTTConnection {
    /// Publishes `payload` on `topic`, with a message expiry in seconds and a correlation data
    /// for a reply, when given.
    @discardableResult
    func publish(_ topic: String, _ payload: String, qos: CInt = 0, retain: Bool = false,
                 expirySeconds: UInt32? = nil, correlationData: [UInt8]? = nil) -> MQTTClient.Failure? {
        publish(topic: topic, payload: payload, qos: qos, retain: retain, expirySeconds: expirySeconds, correlationData: correlationData)
    }

    /// Subscribes to `filter`; `noLocal` leaves out what this client publishes;
    /// `retainAsPublished` keeps the retain flag of a message published while subscribed.
    @discardableResult
    func subscribe(_ filter: String, qos: CInt = 0, noLocal: Bool = false, retainAsPublished: Bool = false) -> MQTTClient.Failure? {
        subscribe(filter: filter, qos: qos, noLocal: noLocal, retainAsPublished: retainAsPublished)
    }
}

/// An MQTT v5 client on libmosquitto, driven by the daemon's loop.
///
/// The library gets no thread: the owner watches ``socket`` (for writing too while
/// ``wantsWrite``), calls ``read()`` and ``write()`` when it is ready and ``misc()`` now and then
/// for the keep-alive, and reconnects with a backoff of its own when a call reports the
/// connection lost. Callbacks run inside those calls, on the loop's thread.
final class MQTTClient: MQTTConnection {
    /// One message from the broker, with the MQTT v5 properties a request may carry.
    struct Message {
        var topic: String
        var payload: [UInt8]
        var retained: Bool
        /// Where the sender wants its reply (MQTT v5 `Response Topic`).
        var responseTopic: String?
        /// What the reply must carry back (MQTT v5 `Correlation Data`).
        var correlationData: [UInt8]?
    }

    /// A libmosquitto call that failed: its name and `MOSQ_ERR_*` code (with errno for
    /// `MOSQ_ERR_ERRNO`); or the library itself, which could not be loaded (with dlerror's text).
    struct Failure: Error, CustomStringConvertible {
        var call: String
        var code: CInt
        var errno: CInt
        /// Why the library could not be loaded (`code` means nothing then, and there is no
        /// `mosquitto_strerror` to ask).
        var loadError: String?

        init(_ call: String, _ code: CInt) {
            self.call = call
            self.code = code
            self.errno = code == CInt(MOSQ_ERR_ERRNO.rawValue) ? Glibc.errno : 0
        }

        init(loading dlerror: String) {
            self.call = "cannot load libmosquitto, the MQTT client library (Debian's libmosquitto1)"
            self.code = CInt(MOSQ_ERR_UNKNOWN.rawValue)
            self.errno = 0
            self.loadError = dlerror
        }

        var description: String {
            if let loadError { return "\(call): \(loadError)" }
            let detail = errno != 0 ? String(cString: strerror(errno)) : String(cString: mosquitto_strerror(code))
            return "\(call): \(detail)"
        }
    }

    /// Called when the broker answered CONNECT: `reason` 0 is accepted (MQTT v5 reason codes otherwise).
    var connected: (_ reason: CInt) -> Void = { _ in }
    /// Called when the connection ended: `reason` 0 is our own disconnect.
    var disconnected: (_ reason: CInt) -> Void = { _ in }
    var received: (Message) -> Void = { _ in }

    private let handle: OpaquePointer
    /// Whether a callback is running: libmosquitto holds its own locks then, and a
    /// `mosquitto_loop_write` from inside one deadlocks; what a callback publishes is queued and
    /// written by the owner after ``read()`` returns.
    private(set) var isInCallback = false

    private func callingBack(_ body: () -> Void) {
        isInCallback = true
        defer { isInCallback = false }
        body()
    }

    /// `mosquitto_lib_init`, once per process (it is not thread-safe; a static's initialiser is run once).
    private static let libraryInitialised: Void = { _ = mosquitto_lib_init() }()

    /// Opens libmosquitto when the first client is made (`CMosquitto_load`, idempotent): it is not
    /// linked, so a board without an `mqtt` section never maps it nor the libssl and libcrypto it
    /// brings. `SHUTTER_LIBMOSQUITTO` names another file to open instead of
    /// `libmosquitto.so.1`; the tests point it at one that is missing.
    ///
    /// - Throws: ``Failure`` naming the library and dlerror's text (not installed, or a function missing).
    static func loadLibrary() throws(Failure) {
        var error = [CChar](repeating: 0, count: 512)
        guard CMosquitto_load(getenv("SHUTTER_LIBMOSQUITTO"), &error, error.count) == 0 else {
            throw Failure(loading: String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
    }

    /// Makes a client (`mosquitto_new`) speaking MQTT v5 with TCP_NODELAY, a clean start (nothing
    /// the broker kept for an earlier session is replayed), the given last will, retained, and
    /// the largest packet it takes (MQTT v5's Maximum Packet Size, sent in every CONNECT).
    ///
    /// - Throws: ``Failure`` when the library cannot be loaded or refuses a setting (a TLS file it
    ///   cannot read).
    init(clientID: String, will: (topic: String, payload: String)?, username: String?, password: String?,
         tls: (caFile: String?, certFile: String?, keyFile: String?)?, maximumPacketSize: UInt32) throws(Failure) {
        try Self.loadLibrary()
        _ = Self.libraryInitialised
        guard let handle = mosquitto_new(clientID, true, nil) else { throw Failure("mosquitto_new", CInt(MOSQ_ERR_NOMEM.rawValue)) }
        self.handle = handle
        mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        func check(_ call: String, _ code: CInt) throws(Failure) {
            guard code == CInt(MOSQ_ERR_SUCCESS.rawValue) else { throw Failure(call, code) }
        }
        try check("MOSQ_OPT_PROTOCOL_VERSION", mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, CMosquitto_PROTOCOL_V5))
        // A shot's message is small and late is useless: no Nagle delay.
        try check("MOSQ_OPT_TCP_NODELAY", mosquitto_int_option(handle, MOSQ_OPT_TCP_NODELAY, 1))
        try setConnectProperties(maximumPacketSize: maximumPacketSize)
        if let will {
            try check("mosquitto_will_set_v5", mosquitto_will_set_v5(handle, will.topic, CInt(will.payload.utf8.count), will.payload, 1, true, nil))
        }
        if let username { try check("mosquitto_username_pw_set", mosquitto_username_pw_set(handle, username, password)) }
        if let tls {
            try check("mosquitto_tls_set", mosquitto_tls_set(handle, tls.caFile, nil, tls.certFile, tls.keyFile, nil))
        }
        mosquitto_connect_v5_callback_set(handle) { _, context, reason, _, _ in
            guard let context else { return }
            let client = Unmanaged<MQTTClient>.fromOpaque(context).takeUnretainedValue()
            client.callingBack { client.connected(reason) }
        }
        mosquitto_disconnect_v5_callback_set(handle) { _, context, reason, _ in
            guard let context else { return }
            let client = Unmanaged<MQTTClient>.fromOpaque(context).takeUnretainedValue()
            client.callingBack { client.disconnected(reason) }
        }
        mosquitto_message_v5_callback_set(handle) { _, context, message, properties in
            guard let context, let message = message?.pointee else { return }
            let client = Unmanaged<MQTTClient>.fromOpaque(context).takeUnretainedValue()
            let received = MQTTClient.message(message, properties)
            client.callingBack { client.received(received) }
        }
    }

    deinit {
        mosquitto_destroy(handle)
    }

    /// Gives every later CONNECT the property Maximum Packet Size (`mosquitto_connect_bind_v5`):
    /// a broker then drops what is larger for this client instead of sending it, and the loop
    /// never reads it.
    ///
    /// libmosquitto's non-blocking connect takes no CONNECT properties and has no option for this
    /// one; its blocking v5 connect would stall the loop. But the library keeps the properties a
    /// v5 connect was given for every connect and reconnect after it, and stores them before it
    /// looks at the host (the sources of 2.0.11, 2.0.20 and 2.1 alike): given no host, it stores them and returns
    /// `MOSQ_ERR_INVAL` without connecting. Tests/MQTT/test-rig.py checks that a larger message
    /// is not delivered.
    private func setConnectProperties(maximumPacketSize: UInt32) throws(Failure) {
        var properties: OpaquePointer?
        defer { mosquitto_property_free_all(&properties) }
        let added = mosquitto_property_add_int32(&properties, CInt(MQTT_PROP_MAXIMUM_PACKET_SIZE.rawValue), maximumPacketSize)
        guard added == CInt(MOSQ_ERR_SUCCESS.rawValue) else { throw Failure("MQTT_PROP_MAXIMUM_PACKET_SIZE", added) }
        let stored = mosquitto_connect_bind_v5(handle, nil, 0, 0, nil, properties)
        guard stored == CInt(MOSQ_ERR_INVAL.rawValue) else { throw Failure("mosquitto_connect_bind_v5 (CONNECT properties only)", stored) }
    }

    private static func message(_ message: mosquitto_message, _ properties: OpaquePointer?) -> Message {
        let topic = message.topic.map { String(cString: $0) } ?? ""
        let payload = message.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(message.payloadlen))) } ?? []
        var responseTopic: String?
        var correlation: [UInt8]?
        if let properties {
            var text: UnsafeMutablePointer<CChar>?
            if mosquitto_property_read_string(properties, CInt(MQTT_PROP_RESPONSE_TOPIC.rawValue), &text, false) != nil, let text {
                responseTopic = String(cString: text)
                free(text)
            }
            var data: UnsafeMutableRawPointer?
            var length: UInt16 = 0
            if mosquitto_property_read_binary(properties, CInt(MQTT_PROP_CORRELATION_DATA.rawValue), &data, &length, false) != nil {
                correlation = data.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(length))) } ?? []
                free(data)
            }
        }
        return Message(topic: topic, payload: payload, retained: message.retain, responseTopic: responseTopic, correlationData: correlation)
    }

    /// Starts connecting (`mosquitto_connect_bind_async`): the TCP connect does not block; a host
    /// name is looked up first, which does (give the broker's address where that matters).
    func connect(host: String, port: Int, keepAliveSeconds: Int) throws(Failure) {
        let code = mosquitto_connect_bind_async(handle, host, CInt(port), CInt(keepAliveSeconds), nil)
        guard code == CInt(MOSQ_ERR_SUCCESS.rawValue) else { throw Failure("connect to \(host):\(port)", code) }
    }

    /// Connects again to the same broker after a loss (`mosquitto_reconnect_async`).
    func reconnect() throws(Failure) {
        let code = mosquitto_reconnect_async(handle)
        guard code == CInt(MOSQ_ERR_SUCCESS.rawValue) else { throw Failure("reconnect", code) }
    }

    /// The connection's socket, or -1 while there is none (`mosquitto_socket`).
    var socket: CInt { mosquitto_socket(handle) }

    /// Whether packets wait to be written: watch the socket for writing too (`mosquitto_want_write`).
    var wantsWrite: Bool { mosquitto_want_write(handle) }

    /// Reads what arrived (`mosquitto_loop_read`), running the callbacks. Returns the failure
    /// that ended the connection, if one did.
    func read() -> Failure? { result("read", mosquitto_loop_read(handle, 16)) }

    /// Writes what is queued (`mosquitto_loop_write`).
    func write() -> Failure? {
        guard !isInCallback else { return nil }
        return result("write", mosquitto_loop_write(handle, 16))
    }

    /// Keep-alive pings and retries (`mosquitto_loop_misc`).
    func misc() -> Failure? { result("keep-alive", mosquitto_loop_misc(handle)) }

    private func result(_ call: String, _ code: CInt) -> Failure? {
        code == CInt(MOSQ_ERR_SUCCESS.rawValue) ? nil : Failure(call, code)
    }

    /// Publishes `payload` on `topic` (`mosquitto_publish_v5`), with a message expiry in seconds,
    /// and a correlation data for a reply, when given.
    func publish(topic: String, payload: String, qos: CInt, retain: Bool, expirySeconds: UInt32?,
                 correlationData: [UInt8]?) -> Failure? {
        var properties: OpaquePointer?
        defer { mosquitto_property_free_all(&properties) }
        if let expirySeconds {
            _ = mosquitto_property_add_int32(&properties, CInt(MQTT_PROP_MESSAGE_EXPIRY_INTERVAL.rawValue), expirySeconds)
        }
        if let correlationData {
            _ = correlationData.withUnsafeBytes { bytes in
                mosquitto_property_add_binary(&properties, CInt(MQTT_PROP_CORRELATION_DATA.rawValue), bytes.baseAddress,
                                              UInt16(min(bytes.count, Int(UInt16.max))))
            }
        }
        var text = payload
        let code = text.withUTF8 { bytes in
            mosquitto_publish_v5(handle, nil, topic, CInt(bytes.count), bytes.baseAddress, qos, retain, properties)
        }
        return result("publish \(topic)", code)
    }

    /// Subscribes to `filter` (`mosquitto_subscribe_v5`); `noLocal` leaves out what this client
    /// publishes; `retainAsPublished` keeps the retain flag of a message published while
    /// subscribed (a broker clears it on live delivery otherwise).
    func subscribe(filter: String, qos: CInt, noLocal: Bool, retainAsPublished: Bool) -> Failure? {
        let options = (noLocal ? CInt(MQTT_SUB_OPT_NO_LOCAL.rawValue) : 0)
            | (retainAsPublished ? CInt(MQTT_SUB_OPT_RETAIN_AS_PUBLISHED.rawValue) : 0)
        return result("subscribe \(filter)", mosquitto_subscribe_v5(handle, nil, filter, qos, options, nil))
    }

    /// An MQTT v5 reason code as text, with its number (`mosquitto_reason_string`).
    static func reasonText(_ reason: CInt) -> String {
        "\(String(cString: mosquitto_reason_string(reason))), reason \(reason)"
    }

    /// A libmosquitto error code as text (`mosquitto_strerror`).
    static func errorText(_ code: CInt) -> String { String(cString: mosquitto_strerror(code)) }

    /// Says goodbye (`mosquitto_disconnect_v5`): the broker does not publish the last will.
    func disconnect() {
        _ = mosquitto_disconnect_v5(handle, 0, nil)
    }
}
