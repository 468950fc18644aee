import CMosquitto

/// A libmosquitto error code (`MOSQ_ERR_*`), typed, with the library's own message.
public struct MosquittoError: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: Int32
    /// The call that failed, for the message.
    public let operation: String
    /// errno, when the code is `MOSQ_ERR_ERRNO`.
    public let systemError: Int32?

    public init(code: Int32, operation: String, systemError: Int32? = nil) {
        self.code = code
        self.operation = operation
        self.systemError = systemError
    }

    /// Not connected: before the first connection a publish is refused with this rather than queued.
    public static let noConnection = Int32(MOSQ_ERR_NO_CONN.rawValue)
    public static let errno = Int32(MOSQ_ERR_ERRNO.rawValue)

    public var description: String {
        var text = "\(operation): \(String(cString: mosquitto_strerror(code)))"
        if code == Self.errno, let systemError { text += " (\(String(cString: strerror(systemError))))" }
        return text
    }

    /// Throws when `code` is not success.
    @inline(__always)
    static func check(_ code: Int32, _ operation: @autoclosure () -> String) throws(MosquittoError) {
        guard code == Int32(MOSQ_ERR_SUCCESS.rawValue) else {
            throw MosquittoError(
                code: code, operation: operation(), systemError: code == Self.errno ? Glibc.errno : nil)
        }
    }
}

/// An MQTT v5 reason code, as carried in CONNACK, PUBACK and SUBACK; below 0x80 is success.
public struct MQTTReasonCode: Sendable, Equatable, Hashable, CustomStringConvertible {
    public let rawValue: Int32
    public init(_ rawValue: Int32) { self.rawValue = rawValue }

    public var isSuccess: Bool { rawValue < 0x80 }
    public static let success = MQTTReasonCode(0)
    /// PUBACK 16: delivered to nobody, which is still a success for the publisher.
    public static let noMatchingSubscribers = MQTTReasonCode(16)
    public static let notAuthorized = MQTTReasonCode(135)
    public static let badUserNameOrPassword = MQTTReasonCode(134)

    public var description: String { "\(rawValue) (\(String(cString: mosquitto_reason_string(rawValue))))" }
}

#if canImport(Glibc)
    import Glibc
#endif
