import AgentTestSupport
import Foundation
import GeofenceStore
import LocalServers
import Logging
import Mosquitto
import ReceiverSimulation
import SQLite
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// SIGTERM stops the real agent by itself whatever the weather: no broker, a broker gone, a broker that
/// refuses, a full disk, the middle of a sync. The outbox stays intact and the status file says offline.
/// How long a stop took is printed, not asserted: the agent gives its services 3 s, then cancels them, and
/// a batch being stored is finished first; on an idle machine that is 0.1-2 s, on a busy CI machine up to
/// 6.4 s has been seen. The bound here (30 s, then SIGKILL) only tells a stop from a hang.
@Suite(.serialized, .offTheCooperativePool(.waiting)) struct AgentStopTests {
    /// Stops the agent and checks what every stop must leave behind.
    func stop(_ agent: AgentFixture, _ what: String) throws {
        let seconds = agent.terminate(within: 30)
        #expect(seconds != nil, "\(what): still running 30 s after SIGTERM")
        print("SIGTERM \(what): stopped in \(seconds.map { String(format: "%.2f s", $0) } ?? "> 30 s")")
        #expect(agent.status?["status"] as? String == "offline", "\(what): the status file says offline")
        let check = try Database(path: agent.storePath, create: false, readOnly: true).statement(
            "PRAGMA integrity_check")
        #expect(try check.step() && check.text(0) == "ok", "\(what): the store is intact")
    }

    func outboxRows(_ agent: AgentFixture) throws -> Int64 {
        let s = try Database(path: agent.storePath, create: false, readOnly: true).statement(
            "SELECT count(*) FROM outbox")
        return try s.step() ? s.int(0) : -1
    }

    static func liveUpdates(_ config: inout [String: Any]) { config["liveUpdates"] = ["startedByDefault": true] }

    @Test func withNoBrokerEverTheOutboxIsKept() async throws {
        let agent = try AgentFixture(brokerPort: try LocalProcess.freePort(), speedFactor: 10, extra: Self.liveUpdates)
        try agent.start()
        #expect(
            await waitUntil(60) { ((agent.status?["outbox"] as? [String: Any])?["transitions"] as? Int ?? 0) >= 3 },
            "transitions queue while no broker answers")
        try stop(agent, "with no broker")
        #expect(try outboxRows(agent) >= 3, "what was queued is still there for the next start")
    }

    @Test func withTheBrokerGoneMidDrive() async throws {
        let broker = try LocalMosquitto.started()
        defer { broker.stop() }
        let dashboard = try await EventSubscriber(port: broker.port)
        let agent = try AgentFixture(brokerPort: broker.port, speedFactor: 10, extra: Self.liveUpdates)
        try agent.start()
        #expect(await waitUntil(60) { dashboard.unique.count >= 3 })
        await dashboard.stop()
        broker.stop()
        // Count what is queued only once the agent has seen the broker go: rows counted while it was still
        // connected may yet be acknowledged and deleted.
        #expect(await waitUntil(60) { (agent.status?["broker"] as? String).map { !$0.hasPrefix("connected") } == true })
        let queued = agent.status.flatMap { ($0["outbox"] as? [String: Any])?["rows"] as? Int } ?? 0
        #expect(
            // The file shows the rows at its next 30 s (they are no change of its own).
            await waitUntil(45) { ((agent.status?["outbox"] as? [String: Any])?["rows"] as? Int ?? 0) > queued },
            "the drive goes on into the outbox")
        try stop(agent, "with the broker gone")
        #expect(try outboxRows(agent) > 0)
    }

    @Test func withABrokerThatRefusesTheLogin() async throws {
        let broker = try LocalMosquitto(settings: "allow_anonymous false")
        try broker.start()
        defer { broker.stop() }
        let agent = try AgentFixture(brokerPort: broker.port, speedFactor: 10, extra: Self.liveUpdates)
        try agent.start()
        #expect(
            await waitUntil(60) { (agent.status?["broker"] as? String)?.contains("refused") == true },
            "the status names the refusal")
        try stop(agent, "with the login refused")
    }

    @Test func withTheDiskFull() async throws {
        let agent = try AgentFixture(brokerPort: try LocalProcess.freePort(), speedFactor: 10, extra: Self.liveUpdates)
        try agent.start()
        let pid = try #require(agent.pid)
        #expect(await waitUntil(60) { agent.status != nil })
        try LocalProcess.run(
            "/usr/bin/prlimit", ["--pid", "\(pid)", "--fsize=\(fullDiskLimit(storePath: agent.storePath)):unlimited"],
            in: agent.directory)
        #expect(
            await waitUntil(60) { (agent.status?["storeProblem"] as? String)?.contains("full") == true },
            "the status names the full disk")
        try stop(agent, "with the disk full")
    }

    @Test func inTheMiddleOfASyncAndTheRestComesBackAtTheNextStart() async throws {
        let broker = try LocalMosquitto.started()
        defer { broker.stop() }
        let count = 20_000
        try await publishRetained(FleetGeofences(count: count, seed: 21).geofences, port: broker.port)
        let agent = try AgentFixture(brokerPort: broker.port, speedFactor: 10)
        let local = SyntheticDrive.circles
        try agent.start()
        #expect(await waitUntil(60) { (agent.status?["conditions"] as? Int ?? 0) > local }, "the sync has begun")
        let atStop = agent.status?["conditions"] as? Int ?? 0
        try stop(agent, "during a sync (\(atStop - local) of \(count) geofences held)")
        try agent.start()
        #expect(
            await waitUntil(120) { (agent.status?["conditions"] as? Int ?? 0) == local + count },
            "every geofence is held after the next start")
        try stop(agent, "after the sync")
    }
}

/// Publishes geofences retained on the test fleet's topics, as an operator's back office does.
func publishRetained(_ geofences: [FleetGeofences.Geofence], port: Int, fleet: String = "test") async throws {
    let client = try MQTTClient(
        configuration: MQTTConfiguration(port: port, clientID: "test-operator-\(UUID().uuidString.prefix(8))"),
        logger: Logger(label: "test.operator") { _ in SwiftLogNoOpLogHandler() })
    await client.start()
    var tickets: [PublishTicket] = []
    for g in geofences {
        tickets.append(
            try await client.issue(
                "fleet/\(fleet)/geofences/\(g.identifier)", payload: Array(g.feature.utf8), retain: true))
    }
    for t in tickets { _ = try await t.acknowledgement() }
    await client.shutdown()
}
