import Foundation

/// One event waiting for the broker's acknowledgement.
public struct OutboxEntry: Sendable, Equatable {
    public enum Kind: String, Sendable {
        /// enter, exit, dwell, crossed: kept until the hard cap.
        case transition
        /// A live location update: the first to go when the outbox is full.
        case location
    }

    /// The per-vehicle sequence number, also the delivery order.
    public var sequence: Int64
    public var eventID: String
    public var kind: Kind
    public var topic: String
    public var payload: [UInt8]
    public var qos: Int32
    public var retain: Bool
}

/// An event to put in the outbox; the store gives it its id and sequence number.
public struct OutboxItem: Sendable {
    public var kind: OutboxEntry.Kind
    public var topic: String
    public var qos: Int32
    public var retain: Bool
    /// Builds the payload once the id and sequence number are known.
    public var payload: @Sendable (_ eventID: String, _ sequence: Int64) -> [UInt8]

    public init(
        kind: OutboxEntry.Kind, topic: String, qos: Int32 = 1, retain: Bool = false,
        payload: @escaping @Sendable (_ eventID: String, _ sequence: Int64) -> [UInt8]
    ) {
        self.kind = kind
        self.topic = topic
        self.qos = qos
        self.retain = retain
        self.payload = payload
    }
}

/// The outbox's caps, applied by the `Outbox`. Above `maximumRows` or `maximumBytes` the oldest location updates are dropped;
/// transitions are dropped (oldest first) only above the hard caps.
public struct OutboxLimits: Sendable, Equatable, Codable {
    public var maximumRows: Int = 50_000
    public var maximumBytes: Int = 32 << 20
    public var hardMaximumRows: Int = 200_000
    public var hardMaximumBytes: Int = 128 << 20
    /// How long droppable rows the broker has not acknowledged wait before they are stored together: at a
    /// power cut, at most this much of the track is lost.
    public var groupCommitSeconds: Double = 10
    /// Rows the broker acknowledged are deleted with the next write (one transaction, not one more each),
    /// or on their own when this long passes without one. A crash before then sends them again at the next
    /// start: consumers drop the copy by its `eventId`.
    public var acknowledgedDeletionSeconds: Double = 60
    public init() {}
}

/// How full the outbox is and what it had to drop. Reported in the agent's status, never silently.
public struct OutboxStats: Sendable, Equatable, Codable {
    public var rows = 0
    public var bytes = 0
    public var transitions = 0
    public var locations = 0
    public var droppedLocations: Int64 = 0
    public var droppedTransitions: Int64 = 0
    /// A cap was reached since the agent started.
    public var capReached = false
    public init() {}
}
