import AgentTestSupport
import Foundation
import LocalServers
import TestSupport
import Testing

/// The fleet on a three-node NATS cluster with JetStream (MQTT 3.1.1 on every node, the MQTT streams
/// replicated on all three), through its faults: `driveThroughAFault` says what each case must show.
@Suite(.offTheCooperativePool(.waiting)) struct NATSClusterTests {
    /// The node the vehicle is connected to dies (SIGKILL) mid-drive, and comes back from its store at the end.
    @Test func theVehiclesNodeIsKilledMidDrive() async throws {
        let report = try await driveThroughAFault("vehicle's node killed") { cluster, vehicleNode in
            cluster.kill(vehicleNode)
        }
        print("nats: \(report)")
    }

    /// The node the operator publishes to dies (SIGKILL) while it pushes 200 geofences and deletes 200 others.
    @Test func theOperatorsNodeIsKilledWhileGeofencesArePushed() async throws {
        let report = try await driveThroughAFault("operator's node killed mid-push", changes: 200, duringThePush: true)
        {
            cluster, _ in
            cluster.kill(1)
        }
        print("nats: \(report)")
    }

    /// The JetStream meta leader dies (SIGKILL): the others elect another while the drive goes on.
    @Test func theMetaLeaderIsKilledMidDrive() async throws {
        let report = try await driveThroughAFault("meta leader killed") { cluster, _ in
            let leader = try #require(cluster.metaLeader(), "a meta leader is elected")
            cluster.kill(leader)
        }
        print("nats: \(report)")
    }

    /// The leader of the retained messages' stream dies (SIGKILL) and is restarted from its store at once.
    @Test func theRetainedStreamsLeaderIsKilledAndRestarted() async throws {
        let report = try await driveThroughAFault("retained stream's leader killed and restarted") { cluster, _ in
            let leader = try #require(cluster.streamLeader("$MQTT_rmsgs"), "the retained stream has a leader")
            cluster.kill(leader)
            try cluster.start(leader)
        }
        print("nats: \(report)")
    }
}
