import Foundation
import GeofenceCore
import GeofenceStore

/// The messages of the formats the vehicle also speaks (OwnTracks, Home Assistant), queued in the outbox
/// beside its own so that they too are kept through a broker outage and delivered in order.
struct IntegrationOutputs: Sendable {
    var ownTracks: OwnTracksOutput?
    var homeAssistant: HomeAssistant.Identity?

    init(_ configuration: AgentConfiguration, topics: Topics) {
        if configuration.owntracks.enabled {
            ownTracks = OwnTracksOutput(identity: configuration.owntracks.identity(fleet: configuration.fleet, vehicle: configuration.vehicle))
        }
        if configuration.homeAssistant.enabled {
            homeAssistant = HomeAssistant.Identity(discoveryPrefix: configuration.homeAssistant.discoveryPrefix, topics: topics)
        }
    }

    var isEmpty: Bool { ownTracks == nil && homeAssistant == nil }

    /// For one event: OwnTracks' transition (enter and exit) and Home Assistant's event (its four types).
    func items(for event: MonitorEvent, monitor: String, waypointTime: Int64?) -> [OutboxItem] {
        var items: [OutboxItem] = []
        if let t = ownTracks?.transition(event, waypointTime: waypointTime) { items.append(t) }
        if let ha = homeAssistant, let payload = HomeAssistant.event(event, monitor: monitor) {
            items.append(OutboxItem(kind: .transition, topic: ha.events) { _, _ in payload })
        }
        return items
    }

    /// For a location (a live update, an answer to reportLocation, or where a transition happened):
    /// OwnTracks' location and Home Assistant's tracker attributes, both retained.
    func items(for location: Location, trigger: OwnTracks.Trigger?, inside: [OwnTracks.Region]) -> [OutboxItem] {
        var items: [OutboxItem] = []
        if let ownTracks, let trigger { items.append(ownTracks.location(location, trigger: trigger, inside: inside)) }
        if let ha = homeAssistant {
            let payload = HomeAssistant.attributes(location, inside: inside.map(\.identifier))
            items.append(OutboxItem(kind: .location, topic: ha.attributes, retain: true) { _, _ in payload })
        }
        return items
    }
}
