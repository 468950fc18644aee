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
            CPU (utime + stime from /proc) is summed over the run after a 10 s warm-up, their resident memory \
            read at its end. With --kill, node 1 is killed (SIGKILL) halfway: its publisher moves to node 2.

            {"scenario": "cluster-scale", "vehicles": 1000, "seconds": 60, "track_sent": ..., \
            "track_received": ..., "lost": ..., "late_slots": ..., "cpu_percent": ..., "rss_mb": [...], ...}

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

    @Flag(help: "Kill node 1 (SIGKILL) halfway through each size.")
    var kill = false

    @Flag(help: "One mosquitto instead of the cluster, for comparison (its three connections all to it).")
    var mosquitto = false

    func run() async throws {
        UndoOnSignal.install()
        guard LocalNATSCluster.isInstalled else { throw ValidationError("no pinned nats-server: scripts/setup --test") }
        for size in vehicles.split(separator: ",").compactMap({ Int($0) }) {
            let run = ClusterScaleRun(vehicles: size, geofences: geofences, seconds: seconds, kill: kill && !mosquitto)
            print(try await run.line(mosquitto: mosquitto))
        }
    }
}

/// One fleet size on a fresh cluster.
struct ClusterScaleRun {
    var vehicles: Int
    var geofences: Int
    var seconds: Double
    var kill: Bool
    static let warmUp = 10.0

    func line(mosquitto: Bool = false) async throws -> String {
        let cluster = try LocalNATSCluster(nodes: 3)
        defer { cluster.stopAll() }
        let single = mosquitto ? try LocalMosquitto.started() : nil
        defer { single?.stop() }
        if !mosquitto { try cluster.startAll() }
        let ports = single.map { [Int](repeating: $0.port, count: 3) } ?? cluster.mqttPorts
        let pids = { single.map { [$0.pid].compactMap { $0 } } ?? (0..<3).compactMap { cluster.pid($0) } }
        var settings = FleetSimulationSettings(vehicles: vehicles, geofences: geofences)
        settings.fleet = "sim"
        var fleet = SimulatedFleet(settings: settings)
        // Publisher k talks to node k, then to the next ones.
        var publishers: [MQTTClient] = []
        for k in 0..<3 {
            var configuration = MQTTConfiguration(port: ports[k], clientID: "fleet-\(k)-\(getpid())")
            configuration.protocolVersion = .v311
            configuration.failover = (1...2).map { MQTTBroker(host: "127.0.0.1", port: ports[(k + $0) % 3]) }
            configuration.connectTimeout = 2
            configuration.maximumInflight = 1000
            let client = try MQTTClient(configuration: configuration, logger: Self.quiet)
            await client.start()
            try await waitConnected(client)
            publishers.append(client)
        }
        defer { for client in publishers { Task { await client.shutdown() } } }
        let retained = fleet.geofenceMessages()
        for start in stride(from: 0, to: retained.count, by: 500) {
            try await FleetPublisher(client: publishers[0]).publish(
                Array(retained[start..<min(start + 500, retained.count)]))
        }
        let dashboard = try await TrackCounter(port: ports[2])
        let sent = SentTally()
        let clock = ContinuousClock()
        let start = clock.now
        var usage: (cpu: Double, at: ContinuousClock.Instant)?
        let slots = FleetPublisher.slotsPerSecond
        var k = 0
        var killed = false
        while Double(k) / Double(slots) < seconds + Self.warmUp {
            let due = start + .milliseconds(k * 1000 / slots)
            if clock.now > due + .milliseconds(100) { sent.lateSlot() }
            try? await clock.sleep(until: due)
            if usage == nil, clock.now - start >= .seconds(Self.warmUp) {
                usage = (Self.cpuSeconds(pids()), clock.now)
            }
            if kill, !killed, clock.now - start >= .seconds(Self.warmUp + seconds / 2) {
                cluster.kill(0)
                killed = true
            }
            let messages = fleet.tick(slot: k % slots, of: slots, at: Date())
            try await withThrowingTaskGroup(of: Void.self) { group in
                for message in messages {
                    let client = publishers[Self.node(of: message.topic)]
                    group.addTask {
                        _ = try await client.publish(message.topic, payload: message.payload, retain: message.retain)
                        sent.sent(track: message.topic.hasSuffix("/track"))
                    }
                }
                try await group.waitForAll()
            }
            k += 1
        }
        let cpu = Self.cpuSeconds(pids()) - (usage?.cpu ?? 0)
        let elapsed = (clock.now - (usage?.at ?? start)) / .seconds(1)
        let rss = pids().map(Self.residentMegabytes)
        let counts = sent.counts
        _ = await dashboard.settle(expecting: counts.track)
        let received = await dashboard.finish()
        let cpuPercent = cpu / elapsed * 100
        return "{\"scenario\": \"cluster-scale\", \"broker\": \"\(mosquitto ? "mosquitto" : "nats")\", "
            + "\"vehicles\": \(vehicles), \"seconds\": \(Int(elapsed)), "
            + "\"killed_node\": \(kill), \"messages_sent\": \(counts.all), \"track_sent\": \(counts.track), "
            + "\"track_received\": \(received), \"lost\": \(max(0, counts.track - received)), "
            + "\"late_slots\": \(counts.late), \"cpu_percent\": \(Self.rounded(cpuPercent)), "
            + "\"cpu_percent_per_1000_vehicles\": \(Self.rounded(cpuPercent * 1000 / Double(vehicles))), "
            + "\"rss_mb\": [\(rss.map { "\(Self.rounded($0))" }.joined(separator: ", "))]}"
    }

    static let quiet = Logger(label: "cluster-scale") { _ in SwiftLogNoOpLogHandler() }

    /// The node a vehicle's messages go to: its name's number, modulo three.
    static func node(of topic: String) -> Int {
        let parts = topic.split(separator: "/")
        guard parts.count > 3, let digits = Int(parts[3].filter(\.isNumber)) else { return 0 }
        return digits % 3
    }

    /// The running nodes' CPU seconds (user + system) so far. A killed node's seconds are lost with it.
    static func cpuSeconds(_ pids: [pid_t]) -> Double {
        pids.reduce(0) { total, pid in
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return total }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else {
                return total
            }
            return total + (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
        }
    }

    static func residentMegabytes(_ pid: pid_t) -> Double {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes / 1024
    }

    static func rounded(_ x: Double) -> Double { (x * 10).rounded() / 10 }
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
