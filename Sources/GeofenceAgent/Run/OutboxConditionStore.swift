import AgentOutputs
import GeofenceCore
import GeofenceStore
import Places

/// The store as the change applier sees it, where deleting a condition the vehicle is inside also sends
/// its `exit` (reason `removed`, decided by the monitors) through the outputs, written in the same
/// transaction as the delete.
/// Without it a dashboard would show the vehicle inside a deleted geofence for ever.
struct OutboxConditionStore: ConditionStoring {
    let store: AgentStore
    let outbox: Outbox
    let outputs: MultiplexOutput
    let places: (any PlaceFinding)?

    /// On the store's executor (the outbox's, which the fix processor shares), synchronously.
    func applyNow(_ changes: [AgentStore.ConditionChange], exits: [RemovalExit]) throws(StoreError)
        -> [AgentStore.ChangeResult]
    {
        let items = exits.flatMap { exit in
            outputs.messages(
                for: .event(
                    EventHappening(
                        event: exit.event, monitor: exit.monitor, origin: .removal,
                        conditionVersion: exit.conditionVersion,
                        place: places.map { $0.place(at: exit.event.location.coordinate) }))
            ).compactMap(\.outboxItem)
        }
        return try outbox.assumeIsolated { outbox in
            Result { () throws(StoreError) in try outbox.apply(changes, exits: items) }
        }.get()
    }

    func setSetting(_ key: String, _ value: String?) async throws(StoreError) {
        try await store.setSetting(key, value)
    }

    func identifiers(source: String) async throws(StoreError) -> [(monitor: String, identifier: String)] {
        try await store.identifiers(source: source)
    }
}
