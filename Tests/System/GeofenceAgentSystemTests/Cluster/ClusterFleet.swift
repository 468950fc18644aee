import AgentTestSupport
import Foundation
import GeofenceCore
import LocalServers
import Logging
import Mosquitto
import Synchronization
import TestSupport

/// What the cluster tests share: the cluster started, what a node holds retained, and what the agent holds.
enum ClusterFleet {
    /// Three NATS nodes, started, each answering MQTT.
    static func startedCluster() throws -> LocalNATSCluster {
        guard LocalNATSCluster.isInstalled else {
            throw AgentTestError("the cluster tests need the pinned nats-server: run scripts/setup --test")
        }
        let cluster = try LocalNATSCluster()
        try cluster.startAll()
        return cluster
    }

    /// The agent of the fault cases: the synthetic drive at 15x with live updates on, the geofences left to
    /// the operator, `hosts` the cluster's nodes in the order it tries them, one session for the cluster.
    /// The drive starts with 300 s (20 s at 15x) standing outside every circle: the agent takes its geofences
    /// from the cluster, and a busy machine took more than the drive's first 9 s (0.6 s at 15x) to sync 240,
    /// so that the first transition was never decided.
    static func drivingAgent(hosts: [String]) throws -> AgentFixture {
        let agent = try AgentFixture(brokerPort: 0, speedFactor: 15) { config in
            config["conditions"] = nil
            config["replay"] = ["gpx": "drive.gpx", "speedFactor": 15, "exitAtEnd": false]
            config["liveUpdates"] = ["configuration": "otherNavigation", "startedByDefault": true]
            config["mqtt"] = ["hosts": hosts, "failoverAfter": 2, "protocol": "mqttv311", "sharedSession": true]
        }
        try SyntheticDrive.gpx(leadIn: 300).write(
            to: agent.directory.appendingPathComponent("drive.gpx"), atomically: true, encoding: .utf8)
        return agent
    }

    /// "3: a, b, c" with at most six names.
    static func named(_ identifiers: Set<String>) -> String {
        "\(identifiers.count): " + identifiers.sorted().prefix(6).joined(separator: ", ")
            + (identifiers.count > 6 ? ", ..." : "")
    }

    /// `count` geofences far from the sail named `name-K`, 1 km apart from `longitude` on.
    static func farFeatures(_ name: String, _ count: Int, longitude: Double) -> [(String, [UInt8])] {
        (0..<count).map { k in ("\(name)-\(k)", farFeature("\(name)-\(k)", longitude: longitude + Double(k) * 0.01)) }
    }

    /// A geofence far from the sail, so that pushing or deleting it changes no transition of the drive.
    static func farFeature(_ id: String, longitude: Double) -> [UInt8] {
        Array(
            #"{"type":"Feature","id":"\#(id)","geometry":{"type":"Point","coordinates":[\#(longitude),0]},"properties":{"radius":100}}"#
                .utf8)
    }

    /// The fleet's retained geofences as a fresh subscriber on `port` gets them: identifier → payload. It waits
    /// until `count` have come (a node answers while its streams are still being placed), at most `seconds`;
    /// with `quiet`, also no longer than that many seconds without one more (a node that lost one never
    /// sends it).
    static func retainedGeofences(
        port: Int, count: Int, quiet: Double? = nil, within seconds: Double = 60
    ) async throws -> [String: [UInt8]] {
        let configuration = testClientConfiguration(
            port: port, clientID: "retained-\(UUID().uuidString.prefix(8))", protocolVersion: .v311)
        let client = try MQTTClient(
            configuration: configuration, logger: Logger(label: "test.retained") { _ in SwiftLogNoOpLogHandler() })
        defer { Task { await client.shutdown() } }
        let held = Mutex<[String: [UInt8]]>([:])
        let subscription = try await client.subscribe("fleet/test/geofences/+")
        let reader = Task {
            for await message in subscription where message.retained {
                let id = String(message.topic.split(separator: "/").last ?? "")
                held.withLock { $0[id] = message.payload }
            }
        }
        defer { reader.cancel() }
        await client.start()
        var last = (count: 0, at: ContinuousClock.now)
        _ = await waitUntil(seconds) {
            let now = held.withLock { $0.count }
            if now != last.count { last = (now, .now) }
            let settled = quiet.map { now > 0 && ContinuousClock.now - last.at > .seconds($0) } ?? false
            return now >= count || settled
        }
        return held.withLock { $0 }
    }

    /// The identifiers every node holds retained, once all hold the same (a restarted node catches up from
    /// the stream's leader), or nil when they still differ after `seconds`.
    static func agreedRetainedGeofences(
        _ cluster: LocalNATSCluster, count: Int, within seconds: Double = 90
    ) async throws -> Set<String>? {
        let start = ContinuousClock.now
        repeat {
            var sets: [[String: [UInt8]]] = []
            for port in cluster.mqttPorts {
                sets.append(try await retainedGeofences(port: port, count: count, quiet: 3))
            }
            if sets.allSatisfy({ $0 == sets[0] }) { return Set(sets[0].keys) }
            try await Task.sleep(for: .seconds(1))
        } while ContinuousClock.now - start < .seconds(seconds)
        return nil
    }

    static let manifestTopic = "fleet/test/manifests/geofences"

    /// The manifest of a set of geofences as `push` publishes it.
    static func manifest(_ set: [(String, [UInt8])]) -> [UInt8] {
        GeofenceManifest(geofences: Dictionary(set.map { ($0.0, GeofenceDigest.of($0.1)) }) { _, last in last }).payload
    }

    /// What the agent's status says of its geofences against their manifest.
    static func geofenceSet(_ agent: AgentFixture) -> String? { agent.status?["geofenceSet"] as? String }

    /// A FeatureCollection's features as an operator pushes them: identifier and the Feature's JSON.
    static func features(_ file: URL) throws -> [(String, [UInt8])] {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any]
        let features = object?["features"] as? [[String: Any]] ?? []
        return try features.map { ($0["id"] as? String ?? "", Array(try JSONSerialization.data(withJSONObject: $0))) }
    }

    /// The identifiers the agent holds, as `geofence-agent status --json` reads them from its store.
    static func heldIdentifiers(_ agent: AgentFixture) -> Set<String> {
        guard let result = try? AgentBinary.run(["status", "--config", agent.configURL.path, "--json"]),
            let line = result.lines.last,
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let conditions = object["conditions"] as? [[String: Any]]
        else { return [] }
        return Set(conditions.compactMap { $0["identifier"] as? String })
    }
}

/// How many of its changes the operator has made, for a fault that hits in the middle of them.
final class PushProgress: Sendable {
    private let made = Mutex(0)
    func step() { made.withLock { $0 += 1 } }
    var count: Int { made.withLock { $0 } }
}
