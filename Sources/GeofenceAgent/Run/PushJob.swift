import Foundation
import GeofenceCore
import Logging
import Mosquitto

/// `geofence-agent push`: publishes geofences as an operator would, retained, one Feature per topic,
/// after validating the whole file: one bad feature and nothing is published.
public enum PushJob {
    public static func run(configurationPath: String, conditionsPath: String, vehicle: String?, delete: Bool,
                           logger: Logger, emit: @Sendable (String) -> Void) async throws(AgentError) {
        let configuration = try AgentConfiguration.load(configurationPath)
        let file = try ConditionFile.load(conditionsPath)
        if !file.errors.isEmpty {
            throw AgentError("nothing was published: \(file.errors.count) of \(file.errors.count + file.definitions.count) features are invalid:\n" + file.errorLines.joined(separator: "\n"))
        }
        guard !file.definitions.isEmpty else { throw AgentError("\(conditionsPath): no conditions to publish") }
        if let vehicle, let problem = IdentifierRules.problem(with: vehicle, what: "--vehicle") { throw AgentError(problem, exitCode: 64) }
        let topics = Topics(prefix: configuration.mqtt.topicPrefix, fleet: configuration.fleet, vehicle: configuration.vehicle)
        var mqtt = AgentRunner.mqttConfiguration(configuration, topics: topics)
        mqtt.clientID = "geofence-agent-push-\(UUID().uuidString.prefix(8))"
        mqtt.will = nil
        mqtt.sessionExpiry = 0
        let client: MQTTClient
        do { client = try MQTTClient(configuration: mqtt, logger: logger) } catch { throw AgentError("\(error)") }
        await client.start()
        defer { Task { await client.shutdown() } }
        let deadline = ContinuousClock.now + .seconds(10)
        while !client.status.isConnected, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        guard client.status.isConnected else {
            let status = client.status, lastError = client.lastConnectionError
            await client.shutdown()
            let why: String
            if case .refused(let reason) = status { why = "the broker refused the connection: \(reason)" }
            else if case .unreachable(let reason) = status { why = reason }
            else { why = "no connection within 10 s" + (lastError.map { " (\($0))" } ?? "") }
            throw AgentError("nothing was published: \(why) (broker \(configuration.mqtt.host):\(configuration.mqtt.port) from \(configurationPath))", exitCode: 1)
        }
        for d in file.definitions {
            let topic = vehicle.map { topics.vehicleGeofence(d.identifier, vehicle: $0) } ?? topics.fleetGeofence(d.identifier)
            let payload = delete ? [] : Array((file.featureText(d.identifier) ?? "").utf8)
            do {
                _ = try await client.publish(topic, payload: payload, retain: true)
                emit("\(delete ? "deleted" : "published") \(topic)")
            } catch {
                await client.shutdown()
                throw AgentError("publishing \(topic) failed: \(error)", exitCode: 1)
            }
        }
        await client.shutdown()
    }
}
