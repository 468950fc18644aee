import AgentTestSupport
import Foundation
import GeofenceCore
import LocalServers
import Mosquitto
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// One fault case on the three-node cluster: the real agent replays the synthetic drive (240 transitions)
/// with live updates on, its 40 geofences pushed retained by an operator on node 2, `mqtt.hosts` listing
/// the three nodes and one session for the cluster; a dashboard on node 3 keeps a persistent session.
/// Once a quarter of the transitions arrived, `fault` runs; then the operator pushes `changes` geofences far
/// from the drive and deletes as many (with `duringThePush`, the fault hits once a quarter of them are
/// made). Then, in every case:
/// - every transition arrives, once and in order per geofence after de-duplication by `eventId`;
/// - the vehicle's outbox empties;
/// - with every node running again, each holds the same retained geofences;
/// - the vehicle keeps every geofence the fault did not touch;
/// - the operator publishes the set's manifest with every change, as `push` does; what the vehicle then
///   reports missing or left over, and what the nodes lost, is published again (NATS acknowledges a
///   retained publish it does not keep while a leader moves), and both changes made during the fault
///   reach the vehicle and stay in the cluster: the vehicle's `geofenceSet` says `confirmed`.
/// Returns what it measured, for the test to print.
func driveThroughAFault(
    _ name: String, changes: Int = 1, duringThePush: Bool = false,
    fault: (LocalNATSCluster, _ vehicleNode: Int) async throws -> Void
) async throws -> String {
    let cluster = try ClusterFleet.startedCluster()
    defer { cluster.stopAll() }
    let ports = cluster.mqttPorts
    let agent = try ClusterFleet.drivingAgent(hosts: ports.map { "127.0.0.1:\($0)" })
    defer { agent.kill(signal: SIGKILL) }
    let expected = try expectedTransitions(in: agent)

    let operatorClient = try await Sail.operatorClient(
        port: ports[1], protocolVersion: .v311, failover: [ports[2], ports[0]])
    defer { Task { await operatorClient.shutdown() } }
    let features = try ClusterFleet.features(agent.directory.appendingPathComponent("conditions.geojson"))
    let farOld = ClusterFleet.farFeatures("far-old", changes, longitude: 0)
    let farNew = ClusterFleet.farFeatures("far-new", changes, longitude: 1)
    let fleet = features + farOld
    for (id, payload) in fleet {
        _ = try await operatorClient.publish("fleet/test/geofences/\(id)", payload: payload, retain: true)
    }
    // The fleet as the drive starts. What the cluster acknowledged and did not keep (the known issue) is
    // published again, as an operator who checks does, and counted.
    var pushed = try await ClusterFleet.retainedGeofences(port: ports[2], count: fleet.count)
    var publishedAgain = 0
    for _ in 0..<3 where pushed.count < fleet.count {
        for (id, payload) in fleet where pushed[id] == nil {
            _ = try await operatorClient.publish("fleet/test/geofences/\(id)", payload: payload, retain: true)
            publishedAgain += 1
        }
        pushed = try await ClusterFleet.retainedGeofences(port: ports[2], count: fleet.count)
    }
    #expect(pushed.count == fleet.count, "\(name): the retained geofences reach the third node")
    _ = try await operatorClient.publish(
        ClusterFleet.manifestTopic, payload: ClusterFleet.manifest(fleet), retain: true)

    let dashboard = try await EventSubscriber(port: ports[2], protocolVersion: .v311, failover: [ports[1], ports[0]])
    // The dashboard's subscription is live before the drive starts: a busy cluster can take seconds to make
    // its consumer. A marker (no `eventId`, so no transition) published on its topic comes back first.
    _ = try await operatorClient.publish(
        "fleet/test/vehicles/v1/events", payload: Array(#"{"marker":true}"#.utf8), retain: false)
    #expect(
        await waitUntil(120) { dashboard.events.contains { $0["marker"] != nil } },
        "\(name): the dashboard's subscription delivers")
    /// The transitions the dashboard heard: first copies, the marker left out.
    func transitions() -> [[String: Any]] { dashboard.unique.filter { $0["eventId"] is String } }
    try agent.start()
    let all = Set(fleet.map(\.0))
    #expect(
        await waitUntil(90) { ClusterFleet.heldIdentifiers(agent) == all },
        "\(name): the agent holds the fleet's geofences: \(agent.log.suffix(1500))")
    #expect(
        await waitUntil(60) { ClusterFleet.geofenceSet(agent) == "confirmed: \(fleet.count) geofences" },
        "\(name): the vehicle confirms the set: \(ClusterFleet.geofenceSet(agent) ?? "no status")")
    #expect(
        await waitUntil(120) { transitions().count >= expected.count / 4 },
        "\(name): \(transitions().count) transitions before the fault: \(agent.log.suffix(1500))")

    let before = transitions().count
    let started = ContinuousClock.now
    let changed = features + farNew
    let progress = PushProgress()
    /// The operator's changes, as `push` makes them: the geofences, then the manifest.
    let publishTheChanges: @Sendable () async throws -> Void = {
        for ((new, payload), (old, _)) in zip(farNew, farOld) {
            _ = try await operatorClient.publish("fleet/test/geofences/\(new)", payload: payload, retain: true)
            _ = try await operatorClient.publish("fleet/test/geofences/\(old)", payload: [], retain: true)
            progress.step()
        }
        _ = try await operatorClient.publish(
            ClusterFleet.manifestTopic, payload: ClusterFleet.manifest(changed), retain: true)
    }
    var madeBeforeTheFault = 0
    if duringThePush {
        let pushing = Task { try await publishTheChanges() }
        _ = await waitUntil(60) { progress.count >= changes / 4 }
        madeBeforeTheFault = progress.count
        try await fault(cluster, 0)
        try await pushing.value
    } else {
        try await fault(cluster, 0)
        try await publishTheChanges()
    }

    #expect(
        await waitUntil(180) { transitions().count >= expected.count },
        "\(name): \(transitions().count) of \(expected.count): \(agent.log.suffix(1500))")
    let delivered = ContinuousClock.now - started
    let unique = transitions()
    #expect(perCondition(unique) == perCondition(expected), "\(name): every transition once, in order")
    #expect(unique.count == expected.count, "\(name): nothing invented")
    #expect(
        await waitUntil(90) { ((agent.status?["outbox"] as? [String: Any])?["rows"] as? Int) == 0 },
        "\(name): the outbox empties: \(agent.status?["outbox"] ?? "")")

    // Every node running again. What the vehicle reports against the manifest, and what the nodes lost, is
    // published again, at most three times; then every node holds the same retained geofences, the
    // operator's, and the vehicle confirms them.
    for k in 0..<cluster.count where !cluster.isRunning(k) { try cluster.start(k) }
    let now = Set(changed.map(\.0))
    let catchingUp = ContinuousClock.now
    var kept: Set<String>? = try await ClusterFleet.agreedRetainedGeofences(cluster, count: now.count)
    var reports: [String] = []
    for _ in 0..<3 {
        let confirmed = await waitUntil(30) {
            ClusterFleet.geofenceSet(agent) == "confirmed: \(now.count) geofences"
        }
        if confirmed && kept == now { break }
        // The vehicle reports what it lacks; what only the nodes lost, the operator finds in the retained set.
        reports.append(
            confirmed
                ? "the nodes lost \(ClusterFleet.named(now.symmetricDifference(kept ?? [])))"
                : "the vehicle said \(ClusterFleet.geofenceSet(agent) ?? "no status")")
        try await publishTheChanges()
        kept = try await ClusterFleet.agreedRetainedGeofences(cluster, count: now.count)
    }
    let caughtUp = ContinuousClock.now - catchingUp
    let held = ClusterFleet.heldIdentifiers(agent)
    let untouched = Set(features.map(\.0))  // the far ones are the fault's changes
    #expect(held.isSuperset(of: untouched), "\(name): the vehicle lost \(untouched.subtracting(held))")
    #expect(held == now, "\(name): the vehicle holds \(held.symmetricDifference(now)) against the operator")
    #expect(kept != nil, "\(name): every node holds the same retained geofences")
    let agreed = kept ?? []
    #expect(kept == now, "\(name): the cluster lost \(now.subtracting(agreed)), kept \(agreed.subtracting(now))")
    #expect(
        ClusterFleet.geofenceSet(agent) == "confirmed: \(now.count) geofences",
        "\(name): \(ClusterFleet.geofenceSet(agent) ?? "no status")")
    for report in reports where report.hasPrefix("the vehicle") {
        #expect(report.contains("said differs: "), "\(name): a loss is reported against the manifest: \(report)")
    }
    await dashboard.stop()
    let broker = agent.status?["broker"] as? String ?? "?"
    return "\(name): \(publishedAgain) geofences published again at the start; "
        + (duringThePush ? "the fault hit after \(madeBeforeTheFault) of \(changes) pairs of changes; " : "")
        + "\(expected.count) transitions, \(before) before the fault, \(dashboard.count - 1) event messages, "
        + "\(unique.count) unique; all delivered \(delivered) after the fault; agent \(broker); "
        + "every node the same and confirmed \(caughtUp) after the restarts; "
        + (reports.isEmpty ? "nothing lost" : "published again when \(reports.joined(separator: "; then "))")
}
