import CMosquitto

/// What libmosquitto's callbacks report, already copied out of C memory (which is freed when the
/// callback returns). Callbacks run one at a time on the loop thread: handlers must be quick, and must not
/// stop the loop or change callbacks (either deadlocks).
protocol MosquittoEvents: AnyObject, Sendable {
    func connected(reason: Int32, sessionPresent: Bool)
    func disconnected(reason: Int32)
    func published(mid: Int32, reason: Int32)
    func subscribed(mid: Int32, granted: [Int32])
    func received(_ message: MQTTMessage)
    func logged(level: Int32, line: String)
}

/// The C callbacks: each finds its `MosquittoEvents` through the handle's user data.
enum MosquittoCallbacks {
    static func events(_ obj: UnsafeMutableRawPointer?) -> MosquittoEvents? {
        guard let obj else { return nil }
        return Unmanaged<EventsBox>.fromOpaque(obj).takeUnretainedValue().events
    }

    static let onConnect:
        @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32, Int32, OpaquePointer?) -> Void = {
            _, obj, rc, flags, _ in
            events(obj)?.connected(reason: rc, sessionPresent: flags & 1 == 1)
        }

    static let onDisconnect: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32, OpaquePointer?) -> Void =
        { _, obj, rc, _ in
            events(obj)?.disconnected(reason: rc)
        }

    static let onPublish:
        @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32, Int32, OpaquePointer?) -> Void = {
            _, obj, mid, reason, _ in
            events(obj)?.published(mid: mid, reason: reason)
        }

    static let onSubscribe:
        @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32, Int32, UnsafePointer<Int32>?, OpaquePointer?)
            -> Void = { _, obj, mid, count, granted, _ in
                let codes = granted.map { Array(UnsafeBufferPointer(start: $0, count: Int(count))) } ?? []
                events(obj)?.subscribed(mid: mid, granted: codes)
            }

    static let onMessage:
        @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafePointer<mosquitto_message>?, OpaquePointer?) ->
            Void = { _, obj, message, properties in
                guard let message, let events = events(obj) else { return }
                events.received(MQTTMessage(copying: message.pointee, properties: properties))
            }

    /// libmosquitto logs every packet at debug level; only warnings and errors are worth a String.
    static let onLog: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?) -> Void =
        { _, obj, level, line in
            guard let line, level & (MOSQ_LOG_ERR | MOSQ_LOG_WARNING | MOSQ_LOG_NOTICE) != 0 else { return }
            events(obj)?.logged(level: level, line: String(cString: line))
        }
}

/// Keeps the events receiver alive for as long as the C handle may call it.
final class EventsBox: Sendable {
    let events: MosquittoEvents
    init(_ events: MosquittoEvents) { self.events = events }
}
