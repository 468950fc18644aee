import AgentFormats
import GeofenceCore

/// Home Assistant (docs/integrations.md#home-assistant): the event entity's events, the tracker's
/// attributes after each live update and each fix's transitions, the trip and last stop sensors' states,
/// and the discovery at each connection and whenever Home Assistant says `online`.
struct HomeAssistantOutput: AgentOutput {
    let identity: HomeAssistant.Identity
    let pace: OutputState<LocationPace>

    static var settingsType: (any OutputSettings.Type)? { HomeAssistantSettings.self }

    static func make(_ context: OutputContext) -> HomeAssistantOutput? {
        let h = context.settings[HomeAssistantSettings.self]
        return h.enabled
            ? HomeAssistantOutput(
                identity: HomeAssistant.Identity(discoveryPrefix: h.discoveryPrefix, topics: context.topics),
                pace: OutputState(
                    LocationPace(movingSeconds: h.locationIntervalSeconds, parkedSeconds: h.parkedIntervalSeconds)))
            : nil
    }

    var needsInsideConditions: Bool { true }

    func messages(for happening: Happening) -> [OutputMessage] {
        switch happening {
        // A removal's or an expiry's exit too (with its `reason`).
        case .event(let e):
            guard let payload = HomeAssistant.event(e.event, monitor: e.monitor) else { return [] }
            return [OutputMessage(topic: identity.events, payload: .bytes(payload), delivery: .durable)]
        case .location(let l):
            // The tracker shows what the vehicle is inside: its attributes follow every transition too.
            guard pace.allows(l) else { return [] }
            let payload = HomeAssistant.attributes(l.update.location, inside: l.inside.map(\.identifier))
            return [
                OutputMessage(topic: identity.attributes, payload: .bytes(payload), retain: true, delivery: .droppable)
            ]
        case .trip(let t):
            // Retained: Home Assistant shows the vehicle's trip state and last stop after its own restart.
            let state = HomeAssistant.tripState(t.event).map {
                OutputMessage(topic: identity.trip, payload: .bytes($0), retain: true, delivery: .durable)
            }
            let stop = HomeAssistant.lastStop(t.event).map {
                OutputMessage(topic: identity.lastStop, payload: .bytes($0), retain: true, delivery: .durable)
            }
            return [state, stop].compactMap { $0 }
        default:
            return []
        }
    }

    func announcements() -> [OutputMessage] {
        HomeAssistant.discovery(identity, version: AgentVersion.string).map {
            OutputMessage(topic: $0.topic, payload: .bytes($0.payload), retain: true, delivery: .latestOnly)
        }
    }

    var announcementRequest: (topic: String, payload: String)? { (identity.homeAssistantStatus, "online") }
}
