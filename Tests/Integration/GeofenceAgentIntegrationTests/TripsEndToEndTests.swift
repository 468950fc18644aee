import AgentTestSupport
import Foundation
import GeofenceCore
import LocalServers
import ReceiverSimulation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 33 end to end: a drive with a light and a stop, as NMEA through a real gpsd, the agent killed
/// with SIGKILL mid-trip and started again on its store: every trip and stop event arrives once on
/// `trips`, and the trip goes on rather than splitting in two.
@Suite(.offTheCooperativePool(.waiting)) struct TripsEndToEndTests {
    /// Parked 400 s; 3 km; a 45 s light; straight on for 2.5 km; parked 7 minutes.
    static let drive = StopAndGoDrive(legs: [
        .init(distance: 3000, cruise: 15, park: 45, turn: 0), .init(distance: 2500, cruise: 15, park: 420),
    ])

    @Test func aKillMidTripLosesNoEventAndDoesNotSplitTheTrip() async throws {
        let accuracy = 2.5
        let fixes = Self.drive.fixes(SimulatedReceiver.Profile(accuracy: accuracy, correlationTime: 20), seed: 33)
        let sentences = fixes.map { f in
            NMEA.epoch(
                latitude: f.coordinate.latitude, longitude: f.coordinate.longitude, time: f.timestamp,
                speedKnots: f.speed * 3600 / 1852, course: max(f.course, 0), sigma: accuracy / 2.0.squareRoot())
        }
        // A minute into the second leg, after the light.
        let cut = Int(Self.drive.legTimes[1].start.timeIntervalSince(Self.drive.start)) + 60

        let broker = try LocalMosquitto.started()
        defer { broker.stop() }
        let trips = try await EventSubscriber(port: broker.port, topic: "fleet/test/vehicles/v1/trips")
        let feed = try NMEAFeed(sentences: sentences, interval: 0.001)
        feed.pause(atLine: cut)
        defer { feed.stop() }
        let (gpsd, agent) = try AgentFixture.onGPSD(feed: feed, brokerPort: broker.port) { $0["conditions"] = nil }
        defer { gpsd.stop() }
        try agent.start()
        defer { agent.kill(signal: SIGKILL) }

        let names = { trips.unique.map { $0["event"] as? String ?? "" } }
        #expect(await waitUntil(120) { feed.linesSent == cut }, "\(agent.log.suffix(2000))")
        #expect(await waitUntil(60) { names().contains("tripStarted") }, "\(names()) \(agent.log.suffix(2000))")
        // What gpsd had of the drive reaches the agent, then the agent dies without a word.
        try await Task.sleep(for: .seconds(2))
        agent.kill(signal: SIGKILL)
        #expect(agent.waitForExit(within: 10))
        try agent.start()
        // gpsd sends a client only what arrives after its WATCH: the rest of the drive waits until the new
        // agent is connected and has heard nothing for its no-data timeout (on a busy machine the start can
        // outlast the whole rest of the feed).
        let restarted = agent.pid.map(Int.init)
        #expect(
            await waitUntil(60) {
                guard let status = agent.status, status["pid"] as? Int == restarted else { return false }
                return (status["gps"] as? [String: Any])?["state"] as? String == "noData"
            }, "\(agent.log.suffix(2000))")
        feed.resume()

        #expect(
            await waitUntil(120) { names().filter { $0 == "stopStarted" }.count == 2 },
            "\(names()) \(agent.log.suffix(2000))")
        try await Task.sleep(for: .seconds(1))
        #expect(agent.terminate(within: 10) != nil)
        #expect(names() == ["stopStarted", "stopEnded", "tripStarted", "tripEnded", "stopStarted"], "\(names())")
        let trip = try #require(trips.unique.first { $0["event"] as? String == "tripEnded" }?["trip"] as? [String: Any])
        let distance = try #require(trip["distance"] as? Double)
        // The phase was last stored when the trip began, 4 minutes before the kill: the resumed trip adds the
        // straight line from there to its first fix, which on this straight road is the way driven.
        let truth = 5500.0
        print("trips end to end: the trip across the kill measured \(distance) m of \(truth)")
        #expect(abs(distance - truth) / truth < 0.01, "\(distance) m of \(truth)")
        #expect(
            trip["start"] as? String
                == trips.unique.first { $0["event"] as? String == "tripStarted" }.flatMap {
                    ($0["trip"] as? [String: Any])?["start"] as? String
                })
        await trips.stop()
    }
}
