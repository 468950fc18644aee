import AgentOutputs
import Foundation
import GPSD
import GeofenceCore
import GeofenceStore
import Mosquitto
import Places
import ServiceLifecycle

// The small interfaces the parts of `run` meet each other through, so that each part can be tested
// with an in-memory fake as well as with the real store and broker.

/// Publishes snapshots and replies (state, status, errors). Not the outbox: what goes through here is
/// not kept when the broker is away.
package protocol MessagePublishing: Sendable {
    var isConnected: Bool { get }
    func publish(_ topic: String, payload: [UInt8], retain: Bool) async throws(MQTTError)
}

extension MessagePublishing {
    /// Sends a message of the control plane where the plane says, kept as it says.
    package func publish(_ message: ControlMessage) async throws(MQTTError) {
        try await publish(message.topic, payload: message.payload, retain: message.retain)
    }
}

extension MQTTClient: MessagePublishing {
    package var isConnected: Bool { status.isConnected }
    package func publish(_ topic: String, payload: [UInt8], retain: Bool) async throws(MQTTError) {
        _ = try await publish(topic, payload: payload, qos: .atLeastOnce, retain: retain)
    }
}

/// A broker's acknowledgement of one message, awaited later.
package protocol PublishAcknowledgement: Sendable {
    func acknowledgement() async throws(MQTTError) -> MQTTReasonCode
}

extension PublishTicket: PublishAcknowledgement {}

/// Where the outbox publisher sends: messages go out in call order, several in flight at once.
package protocol OutboxTransport: Sendable {
    func issueInOrder(_ topic: String, payload: [UInt8], retain: Bool) async throws(MQTTError)
        -> any PublishAcknowledgement
}

extension MQTTClient: OutboxTransport {
    package func issueInOrder(_ topic: String, payload: [UInt8], retain: Bool) async throws(MQTTError)
        -> any PublishAcknowledgement
    {
        try await issue(topic, payload: payload, retain: retain)
    }
}

/// The agent's link to its broker: everything the runtime publishes, issues and subscribes to goes through
/// it, and its connection's states come from it. `MQTTClient` in a vehicle; the in-memory broker of the
/// `AgentTesting` kit in tests that run the agent in process.
package protocol AgentTransport: Service, MessagePublishing, OutboxTransport {
    var status: MQTTConnectionStatus { get }
    /// `status` as the agent's status file says it.
    var statusDescription: String { get }
    /// Every change of `status` from now on.
    var statusUpdates: AsyncStream<MQTTConnectionStatus> { get }
    /// The broker in use, as a log line or an error names it.
    var brokerName: String { get }
    /// The broker in use's place in the configured brokers: a key for what is known of each.
    var brokerPosition: Int { get }
    /// Subscriptions the broker refused and the transport is asking for again, by filter.
    var refusedSubscriptions: [String: MQTTSubscriptionRefusal] { get }
    func subscribe(_ filter: String, qos: MQTTQoS) async throws(MQTTError) -> MQTTSubscription
    func publish(_ topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool) async throws(MQTTError)
        -> MQTTReasonCode
}

extension AgentTransport {
    func subscribe(_ filter: String) async throws(MQTTError) -> MQTTSubscription {
        try await subscribe(filter, qos: .atLeastOnce)
    }
}

extension MQTTClient: AgentTransport {
    package var brokerName: String { broker.description }
}

/// Where conditions are kept.
protocol ConditionStoring: Sendable {
    /// Stores condition changes in one transaction, with the exits that the removals among them mean (the
    /// monitors' `removalExits`), without a suspension. Called by the monitors' host, in its isolation, which
    /// shares the store's executor: what it stores and what the monitors are given make one step that no fix
    /// is decided in the middle of.
    func applyNow(_ changes: [AgentStore.ConditionChange], exits: [RemovalExit]) throws(StoreError)
        -> [AgentStore.ChangeResult]
    func setSetting(_ key: String, _ value: String?) async throws(StoreError)
    /// The conditions that came from one source (OwnTracks' `clearWaypoints` removes its own).
    func identifiers(source: String) async throws(StoreError) -> [(monitor: String, identifier: String)]
}

