import Foundation
import GPSD
import GeofenceCore
import GeofenceStore
import Logging
import Mosquitto
import Places
import ServiceLifecycle

/// One output format of the agent: our own topics, OwnTracks, Home Assistant, Prometheus. After
/// swift-log's `LogHandler`, it is told what happened and answers with the messages it wants sent; the
/// runtime knows no output by name (`OutputRegistry` lists them, `MultiplexOutput` fans out).
///
/// An output decides, it does not send: it does no I/O on the fix path. What it needs beside (an endpoint,
/// a timer, a connection of its own) it gives as services, which run in the agent's service group.
package protocol AgentOutput: Sendable {
    /// Its object in config.json, when it has one (read and written by the type itself).
    static var settingsType: (any OutputSettings.Type)? { get }
    /// The output for this configuration, or nil when it is off.
    static func make(_ context: OutputContext) -> Self?
    /// The messages for what happened, in the order they are to be sent; none by default.
    func messages(for happening: Happening) -> [OutputMessage]
    /// Whether happenings must carry the conditions the vehicle is inside (it costs a walk of them).
    var needsInsideConditions: Bool { get }
    /// Whether it follows every round's status (`.status`, once a second), not only those that go out:
    /// building one costs a vehicle's CPU, so the status is built each second only for such an output.
    var observesStatus: Bool { get }
    /// Whether it counts what gives no messages (fixes offered, commits, acknowledgements): told only then,
    /// since telling every output of every fix costs a vehicle's CPU for nothing.
    var observesCounts: Bool { get }
    /// Retained messages sent at each connection, and again when `announcementRequest` says so.
    func announcements() -> [OutputMessage]
    /// A topic and payload on which the announcements are asked for again (Home Assistant's birth message).
    var announcementRequest: (topic: String, payload: String)? { get }
    /// The services the output runs beside the agent's (an HTTP endpoint, a timer, a connection of its own).
    func services() throws -> [any Service]
}

extension AgentOutput {
    package static var settingsType: (any OutputSettings.Type)? { nil }
    package func services() throws -> [any Service] { [] }
    package func messages(for happening: Happening) -> [OutputMessage] { [] }
    package var needsInsideConditions: Bool { false }
    package var observesStatus: Bool { false }
    package var observesCounts: Bool { false }
    package func announcements() -> [OutputMessage] { [] }
    package var announcementRequest: (topic: String, payload: String)? { nil }
}

/// What outputs are built from.
package struct OutputContext: Sendable {
    package var fleet: String
    package var vehicle: String
    package var topics: Topics
    /// Every output's own settings from config.json.
    package var settings: OutputSettingsSet
    /// The agent's own broker settings: an output that needs a connection of its own starts from them.
    package var mqtt: MQTTConfiguration
    package var logger: Logger

    package init(
        fleet: String, vehicle: String, topics: Topics, settings: OutputSettingsSet, mqtt: MQTTConfiguration,
        logger: Logger
    ) {
        self.fleet = fleet
        self.vehicle = vehicle
        self.topics = topics
        self.settings = settings
        self.mqtt = mqtt
        self.logger = logger
    }
}

/// How a message is delivered.
package enum DeliveryClass: Sendable, Equatable {
    /// Kept in the outbox until the broker acknowledges it; dropped only at the hard caps (transitions).
    case durable
    /// Kept in the outbox, and the first to go when it is full (locations).
    case droppable
    /// Never queued: sent when connected, replaced by the next one (announcements).
    case latestOnly
}

