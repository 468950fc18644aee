import AgentJobs
import AgentTestSupport
import AgentTesting
import Foundation
import Mosquitto
import SQLite
import TestSupport
import Testing

@testable import GeofenceAgent

/// The conditions' rules through the whole agent in process, on the synthetic drive (three passes along
/// 10 km of 52° N from 2026-01-01T00:00:00Z, a fix a second, replayed at 400x): a geofence that expires
/// mid-drive, one deleted over MQTT while the vehicle is inside, one that notifies only its exits, a 50 km/h
/// speed zone the vehicle crosses at 90 km/h, and one whose schedule opens mid-drive.
@Suite(.offTheCooperativePool(.agentsPool)) struct ConditionRulesAgentTests {
    /// A circle around the whole drive, so that the vehicle is inside from the first fix.
    static func everywhere(_ id: String, _ extra: String = "") -> String {
        let lon = 5.0 + 5125 / SyntheticDrive.metresPerDegreeLongitude
        return
            #"{"type":"Feature","id":"\#(id)","geometry":{"type":"Point","coordinates":[\#(lon),52.0]},"properties":{"radius":6000\#(extra)}}"#
    }

    static func object(_ message: MQTTMessage) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(message.payload))) as? [String: Any] ?? [:]
    }

    @Test func expiryDeletionNotifySpeedZoneAndScheduleAsPublished() async throws {
        // "quiet" is the drive's 10th circle, asking for its exits only.
        let quietLon = 5.0 + 10 * SyntheticDrive.spacing / SyntheticDrive.metresPerDegreeLongitude
        // "slow" spans 2 km of the drive from x = 6 km: 80 s inside at 25 m/s on each pass.
        let slowLon = 5.0 + 7000 / SyntheticDrive.metresPerDegreeLongitude
        let drive = try SyntheticDriveFiles(
            conditions: """
                {"type":"FeatureCollection","features":[
                \(Self.everywhere("expiring", #","expires":"2026-01-01T01:05:00+01:00""#)),
                \(Self.everywhere("hours", #","schedule":{"timeZone":"Europe/Amsterdam","windows":[{"days":["thu"],"from":"01:10","to":"01:15"}]}"#)),
                {"type":"Feature","id":"quiet","geometry":{"type":"Point","coordinates":[\(quietLon),52.0]},"properties":{"radius":40,"notify":["exit"]}},
                {"type":"Feature","id":"slow","geometry":{"type":"Point","coordinates":[\(slowLon),52.0]},"properties":{"radius":1000,"speedLimit":50,"name":"Slow"}}
                ]}
                """)
        defer { drive.remove() }

        try await withTestAgent { configuration in
            configuration.conditionsFile = drive.conditions
            configuration.replay = .init(gpx: drive.gpx, speedFactor: 400)
        } _: { agent in
            agent.push(geofence: "zone", feature: Self.everywhere("zone", #","name":"Zone""#))
            // Each event once, by its id.
            func unique() -> [[String: Any]] {
                var seen: Set<String> = []
                return agent.messages("events").map(Self.object).filter {
                    seen.insert($0["eventId"] as? String ?? "").inserted
                }
            }
            func events(_ id: String) -> [[String: Any]] { unique().filter { $0["identifier"] as? String == id } }
            // The expiry comes at 00:05 on the drive's timeline, with its exit dated then.
            _ = await agent.messages("events", within: 60) { _ in !events("expiring").isEmpty }
            let expired = try #require(events("expiring").first)
            #expect(expired["event"] as? String == "exit" && expired["reason"] as? String == "expired", "\(expired)")
            #expect(expired["time"] as? String == "2026-01-01T00:05:00.000Z", "\(expired)")

            // Deleting the retained geofence while the vehicle is inside publishes its exit.
            #expect(events("zone").isEmpty)
            agent.push(geofence: "zone", feature: "")
            _ = await agent.messages("events", within: 60) { _ in !events("zone").isEmpty }
            let removed = try #require(events("zone").first)
            #expect(
                removed["event"] as? String == "exit" && removed["reason"] as? String == "removed"
                    && removed["name"] as? String == "Zone", "\(removed)")

            // The drive's end: three passes through "slow", each with its overspeed's end.
            _ = await agent.messages("events", within: 90) { _ in
                events("slow").filter { $0["event"] as? String == "overspeedEnded" }.count >= 3
            }
            // Three passes through "quiet": three exits and not one enter. Each event once.
            #expect(events("quiet").map { $0["event"] as? String } == ["exit", "exit", "exit"], "\(events("quiet"))")
            #expect(events("expiring").count == 1 && events("zone").count == 1, "\(unique())")
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
            #expect(
                overspeed["limit"] as? Double == 50 && (overspeed["peakSpeed"] as? Double ?? 0) > 85, "\(overspeed)")
            let ended = try #require(
                slow.first { $0["event"] as? String == "overspeedEnded" }?["overspeed"] as? [String: Any])
            #expect((ended["duration"] as? Double ?? 0) > 60 && (ended["distance"] as? Double ?? 0) > 1500, "\(ended)")

            // Both are gone from the store; "quiet" is there and was tracked all along.
            let rows = try Database(path: agent.configuration.storePath, create: false, readOnly: true).statement(
                "SELECT identifier FROM conditions ORDER BY identifier")
            var identifiers: [String] = []
            while try rows.step() { identifiers.append(rows.text(0) ?? "") }
            #expect(identifiers == ["hours", "quiet", "slow"])

            // `simulate` on the same drive and conditions shows every event the agent published for them
            // (it also shows each condition's first state, which the agent keeps to its status).
            func key(_ e: [String: Any]) -> String {
                "\(e["identifier"] as? String ?? "") \(e["event"] as? String ?? "") \(e["time"] as? String ?? "")"
            }
            let fromSimulate = try drive.simulatedEvents().map(key)
            let fromAgent = unique().filter { $0["identifier"] as? String != "zone" }.map(key)
            #expect(fromSimulate.sorted() == fromAgent.sorted(), "simulate \(fromSimulate)\nagent \(fromAgent)")
        }
    }
}
