import CMosquitto

/// Quality of service.
public enum MQTTQoS: Int32, Sendable, Codable {
    case atMostOnce = 0
    case atLeastOnce = 1
    case exactlyOnce = 2
}

/// A received message, copied out of libmosquitto's memory.
public struct MQTTMessage: Sendable, Equatable {
    public var topic: String
    public var payload: [UInt8]
    public var qos: MQTTQoS
    /// True for a retained message delivered because of a (new) subscription.
    public var retained: Bool
    /// MQTT 5 user properties, in order.
    public var userProperties: [(String, String)]
    /// MQTT 5 content type, if set.
    public var contentType: String?
    /// When libmosquitto handed the message over (`CLOCK_MONOTONIC`, ns), on its network thread: a
    /// latency measured from here leaves out the hop to whichever task consumes it. 0 for a message made
    /// here. Not part of equality.
    public var receivedAtNanoseconds: UInt64 = 0

    public init(
        topic: String, payload: [UInt8], qos: MQTTQoS = .atLeastOnce, retained: Bool = false,
        userProperties: [(String, String)] = [], contentType: String? = nil
    ) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retained = retained
        self.userProperties = userProperties
        self.contentType = contentType
    }

    /// The payload as UTF-8 text.
    public var text: String { String(decoding: payload, as: UTF8.self) }

    public static func == (l: MQTTMessage, r: MQTTMessage) -> Bool {
        l.topic == r.topic && l.payload == r.payload && l.qos == r.qos && l.retained == r.retained
            && l.userProperties.elementsEqual(r.userProperties, by: ==) && l.contentType == r.contentType
    }

    init(copying m: mosquitto_message, properties: OpaquePointer?) {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        receivedAtNanoseconds = UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
        topic = m.topic.map { String(cString: $0) } ?? ""
        if let bytes = m.payload, m.payloadlen > 0 {
            payload = Array(UnsafeRawBufferPointer(start: bytes, count: Int(m.payloadlen)))
        } else {
            payload = []
        }
        qos = MQTTQoS(rawValue: m.qos) ?? .atMostOnce
        retained = m.retain
        userProperties = []
        contentType = nil
        guard let properties else { return }
        var cursor: OpaquePointer? = properties
        var first = true
        while true {
            var name: UnsafeMutablePointer<CChar>? = nil
            var value: UnsafeMutablePointer<CChar>? = nil
            let found = mosquitto_property_read_string_pair(
                cursor, Int32(MQTT_PROP_USER_PROPERTY.rawValue), &name, &value, !first)
            first = false
            guard let found else { break }
            if let name, let value { userProperties.append((String(cString: name), String(cString: value))) }
            free(name)
            free(value)
            cursor = found
        }
        var type: UnsafeMutablePointer<CChar>? = nil
        if mosquitto_property_read_string(properties, Int32(MQTT_PROP_CONTENT_TYPE.rawValue), &type, false) != nil,
            let type
        {
            contentType = String(cString: type)
            free(type)
        }
    }
}

#if canImport(Glibc)
    import Glibc
#endif