/// A message an output wants sent.
package struct OutputMessage: Sendable {
    package enum Payload: Sendable {
        case bytes([UInt8])
        /// Made once the outbox has given the message its `eventId` and sequence number.
        case stamped(@Sendable (_ eventID: String, _ sequence: Int64) -> [UInt8])
    }

    package var topic: String
    package var payload: Payload
    package var retain: Bool
    package var delivery: DeliveryClass
    /// QoS 1 for every class today: the outbox deletes a row on its PUBACK.
    package var qos: Int32 = 1

    package init(topic: String, payload: Payload, retain: Bool = false, delivery: DeliveryClass) {
        self.topic = topic
        self.payload = payload
        self.retain = retain
        self.delivery = delivery
    }

    /// The outbox's form of a durable or droppable message; nil for one that is never queued.
    package var outboxItem: OutboxItem? {
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
    package var unstampedBytes: [UInt8] {
        switch payload {
        case .bytes(let bytes): bytes
        case .stamped(let make): make("", 0)
        }
    }
}

/// A condition the vehicle is inside: its identifier and name.
package struct InsideCondition: Sendable, Equatable {
    package var identifier: String
    package var name: String?
    package init(identifier: String, name: String?) {
        self.identifier = identifier
        self.name = name
    }
}

/// What outputs are told.
package enum Happening: Sendable {
    /// A notified event of a monitor (enter, exit, dwell, crossed, rule events).
    case event(EventHappening)
    /// A location to report.
    case location(LocationHappening)
    /// A trip or stop began or ended.
    case trip(TripHappening)
    /// A fix was offered to the monitors: accepted, or rejected for a reason (the first monitor's verdict).
    case fix(rejected: FixRejection?)
    /// A fix's changes were committed to the store in this long.
    case committed(latency: Duration)
    /// The broker acknowledged an outbox entry this long after it was handed to the client.
    case acknowledged(latency: Duration)
    /// The connection to the broker came or went.
    case connection(connected: Bool)
    /// The status the agent writes every second (file) and publishes (topic).
    case status(AgentStatus)
}

package struct TripHappening: Sendable {
    package var event: TripEvent
    /// Names the trip's ends or the stop's place; nil when places are off.
    package var places: (any PlaceFinding)?

    package init(event: TripEvent, places: (any PlaceFinding)?) {
        self.event = event
        self.places = places
    }
}

package struct EventHappening: Sendable {
    /// Where an event came from.
    package enum Origin: Sendable, Equatable {
        /// A fix.
        case fix
        /// Its condition was deleted while the vehicle was inside (an `exit` with reason `removed`).
        case removal
    }

    package var event: MonitorEvent
    package var monitor: String
    package var origin: Origin
    /// The condition's `properties.version` (OwnTracks' `wtst`).
    package var conditionVersion: Int64?
    /// Where it happened: nil when places are off, `.some(nil)` when the gazetteer has no answer.
    package var place: PlaceSummary??

    package init(event: MonitorEvent, monitor: String, origin: Origin, conditionVersion: Int64?, place: PlaceSummary??)
    {
        self.event = event
        self.monitor = monitor
        self.origin = origin
        self.conditionVersion = conditionVersion
        self.place = place
    }
}

package struct LocationHappening: Sendable {
    /// Why the location is reported.
    package enum Reason: Sendable, Equatable {
        /// A live update (Core Location's `liveUpdates()`).
        case liveUpdate
        /// An answer to a request for the location (`reportLocation`).
        case requested
        /// Where the last transition of a fix happened.
        case transition
    }

    package var update: LiveUpdate
    package var reason: Reason
    /// Where the location is: looked up only when a message that names it is made (most live updates
    /// become track points, which do not).
    private let placeLookup: @Sendable () -> PlaceSummary??
    package var place: PlaceSummary?? { placeLookup() }
    /// The conditions the vehicle is inside, when an output asked for them (`needsInsideConditions`).
    package var inside: [InsideCondition]

    package init(update: LiveUpdate, reason: Reason, place: PlaceSummary??, inside: [InsideCondition]) {
        self.init(update: update, reason: reason, placeLookup: { place }, inside: inside)
    }

    package init(
        update: LiveUpdate, reason: Reason, placeLookup: @escaping @Sendable () -> PlaceSummary??,
        inside: [InsideCondition]
    ) {
        self.update = update
        self.reason = reason
        self.placeLookup = placeLookup
        self.inside = inside
    }
}
