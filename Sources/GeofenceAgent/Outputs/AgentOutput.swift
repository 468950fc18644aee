import Foundation
import GeofenceCore
import GeofenceStore

/// One output format of the agent: our own topics, OwnTracks, Home Assistant, Prometheus. After
/// swift-log's `LogHandler`, it is told what happened and answers with the messages it wants sent; the
/// runtime knows no output by name (`OutputRegistry` lists them, `MultiplexOutput` fans out).
///
/// An output decides, it does not send: it holds no connection and does no I/O on the fix path.
public protocol AgentOutput: Sendable {
    /// The output for this configuration, or nil when it is off.
    static func make(_ context: OutputContext) -> Self?
    /// The messages for what happened, in the order they are to be sent; none by default.
    func messages(for happening: Happening) -> [OutputMessage]
    /// Whether happenings must carry the conditions the vehicle is inside (it costs a walk of them).
    var needsInsideConditions: Bool { get }
    /// Retained messages sent at each connection, and again when `announcementRequest` says so.
    func announcements() -> [OutputMessage]
    /// A topic and payload on which the announcements are asked for again (Home Assistant's birth message).
    var announcementRequest: (topic: String, payload: String)? { get }
}

extension AgentOutput {
    public func messages(for happening: Happening) -> [OutputMessage] { [] }
    public var needsInsideConditions: Bool { false }
    public func announcements() -> [OutputMessage] { [] }
    public var announcementRequest: (topic: String, payload: String)? { nil }
}

/// What outputs are built from.
public struct OutputContext: Sendable {
    public var configuration: AgentConfiguration
    public var topics: Topics
    /// The agent's Prometheus metrics, when they are on.
    public var metrics: AgentMetrics?

    public init(configuration: AgentConfiguration, topics: Topics, metrics: AgentMetrics? = nil) {
        self.configuration = configuration
        self.topics = topics
        self.metrics = metrics
    }
}

/// How a message is delivered.
public enum DeliveryClass: Sendable, Equatable {
    /// Kept in the outbox until the broker acknowledges it; dropped only at the hard caps (transitions).
    case durable
    /// Kept in the outbox, and the first to go when it is full (locations).
    case droppable
    /// Never queued: sent when connected, replaced by the next one (announcements).
    case latestOnly
}

/// A message an output wants sent.
public struct OutputMessage: Sendable {
    public enum Payload: Sendable {
        case bytes([UInt8])
        /// Made once the outbox has given the message its `eventId` and sequence number.
        case stamped(@Sendable (_ eventID: String, _ sequence: Int64) -> [UInt8])
    }

    public var topic: String
    public var payload: Payload
    public var retain: Bool
    public var delivery: DeliveryClass
    /// QoS 1 for every class today: the outbox deletes a row on its PUBACK.
    public var qos: Int32 = 1

    public init(topic: String, payload: Payload, retain: Bool = false, delivery: DeliveryClass) {
        self.topic = topic
        self.payload = payload
        self.retain = retain
        self.delivery = delivery
    }

    /// The outbox's form of a durable or droppable message; nil for one that is never queued.
    public var outboxItem: OutboxItem? {
        let kind: OutboxEntry.Kind
        switch delivery {
        case .durable: kind = .transition
        case .droppable: kind = .location
        case .latestOnly: return nil
        }
        let payload = self.payload
        return OutboxItem(kind: kind, topic: topic, qos: qos, retain: retain) { id, sequence in
            switch payload {
            case .bytes(let bytes): bytes
            case .stamped(let make): make(id, sequence)
            }
        }
    }

    /// The bytes of a message sent without the outbox (it has no `eventId` or sequence).
    public var unstampedBytes: [UInt8] {
        switch payload {
        case .bytes(let bytes): bytes
        case .stamped(let make): make("", 0)
        }
    }
}

/// A condition the vehicle is inside: its identifier and name.
public struct InsideCondition: Sendable, Equatable {
    public var identifier: String
    public var name: String?
    public init(identifier: String, name: String?) {
        self.identifier = identifier
        self.name = name
    }
}

/// What outputs are told.
public enum Happening: Sendable {
    /// A notified event of a monitor (enter, exit, dwell, crossed, rule events).
    case event(EventHappening)
    /// A location to report.
    case location(LocationHappening)
    /// A fix was offered to the monitors: accepted, or rejected for a reason (the first monitor's verdict).
    case fix(rejected: FixRejection?)
    /// A fix's changes were committed to the store in this long.
    case committed(latency: Duration)
}

public struct EventHappening: Sendable {
    /// Where an event came from.
    public enum Origin: Sendable, Equatable {
        /// A fix.
        case fix
        /// Its condition was deleted while the vehicle was inside (an `exit` with reason `removed`).
        case removal
    }

    public var event: MonitorEvent
    public var monitor: String
    public var origin: Origin
    /// The condition's `properties.version` (OwnTracks' `wtst`).
    public var conditionVersion: Int64?
    /// Where it happened: nil when places are off, `.some(nil)` when the gazetteer has no answer.
    public var place: PlaceSummary??
}

public struct LocationHappening: Sendable {
    /// Why the location is reported.
    public enum Reason: Sendable, Equatable {
        /// A live update (Core Location's `liveUpdates()`).
        case liveUpdate
        /// An answer to a request for the location (`reportLocation`).
        case requested
        /// Where the last transition of a fix happened.
        case transition
    }

    public var update: LiveUpdate
    public var reason: Reason
    public var place: PlaceSummary??
    /// The conditions the vehicle is inside, when an output asked for them (`needsInsideConditions`).
    public var inside: [InsideCondition]
}
