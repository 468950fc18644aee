import AgentOutputs
import Foundation
import GeofenceCore
import GeofenceStore
import Places

/// What a fix changed, waiting to be committed: a monitor's records, last fix and expired conditions with
/// the outbox rows of its events, or a setting (the trip's phase) with its trip events' rows.
struct PendingCommit {
    var monitor: String
    var records: [(identifier: String, record: MonitorRecord)]
    var lastFix: Location?
    var indexFloor: Int?
    var removing: [String]
    var items: [OutboxItem]
    var settings: [(key: String, value: String?)] = []

    /// A monitor's step: the records its events moved, and what the outputs send for the notified ones.
    /// `inside` is asked only when an output shows what the vehicle is inside (after the last transition).
    init(
        step: MonitorSet.Step, engine: MonitorEngine, outputs: MultiplexOutput, places: (any PlaceFinding)?,
        inside: () -> [InsideCondition]
    ) {
        // Only the conditions that had events: reading every record would cost O(n) per fix at 100k.
        var seen: Set<String> = []
        records = step.events.compactMap { e -> (identifier: String, record: MonitorRecord)? in
            guard seen.insert(e.identifier).inserted, let r = engine.record(for: e.identifier) else { return nil }
            return (e.identifier, r)
        }
        // Every event moved a record; only those the condition's `notify` asks for are published.
        let notified = step.events.filter(\.isPublished)
        var messages = notified.flatMap { event in
            outputs.messages(
                for: .event(
                    EventHappening(
                        event: event, monitor: step.monitor, origin: .fix,
                        conditionVersion: engine.record(for: event.identifier)?.condition.version,
                        place: places.map { $0.place(at: event.location.coordinate) })))
        }
        // Where the last transition happened: an output that shows what the vehicle is inside follows it.
        if let last = notified.last {
            messages += outputs.messages(
                for: .location(
                    LocationHappening(
                        update: LiveUpdate(location: last.location, isStationary: false), reason: .transition,
                        place: nil, inside: inside())))
        }
        monitor = step.monitor
        lastFix = engine.lastAcceptedFix
        indexFloor = engine.indexFloor
        removing = step.expired
        items = messages.compactMap(\.outboxItem)
    }

    /// A monitor's last fix alone (at a stop).
    init(lastFixOf engine: MonitorEngine, fix: Location) {
        (monitor, records, lastFix, indexFloor, removing, items) = (engine.name, [], fix, engine.indexFloor, [], [])
    }

    /// The trip's phase as a setting, with the outbox rows of the trip events that left it.
    init(tripPhase phase: TripDetector.Phase, items: [OutboxItem]) {
        (monitor, records, lastFix, indexFloor, removing) = ("", [], nil, nil, [])
        self.items = items
        settings = [(TripPhaseRecorder.key, TripPhaseJSON.encode(phase))]
    }
}
