import AgentTestSupport
import Foundation
import LocalServers
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Which client id keeps what was queued for a vehicle while it moves between nodes: one for the cluster
/// (`mqtt.sharedSession`) or one per node (the default, which bridged mosquittos and RabbitMQ need). The
/// agent is frozen (SIGSTOP) on node 1, node 1 dies, an operator sends a command and deletes a geofence
/// meanwhile; thawed, the agent fails over. A second command after it reconnects shows the first had its
/// chance.
@Suite(.offTheCooperativePool(.waiting)) struct NATSSessionTests {
    @Test(arguments: [true, false])
    func whatIsSentWhileTheVehicleMovesReachesItOnlyWithOneSession(sharedSession: Bool) async throws {
        let cluster = try ClusterFleet.startedCluster()
        defer { cluster.stopAll() }
        let ports = cluster.mqttPorts
        let agent = try AgentFixture(brokerPort: ports[0], speedFactor: 5) { config in
            config["replay"] = ["gpx": "drive.gpx", "speedFactor": 5, "exitAtEnd": false]
            config["mqtt"] = [
                "hosts": ports.map { "127.0.0.1:\($0)" }, "failoverAfter": 2, "protocol": "mqttv311",
                "sharedSession": sharedSession,
            ]
        }
        defer { agent.kill(signal: SIGKILL) }
        let errors = try await EventSubscriber(
            port: ports[1], topic: "fleet/test/vehicles/v1/errors", protocolVersion: .v311, failover: [ports[2]])
        let operatorClient = try await Sail.operatorClient(port: ports[1], protocolVersion: .v311, failover: [ports[2]])
        defer { Task { await operatorClient.shutdown() } }
        /// Sends a command no agent knows: its refusal on `errors` says the agent took it.
        func send(_ name: String) async throws {
            _ = try await operatorClient.publish(
                "fleet/test/vehicles/v1/cmd", payload: Array(#"{"command":"\#(name)"}"#.utf8), retain: false)
        }
        func answered(_ name: String) -> Bool {
            errors.events.contains { ($0["reason"] as? String)?.contains("'\(name)'") == true }
        }
        /// Sends it every few seconds until it is answered (a subscription may not be live yet), at most 90 s.
        func sendUntilAnswered(_ name: String) async throws {
            let deadline = ContinuousClock.now + .seconds(90)
            while !answered(name), ContinuousClock.now < deadline {
                try await send(name)
                _ = await waitUntil(3) { answered(name) }
            }
        }
        let mode = sharedSession ? "one session" : "a session per node"

        _ = try await operatorClient.publish(
            "fleet/test/geofences/far", payload: ClusterFleet.farFeature("far", longitude: 0), retain: true)
        try agent.start()
        // Its subscriptions are live on node 1 once a command is answered.
        try await sendUntilAnswered("ready")
        #expect(answered("ready"), "\(mode): the agent takes commands: \(agent.log.suffix(1500))")
        #expect(await waitUntil(60) { ClusterFleet.heldIdentifiers(agent).contains("far") }, "\(mode): it holds far")

        let pid = try #require(agent.pid)
        Glibc.kill(pid, SIGSTOP)
        cluster.kill(0)
        try await send("queued")
        _ = try await operatorClient.publish("fleet/test/geofences/far", payload: [], retain: true)
        Glibc.kill(pid, SIGCONT)
        #expect(
            await waitUntil(90) {
                (agent.status?["broker"] as? String).map { $0.hasPrefix("connected") && !$0.contains("\(ports[0])") }
                    ?? false
            }, "\(mode): the agent fails over: \(agent.status?["broker"] ?? "none")")
        try await sendUntilAnswered("after")
        #expect(answered("after"), "\(mode): the agent takes commands on its new node")
        let queuedReached = answered("queued")
        // The deletion comes on the session's queue or not at all: a new session's subscription gets the
        // retained geofences, and a deleted one is simply not among them.
        let deleted = await waitUntil(30) { !ClusterFleet.heldIdentifiers(agent).contains("far") }
        await errors.stop()
        let command = queuedReached ? "reached" : "never reached"
        print(
            "nats session, \(mode): the command sent while it moved \(command) it; the deleted geofence was "
                + (deleted ? "deleted" : "still held"))
        #expect(queuedReached == sharedSession, "\(mode): the queued command reached the vehicle: \(queuedReached)")
        if sharedSession {
            // The deletion is a retained publish made while node 1's leaders move: NATS can acknowledge one
            // and not deliver it (docs/cluster.md, "What the cluster can still lose"); the set's manifest is
            // what finds it. Seen once, in a loaded CI run.
            withKnownIssue(
                "NATS acknowledges a retained publish it does not deliver while a leader moves",
                isIntermittent: true
            ) {
                #expect(deleted, "\(mode): the deletion reached the vehicle")
            }
        } else {
            #expect(!deleted, "\(mode): a new session's subscription never hears of the deletion")
        }
    }
}
