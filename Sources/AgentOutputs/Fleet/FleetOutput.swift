import GeofenceCore

/// Our own topics (docs/topics.md): every notified event on `events`, durable, and live updates and
/// answers to `reportLocation` on the retained `location`, droppable.
struct FleetOutput: AgentOutput {
    let topics: Topics
    let fleet: String
    let vehicle: String

    static func make(_ context: OutputContext) -> FleetOutput? {
        FleetOutput(topics: context.topics, fleet: context.fleet, vehicle: context.vehicle)
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
        case .location(let l) where l.reason != .transition:
            return [
                OutputMessage(
                    topic: topics.location,
                    payload: .stamped { [fleet, vehicle] id, sequence in
                        Payloads.location(
                            l.update, fleet: fleet, vehicle: vehicle, eventID: id, sequence: sequence, place: l.place)
                    }, retain: true, delivery: .droppable)
            ]
        default:
            return []
        }
    }
}
