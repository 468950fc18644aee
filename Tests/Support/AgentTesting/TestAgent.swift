import AgentFormats
import AgentOutputs
import Foundation
import GeofenceAgent
import GeofenceCore
import Logging
import Mosquitto

/// The whole agent in process, as `buildAgent` builds it, on an `InMemoryBroker`, with the locations the
/// test hands it (or its configured replay): after HummingbirdTesting's `app.test`. The store is a SQLite
/// file in a directory of its own, removed afterwards.
package struct TestAgent: Sendable {
    package let broker: InMemoryBroker
    package let topics: Topics
    package let configuration: AgentConfiguration
    let feed: AsyncStream<Location>.Continuation

    /// Hands the agent a location, decided after those handed before it.
    package func locate(_ location: Location) { feed.yield(location) }

    /// Hands over a drive, in order.
    package func drive(_ locations: [Location]) { for location in locations { feed.yield(location) } }

    /// Pushes a geofence as an operator does: retained on the fleet's topic (an empty feature deletes it).
    package func push(geofence identifier: String, feature: String) {
        broker.publish(topics.fleetGeofence(identifier), text: feature, retain: true)
    }

    /// The messages published so far on topics that `filter` matches (`"events"` alone: the vehicle's).
    package func messages(_ filter: String) -> [MQTTMessage] { broker.published(Self.filter(filter, topics)) }

    /// Waits until `condition` holds for the messages on `filter`, at most `seconds`; the messages then.
    package func messages(
        _ filter: String, within seconds: Double = 30, until condition: ([MQTTMessage]) -> Bool
    ) async -> [MQTTMessage] {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while true {
            let seen = messages(filter)
            if condition(seen) || ContinuousClock.now >= deadline { return seen }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// A vehicle topic's last level alone names the vehicle's own topic.
    static func filter(_ filter: String, _ topics: Topics) -> String {
        filter.contains("/") ? filter : "\(topics.prefix)/\(topics.fleet)/vehicles/\(topics.vehicle)/\(filter)"
    }
}

/// Builds the agent from `json` (a `config.json`, with the store in a directory of its own and places off
/// unless it says), runs it on `broker`, hands it to `body`, then stops it and waits for it to end.
package func withTestAgent<T: Sendable>(
    _ json: String = #"{"fleet":"test","vehicle":"v1"}"#, broker: InMemoryBroker = InMemoryBroker(),
    configure: (inout AgentConfiguration) -> Void = { _ in }, _ body: (TestAgent) async throws -> T
) async throws -> T {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("test-agent-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    var configuration = try AgentConfiguration.parse(Array(json.utf8), name: "the test agent's configuration")
    if !json.contains(#""places""#) { configuration.places.enabled = false }
    configuration.storePath = directory.appendingPathComponent("agent.sqlite").path
    configure(&configuration)
    let (locations, feed) = AsyncStream<Location>.makeStream(bufferingPolicy: .unbounded)
    let logger = Logger(label: "test-agent") { _ in SwiftLogNoOpLogHandler() }
    let application = try await buildAgent(
        configuration, transport: InMemoryTransport(broker: broker),
        locations: configuration.replay == nil ? locations : nil, handlingSignals: false, logger: logger)
    let agent = TestAgent(
        broker: broker,
        topics: Topics(
            prefix: configuration.mqtt.topicPrefix, fleet: configuration.fleet, vehicle: configuration.vehicle),
        configuration: configuration, feed: feed)
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await application.runToEnd() }
        do {
            let result = try await body(agent)
            await application.stop()
            feed.finish()
            try await group.waitForAll()
            return result
        } catch {
            await application.stop()
            feed.finish()
            try? await group.waitForAll()
            throw error
        }
    }
}
