import AgentOutputs
import AgentTestSupport
import Foundation
import LocalServers
import Logging
import TestSupport
import Testing

@testable import GeofenceAgent
@testable import Mosquitto

/// The retained-delivery probe against a real mosquitto. On RabbitMQ, whose MQTT plugin does not deliver
/// retained messages to a wildcard subscription, it is checked through the agent on the real cluster
/// (`RabbitMQClusterTests`).
@Suite(.offTheCooperativePool(.waiting)) struct RetainedDeliveryProbeBrokerTests {
    let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
    let probe = RetainedDeliveryProbe(topics: Topics(prefix: "fleet", fleet: "test", vehicle: "v1"), nonce: "n1")

    /// A client of `broker`, connected.
    func connected(_ clientID: String, to broker: LocalMosquitto) async throws -> MQTTClient {
        let client = try MQTTClient(
            configuration: MQTTConfiguration(host: "127.0.0.1", port: broker.port, clientID: clientID), logger: logger)
        await client.start()
        #expect(await waitUntil(60) { client.status.isConnected })
        return client
    }

    /// A broker's queue for one client is bounded (mosquitto's `max_queued_messages`, 1,000 by default), and
    /// a subscription's retained messages go through it at QoS 1: those beyond the bound are dropped, as in a
    /// sync of 100,000 geofences. Here 500 retained messages under the probe's own filter fill a queue of 100
    /// in the one step in which the broker queues them; the probe's own, created last, comes after them.
    /// Delivered at QoS 0 it bypasses the queue, and the verdict is still right.
    @Test func aFullQueueDoesNotHideTheRetainedProbe() async throws {
        let broker = try LocalMosquitto(settings: "allow_anonymous true\nmax_queued_messages 100")
        try broker.start()
        defer { broker.stop() }
        let filler = try await connected("filler", to: broker)
        let base = "fleet/test/vehicles/v1/probe"
        for index in 0..<500 { try await filler.publish("\(base)/f\(index)", text: "{}", retain: true) }
        await filler.shutdown()

        let client = try await connected("agent", to: broker)
        #expect(await probe.run(on: client) == .delivers)
        await client.shutdown()
        let log = (try? String(contentsOfFile: broker.path("broker.log"), encoding: .utf8)) ?? ""
        #expect(!log.contains("Outgoing messages are being dropped"), "QoS 0 deliveries are not queued")
    }

    /// mosquitto delivers; the probe leaves no retained message and no subscription behind.
    @Test func mosquittoDeliversAndNothingIsLeftBehind() async throws {
        let broker = try LocalMosquitto.started()
        defer { broker.stop() }
        let client = try await connected("agent", to: broker)
        #expect(await probe.run(on: client) == .delivers)
        #expect(client.core.state.withLock { $0.filters[probe.filter] } == nil, "the probe's filter unsubscribed")

        // A fresh subscriber hears its own marker first: no retained probe is left on the broker.
        let listener = try await connected("listener", to: broker)
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
