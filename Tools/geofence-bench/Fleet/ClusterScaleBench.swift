import ArgumentParser
import FleetSimulation
import Foundation
import LocalServers
import Logging
import Mosquitto
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `geofence-bench cluster-scale`: a simulated fleet through the three-node NATS cluster, for each fleet size
/// in turn: what the nodes' CPU and memory cost per 1,000 vehicles at 1 Hz, and whether a dashboard on
/// another node got every track message the nodes acknowledged (counted from the start, warm-up included).
struct ClusterScaleBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cluster-scale",
        abstract: "Publish a simulated fleet through three NATS nodes and measure their cost per 1,000 vehicles.",
        discussion: """
            For each size, a fresh cluster of three nodes (docs/cluster.md's settings) gets the fleet's \
            geofences retained, then the fleet publishes in real time what the agent publishes (geofence-bench \
            fleet), its vehicles split over three publishing connections, one a node (MQTT 3.1.1, QoS 1). A \
            subscriber on the third node takes every vehicle's track at QoS 1, as a dashboard does. The nodes' \
            CPU (their threads' schedstat) is summed over the run after a 10 s warm-up, their resident memory \
            read at its end. With --kill, node 1 is killed (SIGKILL) halfway: its publisher moves to node 2. \
            --broker mosquitto runs the same against one mosquitto, for comparison.

            {"scenario": "cluster-scale", "vehicles": 1000, "seconds": 60, "track_sent": ..., \
            "track_received": ..., "lost": ..., "late_slots": ..., "cpu_percent": ..., "rss_mb": "61.2 77.0 67.3"}

            Example:
              swift build -c release && .build/release/geofence-bench cluster-scale --vehicles 250,500,1000
            """
    )

    @Option(help: "Fleet sizes, comma-separated, run in turn.")
    var vehicles = "250,500,1000"

    @Option(help: "Geofences published retained first.")
    var geofences = 1000

    @Option(help: "Seconds of publishing measured per size, after a 10 s warm-up.")
    var seconds = 60.0

    @Flag(help: "Kill node 1 (SIGKILL) halfway through each size (not with --broker mosquitto).")
    var kill = false

    @Option(help: "nats (the three-node cluster), or mosquitto (one, for comparison).")
    var broker: BenchBrokerKind = .nats

    func run() async throws {
        UndoOnSignal.install()
        for size in vehicles.split(separator: ",").compactMap({ Int($0) }) {
            let run = ClusterScaleRun(
                vehicles: size, geofences: geofences, seconds: seconds, kill: kill, broker: broker)
            print(try await run.line())
        }
    }
}

/// One fleet size on a fresh broker.
struct ClusterScaleRun {
    var vehicles: Int
    var geofences: Int
    var seconds: Double
    var kill: Bool
    var broker: BenchBrokerKind
    static let warmUp = 10.0

    func line() async throws -> String {
        let broker = try BenchBroker(self.broker)
        defer { broker.stop() }
        var settings = FleetSimulationSettings(vehicles: vehicles, geofences: geofences)
        settings.fleet = "sim"
        var fleet = SimulatedFleet(settings: settings)
        let publishers = try await Self.publishers(broker.ports)
        defer { for client in publishers { Task { await client.shutdown() } } }
        let retained = fleet.geofenceMessages()
        for start in stride(from: 0, to: retained.count, by: 500) {
            try await FleetPublisher(client: publishers[0]).publish(
                Array(retained[start..<min(start + 500, retained.count)]))
        }
        let dashboard = try await TrackCounter(port: broker.ports[broker.ports.count - 1])
        let sent = SentTally()
        let clock = ContinuousClock()
        let start = clock.now
        var usage: (cpuMicroseconds: Double, at: ContinuousClock.Instant)?
        let slots = FleetPublisher.slotsPerSecond
        var killed = false
        for k in 0..<Int((seconds + Self.warmUp) * Double(slots)) {
            let due = start + .milliseconds(k * 1000 / slots)
            if clock.now > due + .milliseconds(100) { sent.lateSlot() }
            try? await clock.sleep(until: due)
            if usage == nil, clock.now - start >= .seconds(Self.warmUp) {
                usage = (Self.cpuMicroseconds(broker.pids), clock.now)
            }
            if kill, !killed, clock.now - start >= .seconds(Self.warmUp + seconds / 2) {
                broker.killFirstNode()
                killed = true
            }
            try await Self.publish(fleet.tick(slot: k % slots, of: slots, at: Date()), over: publishers, counting: sent)
        }
        let cpu = Self.cpuMicroseconds(broker.pids) - (usage?.cpuMicroseconds ?? 0)
        let elapsed = (clock.now - (usage?.at ?? start)) / .seconds(1)
        let rss = broker.pids.map { rounded(residentMegabytes(of: $0), 1) }
        let counts = sent.counts
        _ = await dashboard.settle(expecting: counts.track)
        let received = await dashboard.finish()
        let cpuPercent = cpu / 1e6 / elapsed * 100
        return jsonLine([
            ("scenario", "cluster-scale"), ("broker", self.broker.rawValue), ("vehicles", vehicles),
            ("seconds", Int(elapsed)), ("killed_node", killed), ("messages_sent", counts.all),
            ("track_sent", counts.track), ("track_received", received), ("lost", max(0, counts.track - received)),
            ("late_slots", counts.late), ("cpu_percent", rounded(cpuPercent, 1)),
            ("cpu_percent_per_1000_vehicles", rounded(cpuPercent * 1000 / Double(vehicles), 1)),
            ("rss_mb", rss.map { "\($0)" }.joined(separator: " ")),
        ])
    }

