import AgentTestSupport
import Foundation
import LocalServers
import TestSupport
import Testing

/// Node 3 is cut off from the other two (and from everything in their namespace) for 60 s mid-drive, while
/// the vehicle is connected to it; meanwhile the operator pushes one geofence and deletes another through
/// node 2. The vehicle moves to the majority's nodes, every transition arrives once and in order, and
/// once the link is back node 3 holds what the others hold and the vehicle confirms the operator's set.
@Suite(.offTheCooperativePool(.waiting)) struct NATSPartitionTests {
    @Test func aNodeCutOffFromTheOthersLosesNothing() async throws {
        guard LocalNATSCluster.isInstalled else {
            throw AgentTestError("the cluster tests need the pinned nats-server: run scripts/setup --test")
        }
        let fleet = try PartitionedFleet()
        defer { fleet.stop() }
        let cluster = fleet.cluster
        let ports = cluster.mqttPorts
        // Node 3 first: the vehicle is on the node that the partition cuts off.
        let agent = try ClusterFleet.drivingAgent(hosts: [2, 0, 1].map { "\(cluster.address($0)):\(ports[$0])" })
        let expected = try expectedTransitions(in: agent)
        let features = try ClusterFleet.features(agent.directory.appendingPathComponent("conditions.geojson"))
        let before = features + [("far-old", ClusterFleet.farFeature("far-old", longitude: 0))]
        for (id, payload) in before { try fleet.publish("fleet/test/geofences/\(id)", payload) }
        try fleet.publish(ClusterFleet.manifestTopic, ClusterFleet.manifest(before))
        try fleet.startDashboard()
        // The dashboard's subscription is live once a marker published after it comes back.
        var markers = 0
        while !fleet.heard.contains(where: { $0["marker"] != nil }), markers < 20 {
            try fleet.publish("fleet/test/vehicles/v1/events", Array(#"{"marker":true}"#.utf8), retain: false)
            markers += 1
            _ = await waitUntil(3) { fleet.heard.contains { $0["marker"] != nil } }
        }
        #expect(fleet.heard.contains { $0["marker"] != nil }, "the dashboard hears")

        let pid = try fleet.start(agent)
        defer { LocalProcess.terminate(pid) }
        #expect(
            await waitUntil(120) { ClusterFleet.geofenceSet(agent) == "confirmed: \(before.count) geofences" },
            "the vehicle confirms the set: \(agent.log.suffix(1500))")
        #expect(
            await waitUntil(120) { fleet.transitions.count >= expected.count / 4 },
            "\(fleet.transitions.count) transitions before the cut: \(agent.log.suffix(1500))")
        let brokerBefore = agent.status?["broker"] as? String ?? "?"

        fleet.link.cut(for: 60)
        let cutAt = ContinuousClock.now
        let after = features + [("far-new", ClusterFleet.farFeature("far-new", longitude: 1))]
        try fleet.publish("fleet/test/geofences/far-new", after.last!.1)
        try fleet.publish("fleet/test/geofences/far-old", [])
        try fleet.publish(ClusterFleet.manifestTopic, ClusterFleet.manifest(after))
        #expect(
            await waitUntil(60) {
                (agent.status?["broker"] as? String).map { $0.hasPrefix("connected") && !$0.contains("\(ports[2])") }
                    ?? false
            }, "the vehicle moves to the majority: \(agent.status?["broker"] ?? "none")")
        let movedAfter = ContinuousClock.now - cutAt

        #expect(
            await waitUntil(240) { fleet.transitions.count >= expected.count },
            "\(fleet.transitions.count) of \(expected.count): \(agent.log.suffix(1500))")
        let unique = fleet.transitions
        #expect(perCondition(unique) == perCondition(expected), "every transition once, in order")
        #expect(unique.count == expected.count, "nothing invented")
        #expect(
            await waitUntil(90) { ((agent.status?["outbox"] as? [String: Any])?["rows"] as? Int) == 0 },
            "the outbox empties")

        // The link is back: every node comes to hold the operator's set, and the vehicle confirms it. What a
        // node still lacks after a while is published again, as the operator's `push --repair` does.
        let now = Set(after.map(\.0))
        var sets: [Set<String>] = []
        var repairs: [String] = []
        func nodesAgree() async -> Bool {
            await waitUntil(60) {
                sets = (0..<3).map { (try? fleet.retained(on: $0, expected: now.count)) ?? [] }
                return sets.allSatisfy { $0 == now }
            }
        }
        var agreed = await nodesAgree()
        while !agreed, repairs.count < 3 {
            repairs.append(sets.map { ClusterFleet.named(now.symmetricDifference($0)) }.joined(separator: " | "))
            try fleet.publish("fleet/test/geofences/far-new", after.last!.1)
            try fleet.publish("fleet/test/geofences/far-old", [])
            try fleet.publish(ClusterFleet.manifestTopic, ClusterFleet.manifest(after))
            agreed = await nodesAgree()
        }
        #expect(agreed, "every node holds the operator's set: \(sets.map { now.symmetricDifference($0).sorted() })")
        #expect(
            await waitUntil(60) { ClusterFleet.geofenceSet(agent) == "confirmed: \(now.count) geofences" },
            "\(ClusterFleet.geofenceSet(agent) ?? "no status")")
        #expect(ClusterFleet.heldIdentifiers(agent) == now)
        print(
            "nats partition: node 3 cut off 60 s with the vehicle on it (\(brokerBefore)); the vehicle moved in "
                + "\(movedAfter); \(expected.count) transitions, \(unique.count) unique; every node agreed and "
                + "the vehicle confirmed \(now.count) geofences after the link came back"
                + (repairs.isEmpty ? "" : ", once the operator published again what the nodes lacked: \(repairs)"))
    }
}
