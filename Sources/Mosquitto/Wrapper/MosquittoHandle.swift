import CMosquitto

#if canImport(Glibc)
    import Glibc
#endif

/// The one owner of a `struct mosquitto *`: thin, typed calls, and `mosquitto_destroy` when released.
///
/// libmosquitto is thread-safe once its loop thread runs, so the handle may be shared; the setup calls
/// (`set…`) are made before `loopStart`. Blocking calls are marked and belong on `BlockingWorker`.
final class MosquittoHandle: @unchecked Sendable {
    let raw: OpaquePointer
    private let box: Unmanaged<EventsBox>

    init(clientID: String, cleanStart: Bool, events: MosquittoEvents) throws(MosquittoError) {
        MosquittoLibrary.ensureInitialised()
        let box = Unmanaged.passRetained(EventsBox(events))
        guard let raw = mosquitto_new(clientID, cleanStart, box.toOpaque()) else {
            box.release()
            throw MosquittoError(code: Int32(MOSQ_ERR_NOMEM.rawValue), operation: "mosquitto_new")
        }
        self.raw = raw
        self.box = box
        mosquitto_connect_v5_callback_set(raw, MosquittoCallbacks.onConnect)
        mosquitto_disconnect_v5_callback_set(raw, MosquittoCallbacks.onDisconnect)
        mosquitto_publish_v5_callback_set(raw, MosquittoCallbacks.onPublish)
        mosquitto_subscribe_v5_callback_set(raw, MosquittoCallbacks.onSubscribe)
        mosquitto_message_v5_callback_set(raw, MosquittoCallbacks.onMessage)
        mosquitto_log_callback_set(raw, MosquittoCallbacks.onLog)
    }

    deinit {
        mosquitto_destroy(raw)
        box.release()
    }

    // MARK: Setup, before loopStart

    func setProtocolVersion(_ version: Int32) throws(MosquittoError) {
        try MosquittoError.check(mosquitto_int_option(raw, MOSQ_OPT_PROTOCOL_VERSION, version), "set protocol version")
    }

    func setNoDelay() throws(MosquittoError) {
        try MosquittoError.check(mosquitto_int_option(raw, MOSQ_OPT_TCP_NODELAY, 1), "set TCP_NODELAY")
    }

    func setCredentials(username: String, password: String?) throws(MosquittoError) {
        try MosquittoError.check(mosquitto_username_pw_set(raw, username, password), "set username and password")
    }

    /// TLS with peer verification always on.
    func setTLS(caFile: String, certificateFile: String?, keyFile: String?) throws(MosquittoError) {
        try MosquittoError.check(mosquitto_tls_set(raw, caFile, nil, certificateFile, keyFile, nil), "set TLS files")
        try MosquittoError.check(mosquitto_tls_opts_set(raw, 1, nil, nil), "set TLS peer verification")
        try MosquittoError.check(mosquitto_tls_insecure_set(raw, false), "set TLS hostname check")
    }

    func setWill(topic: String, payload: [UInt8], qos: Int32, retain: Bool) throws(MosquittoError) {
        let rc = payload.withUnsafeBytes {
            mosquitto_will_set_v5(raw, topic, Int32($0.count), $0.baseAddress, qos, retain, nil)
        }
        try MosquittoError.check(rc, "set will on \(topic)")
    }

    func setReconnectDelay(minimum: UInt32, maximum: UInt32) throws(MosquittoError) {
        try MosquittoError.check(mosquitto_reconnect_delay_set(raw, minimum, maximum, true), "set reconnect delay")
    }

    // MARK: Loop

    func loopStart() throws(MosquittoError) {
        try MosquittoError.check(mosquitto_loop_start(raw), "start network loop")
    }

    /// Blocking: waits for the loop thread to end (or cancels it when `force`).
    func loopStop(force: Bool) throws(MosquittoError) {
        try MosquittoError.check(mosquitto_loop_stop(raw, force), "stop network loop")
    }

    // MARK: Connection (blocking)

