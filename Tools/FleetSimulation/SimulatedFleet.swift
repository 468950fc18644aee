import AgentFormats
import AgentOutputs
import Foundation
import GeofenceCore
import GeofenceStore
import Logging
import Mosquitto
import ReceiverSimulation

/// What N vehicles publish, made by the agent's own output code (`OutputRegistry`, `Payloads`,
/// `AgentStatus`), so that the simulated fleet's schema cannot drift from the agent's: the retained
/// geofences an operator pushed, and for each vehicle its track or location, its events as it enters and
/// leaves them, its `state` and its `status`. Pure: a clock in, messages out; `FleetPublisher` sends them.
public struct SimulatedFleet: Sendable {
    /// One message to publish.
    public struct Message: Sendable {
        public var topic: String
        public var payload: [UInt8]
        public var retain: Bool
    }

    public let settings: FleetSimulationSettings
    public let geofences: [FleetGeofences.Geofence]
    private var vehicles: [VehicleState]
    private let regions: ConditionSet
    private let names: [String?]
    private var rng: SplitMix64
    /// Seconds on the simulation's clock.
    public private(set) var elapsed: Double = 0

    struct VehicleState: Sendable {
        var name: String
        var motion: SimulatedVehicle
        var outputs: MultiplexOutput
        var topics: Topics
        var sequence: Int64 = 0
        var inside: [Int: Date] = [:]
        var lastStatus: Double = -.infinity
    }

    public init(settings: FleetSimulationSettings) {
        self.settings = settings
        let fleetGeofences = FleetGeofences(
            count: settings.geofences, centre: settings.centre, side: settings.side, seed: settings.seed)
        // The three arrays share their index (a geofence's slot in the spatial index).
        var kept: [FleetGeofences.Geofence] = []
        var regions: [Region] = []
        var names: [String?] = []
        for g in fleetGeofences.geofences {
            guard let definition = GeoJSONConditions.decode(Array(g.feature.utf8)).definitions.first else { continue }
            kept.append(g)
            regions.append(definition.condition.region)
            names.append(definition.condition.name)
        }
        geofences = kept
        self.regions = ConditionSet(regions)
        self.names = names
        var rng = SplitMix64(seed: settings.seed &+ 1)
        var outputSettings = OutputSettingsSet()
        var fleetTopics = FleetTopicsSettings()
        fleetTopics.trackBatchSeconds = settings.trackBatchSeconds
        fleetTopics.locationIntervalSeconds = settings.locationIntervalSeconds
        fleetTopics.statusHeartbeatSeconds = settings.statusHeartbeatSeconds
        outputSettings[FleetTopicsSettings.self] = fleetTopics
        let logger = Logger(label: "fleet-simulation") { _ in SwiftLogNoOpLogHandler() }
        vehicles = (0..<settings.vehicles).map { k in
            let name = String(format: "v%04d", k + 1)
            let east = (Double(rng.next() >> 11) / Double(1 << 53) - 0.5) * settings.side
            let north = (Double(rng.next() >> 11) / Double(1 << 53) - 0.5) * settings.side
            let topics = Topics(prefix: settings.prefix, fleet: settings.fleet, vehicle: name)
            let context = OutputContext(
                fleet: settings.fleet, vehicle: name, topics: topics, settings: outputSettings,
                mqtt: MQTTConfiguration(clientID: name), logger: logger)
            return VehicleState(
                name: name,
                motion: SimulatedVehicle(at: Offsets.moved(settings.centre, east: east, north: north), rng: &rng),
                outputs: OutputRegistry.outputs(context), topics: topics)
        }
        self.rng = rng
    }

    /// The vehicles' names, `v0001` ….
    public var vehicleNames: [String] { vehicles.map(\.name) }

    /// Where a vehicle is now.
    public func position(of vehicle: Int) -> Coordinate { vehicles[vehicle].motion.position }

    /// The retained geofences, as the operator publishes them for the whole fleet.
    public func geofenceMessages() -> [Message] {
        geofences.map {
            Message(
                topic: "\(settings.prefix)/\(settings.fleet)/geofences/\($0.identifier)",
                payload: Array($0.feature.utf8),
                retain: true)
        }
    }

    /// Empty retained payloads that delete what `geofenceMessages` and the vehicles left on the broker.
    public func retainedCleanup() -> [Message] {
        geofenceMessages().map { Message(topic: $0.topic, payload: [], retain: true) }
            + vehicles.flatMap { v in
                [v.topics.location, v.topics.state, v.topics.status].map {
                    Message(topic: $0, payload: [], retain: true)
                }
            }
    }

