import AgentTestSupport
import Foundation
import Logging
import TestSupport
import Testing

@testable import GeofenceAgent
@testable import Mosquitto

/// The check that a broker gives a wildcard subscription its retained geofences. On RabbitMQ, whose MQTT
/// plugin does not, it is checked through the agent on the real cluster (`RabbitMQClusterTests`).
@Suite(.offTheCooperativePool(.computing)) struct RetainedDeliveryProbeTests {
    let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
    let probe = RetainedDeliveryProbe(topics: testTopics, nonce: "n1")

    func message(_ topic: String, retained: Bool, nonce: String = "n1") -> MQTTMessage {
        MQTTMessage(topic: topic, payload: Array(#"{"probe":"\#(nonce)"}"#.utf8), retained: retained)
    }

    @Test func theFirstOfItsOwnMessagesGivesTheVerdict() {
        #expect(probe.filter == "fleet/test/vehicles/v1/probe/+")
        #expect(probe.verdict(after: message(probe.retainedTopic, retained: true)) == .delivers)
        #expect(probe.verdict(after: message(probe.markerTopic, retained: false)) == .withholds)
        // Another run's probe left behind, and a live copy of the retained one, say nothing.
        #expect(probe.verdict(after: message(probe.retainedTopic, retained: true, nonce: "n0")) == nil)
        #expect(probe.verdict(after: message(probe.markerTopic, retained: false, nonce: "n0")) == nil)
        #expect(probe.verdict(after: message(probe.retainedTopic, retained: false)) == nil)
    }
}
