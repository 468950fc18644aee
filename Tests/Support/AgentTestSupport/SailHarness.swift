import AgentOutputs
import Foundation
import LocalServers
import Logging
import Mosquitto
import TestSupport

/// The example sail (examples/): its geofences pushed as an operator would, and the agent replaying it,
/// for the tests that watch the agent as a consumer does (dashboard, OwnTracks, Home Assistant).
package enum Sail {
    package static let examples = Repository.url("examples")
    package static var track: String { examples.appendingPathComponent("ijsselmeer-sail.gpx").path }

    /// A broker of the test's own, started, with the example geofences pushed by an operator, whose client
    /// is returned too (the caller stops both).
    package static func brokerWithGeofences() async throws -> (broker: LocalMosquitto, operator: MQTTClient) {
        let broker = try LocalMosquitto.started()
        let client = try await operatorClient(port: broker.port)
        try await pushGeofences(client)
        return (broker, client)
    }

    /// An operator's client on the broker, connected (a cluster node speaks MQTT 3.1.1 only); with `failover`,
    /// the other nodes of a cluster it moves to when its node is gone.
    package static func operatorClient(
        port: Int, protocolVersion: MQTTConfiguration.ProtocolVersion = .v5, failover: [Int] = []
    ) async throws -> MQTTClient {
        let configuration = testClientConfiguration(
            port: port, clientID: "operator-\(UUID().uuidString.prefix(6))", protocolVersion: protocolVersion,
            failover: failover)
        let client = try MQTTClient(
            configuration: configuration, logger: Logger(label: "test.operator") { _ in SwiftLogNoOpLogHandler() })
        await client.start()
        return client
    }

    /// examples/ijsselmeer.geojson, each Feature retained on `fleet/FLEET/geofences/ID`.
    package static func pushGeofences(_ client: MQTTClient, fleet: String = "test") async throws {
        let data = try Data(contentsOf: examples.appendingPathComponent("ijsselmeer.geojson"))
        guard
            let features = (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["features"]
                as? [[String: Any]]
        else {
            throw AgentTestError("examples/ijsselmeer.geojson has no features")
        }
        for feature in features {
            let id = feature["id"] as? String ?? ""
            _ = try await client.publish(
                "fleet/\(fleet)/geofences/\(id)", payload: Array(try JSONSerialization.data(withJSONObject: feature)),
                retain: true)
        }
    }

    /// The agent (fleet `test`, vehicle `v1`), ready to replay the sail at `speedFactor` with live updates on
    /// and its geofences from the broker; it keeps running after the sail. `extra` adds keys.
    package static func agent(brokerPort: Int, speedFactor: Double, extra: (inout [String: Any]) -> Void = { _ in })
        throws
        -> AgentFixture
    {
        try AgentFixture(brokerPort: brokerPort, speedFactor: speedFactor) { config in
            config["conditions"] = nil
            config["replay"] = ["gpx": track, "speedFactor": speedFactor, "exitAtEnd": false]
            config["liveUpdates"] = ["configuration": "otherNavigation", "startedByDefault": true]
            extra(&config)
        }
    }
}