    /// Blocking. Connects with CONNECT properties, which libmosquitto keeps for its own reconnects; a
    /// session expiry makes an MQTT 5 session persistent.
    func connect(host: String, port: Int32, keepAlive: Int32, sessionExpiry: UInt32?) throws(MosquittoError) {
        var properties: OpaquePointer? = nil
        defer { mosquitto_property_free_all(&properties) }
        if let sessionExpiry {
            try MosquittoError.check(
                mosquitto_property_add_int32(
                    &properties, Int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL.rawValue), sessionExpiry),
                "add session expiry")
        }
        try MosquittoError.check(
            mosquitto_connect_bind_v5(raw, host, port, keepAlive, nil, properties), "connect to \(host):\(port)")
    }

    /// Blocking. Connects again with the parameters of the last `connect`.
    func reconnect() throws(MosquittoError) {
        try MosquittoError.check(mosquitto_reconnect(raw), "reconnect")
    }

    func disconnect() throws(MosquittoError) {
        try MosquittoError.check(mosquitto_disconnect_v5(raw, 0, nil), "disconnect")
    }

    /// MQTT 5's "disconnect with will message" (reason 0x04): the broker publishes the will at once, and
    /// nothing waits for an acknowledgement on a link that may be stalled.
    func disconnectWithWill() throws(MosquittoError) {
        try MosquittoError.check(mosquitto_disconnect_v5(raw, 4, nil), "disconnect with will")
    }

    // MARK: The socket

    /// Bounds how long sent data may stay unacknowledged before the kernel drops the connection
    /// (`TCP_USER_TIMEOUT`). Called on the loop thread (the connect callback), which owns the socket.
    func setUserTimeout(milliseconds: UInt32) {
        let fd = mosquitto_socket(raw)
        guard fd >= 0, milliseconds > 0 else { return }
        var value = milliseconds
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_USER_TIMEOUT, &value, socklen_t(MemoryLayout<UInt32>.size))
    }

    /// The socket of a connection attempt still waiting for the broker's SYN-ACK, or nil. Read from the
    /// supervisor while libmosquitto's blocking `connect` runs on its own thread.
    func connectingSocket() -> Int32? {
        let fd = mosquitto_socket(raw)
        guard fd >= 0 else { return nil }
        // struct tcp_info begins with tcpi_state; TCP_SYN_SENT is 2.
        var info = [UInt8](repeating: 0, count: 8)
        var length = socklen_t(info.count)
        guard getsockopt(fd, Int32(IPPROTO_TCP), TCP_INFO, &info, &length) == 0, length > 0, info[0] == 2 else {
            return nil
        }
        return fd
    }

    /// Ends a connection attempt that `connectingSocket` found still waiting: libmosquitto's `connect`
    /// returns with an error and its loop makes a fresh attempt after its reconnect delay. The socket is
    /// checked again first: only one still in SYN_SENT is shut down.
    func abortConnecting(_ fd: Int32) {
        guard connectingSocket() == fd else { return }
        _ = shutdown(fd, Int32(SHUT_RDWR))
    }

    // MARK: Messages

    /// Queues a publish and returns its message id; the PUBACK arrives through `published`.
    func publish(topic: String, payload: [UInt8], qos: Int32, retain: Bool) throws(MosquittoError) -> Int32 {
        let (mid, error) = enqueue(topic: topic, payload: payload, qos: qos, retain: retain)
        if let error { throw error }
        return mid
    }

    /// `mosquitto_publish_v5`, with the message id even when it fails: for QoS 1 and 2 it queues the message
    /// before it tries the socket, so `MOSQ_ERR_NO_CONN` means "queued, sent at the reconnect" and the id
    /// is the one its PUBACK will carry.
    func enqueue(topic: String, payload: [UInt8], qos: Int32, retain: Bool) -> (mid: Int32, error: MosquittoError?) {
        var mid: Int32 = 0
        let rc = payload.withUnsafeBytes {
            mosquitto_publish_v5(raw, &mid, topic, Int32($0.count), $0.baseAddress, qos, retain, nil)
        }
        do throws(MosquittoError) {
            try MosquittoError.check(rc, "publish to \(topic)")
            return (mid, nil)
        } catch {
            return (mid, error)
        }
    }

    func subscribe(filter: String, qos: Int32) throws(MosquittoError) -> Int32 {
        var mid: Int32 = 0
        try MosquittoError.check(mosquitto_subscribe_v5(raw, &mid, filter, qos, 0, nil), "subscribe to \(filter)")
        return mid
    }

    func unsubscribe(filter: String) throws(MosquittoError) {
        try MosquittoError.check(mosquitto_unsubscribe_v5(raw, nil, filter, nil), "unsubscribe from \(filter)")
    }

    /// Whether a topic matches a subscription filter, by libmosquitto's rules. A shared subscription
    /// (`$share/GROUP/FILTER`) matches what its FILTER matches: the broker delivers the topic itself.
    static func topic(_ topic: String, matches filter: String) -> Bool {
        var filter = Substring(filter)
        if filter.hasPrefix("$share/") {
            let levels = filter.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
            guard levels.count == 3 else { return false }
            filter = levels[2]
        }
        var result = false
        return mosquitto_topic_matches_sub(String(filter), topic, &result) == Int32(MOSQ_ERR_SUCCESS.rawValue) && result
    }
}
