import AgentOutputs
import AgentTestSupport
import Foundation
import GeofenceCore
import GeofenceStore
import LocalServers
import Logging
import ServiceLifecycle
import ServiceLifecycleTestKit
import TestSupport
import Testing

@testable import GeofenceAgent
@testable import Mosquitto

/// The connection service against a real broker.
@Suite(.offTheCooperativePool(.waiting)) struct ConnectionServiceTests {
    let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    /// The outputs `buildAgent` would make for `configuration` (no metrics).
    func outputs(_ configuration: AgentConfiguration) -> MultiplexOutput {
        let topics = Topics(
            prefix: configuration.mqtt.topicPrefix, fleet: configuration.fleet, vehicle: configuration.vehicle)
        return OutputRegistry.outputs(configuration.outputContext(topics: topics, logger: logger))
    }

    /// A vehicle's state reporter over its processor and outbox in a temporary directory, publishing through
    /// `client`; and its store, to close.
    func reporter(publishingTo client: MQTTClient) async throws -> (StateReporter, AgentStore) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("connection-\(UUID().uuidString)")
        var configuration = try AgentConfiguration.parse(
            JSONParser.parse(Array(#"{"fleet":"test","vehicle":"v1"}"#.utf8)))
        configuration.storePath = directory.appendingPathComponent("agent.sqlite").path
        let store = try await AgentStore.open(path: configuration.storePath, logger: logger)
        let processor = try await FixProcessor(
            configuration: configuration, store: store, outbox: try await Outbox.open(store, logger: logger),
            outputs: outputs(configuration), logger: logger)
        let reporter = StateReporter(
            source: processor, publisher: client, topics: Topics(prefix: "fleet", fleet: "test", vehicle: "v1"),
            configuration: configuration, logger: logger, brokerDescription: { "connected" })
        return (reporter, store)
    }

    /// Against a real broker: at the connection the outputs' announcements go out retained (Home
    /// Assistant's discovery), and again when Home Assistant says `online`.
    @Test func theConnectionServiceAnnouncesAtEachConnectionAndOnRequest() async throws {
        let broker = try LocalMosquitto.started()
        defer { broker.stop() }
        var configuration = try AgentConfiguration.parse(
            JSONParser.parse(
                Array(
                    #"{"fleet":"test","vehicle":"v1","homeAssistant":{"enabled":true}}"#.utf8)))
        configuration.mqtt.port = broker.port
        let outputs = outputs(configuration)
        let client = try MQTTClient(
            configuration: MQTTConfiguration(host: "127.0.0.1", port: broker.port, clientID: "agent"), logger: logger)
        let listener = try MQTTClient(
            configuration: MQTTConfiguration(host: "127.0.0.1", port: broker.port, clientID: "listener"),
            logger: logger)
        let (reporter, store) = try await reporter(publishingTo: client)
        let request = try #require(outputs.announcementRequests.first)
        let requests = try await client.subscribe(request.topic)
        let discovery = try await listener.subscribe("homeassistant/#")
        let service = ConnectionService(
            client: client, reporter: reporter, outputs: outputs,
            announcementRequests: [(requests, request.payload)], logger: logger)
        try await testGracefulShutdown { trigger in
            let clients = [Task { try await client.run() }, Task { try await listener.run() }]
            let running = Task { await service.run() }
            var configs = discovery.makeAsyncIterator()
            var seen: [String] = []
            while seen.count < outputs.announcements().count, let m = await configs.next() {
                if m.topic.hasSuffix("/config") { seen.append(m.topic) }
            }
            #expect(Set(seen) == Set(outputs.announcements().map(\.topic)), "every discovery message at the connection")
            // Home Assistant restarts: its birth message asks again.
            try await listener.publish(
                request.topic, payload: Array(request.payload.utf8), qos: .atLeastOnce, retain: false)
            var again: [String] = []
            while again.count < outputs.announcements().count, let m = await configs.next() {
                if m.topic.hasSuffix("/config") { again.append(m.topic) }
            }
            #expect(Set(again) == Set(seen), "every discovery message again on Home Assistant's birth message")
            trigger.triggerGracefulShutdown()
            await running.value
            for c in clients { try await c.value }
        }
        await store.close()
    }
}
