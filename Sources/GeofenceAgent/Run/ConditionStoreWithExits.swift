import GeofenceCore
import GeofenceStore

/// The store as the change applier sees it, where deleting a condition the vehicle is inside also
/// publishes its `exit` (reason `removed`), stored in the same transaction as the delete. Without it a
/// dashboard would show the vehicle inside a deleted geofence for ever.
struct ConditionStoreWithExits: ConditionStoring {
    let store: AgentStore
    let outbox: Outbox
    let topics: Topics
    let fleet: String
    let vehicle: String
    let places: (any PlaceFinding)?

    func apply(_ changes: [AgentStore.ConditionChange]) async throws(StoreError) -> [AgentStore.ChangeResult] {
        try await outbox.apply(changes) { [topics, fleet, vehicle, places] removed in
            Self.exit(removed, topic: topics.events, fleet: fleet, vehicle: vehicle, places: places)
        }
    }

    func setSetting(_ key: String, _ value: String?) async throws(StoreError) {
        try await store.setSetting(key, value)
    }

    func identifiers(source: String) async throws(StoreError) -> [(monitor: String, identifier: String)] {
        try await store.identifiers(source: source)
    }

    /// The outbox row of a removed condition's exit: at the monitor's last fix, where the vehicle was last
    /// seen inside; none when the monitor never had a fix, the condition's `notify` leaves `exit` out, or
    /// its schedule had it inactive then.
    static func exit(_ removed: AgentStore.RemovedWhileInside, topic: String, fleet: String, vehicle: String,
                     places: (any PlaceFinding)?) -> OutboxItem? {
        guard let fix = removed.lastFix, removed.condition?.rules.schedule?.isActive(at: fix.timestamp) ?? true else { return nil }
        let event = MonitorEvent.removalExit(removed.identifier, condition: removed.condition, at: fix)
        guard event.isNotified else { return nil }
        let place = places.map { $0.place(at: fix.coordinate) }
        return OutboxItem(kind: .transition, topic: topic) { id, sequence in
            Payloads.event(event, monitor: removed.monitor, fleet: fleet, vehicle: vehicle, eventID: id, sequence: sequence, place: place)
        }
    }
}