    /// Moves the vehicles in `slot` (of `slots`, so that a second's messages spread over it) by one
    /// second, and returns what they publish; the clock moves when the last slot has run.
    public mutating func tick(slot: Int, of slots: Int, at date: Date) -> [Message] {
        var messages: [Message] = []
        for k in stride(from: slot, to: vehicles.count, by: slots) {
            messages += step(k, at: date)
        }
        if slot == slots - 1 { elapsed += 1 }
        return messages
    }

    private mutating func step(_ k: Int, at date: Date) -> [Message] {
        vehicles[k].motion.step(
            seconds: 1, now: elapsed, centre: settings.centre, side: settings.side, rng: &rng)
        let location = vehicles[k].motion.location(at: date)
        var happenings: [Happening] = []
        let now = Set(regions.containing(PreparedPoint(location.coordinate)))
        let before = Set(vehicles[k].inside.keys)
        for slot in before.subtracting(now).sorted() {
            vehicles[k].inside[slot] = nil
            happenings.append(event(slot, .exit, .unsatisfied, location))
        }
        for slot in now.subtracting(before).sorted() {
            vehicles[k].inside[slot] = date
            happenings.append(event(slot, .enter, .satisfied, location))
        }
        let update = LiveUpdate(location: location, isStationary: vehicles[k].motion.isParked)
        happenings.append(.location(LocationHappening(update: update, reason: .liveUpdate, place: nil, inside: [])))
        var messages = happenings.flatMap { vehicles[k].outputs.messages(for: $0) }.map { stamp($0, k) }
        // The state goes out when it changes, and at the first fix (as the agent sends it at each connection).
        if now != before || vehicles[k].lastStatus == -.infinity {
            messages.append(Message(topic: vehicles[k].topics.state, payload: state(k, at: date), retain: true))
        }
        if elapsed - vehicles[k].lastStatus >= settings.statusHeartbeatSeconds {
            vehicles[k].lastStatus = elapsed
            messages.append(Message(topic: vehicles[k].topics.status, payload: status(k, online: true), retain: true))
        }
        return messages
    }

    private func event(_ slot: Int, _ kind: EventKind, _ state: ConditionState, _ at: Location) -> Happening {
        let event = MonitorEvent(
            identifier: geofences[slot].identifier, kind: kind, state: state, date: at.timestamp, location: at,
            conditionName: names[slot])
        return .event(EventHappening(event: event, monitor: "default", origin: .fix, conditionVersion: 1, place: nil))
    }

    private mutating func stamp(_ message: OutputMessage, _ k: Int) -> Message {
        let bytes: [UInt8]
        switch message.payload {
        case .bytes(let b): bytes = b
        case .stamped(let make):
            vehicles[k].sequence += 1
            bytes = make(EventID.make(), vehicles[k].sequence)
        }
        return Message(topic: message.topic, payload: bytes, retain: message.retain)
    }

    private func state(_ k: Int, at date: Date) -> [UInt8] {
        let inside = vehicles[k].inside.sorted { $0.key < $1.key }.map {
            MonitorSummary.Entry(identifier: geofences[$0.key].identifier, since: $0.value)
        }
        let summary = MonitorSummary(
            name: "default", conditions: geofences.count, satisfiedCount: inside.count, unknownCount: 0,
            satisfied: inside, unknown: [])
        return Payloads.state([summary], vehicle: vehicles[k].name, time: date)
    }

    /// The vehicle's retained status; `online: false` is what its will says when it goes.
    public func status(_ k: Int, online: Bool) -> [UInt8] {
        let v = vehicles[k]
        let now = iso8601(Date())
        let status = AgentStatus(
            status: online ? "online" : "offline", fleet: settings.fleet, vehicle: v.name, version: AgentVersion.string,
            pid: 0, updated: now, startedAt: now, broker: "simulated",
            gps: .init(state: "fix", fixAgeSeconds: 0.2, horizontalAccuracy: v.motion.accuracy),
            monitors: [.init(name: "default", conditions: geofences.count, satisfied: v.inside.count)],
            conditions: geofences.count, outbox: OutboxStats(), outboxCaps: OutboxLimits(), store: "simulated",
            waitingStateChanges: 0, liveUpdates: true, heartbeatSeconds: settings.statusHeartbeatSeconds)
        return (try? Array(JSONEncoder().encode(status))) ?? []
    }

    /// Every vehicle's `offline` status, retained, as their wills would leave it.
    public func goodbye() -> [Message] {
        vehicles.indices.map {
            Message(topic: vehicles[$0].topics.status, payload: status($0, online: false), retain: true)
        }
    }
}