/// The `exit (removed)` of a condition deleted while the vehicle was inside it, as the monitors decided it.
struct RemovalExit: Sendable {
    var monitor: String
    var event: MonitorEvent
    var conditionVersion: Int64?
}

/// A change to the conditions the monitors hold, made once the store has it.
enum MonitorChange: Sendable, Equatable {
    case add(monitor: String, identifier: String, condition: Condition)
    case remove(monitor: String, identifier: String)

    /// What the monitors are given for what the store did with `changes`: a condition stored is added, one
    /// deleted is removed from each monitor that held it; an older version or a failure changes nothing.
    static func made(by changes: [AgentStore.ConditionChange], results: [AgentStore.ChangeResult]) -> [MonitorChange] {
        zip(changes, results).flatMap { change, result -> [MonitorChange] in
            switch (change, result) {
            case (.put(let input), .stored):
                [.add(monitor: input.monitor, identifier: input.identifier, condition: input.condition)]
            case (.remove(let identifier, _), .removed(let monitors)):
                monitors.map { .remove(monitor: $0, identifier: identifier) }
            default:
                []
            }
        }
    }
}

/// What holds the monitors (the fix processor).
protocol MonitorHost: Sendable {
    /// Stores `changes` in `store`, then gives the monitors what was stored, in one call isolated to the
    /// monitors: no fix is decided between the store's commit and the monitors' change, so a deleted
    /// condition's `exit (removed)` is the only exit it gets.
    func apply(_ changes: [AgentStore.ConditionChange], storingIn store: any ConditionStoring) async throws(StoreError)
        -> [AgentStore.ChangeResult]
    func setLiveUpdates(_ started: Bool) async
    func reportLocation() async
    /// Every condition held, by monitor then identifier (OwnTracks' `waypoints` command lists the circles).
    func heldConditions() async -> [(identifier: String, condition: Condition)]
}

/// The present, in a size that does not grow with the number of conditions.
struct AgentSnapshot: Sendable {
    /// Moves whenever a condition's state or the set of conditions changes.
    var generation: Int
    var monitors: [MonitorSummary]
    var gps: GPSStatus
    var storeProblem: String?
    var waitingStateChanges: Int
    var liveUpdates: Bool
    var outbox: OutboxStats

    var conditions: Int { monitors.reduce(0) { $0 + $1.conditions } }
}

/// What in the status file and the retained status can change other than by the clock, as the present
/// holds it: the reporter's round builds a status only when these (or the broker's state) moved, or a
/// heartbeat is due. Read every second, so only fields, no walk of the conditions.
struct StatusInputs: Sendable, Equatable {
    var gpsState: GPSStatus.State
    var gpsDetail: String?
    var gpsDevice: String?
    var monitors: [String]
    var conditions: [Int]
    var storeProblem: String?
    var waitingStateChanges: Int
    var liveUpdates: Bool
    var droppedLocations: Int64
    var droppedTransitions: Int64
    var capReached: Bool

    init(
        gps: GPSStatus, monitors: [String], conditions: [Int], storeProblem: String?, waitingStateChanges: Int,
        liveUpdates: Bool, outbox: OutboxStats
    ) {
        gpsState = gps.state
        gpsDetail = gps.detail
        gpsDevice = gps.device
        self.monitors = monitors
        self.conditions = conditions
        self.storeProblem = storeProblem
        self.waitingStateChanges = waitingStateChanges
        self.liveUpdates = liveUpdates
        droppedLocations = outbox.droppedLocations
        droppedTransitions = outbox.droppedTransitions
        capReached = outbox.capReached
    }
}

/// Where the reporter reads the present from (the fix processor).
protocol SnapshotSource: Sendable {
    /// Moves whenever a condition's state or the set of conditions changes; cheap to read.
    var generation: Int { get async }
    func snapshot(listing limit: Int) async -> AgentSnapshot
    /// What a status would say that can change by itself, without a snapshot's walk of the conditions.
    func statusInputs() async -> StatusInputs
    /// Where the last fix was, when places are on: a gazetteer lookup, asked only for a status that goes out.
    func lastPlace() async -> PlaceSummary?
    func records(monitor: String?) async -> [(monitor: String, identifier: String, record: MonitorRecord)]
}
