import Foundation
import GeofenceCore

/// Trips and stops on our `trips` topic (docs/trips.md): each begin and end, durable as transitions are,
/// with the outbox's `eventId` and sequence.
struct TripsOutput: AgentOutput {
    let topics: Topics
    let fleet: String
    let vehicle: String

    static func make(_ context: OutputContext) -> TripsOutput? {
        TripsOutput(topics: context.topics, fleet: context.fleet, vehicle: context.vehicle)
    }

    func messages(for happening: Happening) -> [OutputMessage] {
        guard case .trip(let t) = happening else { return [] }
        return [
            OutputMessage(
                topic: topics.trips,
                payload: .stamped { [fleet, vehicle] id, sequence in
                    TripPayloads.message(
                        t.event, fleet: fleet, vehicle: vehicle, eventID: id, sequence: sequence, places: t.places)
                }, delivery: .durable)
        ]
    }
}
