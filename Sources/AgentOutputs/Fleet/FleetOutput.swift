import Foundation
import GeofenceCore

/// Our own topics (docs/topics.md): every notified event on `events`, durable; live updates in batches on
/// `track` and, at a slower pace, on the retained `location`, both droppable; answers to `reportLocation`
/// on `location` at once.
struct FleetOutput: AgentOutput {
    let topics: Topics
    let fleet: String
    let vehicle: String
    let pacing: OutputState<LivePacing>

    static var settingsType: (any OutputSettings.Type)? { FleetTopicsSettings.self }

    static func make(_ context: OutputContext) -> FleetOutput? {
        FleetOutput(
            topics: context.topics, fleet: context.fleet, vehicle: context.vehicle,
            pacing: OutputState(LivePacing(settings: context.settings[FleetTopicsSettings.self])))
    }

    func messages(for happening: Happening) -> [OutputMessage] {
        switch happening {
        case .event(let e):
            return [
                OutputMessage(
                    topic: topics.events,
                    payload: .stamped { [fleet, vehicle] id, sequence in
                        Payloads.event(
                            e.event, monitor: e.monitor, fleet: fleet, vehicle: vehicle, eventID: id,
                            sequence: sequence, place: e.place)
                    }, delivery: .durable)
            ]
        case .location(let l) where l.reason == .requested:
            pacing.state.withLock { $0.sentLocation(at: l.update.location.timestamp) }
            return [location(l)]
        case .location(let l) where l.reason == .liveUpdate:
            let decision = pacing.state.withLock { $0.take(l.update) }
            var messages: [OutputMessage] = []
            if let batch = decision.batch {
                messages.append(
                    OutputMessage(
                        topic: topics.track,
                        payload: .stamped { [vehicle] _, sequence in
                            TrackEncoding.encode(batch, vehicle: vehicle, sequence: sequence)
                        }, delivery: .droppable))
            }
            if decision.location { messages.append(location(l)) }
            return messages
        default:
            return []
        }
    }

    private func location(_ l: LocationHappening) -> OutputMessage {
        OutputMessage(
            topic: topics.location,
            payload: .stamped { [fleet, vehicle] id, sequence in
                Payloads.location(
                    l.update, fleet: fleet, vehicle: vehicle, eventID: id, sequence: sequence, place: l.place)
            }, retain: true, delivery: .droppable)
    }
}