    static let quiet = Logger(label: "cluster-scale") { _ in SwiftLogNoOpLogHandler() }

    /// Three publishing connections, publisher k to node k first and then to the next ones.
    static func publishers(_ ports: [Int]) async throws -> [MQTTClient] {
        var publishers: [MQTTClient] = []
        for k in 0..<3 {
            var configuration = MQTTConfiguration(port: ports[k % ports.count], clientID: "fleet-\(k)-\(getpid())")
            configuration.protocolVersion = .v311
            configuration.failover = (1..<ports.count).map {
                MQTTBroker(host: "127.0.0.1", port: ports[(k + $0) % ports.count])
            }
            configuration.connectTimeout = 2
            configuration.maximumInflight = 1000
            let client = try MQTTClient(configuration: configuration, logger: Self.quiet)
            await client.start()
            try await waitConnected(client)
            publishers.append(client)
        }
        return publishers
    }

    /// A slot's messages, each vehicle's over its publisher, all in flight at once; counted once acknowledged.
    static func publish(_ messages: [SimulatedFleet.Message], over publishers: [MQTTClient], counting sent: SentTally)
        async throws
    {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for message in messages {
                let client = publishers[node(of: message.topic)]
                group.addTask {
                    _ = try await client.publish(message.topic, payload: message.payload, retain: message.retain)
                    sent.sent(track: message.topic.hasSuffix("/track"))
                }
            }
            try await group.waitForAll()
        }
    }

    /// The publisher a vehicle's messages go over: its name's number, modulo three.
    static func node(of topic: String) -> Int {
        let parts = topic.split(separator: "/")
        guard parts.count > 3, let digits = Int(parts[3].filter(\.isNumber)) else { return 0 }
        return digits % 3
    }

    /// The running broker's CPU so far (its threads' schedstat). A killed node's time is lost with it.
    static func cpuMicroseconds(_ pids: [pid_t]) -> Double {
        pids.reduce(0) { $0 + (ProcessSpend.runningCPUMicroseconds($1) ?? 0) }
    }
}

/// A dashboard on one node: every vehicle's track at QoS 1, counted.
actor TrackCounter {
    private let client: MQTTClient
    private var reader: Task<Void, Never>?
    private let count = SentTally()

    init(port: Int) async throws {
        var configuration = MQTTConfiguration(port: port, clientID: "dashboard-\(getpid())")
        configuration.protocolVersion = .v311
        client = try MQTTClient(configuration: configuration, logger: ClusterScaleRun.quiet)
        await client.start()
        try await waitConnected(client)
        let subscription = try await client.subscribe("fleet/sim/vehicles/+/track")
        let count = count
        reader = Task { for await _ in subscription { count.sent(track: true) } }
    }

    /// Waits until `expecting` have come, or 30 s without one more.
    func settle(expecting: Int) async -> Int {
        var last = (count.counts.track, ContinuousClock.now)
        while true {
            let now = count.counts.track
            if now >= expecting { return now }
            if now != last.0 { last = (now, .now) }
            if ContinuousClock.now - last.1 > .seconds(30) { return now }
            try? await Task.sleep(for: .milliseconds(200))
        }
    }

    func finish() async -> Int {
        await client.shutdown()
        reader?.cancel()
        return count.counts.track
    }
}

/// Messages counted from several tasks at once.
final class SentTally: Sendable {
    private let state = Mutex((track: 0, all: 0, late: 0))
    func sent(track: Bool) {
        state.withLock {
            $0.all += 1
            if track { $0.track += 1 }
        }
    }
    func lateSlot() { state.withLock { $0.late += 1 } }
    var counts: (track: Int, all: Int, late: Int) { state.withLock { $0 } }
}
