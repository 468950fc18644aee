import AgentTestSupport
import Foundation
import LocalServers
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The real agent runs its tasks on its own pool, never on libdispatch's worker pool, whose monitor would
/// wake the vehicle once a second for the rest of the agent's life (see `PoolExecutor`).
@Suite(.offTheCooperativePool(.waiting)) struct AgentThreadsTests {
    /// The names of the process's threads, as the kernel keeps them (15 characters at most).
    static func threadNames(_ pid: pid_t) -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.compactMap {
            (try? String(contentsOfFile: "/proc/\(pid)/task/\($0)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    @Test func aDriveWithPlacesRunsNoThreadOfLibdispatchsWatchedPool() async throws {
        let broker = try LocalMosquitto.started()
        defer { broker.stop() }
        let dashboard = try await EventSubscriber(port: broker.port)
        // Places on: loading the gazetteer builds its outlines on every core, the path that used
        // `concurrentPerform`. Live updates on, so that every output and the outbox's droppable class run.
        let agent = try AgentFixture(brokerPort: broker.port, speedFactor: 10) {
            $0["places"] = ["enabled": true]
            $0["liveUpdates"] = ["startedByDefault": true]
        }
        try agent.start()
        defer { agent.kill(signal: SIGKILL) }
        #expect(
            await waitUntil(120) { dashboard.unique.count >= 3 },
            "the agent delivers transitions on its own pool: \(agent.log.suffix(2000))")
        let pid = try #require(agent.pid)
        let names = Self.threadNames(pid)
        #expect(!names.isEmpty, "the agent's threads are listed")
        // libdispatch names a worker of a global queue after it: `com.apple.root.default-qos` is watched,
        // `com.apple.root.default-qos.overcommit` (serial queues') is not.
        let watched = names.filter { $0.hasSuffix("-qos") }
        #expect(watched.isEmpty, "no thread of libdispatch's watched pool: \(names)")
        await dashboard.stop()
    }
}
