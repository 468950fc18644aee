import AgentTestSupport
import Foundation
import GeofenceAgent
import GeofenceCore
import TestSupport
import Testing

@testable import AgentFormats

/// A GPX track as a location source, as Xcode replays one.
@Suite(.offTheCooperativePool(.waiting)) struct GPXReplayTests {
    @Test func replaysEveryPointInOrderAtTheSpeedFactor() async throws {
        let replay = try GPXReplay(path: AgentBinary.fixture("ijsselmeer-sail.gpx"), speedFactor: 100)
        let span = replay.locations.last!.timestamp.timeIntervalSince(replay.locations.first!.timestamp)
        #expect(replay.points.count == 148 && span == 147)
        let started = ContinuousClock.now
        var received: [Location] = []
        for await location in replay.stream() { received.append(location) }
        let took = ContinuousClock.now - started
        #expect(received == replay.locations)
        #expect(received.map(\.coordinate.latitude) == replay.points.map(\.latitude))
        // 147 s of sailing at 100x: 1.47 s, not sooner. No upper bound: on a loaded 2-core CI machine the
        // cooperative pool may be busy elsewhere, and deadlines are absolute, so lateness never accumulates.
        #expect(took >= .seconds(1.4), "took \(took)")
    }

    @Test func feedsLiveUpdates() async throws {
        let replay = try GPXReplay(path: AgentBinary.fixture("ijsselmeer-sail.gpx"), speedFactor: 1000)
        var policy = LiveUpdatePolicy()
        policy.distanceFilter = 50
        policy.minimumInterval = 0
        var updates: [LiveUpdate] = []
        for await update in LocationUpdates.liveUpdates(policy: policy, from: replay.stream()) {
            updates.append(update)
        }
        #expect(updates.count > 3)
        for (a, b) in zip(updates, updates.dropFirst()) {
            #expect(
                Geodesic.distance(a.location.coordinate, b.location.coordinate) >= 50
                    || b.isStationary != a.isStationary)
        }
        #expect(updates.allSatisfy { !$0.isStationary }, "a boat sailing at 3 m/s is not at rest")
    }

    @Test func refusesNonsense() throws {
        #expect(throws: AgentError.self) {
            try GPXReplay(path: AgentBinary.fixture("ijsselmeer-sail.gpx"), speedFactor: 0)
        }
        #expect(throws: AgentError.self) { try GPXReplay(points: [], speedFactor: 1) }
    }
}
