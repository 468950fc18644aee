import Foundation
import LocalServers
import Logging
import TestSupport
import Testing

@testable import GeofenceAgent
@testable import Mosquitto

/// The check that a broker gives a wildcard subscription its retained geofences. On RabbitMQ, whose MQTT
/// plugin does not, it is checked through the agent on the real cluster (`RabbitMQClusterTests`).
@Suite(.offTheCooperativePool(.waiting)) struct RetainedDeliveryProbeTests {
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

    /// mosquitto delivers; the probe leaves no retained message and no subscription behind.
    @Test func mosquittoDeliversAndNothingIsLeftBehind() async throws {
        let broker = try LocalMosquitto()
        try broker.start()
        defer { broker.stop() }
        let client = try MQTTClient(
            configuration: MQTTConfiguration(host: "127.0.0.1", port: broker.port, clientID: "agent"), logger: logger)
        await client.start()
        #expect(await waitUntil(60) { client.status.isConnected })
        #expect(await probe.run(on: client) == .delivers)
        #expect(client.core.state.withLock { $0.filters[probe.filter] } == nil, "the probe's filter unsubscribed")

        // A fresh subscriber hears its own marker first: no retained probe is left on the broker.
        let listener = try MQTTClient(
            configuration: MQTTConfiguration(host: "127.0.0.1", port: broker.port, clientID: "listener"),
            logger: logger)
        await listener.start()
        #expect(await waitUntil(60) { listener.status.isConnected })
        let heard = try await listener.subscribe("fleet/test/vehicles/v1/probe/#")
        try await listener.publish("fleet/test/vehicles/v1/probe/end", text: "end")
        var first: MQTTMessage?
        for await m in heard {
            first = m
            break
        }
        #expect(first?.topic == "fleet/test/vehicles/v1/probe/end", "\(String(describing: first))")
        heard.cancel()
        await listener.shutdown()
        await client.shutdown()
    }
}
