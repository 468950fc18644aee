import Foundation
import GeofenceCore

/// OwnTracks (docs/integrations.md#owntracks): a transition for each enter and exit a fix makes, and a
/// location for each live update and answer to `reportLocation`, both through the outbox as ours are.
struct OwnTracksOutput: AgentOutput {
    let identity: OwnTracks.Identity

    static func make(_ context: OutputContext) -> OwnTracksOutput? {
        let c = context.configuration
        return c.owntracks.enabled ? OwnTracksOutput(identity: c.owntracks.identity(fleet: c.fleet, vehicle: c.vehicle)) : nil
    }

    var needsInsideConditions: Bool { true }

    func messages(for happening: Happening) -> [OutputMessage] {
        switch happening {
        // A removal's exit has no OwnTracks transition: the region is gone from `waypoints` instead.
        case .event(let e) where e.origin == .fix:
            guard let payload = OwnTracks.transition(e.event, identity: identity, waypointTime: e.conditionVersion, createdAt: Date())
            else { return [] }
            return [OutputMessage(topic: identity.event, payload: .bytes(payload), delivery: .durable)]
        case .location(let l):
            let trigger: OwnTracks.Trigger
            switch l.reason {
            case .liveUpdate: trigger = .ping
            case .requested: trigger = .response
            case .transition: return []
            }
            let inside = l.inside.map { OwnTracks.Region(identifier: $0.identifier, name: $0.name) }
            // Retained as the apps publish it: a late subscriber sees the latest.
            let payload = OwnTracks.location(l.update.location, identity: identity, trigger: trigger, inside: inside, createdAt: Date())
            return [OutputMessage(topic: identity.base, payload: .bytes(payload), retain: true, delivery: .droppable)]
        default:
            return []
        }
    }
}
