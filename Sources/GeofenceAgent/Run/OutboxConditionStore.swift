import AgentOutputs
import GeofenceCore
import GeofenceStore

/// The store as the change applier sees it, where deleting a condition the vehicle is inside also sends
/// its `exit` (reason `removed`) through the outputs, written in the same transaction as the delete.
/// Without it a dashboard would show the vehicle inside a deleted geofence for ever.
struct OutboxConditionStore: ConditionStoring {
    let store: AgentStore
    let outbox: Outbox
    let outputs: MultiplexOutput
    let places: (any PlaceFinding)?

    /// On the store's executor (the outbox's, which the fix processor shares), synchronously.
    func applyNow(_ changes: [AgentStore.ConditionChange]) throws(StoreError) -> [AgentStore.ChangeResult] {
        try outbox.assumeIsolated { outbox in
            Result { () throws(StoreError) in
                try outbox.apply(changes) { [outputs, places] removed in
                    guard let exit = Self.exit(removed, places: places) else { return [] }
                    return outputs.messages(for: .event(exit)).compactMap(\.outboxItem)
                }
            }
        }.get()
    }

    func setSetting(_ key: String, _ value: String?) async throws(StoreError) {
        try await store.setSetting(key, value)
    }

    func identifiers(source: String) async throws(StoreError) -> [(monitor: String, identifier: String)] {
        try await store.identifiers(source: source)
    }

    /// A removed condition's exit: at the monitor's last fix, where the vehicle was last seen inside; none
    /// when the monitor never had a fix, the condition's `notify` leaves `exit` out, or its schedule had it
    /// inactive then.
    static func exit(_ removed: AgentStore.RemovedWhileInside, places: (any PlaceFinding)?) -> EventHappening? {
        guard let fix = removed.lastFix, removed.condition?.rules.schedule?.isActive(at: fix.timestamp) ?? true else {
            return nil
        }
        let event = MonitorEvent.removalExit(removed.identifier, condition: removed.condition, at: fix)
        guard event.isNotified else { return nil }
        return EventHappening(
            event: event, monitor: removed.monitor, origin: .removal, conditionVersion: removed.condition?.version,
            place: places.map { $0.place(at: fix.coordinate) })
    }
}
