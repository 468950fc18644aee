import AgentTestSupport
import Foundation
import LocalServers
import SQLite
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The real agent process, a real mosquitto and a dashboard on a persistent session, under the faults a
/// vehicle meets. The drive is `SyntheticDrive`; what must arrive is what `simulate` finds on it. Each test
/// has its own broker and agent and waits on what arrives, so they run at once: the lane waits for the
/// outage's 60 s once, not for every fault in turn.
@Suite(.offTheCooperativePool(.waiting)) struct AgentFaultTests {
    @Test func killedOverAndOverNothingLostNothingInvented() async throws {
        let broker = try LocalMosquitto.started()
        defer { broker.stop() }
        let dashboard = try await EventSubscriber(port: broker.port)
        // 50x, not faster: until the broker connects, a run replays on and its events wait in the outbox, and a
        // busy machine can take seconds to connect. At 150x a first run's backlog was already two thirds of the
        // drive when its first event arrived (CI with both cores kept busy), leaving no middle to kill in.
        let agent = try AgentFixture(brokerPort: broker.port, speedFactor: 50)
        let expected = try expectedTransitions(in: agent)
        #expect(expected.count >= 200, "the drive must produce at least 200 transitions, has \(expected.count)")
        var rng = SystemRandomNumberGenerator()
        var kills = 0
        // Up to 20 kills, and none once two thirds of the drive were delivered: on a busy machine a run can
        // replay much of the drive before its first delivery, and the last run must still have some to do.
        while kills < 20, dashboard.unique.count < expected.count * 2 / 3 {
            // Each run is killed at a random moment once it has delivered something new, however long a busy
            // machine takes to start it: a fixed sleep would kill slow starts before they did anything.
            let delivered = dashboard.unique.count
            try agent.start()
            _ = await waitUntil(60) { dashboard.unique.count > delivered }
            try await Task.sleep(for: .milliseconds(Int.random(in: 0...150, using: &rng)))
            agent.kill(signal: SIGKILL)
            kills += 1
        }
        // The killed runs got part of the way: the kills fell in the middle of the drive.
        let beforeLastRun = dashboard.unique.count
        #expect(kills >= 3, "\(kills) kills")
        #expect(
            beforeLastRun > 0 && beforeLastRun < expected.count,
            "\(beforeLastRun) of \(expected.count) before the last run")
        try agent.start()
        #expect(agent.waitForExit(within: 90), "the last run should finish the drive")
        #expect(await waitUntil(60) { dashboard.unique.count >= expected.count })
        await dashboard.stop()
        let unique = dashboard.unique
        #expect(perCondition(unique) == perCondition(expected), "per condition, every transition once, in order")
        #expect(unique.count == expected.count)
        let sequences = unique.compactMap { $0["sequence"] as? Int }
        #expect(Set(sequences).count == sequences.count, "sequence numbers are unique")
        print(
            "kill -9 x\(kills): \(expected.count) transitions expected, \(beforeLastRun) delivered by the killed runs, \(dashboard.events.count) received, \(unique.count) after de-duplication"
        )
    }

    @Test func aSixtySecondBrokerOutageDeliversEverythingInOrder() async throws {
        let broker = try LocalMosquitto.started()
        defer { broker.stop() }
        let dashboard = try await EventSubscriber(port: broker.port)
        // 1,233 s of driving at 15x: 82 s, so the drive goes on before, during and after the outage.
        let agent = try AgentFixture(brokerPort: broker.port, speedFactor: 15)
        let expected = try expectedTransitions(in: agent)
        try agent.start()
        #expect(await waitUntil(60) { dashboard.unique.count >= 10 })
        broker.stop()
        try await Task.sleep(for: .seconds(60))
        let duringOutage = dashboard.unique.count
        try broker.start()
        #expect(agent.pid != nil && !agent.waitForExit(within: 0), "the drive is still going when the broker returns")
        #expect(agent.waitForExit(within: 120))
        #expect(await waitUntil(60) { dashboard.unique.count >= expected.count })
        await dashboard.stop()
        let unique = dashboard.unique
        #expect(perCondition(unique) == perCondition(expected))
        let sequences = unique.compactMap { $0["sequence"] as? Int }
        #expect(sequences == sequences.sorted(), "delivered in sequence order")
        print(
            "broker outage 60 s: \(expected.count) transitions expected, \(duringOutage) before the outage, \(dashboard.events.count) received, \(unique.count) unique"
        )
    }

    @Test func aFullDiskIsReportedAndRecoveredFromWithoutDamage() async throws {
        let broker = try LocalMosquitto.started()
        defer { broker.stop() }
        let dashboard = try await EventSubscriber(port: broker.port)
        let agent = try AgentFixture(brokerPort: broker.port, speedFactor: 60)
        let expected = try expectedTransitions(in: agent)
        try agent.start()
        let pid = try #require(agent.pid)
        #expect(await waitUntil(60) { dashboard.unique.count >= 5 })
        // The disk fills: no file of the agent's may be written past what it holds now.
        let limit = fullDiskLimit(storePath: agent.storePath)
        try LocalProcess.run(
            "/usr/bin/prlimit", ["--pid", "\(pid)", "--fsize=\(limit):unlimited"], in: agent.directory)
        let statusPath = agent.storePath + ".status.json"
        let reported = await waitUntil(30) {
            ((try? String(contentsOfFile: statusPath, encoding: .utf8)) ?? "").contains(
                "disk holding the store is full")
        }
        #expect(reported, "the status names the full disk")
        try await Task.sleep(for: .seconds(2))
        // Space is free again.
        try LocalProcess.run(
            "/usr/bin/prlimit", ["--pid", "\(pid)", "--fsize=unlimited:unlimited"], in: agent.directory)
        // The outbox counts what it holds, not what a rolled-back commit had added: it drains to zero.
        let drained = await waitUntil(45) {
            let status = (try? Data(contentsOf: URL(fileURLWithPath: statusPath))).flatMap {
                try? JSONSerialization.jsonObject(with: $0) as? [String: Any]
            }
            return ((status?["outbox"] as? [String: Any])?["rows"] as? Int) == 0
        }
        #expect(drained, "the status shows the outbox empty once everything is delivered")
        #expect(agent.waitForExit(within: 120))
        #expect(await waitUntil(60) { dashboard.unique.count >= expected.count })
        await dashboard.stop()
        #expect(perCondition(dashboard.unique) == perCondition(expected), "nothing lost across the full disk")
        let check = try Database(path: agent.storePath).statement("PRAGMA integrity_check")
        #expect(try check.step())
        #expect(check.text(0) == "ok")
        #expect(agent.log.contains("disk holding the store is full") || reported)
    }

    @Test func aCorruptStoreStopsTheStartWithWhatToDo() throws {
        let broker = try LocalMosquitto.started()
        defer { broker.stop() }
        let agent = try AgentFixture(brokerPort: broker.port, speedFactor: 100)
        try FileManager.default.createDirectory(
            atPath: (agent.storePath as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(repeating: 0x5A, count: 65_536).write(to: URL(fileURLWithPath: agent.storePath))
        let before = try Data(contentsOf: URL(fileURLWithPath: agent.storePath))
        let result = try AgentBinary.run(["run", "--config", agent.configURL.path])
        #expect(result.status == 2)
        #expect(result.stderr.contains("is corrupt or not a geofence-agent database"), "\(result.stderr)")
        #expect(result.stderr.contains("move the file aside"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: agent.storePath)) == before, "never silently replaced")
    }
}
