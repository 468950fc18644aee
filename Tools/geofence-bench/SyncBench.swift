import ArgumentParser
import Foundation
import GeofenceStore
import LocalServers
import Logging
import Mosquitto
import ReceiverSimulation

#if canImport(Glibc)
    import Glibc
#endif

/// `geofence-bench sync`: a fleet's geofences, retained on a real mosquitto, reaching a fresh agent.
struct SyncBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract:
            "Measure how long a fresh agent takes to hold N retained geofences, and what it costs in memory and disk.",
        discussion: """
            For each N, a mosquitto of our own gets N retained geofences on the fleet's geofence topics \
            (half circles, half polygons of 8 to 64 vertices, in a 1,000 km square). Then the real agent \
            starts against it with an empty store and no gpsd. sync_s runs from the agent's start until its \
            status file counts all N; rss_mb is the agent's resident memory then, rss_anon_mb the part of it \
            that is not files' pages (the kernel cannot take it back), store_mb the store's files (database and \
            write-ahead log), state_bytes the largest retained state message it published:

            {"scenario": "sync", "geofences": ..., "sync_s": ..., "rss_mb": ..., "rss_anon_mb": ..., \
            "store_mb": ..., "state_bytes": ...}

            Example:
              swift build -c release && .build/release/geofence-bench sync --counts 1000,10000,100000
            """
    )

    @Option(help: "Comma-separated numbers of geofences.")
    var counts = "1000,10000,100000"

    @OptionGroup var agent: AgentExecutable

    @Option(help: "Seconds to wait for a sync before giving up.")
    var timeout = 300.0

    @Flag(help: "Keep each run's directory (store, log) and print where it is, to look at where the bytes go.")
    var keep = false

    func run() async throws {
        UndoOnSignal.install()  // a stopped bench leaves none of its processes, namespaces or files
        let agentPath = try agent.path()
        for count in counts.split(separator: ",").compactMap({ Int($0.trimmingCharacters(in: .whitespaces)) }) {
            print(try await measure(count: count, agentPath: agentPath))
        }
    }

    private func measure(count: Int, agentPath: String) async throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sync-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer {
            if keep { print("kept \(directory.path)") } else { try? FileManager.default.removeItem(at: directory) }
        }
        let broker = try LocalMosquitto.started()
        defer { broker.stop() }
        let logger = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
        let operatorClient = try MQTTClient(
            configuration: MQTTConfiguration(port: broker.port, clientID: "bench-operator"), logger: logger)
        await operatorClient.start()
        var tickets: [PublishTicket] = []
        for g in FleetGeofences(count: count).geofences {
            tickets.append(
                try await operatorClient.issue(
                    "fleet/bench/geofences/\(g.identifier)", payload: Array(g.feature.utf8), retain: true))
        }
        for t in tickets { _ = try await t.acknowledgement() }
        let states = try await operatorClient.subscribe("fleet/bench/vehicles/v1/state")
        let largestState = LargestMessage()
        let reader = Task { for await m in states { largestState.record(m.payload.count) } }

        let config: [String: Any] = [
            "fleet": "bench", "vehicle": "v1",
            "mqtt": ["host": "127.0.0.1", "port": broker.port],
            "gpsd": ["host": "127.0.0.1", "port": try LocalProcess.freePort()],
            "store": ["path": "state/agent.sqlite"],
        ]
        let configURL = directory.appendingPathComponent("config.json")
        try JSONSerialization.data(withJSONObject: config).write(to: configURL)
        let storePath = directory.appendingPathComponent("state/agent.sqlite").path
        let started = ContinuousClock.now
        let pid = try LocalProcess.spawn(
            agentPath, ["run", "--config", configURL.path],
            standardError: directory.appendingPathComponent("agent.log").path)
        defer { LocalProcess.terminate(pid) }
        var synced: Duration?
        while ContinuousClock.now - started < .seconds(timeout) {
            if conditionsHeld(statusPath: StorePaths(storePath).status) >= count {
                synced = ContinuousClock.now - started
                break
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        // Let the state settle (it is published a moment after the last change).
        try await Task.sleep(for: .seconds(2))
        let rss = residentMegabytes(of: pid)
        let anonymous = residentMegabytes(of: pid, field: "RssAnon:")
        let storeBytes = [storePath, StorePaths(storePath).writeAheadLog].compactMap {
            try? FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int
        }.reduce(0, +)
        LocalProcess.terminate(pid)
        reader.cancel()
        await operatorClient.shutdown()
        let seconds = synced.map(seconds)
        return jsonLine([
            "scenario": "sync", "geofences": count, "sync_s": seconds.map { rounded($0, 2) } ?? -1,
            "rss_mb": rounded(rss, 1), "rss_anon_mb": rounded(anonymous, 1),
            "store_mb": rounded(Double(storeBytes) / 1_048_576, 1),
            "state_bytes": largestState.largest,
        ])
    }

    /// The total the agent's status file reports, or 0 before it exists.
    private func conditionsHeld(statusPath: String) -> Int {
        guard let data = FileManager.default.contents(atPath: statusPath),
            let o = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return 0 }
        return o["conditions"] as? Int ?? 0
    }
}

/// The largest payload seen, recorded from the subscriber's task.
final class LargestMessage: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func record(_ bytes: Int) {
        lock.lock()
        value = max(value, bytes)
        lock.unlock()
    }
    var largest: Int {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
}
