import AgentOutputs
import Foundation
import Mosquitto
import ThreadExecution

/// Whether the broker hands a wildcard subscription the retained messages it matches: the geofence sync
/// subscribes to `.../geofences/+` and relies on it. RabbitMQ's MQTT plugin does not (rabbitmq-server
/// issues 8824 and 8096), so there a vehicle would never receive its geofences, and say nothing.
///
/// The check needs no clock: a retained message goes to `.../probe/retained`, then `.../probe/+` is
/// subscribed, then a plain message goes to `.../probe/marker`. A broker that delivers retained messages
/// to the new subscription sends the retained one before the marker, which was published after the
/// subscription was granted; one that does not sends the marker alone.
///
/// The filter is subscribed at QoS 0. A broker bounds the messages it queues for one client (mosquitto's
/// `max_queued_messages`) and drops QoS 1 deliveries beyond the bound: a vehicle taking in a fleet's
/// geofences has its queue full, and a QoS 1 probe there lost its retained message and saw the marker alone.
/// QoS 0 deliveries are not queued behind the others, and on one connection they keep their order.
struct RetainedDeliveryProbe {
    /// What the broker did.
    enum Verdict: Equatable, Sendable {
        /// The retained message came first.
        case delivers
        /// The marker came, and no retained message before it.
        case withholds
    }

    let nonce: String
    let base: String

    init(topics: Topics, nonce: String = UUID().uuidString) {
        self.nonce = nonce
        base = topics.probe
    }

    var retainedTopic: String { "\(base)/retained" }
    var markerTopic: String { "\(base)/marker" }
    var filter: String { "\(base)/+" }
    var payload: [UInt8] { Array(#"{"probe":"\#(nonce)"}"#.utf8) }

    /// The verdict a message gives, or nil when it says nothing yet (another run's probe; a retained copy
    /// that arrived live, flagged not retained, as on a session that kept an old subscription).
    func verdict(after message: MQTTMessage) -> Verdict? {
        guard message.payload == payload else { return nil }
        if message.topic == retainedTopic, message.retained { return .delivers }
        if message.topic == markerTopic { return .withholds }
        return nil
    }

    /// Runs the check on `client`, connected; nil when it could not finish (the connection went, or no
    /// answer within `patience`), to be tried at the next connection. The retained message is removed
    /// afterwards.
    func run(on client: any AgentTransport, patience: Duration = .seconds(60)) async -> Verdict? {
        do {
            try await client.publish(retainedTopic, payload: payload, retain: true)
            let subscription = try await client.subscribe(filter, qos: .atMostOnce)
            defer { subscription.cancel() }
            try await client.publish(markerTopic, payload: payload, retain: false)
            let outcome = await withTaskGroup(of: Verdict?.self) { group in
                group.addTask {
                    for await message in subscription {
                        if let found = verdict(after: message) { return found }
                    }
                    return nil
                }
                group.addTask {
                    try? await Task.sleep(for: patience, clock: .serialTimer)
                    return nil
                }
                // Cancelled, the loop over the subscription ends too.
                let first = await group.next() ?? nil
                group.cancelAll()
                return first
            }
            // An empty retained message deletes the retained one.
            try? await client.publish(retainedTopic, payload: [], retain: true)
            return outcome
        } catch {
            return nil
        }
    }
}
