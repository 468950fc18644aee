import AgentFormats
import Foundation
import GeofenceCore
import Logging
import Mosquitto
import ServiceLifecycle

/// OwnTracks (docs/integrations.md#owntracks): a transition for each enter and exit a fix makes, and a
/// location for each live update and answer to `reportLocation`, both through the outbox as ours are.
/// Its will (`_type: lwt`) needs a connection of its own: MQTT gives one will per connection, and ours is
/// the offline status.
struct OwnTracksOutput: AgentOutput {
    let identity: OwnTracks.Identity
    let mqtt: MQTTConfiguration
    let logger: Logger
    let pace: OutputState<LocationPace>

    static var settingsType: (any OutputSettings.Type)? { OwnTracksSettings.self }

    static func make(_ context: OutputContext) -> OwnTracksOutput? {
        let settings = context.settings[OwnTracksSettings.self]
        guard settings.enabled else { return nil }
        return OwnTracksOutput(
            identity: settings.identity(fleet: context.fleet, vehicle: context.vehicle), mqtt: context.mqtt,
            logger: context.logger,
            pace: OutputState(
                LocationPace(
                    movingSeconds: settings.locationIntervalSeconds, parkedSeconds: settings.parkedIntervalSeconds)))
    }

    /// The will's connection: it publishes nothing else, and its will explicitly on a clean stop.
    func services() throws -> [any Service] {
        var m = mqtt
        m.clientID += "-owntracks"
        m.will = MQTTWill(
            topic: identity.base, payload: OwnTracks.lastWill(connectedAt: Date()), qos: .atLeastOnce, retain: false)
        do {
            return [try MQTTClient(configuration: m, logger: logger)]
        } catch {
            throw AgentError("cannot start OwnTracks' MQTT client: \(error)")
        }
    }

    var needsInsideConditions: Bool { true }

    func messages(for happening: Happening) -> [OutputMessage] {
        switch happening {
        // A removal's or an expiry's exit too: a `leave`, so that OwnTracks' consumers do not show the
        // vehicle inside a region that is gone.
        case .event(let e):
            guard
                let payload = OwnTracks.transition(
                    e.event, identity: identity, waypointTime: e.conditionVersion, createdAt: Date())
            else { return [] }
            return [OutputMessage(topic: identity.event, payload: .bytes(payload), delivery: .durable)]
        case .location(let l):
            // Where a transition happened has no OwnTracks location: the transition carries it.
            guard l.reason != .transition, pace.allows(l) else { return [] }
            let trigger: OwnTracks.Trigger = l.reason == .liveUpdate ? .ping : .response
            let inside = l.inside.map { OwnTracks.Region(identifier: $0.identifier, name: $0.name) }
            // Retained as the apps publish it: a late subscriber sees the latest.
            let payload = OwnTracks.location(
                l.update.location, identity: identity, trigger: trigger, inside: inside, createdAt: Date())
            return [OutputMessage(topic: identity.base, payload: .bytes(payload), retain: true, delivery: .droppable)]
        default:
            return []
        }
    }
}
