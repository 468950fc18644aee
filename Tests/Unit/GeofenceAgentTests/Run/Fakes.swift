import AgentOutputs
import AgentTestSupport
import Foundation
import GPSD
import GeofenceCore
import GeofenceStore
import Mosquitto
import Places
import Synchronization
import ThreadExecution

@testable import GeofenceAgent

/// An in-memory store of conditions, with the store's rules: versions order updates, and an empty
/// message deletes an identifier from every monitor. It can be told to fail, as a full disk does.
final class FakeConditionStore: ConditionStoring, Sendable {
    struct Row: Equatable {
        var version: Int64?
        var source: String
    }
    private let state = Mutex<
        (
            rows: [String: [String: Row]], settings: [String: String], failing: Set<String>, failAll: Bool,
            transactions: Int
        )
    >(([:], [:], [], false, 0))

    /// Every change naming one of these identifiers fails, and so does any batch holding one.
    func fail(identifiers: Set<String>) { state.withLock { $0.failing = identifiers } }
    func failEverything(_ on: Bool) { state.withLock { $0.failAll = on } }

    var rows: [String: [String: Row]] { state.withLock { $0.rows } }
    var settings: [String: String] { state.withLock { $0.settings } }
    var transactions: Int { state.withLock { $0.transactions } }

    func applyNow(_ changes: [AgentStore.ConditionChange], exits: [RemovalExit]) throws(StoreError)
        -> [AgentStore.ChangeResult]
    {
        let failure: StoreError? = state.withLock { s in
            if s.failAll || changes.contains(where: { s.failing.contains($0.identifier) }) {
                return .diskFull(detail: "fake: no space left")
            }
            return nil
        }
        if let failure { throw failure }
        return state.withLock { s in
            s.transactions += 1
            return changes.map { change in
                switch change {
                case .put(let input):
                    if let stored = s.rows[input.monitor]?[input.identifier]?.version,
                        let incoming = input.condition.version, stored >= incoming
                    {
                        return .olderVersion(stored: stored)
                    }
                    s.rows[input.monitor, default: [:]][input.identifier] = Row(
                        version: input.condition.version, source: input.source)
                    return .stored
                case .remove(let identifier, let monitor):
                    let names = s.rows.keys.sorted().filter {
                        (monitor == nil || $0 == monitor) && s.rows[$0]?[identifier] != nil
                    }
                    for name in names { s.rows[name]?[identifier] = nil }
                    return .removed(monitors: names)
                }
            }
        }
    }

    func setSetting(_ key: String, _ value: String?) async throws(StoreError) {
        let failAll = state.withLock { $0.failAll }
        if failAll { throw .diskFull(detail: "fake: no space left") }
        state.withLock { $0.settings[key] = value }
    }

    func identifiers(source: String) async throws(StoreError) -> [(monitor: String, identifier: String)] {
        state.withLock { s in
            s.rows.keys.sorted().flatMap { monitor in
                s.rows[monitor]!.filter { $0.value.source == source }.keys.sorted().map { (monitor, $0) }
            }
        }
    }
}

/// Records what the applier gave the monitors.
actor FakeMonitorHost: MonitorHost {
    private(set) var changes: [MonitorChange] = []
    private(set) var liveUpdates: Bool?
    private(set) var locationReports = 0

    func apply(_ changes: [AgentStore.ConditionChange], storingIn store: any ConditionStoring) throws(StoreError)
        -> [AgentStore.ChangeResult]
    {
        let results = try store.applyNow(changes, exits: [])
        self.changes += MonitorChange.made(by: changes, results: results)
        return results
    }
    func setLiveUpdates(_ started: Bool) { liveUpdates = started }
    func reportLocation() { locationReports += 1 }
    private var held: [(identifier: String, condition: Condition)] = []
    func hold(_ conditions: [(identifier: String, condition: Condition)]) { held = conditions }
    func heldConditions() -> [(identifier: String, condition: Condition)] { held }

    var identifiers: [String: Set<String>] {
        var held: [String: Set<String>] = [:]
        for c in changes {
            switch c {
            case .add(let m, let id, _): held[m, default: []].insert(id)
            case .remove(let m, let id): held[m]?.remove(id)
            }
        }
        return held
    }
}

/// A broker connection that records what was published, and can be down.
final class FakePublisher: MessagePublishing, Sendable {
    private let state = Mutex<(connected: Bool, messages: [(topic: String, payload: [UInt8], retain: Bool)])>(
        (true, []))

    init(connected: Bool = true) { state.withLock { $0.connected = connected } }

