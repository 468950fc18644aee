import AgentTestSupport
import Foundation
import LocalServers
import Logging
import Mosquitto
import SQLite
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 20's rules through the real agent and a real broker, on the synthetic drive (three passes along
/// 10 km of 52° N from 2026-01-01T00:00:00Z, a fix a second): a geofence that expires mid-drive, one
/// deleted over MQTT while the vehicle is inside, one that notifies only its exits, a 50 km/h speed zone
/// the vehicle crosses at 90 km/h, and one whose schedule opens mid-drive.
@Suite(.offTheCooperativePool(.waiting)) struct ConditionRulesAgentTests {
    /// A circle around the whole drive, so that the vehicle is inside from the first fix.
    static func everywhere(_ id: String, _ extra: String = "") -> String {
        let lon = 5.0 + 5125 / SyntheticDrive.metresPerDegreeLongitude
        return
            #"{"type":"Feature","id":"\#(id)","geometry":{"type":"Point","coordinates":[\#(lon),52.0]},"properties":{"radius":6000\#(extra)}}"#
    }

    @Test func expiryDeletionNotifySpeedZoneAndScheduleAsPublished() async throws {
        let broker = try LocalMosquitto()
        try broker.start()
        defer { broker.stop() }
        let logger = Logger(label: "test.operator") { _ in SwiftLogNoOpLogHandler() }
        let operatorClient = try MQTTClient(
            configuration: MQTTConfiguration(port: broker.port, clientID: "operator"), logger: logger)
        await operatorClient.start()
        _ = try await operatorClient.publish(
            "fleet/test/geofences/zone", text: Self.everywhere("zone", #","name":"Zone""#), retain: true)
        let dashboard = try await EventSubscriber(port: broker.port)

        // "quiet" is the drive's 10th circle, asking for its exits only.
        let quietLon = 5.0 + 10 * SyntheticDrive.spacing / SyntheticDrive.metresPerDegreeLongitude
        // "slow" spans 2 km of the drive from x = 6 km: 80 s inside at 25 m/s on each pass.
        let slowLon = 5.0 + 7000 / SyntheticDrive.metresPerDegreeLongitude
        let conditions = """
            {"type":"FeatureCollection","features":[
            \(Self.everywhere("expiring", #","expires":"2026-01-01T01:05:00+01:00""#)),
            \(Self.everywhere("hours", #","schedule":{"timeZone":"Europe/Amsterdam","windows":[{"days":["thu"],"from":"01:10","to":"01:15"}]}"#)),
            {"type":"Feature","id":"quiet","geometry":{"type":"Point","coordinates":[\(quietLon),52.0]},"properties":{"radius":40,"notify":["exit"]}},
            {"type":"Feature","id":"slow","geometry":{"type":"Point","coordinates":[\(slowLon),52.0]},"properties":{"radius":1000,"speedLimit":50,"name":"Slow"}}
            ]}
            """
        let agent = try AgentFixture(brokerPort: broker.port, speedFactor: 40)
        try conditions.write(
            to: agent.directory.appendingPathComponent("conditions.geojson"), atomically: true, encoding: .utf8)
        try agent.start()
        defer { agent.kill(signal: SIGKILL) }

        func events(_ id: String) -> [[String: Any]] { dashboard.unique.filter { $0["identifier"] as? String == id } }
        // The expiry comes at 00:05 on the drive's timeline, with its exit dated then.
        #expect(await waitUntil(60) { !events("expiring").isEmpty })
        let expired = try #require(events("expiring").first)
        #expect(expired["event"] as? String == "exit" && expired["reason"] as? String == "expired", "\(expired)")
        #expect(expired["time"] as? String == "2026-01-01T00:05:00.000Z", "\(expired)")

        // Deleting the retained geofence while the vehicle is inside publishes its exit.
        #expect(events("zone").isEmpty)
        _ = try await operatorClient.publish("fleet/test/geofences/zone", payload: [], retain: true)
        #expect(await waitUntil(60) { !events("zone").isEmpty })
        let removed = try #require(events("zone").first)
        #expect(
            removed["event"] as? String == "exit" && removed["reason"] as? String == "removed"
                && removed["name"] as? String == "Zone", "\(removed)")

        #expect(agent.waitForExit(within: 90), "the replay ends the agent")
        // Three passes through "quiet": three exits and not one enter. Each event once.
        #expect(events("quiet").map { $0["event"] as? String } == ["exit", "exit", "exit"], "\(events("quiet"))")
        #expect(events("expiring").count == 1 && events("zone").count == 1, "\(dashboard.unique)")
        // The schedule opened at 00:10 UTC (01:10 in Amsterdam) with the vehicle inside, and closed at 00:15.
        let hours = events("hours")
        #expect(
            hours.map { "\($0["event"] as? String ?? "") \($0["state"] as? String ?? "")" } == [
                "active satisfied", "inactive satisfied",
            ], "\(hours)")
        #expect((hours.first?["time"] as? String)?.hasPrefix("2026-01-01T00:10:0") == true, "\(hours)")
        // Each pass through the speed zone: enter, overspeed after 10 s, exit, and the overspeed's end.
        let slow = events("slow")
        #expect(
            slow.map { $0["event"] as? String ?? "" }
                == Array(repeating: ["enter", "overspeed", "exit", "overspeedEnded"], count: 3).flatMap { $0 },
            "\(slow)")
        let overspeed = try #require(
            slow.first { $0["event"] as? String == "overspeed" }?["overspeed"] as? [String: Any])
        #expect(overspeed["limit"] as? Double == 50 && (overspeed["peakSpeed"] as? Double ?? 0) > 85, "\(overspeed)")
        let ended = try #require(
            slow.first { $0["event"] as? String == "overspeedEnded" }?["overspeed"] as? [String: Any])
        #expect((ended["duration"] as? Double ?? 0) > 60 && (ended["distance"] as? Double ?? 0) > 1500, "\(ended)")
        // Both are gone from the store; "quiet" is there and was tracked all along.
        let rows = try Database(path: agent.storePath, create: false, readOnly: true).statement(
            "SELECT identifier FROM conditions ORDER BY identifier")
        var identifiers: [String] = []
        while try rows.step() { identifiers.append(rows.text(0) ?? "") }
        #expect(identifiers == ["hours", "quiet", "slow"])

        // `simulate` on the same drive and conditions shows every event the agent published for them
        // (it also shows each condition's first state, which the agent keeps to its status).
        let simulated = try AgentBinary.run([
            "simulate", "--conditions", agent.directory.appendingPathComponent("conditions.geojson").path,
            "--track", agent.directory.appendingPathComponent("drive.gpx").path, "--accuracy", "5",
        ])
        #expect(simulated.status == 0, "\(simulated.stderr)")
        func key(_ e: [String: Any]) -> String {
            "\(e["identifier"] as? String ?? "") \(e["event"] as? String ?? "") \(e["time"] as? String ?? "")"
        }
        let fromSimulate = simulated.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        .filter { $0["event"] as? String != "initial" }.map(key)
        let fromAgent = dashboard.unique.filter { $0["identifier"] as? String != "zone" }.map(key)
        #expect(fromSimulate.sorted() == fromAgent.sorted(), "simulate \(fromSimulate)\nagent \(fromAgent)")
        await dashboard.stop()
        await operatorClient.shutdown()
    }
}
