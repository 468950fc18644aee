import AgentTestSupport
import Foundation
import GeofenceCore
import ReceiverSimulation
import TestSupport
import Testing

/// `geofence-agent trips --gpx` and `simulate --trips`: a recorded drive's trips and stops, as the agent
/// would publish them.
@Suite(.offTheCooperativePool(.waiting)) struct TripsCommandTests {
    /// Three legs: a light after the first, a 10-minute stop after the second; parked 7 minutes at the end.
    static let drive = StopAndGoDrive(legs: [
        .init(distance: 1500, cruise: 14, park: 45), .init(distance: 2200, cruise: 17, park: 600),
        .init(distance: 1800, cruise: 12, park: 420),
    ])

    static func gpxFile() throws -> URL {
        let fixes = drive.fixes(SimulatedReceiver.Profile(accuracy: 3, correlationTime: 20), seed: 4)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("trips-\(UUID().uuidString).gpx")
        try GPXWriter.track(fixes).write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    @Test func tripsPrintsEachTripAndStopAsTheTopicWould() throws {
        let gpx = try Self.gpxFile()
        defer { try? FileManager.default.removeItem(at: gpx) }
        let r = try AgentBinary.run(["trips", "--gpx", gpx.path, "--accuracy", "3"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = try r.lines.map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(
            lines.map { $0["event"] as? String ?? "" } == [
                "stopStarted", "stopEnded", "tripStarted", "tripEnded", "stopStarted", "stopEnded", "tripStarted",
                "tripEnded", "stopStarted",
            ])
        let trips = lines.compactMap { $0["event"] as? String == "tripEnded" ? $0["trip"] as? [String: Any] : nil }
        let distances = trips.compactMap { $0["distance"] as? Double }
        // The light does not split the first trip: 1.5 + 2.2 km, then 1.8 km, within 1%.
        #expect(distances.count == 2)
        for (got, want) in zip(distances, [3700.0, 1800]) {
            #expect(abs(got - want) / want < 0.01, "\(got) vs \(want)")
        }
        let lastStop = try #require(lines.last?["stop"] as? [String: Any])
        #expect(lastStop["departure"] is NSNull && lastStop["duration"] is NSNull)
        #expect(r.stderr.contains("parked at the end"))
    }

    @Test func simulateWithTripsAddsThemToTheEvents() throws {
        let gpx = try Self.gpxFile()
        defer { try? FileManager.default.removeItem(at: gpx) }
        let plain = try AgentBinary.run([
            "simulate", "--conditions", AgentBinary.fixture("ijsselmeer.geojson"), "--track", gpx.path,
        ])
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(!plain.stdout.contains("tripEnded"))
        let r = try AgentBinary.run([
            "simulate", "--conditions", AgentBinary.fixture("ijsselmeer.geojson"), "--track", gpx.path, "--trips",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.lines.filter { $0.contains(#""event":"tripEnded""#) }.count == 2)
    }

    @Test func aBadThresholdIsRefusedWithItsName() throws {
        let r = try AgentBinary.run(["trips", "--gpx", "x.gpx", "--minimal-trip-distance", "-5"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("--minimal-trip-distance must be a non-negative number"))
    }
}
