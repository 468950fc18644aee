import Foundation
import GeofenceCore
import GeofenceStore

/// The OwnTracks messages the fix processor queues in the outbox beside its own, so that they are kept
/// through a broker outage and delivered in order as ours are.
struct OwnTracksOutput: Sendable {
    let identity: OwnTracks.Identity

    /// The transition for an enter or exit; nil for other events.
    func transition(_ event: MonitorEvent, waypointTime: Int64?) -> OutboxItem? {
        guard let payload = OwnTracks.transition(event, identity: identity, waypointTime: waypointTime, createdAt: Date()) else { return nil }
        return OutboxItem(kind: .transition, topic: identity.event) { _, _ in payload }
    }

    /// A location on the base topic, retained as the apps publish it: a late subscriber sees the latest.
    func location(_ location: Location, trigger: OwnTracks.Trigger, inside: [OwnTracks.Region]) -> OutboxItem {
        let payload = OwnTracks.location(location, identity: identity, trigger: trigger, inside: inside, createdAt: Date())
        return OutboxItem(kind: .location, topic: identity.base, retain: true) { _, _ in payload }
    }
}
