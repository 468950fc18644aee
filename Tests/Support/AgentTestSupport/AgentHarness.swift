import AgentFormats
import Foundation
import GeofenceAgent
import GeofenceStore
import LocalServers
import Logging
import Mosquitto
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A drive built for the fault tests: three passes along a line of 40 small circles, 1 fix per second at
/// 25 m/s, so that every pass enters and leaves every circle (240 transitions in all).
package enum SyntheticDrive {
    package static let circles = 40
    package static let spacing = 250.0
    package static let radius = 40.0
    package static let speed = 25.0
    package static let passes = 3
    package static let metresPerDegreeLongitude = 111_320.0 * cos(52.0 * .pi / 180)

    package static var gpx: String { gpx(leadIn: 0) }

    /// The drive after `leadIn` seconds standing at its start, outside every circle: an agent that takes its
    /// geofences from the broker holds them before the first transition. The transitions keep their times.
    package static func gpx(leadIn: Int) -> String {
        let length = Double(circles + 1) * spacing
        let perPass = Int(length / speed)
        var points: [String] = []
        let start = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01
        for k in stride(from: leadIn, to: 0, by: -1) {
            let at = iso8601(start.addingTimeInterval(-Double(k)))
            points.append(#"<trkpt lat="52.0" lon="5.0"><time>\#(at)</time></trkpt>"#)
        }
        var t = start
        for pass in 0..<passes {
            for k in 0...perPass {
                let x = pass % 2 == 0 ? Double(k) * speed : length - Double(k) * speed
                let lon = 5.0 + x / metresPerDegreeLongitude
                points.append(#"<trkpt lat="52.0" lon="\#(lon)"><time>\#(iso8601(t))</time></trkpt>"#)
                t = t.addingTimeInterval(1)
            }
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="geofence-agent tests" xmlns="http://www.topografix.com/GPX/1/1">
            <trk><name>synthetic</name><trkseg>
            \(points.joined(separator: "\n"))
            </trkseg></trk></gpx>
            """
    }

    package static var conditions: String {
        let features = (1...circles).map { k -> String in
            let lon = 5.0 + Double(k) * spacing / metresPerDegreeLongitude
            return
                #"{"type":"Feature","id":"c\#(k)","geometry":{"type":"Point","coordinates":[\#(lon),52.0]},"properties":{"radius":\#(radius),"name":"Circle \#(k)"}}"#
        }
        return #"{"type":"FeatureCollection","features":[\#(features.joined(separator: ","))]}"#
    }
}

/// One agent configuration in its own directory, and the agent process run from it, stopped by PID.
package final class AgentFixture: @unchecked Sendable {
    package let directory: URL
    package let brokerPort: Int
    package private(set) var pid: pid_t?

    package init(brokerPort: Int, speedFactor: Double, extra: (inout [String: Any]) -> Void = { _ in }) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("agent-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.brokerPort = brokerPort
        try SyntheticDrive.gpx.write(
            to: directory.appendingPathComponent("drive.gpx"), atomically: true, encoding: .utf8)
        try SyntheticDrive.conditions.write(
            to: directory.appendingPathComponent("conditions.geojson"), atomically: true, encoding: .utf8)
        var config: [String: Any] = [
            "fleet": "test", "vehicle": "v1",
            "mqtt": ["host": "127.0.0.1", "port": brokerPort],
            "store": ["path": "state/agent.sqlite"],
            "conditions": ["file": "conditions.geojson"],
            "replay": ["gpx": "drive.gpx", "speedFactor": speedFactor, "exitAtEnd": true],
            // Off unless a test is about them: loading the gazetteer costs a debug build seconds of CPU,
            // which every parallel test would share. EndToEndTests turns them on.
            "places": ["enabled": false],
        ]
        extra(&config)
        try JSONSerialization.data(withJSONObject: config, options: [.prettyPrinted]).write(to: configURL)
    }

    deinit {
        kill(signal: SIGKILL)
        try? FileManager.default.removeItem(at: directory)
    }

    package var configURL: URL { directory.appendingPathComponent("config.json") }
    package var storePath: String { directory.appendingPathComponent("state/agent.sqlite").path }
    package var logPath: String { directory.appendingPathComponent("agent.log").path }
    package var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// An agent (not yet started) on a real gpsd, started, that reads `feed` (a receiver on a TCP port);
    /// `extra` changes the agent's configuration further. Stop the returned gpsd when done.
    package static func onGPSD(
        feed: NMEAFeed, brokerPort: Int, extra: (inout [String: Any]) -> Void = { _ in }
    ) throws -> (gpsd: LocalGPSD, agent: AgentFixture) {
        let gpsd = try LocalGPSD(sources: [feed.url])
        try gpsd.start()
        let agent = try AgentFixture(brokerPort: brokerPort, speedFactor: 1) { config in
            config["replay"] = nil
            config["gpsd"] = ["host": "127.0.0.1", "port": gpsd.port]
            extra(&config)
        }
        return (gpsd, agent)
    }

    package func start() throws {
        pid = try LocalProcess.spawn(
            AgentBinary.url.path, ["run", "--config", configURL.path, "--log-level", "info"],
            standardOutput: logPath, standardError: logPath)
    }

    /// Sends a signal and reaps the process.
    package func kill(signal: Int32) {
        guard let pid else { return }
        self.pid = nil
        Glibc.kill(pid, signal)
        if !LocalProcess.reap(pid, within: 15) {
            Glibc.kill(pid, SIGKILL)
            _ = LocalProcess.reap(pid, within: 5)
        }
    }

    /// Sends SIGTERM and returns the seconds until the process ended, or nil when it had not within
    /// `seconds` (it is then killed).
    package func terminate(within seconds: Double) -> Double? {
        guard let pid else { return nil }
        self.pid = nil
        let start = ContinuousClock.now
        Glibc.kill(pid, SIGTERM)
        guard LocalProcess.reap(pid, within: seconds) else {
            Glibc.kill(pid, SIGKILL)
            _ = LocalProcess.reap(pid, within: 5)
            return nil
        }
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    package var statusPath: String { StorePaths(storePath).status }

    /// The agent's status file, when there is one.
    package var status: [String: Any]? {
        (try? Data(contentsOf: URL(fileURLWithPath: statusPath))).flatMap {
            try? JSONSerialization.jsonObject(with: $0) as? [String: Any]
        }
    }

    /// Waits for the agent to exit by itself (the replay ended); false if it did not within `seconds`.
    package func waitForExit(within seconds: Double) -> Bool {
        guard let pid else { return true }
        if LocalProcess.reap(pid, within: seconds) {
            self.pid = nil
            return true
        }
        return false
    }
}

/// A test's own client of a broker (a dashboard, an operator): quick to retry, and with `failover` the other
/// nodes of a cluster, which share its session, to move to after 2 s without its own.
package func testClientConfiguration(
    port: Int, clientID: String, protocolVersion: MQTTConfiguration.ProtocolVersion, failover: [Int] = []
) -> MQTTConfiguration {
    var configuration = MQTTConfiguration(port: port, clientID: clientID)
    configuration.protocolVersion = protocolVersion
    configuration.failover = failover.map { MQTTBroker(host: "127.0.0.1", port: $0) }
    configuration.sharedSession = true
    if !failover.isEmpty { configuration.connectTimeout = 2 }
    configuration.minimumRetryDelay = 0.2
    configuration.maximumRetryDelay = 1
    return configuration
}

/// A dashboard on a persistent session: every event the vehicle publishes, duplicates included (or every
/// message on `topic`, a filter, with the topic each came on).
package final class EventSubscriber: Sendable {
    package let client: MQTTClient
    private let received = Mutex<[(topic: String, payload: Data)]>([])
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// With `failover`, the other nodes of a cluster (one session for the cluster) it moves to when its own is gone.
    package init(
        port: Int, topic: String = "fleet/test/vehicles/v1/events",
        protocolVersion: MQTTConfiguration.ProtocolVersion = .v5, failover: [Int] = []
    ) async throws {
        let configuration = testClientConfiguration(
            port: port, clientID: "test-dashboard-\(UUID().uuidString.prefix(8))", protocolVersion: protocolVersion,
            failover: failover)
        client = try MQTTClient(
            configuration: configuration, logger: Logger(label: "test.dashboard") { _ in SwiftLogNoOpLogHandler() })
        await client.start()
        // Connected first, so that `subscribe` returns once the broker has granted it (a busy machine can
        // take a while to connect; a subscription made before that is only sent on connect).
        _ = await waitUntil(60) { self.client.status.isConnected }
        let subscription = try await client.subscribe(topic)
        let t = Task { [self] in
            for await message in subscription {
                let data = Data(message.payload)
                received.withLock { $0.append((message.topic, data)) }
            }
        }
        task.withLock { $0 = t }
    }

    package var events: [[String: Any]] {
        received.withLock { $0 }.compactMap { try? JSONSerialization.jsonObject(with: $0.payload) as? [String: Any] }
    }

    /// Every message in arrival order, its topic and its payload as a JSON object (nil if not one).
    package var messages: [(topic: String, object: [String: Any]?)] {
        received.withLock { $0 }.map {
            ($0.topic, try? JSONSerialization.jsonObject(with: $0.payload) as? [String: Any])
        }
    }

    package var count: Int { received.withLock { $0.count } }

    /// Every message in arrival order, its topic and its payload's bytes.
    package var payloads: [(topic: String, payload: [UInt8])] {
        received.withLock { $0 }.map { ($0.topic, Array($0.payload)) }
    }

    /// Each message's size in bytes, in arrival order.
    package var sizes: [Int] { received.withLock { $0.map(\.payload.count) } }

    /// First copy of each event id, in arrival order.
    package var unique: [[String: Any]] {
        var seen: Set<String> = []
        return events.filter { seen.insert($0["eventId"] as? String ?? "").inserted }
    }

    package func stop() async {
        await client.shutdown()
        task.withLock { $0?.cancel() }
    }
}

/// The transitions the engine produces for the synthetic drive, from `simulate` (the same state machine).
package func expectedTransitions(in fixture: AgentFixture) throws -> [(identifier: String, event: String, time: String)]
{
    let result = try AgentBinary.run([
        "simulate", "--conditions", fixture.directory.appendingPathComponent("conditions.geojson").path,
        "--track", fixture.directory.appendingPathComponent("drive.gpx").path,
    ])
    return try result.lines.compactMap { line in
        guard let o = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let event = o["event"] as? String,
            event != "initial"
        else { return nil }
        return (o["identifier"] as! String, event, o["time"] as! String)
    }
}

/// Events grouped per condition, as (event, time) in order.
package func perCondition(_ list: [(identifier: String, event: String, time: String)]) -> [String: [String]] {
    var out: [String: [String]] = [:]
    for e in list { out[e.identifier, default: []].append("\(e.event)@\(e.time)") }
    return out
}

package func perCondition(_ events: [[String: Any]]) -> [String: [String]] {
    perCondition(
        events.map { ($0["identifier"] as? String ?? "", $0["event"] as? String ?? "", $0["time"] as? String ?? "") })
}

package func waitUntil(_ seconds: Double, _ condition: () -> Bool) async -> Bool {
    let end = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < end {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return condition()
}