    var isConnected: Bool { state.withLock { $0.connected } }
    func setConnected(_ on: Bool) { state.withLock { $0.connected = on } }

    func publish(_ topic: String, payload: [UInt8], retain: Bool) async throws(MQTTError) {
        let connected = state.withLock { $0.connected }
        guard connected else { throw .notConnected }
        // The time first: a test that sees the message sees its time.
        publishedAt.withLock { $0.append((topic, ThreadExecutor.now())) }
        state.withLock { $0.messages.append((topic, payload, retain)) }
    }

    var messages: [(topic: String, payload: [UInt8], retain: Bool)] { state.withLock { $0.messages } }

    /// When each message on `topic` was published, on `ThreadExecutor`'s clock (nanoseconds).
    func times(on topic: String) -> [UInt64] { publishedAt.withLock { $0.filter { $0.topic == topic }.map(\.at) } }
    private let publishedAt = Mutex<[(topic: String, at: UInt64)]>([])

    /// The JSON objects published on a topic.
    func objects(on topic: String) -> [[String: Any]] {
        messages.filter { $0.topic == topic }.compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any]
        }
    }
}

/// A fixed present for the reporter: `count` conditions in one monitor, the first `inside` satisfied.
struct FakeSnapshotSource: SnapshotSource {
    var monitors: [MonitorEngine]
    /// Where the last fix was; each lookup is counted.
    var place: PlaceSummary? = nil
    let placeLookups = Counter()
    var generation: Int { 1 }

    final class Counter: Sendable {
        private let value = Mutex(0)
        func add() { value.withLock { $0 += 1 } }
        var count: Int { value.withLock { $0 } }
    }

    /// What a test changes of the present, as a processor's fixes and commits would.
    final class Present: Sendable {
        let value = Mutex((gps: GPSStatus(state: .fix), storeProblem: String?.none))
    }
    let present = Present()
    /// Snapshots taken: each is a walk of the conditions.
    let snapshots = Counter()

    func snapshot(listing limit: Int) async -> AgentSnapshot {
        snapshots.add()
        let (gps, storeProblem) = present.value.withLock { $0 }
        return AgentSnapshot(
            generation: 1, monitors: monitors.map { $0.summary(listing: limit) }, gps: gps,
            storeProblem: storeProblem, waitingStateChanges: 0, liveUpdates: false, outbox: OutboxStats())
    }

    func statusInputs() async -> StatusInputs {
        let (gps, storeProblem) = present.value.withLock { $0 }
        return StatusInputs(
            gps: gps, monitors: monitors.map(\.name), conditions: monitors.map(\.count), storeProblem: storeProblem,
            waitingStateChanges: 0, liveUpdates: false, outbox: OutboxStats())
    }

    func lastPlace() async -> PlaceSummary? {
        placeLookups.add()
        return place
    }

    func records(monitor: String?) async -> [(monitor: String, identifier: String, record: MonitorRecord)] {
        monitors.filter { monitor == nil || $0.name == monitor }.flatMap { m in
            m.records.map { (m.name, $0.identifier, $0.record) }
        }
    }
}

let testTopics = Topics(prefix: "fleet", fleet: "test", vehicle: "v1")

func geofenceMessage(_ identifier: String, _ feature: String?, vehicle: Bool = false) -> MQTTMessage {
    let topic = vehicle ? testTopics.vehicleGeofence(identifier) : testTopics.fleetGeofence(identifier)
    return MQTTMessage(topic: topic, payload: Array((feature ?? "").utf8), retained: true)
}

func circleFeature(_ identifier: String, version: Int? = nil, radius: Double = 50, monitor: String? = nil) -> String {
    var properties = #""radius":\#(radius)"#
    if let version { properties += #","version":\#(version)"# }
    if let monitor { properties += #","monitor":"\#(monitor)""# }
    return
        #"{"type":"Feature","id":"\#(identifier)","geometry":{"type":"Point","coordinates":[5.0,52.0]},"properties":{\#(properties)}}"#
}

/// An output that sends nothing and counts what it is told of that `counts` picks: one that follows every
/// status (Prometheus' gauges), or one that counts fixes.
struct CountingOutput: AgentOutput {
    let told = FakeSnapshotSource.Counter()
    var observesStatus = false
    var observesCounts = false
    let counts: @Sendable (Happening) -> Bool
    static func make(_ context: OutputContext) -> CountingOutput? { nil }
    func messages(for happening: Happening) -> [OutputMessage] {
        if counts(happening) { told.add() }
        return []
    }
}
