import AgentTestSupport
import Foundation
import LocalServers
import Logging
import Mosquitto
import TestSupport
import Testing

@testable import GeofenceAgent

#if canImport(Glibc)
    import Glibc
#endif

/// A two-node RabbitMQ cluster with its MQTT plugin (MQTT 3.1.1), on loopback: the agent publishes to
/// node 1, node 1 is stopped mid-drive, the agent fails over to node 2, and a subscriber on node 2
/// receives every transition. RabbitMQ gives no retained message to a wildcard subscription: the agent
/// refuses the geofence sync there, and says why.
@Suite(.offTheCooperativePool(.waiting)) struct RabbitMQClusterTests {
    @Test func theAgentFailsOverWithinACluster() async throws {
        guard LocalRabbitMQCluster.isInstalled else {
            throw AgentTestError("the cluster test needs Debian's rabbitmq-server: run scripts/setup --test")
        }
        let cluster = try LocalRabbitMQCluster.started(nodes: 2)
        defer { cluster.stopAll() }
        try await failOverMidDrive(
            first: cluster.mqttPorts[0], second: cluster.mqttPorts[1], protocolVersion: .v311,
            geofenceSync: "unavailable"
        ) {
            cluster.stop(node: 0)
        }
    }
}
