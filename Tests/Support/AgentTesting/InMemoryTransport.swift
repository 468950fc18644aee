import Foundation
import GeofenceAgent
import Mosquitto
import ServiceLifecycle

/// The agent's connection to an `InMemoryBroker`: always connected, every message acknowledged as it is
/// handed over.
package final class InMemoryTransport: AgentTransport {
    let broker: InMemoryBroker

    package init(broker: InMemoryBroker) { self.broker = broker }

    package var status: MQTTConnectionStatus { .connected(sessionPresent: false) }
    package var statusDescription: String { status.description }
    package var statusUpdates: AsyncStream<MQTTConnectionStatus> { AsyncStream { _ in } }
    package var brokerName: String { "in-memory" }
    package var brokerPosition: Int { 0 }
    package var isConnected: Bool { true }
    package var refusedSubscriptions: [String: MQTTSubscriptionRefusal] { broker.refusedSubscriptions }

    package func run() async throws {
        try? await gracefulShutdown()
        broker.close()
    }

    package func subscribe(_ filter: String, qos: MQTTQoS) async throws(MQTTError) -> MQTTSubscription {
        broker.subscribe(filter)
    }

    package func publish(_ topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool) async throws(MQTTError)
        -> MQTTReasonCode
    {
        broker.publish(topic, payload: payload, retain: retain)
        return .success
    }

    package func publish(_ topic: String, payload: [UInt8], retain: Bool) async throws(MQTTError) {
        broker.publish(topic, payload: payload, retain: retain)
    }

    package func issueInOrder(_ topic: String, payload: [UInt8], retain: Bool) async throws(MQTTError)
        -> any PublishAcknowledgement
    {
        broker.publish(topic, payload: payload, retain: retain)
        return Acknowledged()
    }

    private struct Acknowledged: PublishAcknowledgement {
        func acknowledgement() async throws(MQTTError) -> MQTTReasonCode { .success }
    }
}
