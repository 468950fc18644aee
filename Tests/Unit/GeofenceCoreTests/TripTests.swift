import Foundation
import PropertyBased
import ReceiverSimulation
import TestSupport
import Testing

@testable import GeofenceCore

/// Issue 33: trips and stops from the fixes, against drives whose stops are known, under the project's
/// correlated receiver noise, with and without multipath jumps.
@Suite(.offTheCooperativePool(.computing)) struct TripTests {
    static let receiver = SimulatedReceiver.Profile(accuracy: 3, correlationTime: 20, underReportingRate: 0.1)

    static func drive(_ rng: inout SplitMix64) -> StopAndGoDrive { StopAndGoDrive.errands(&rng) }

    struct Found {
        var stops: [Stop] = []
        var trips: [Trip] = []
        var events: [TripEvent] = []
    }

    static func run(_ fixes: [Location], configuration: MonitorConfiguration = MonitorConfiguration()) -> Found {
        var monitors = MonitorSet(configuration: configuration)
        var found = Found()
        for fix in fixes {
            for event in monitors.process(fix).tripEvents {
                found.events.append(event)
                switch event {
                case .stopStarted(let s): found.stops.append(s)
                case .stopEnded(let s): found.stops[found.stops.count - 1] = s
                case .tripEnded(let t): found.trips.append(t)
                case .tripStarted: break
                }
            }
        }
        return found
    }

    /// Checks what was found against the drive's truth; returns the odometer's worst relative error.
    @discardableResult
    static func expectTruth(_ found: Found, _ drive: StopAndGoDrive, _ label: String) -> Double {
        let truth = drive.truth(minimalParking: TripSettings().minimalParkingDuration)
        #expect(
            found.stops.count == truth.stops.count, "\(label): \(found.stops.count) stops, truly \(truth.stops.count)")
        #expect(
            found.trips.count == truth.trips.count, "\(label): \(found.trips.count) trips, truly \(truth.trips.count)")
        guard found.stops.count == truth.stops.count, found.trips.count == truth.trips.count else { return .infinity }
        // Fixes come once a second: the first that can see an arrival or a departure is the first at or
        // after it, and the answer must be within one fix of that.
        func firstFix(after t: Date) -> Date {
            drive.start.addingTimeInterval(t.timeIntervalSince(drive.start).rounded(.up))
        }
        for (k, (stop, want)) in zip(found.stops, truth.stops).enumerated() {
            // The first stop began before the first fix.
            if k > 0 {
                let error = abs(stop.arrival.timeIntervalSince(firstFix(after: want.arrival)))
                #expect(error <= 1, "\(label): stop \(k) arrival \(stop.arrival) vs \(want.arrival)")
            }
            if let departure = want.departure {
                let got = stop.departure ?? .distantPast
                let error = abs(got.timeIntervalSince(firstFix(after: departure)))
                #expect(error <= 1, "\(label): stop \(k) departure \(got) vs \(departure)")
            } else {
                #expect(stop.departure == nil, "\(label): the last stop goes on")
            }
        }
        var worst = 0.0
        for (k, (trip, distance)) in zip(found.trips, truth.trips).enumerated() {
            let error = abs(trip.distance - distance) / distance
            worst = max(worst, error)
            #expect(error < 0.01, "\(label): trip \(k) \(trip.distance) m, truly \(distance) m")
            #expect(trip.start == found.stops[k].departure && trip.end == found.stops[k + 1].arrival)
        }
        return worst
    }

    @Test func aDriveWithKnownStopsGivesThemAtTheirTimesAndTheTripsTheirDistances() async {
        await propertyCheck(count: 16, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var rng = SplitMix64(seed: UInt64(seed))
            let drive = Self.drive(&rng)
            Self.expectTruth(Self.run(drive.fixes(Self.receiver, seed: UInt64(seed))), drive, "seed \(seed)")
        }
    }

    @Test func multipathJumpsGiveNoFalseStopOrTripAndDoNotInflateTheOdometer() async {
        await propertyCheck(count: 16, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var rng = SplitMix64(seed: UInt64(seed))
            let drive = Self.drive(&rng)
            let episodes = drive.jumps(&rng)
            let fixes = drive.fixes(Self.receiver, seed: UInt64(seed), episodes: episodes)
            Self.expectTruth(Self.run(fixes), drive, "seed \(seed), \(episodes.count) jumps")
        }
    }

    @Test func theJumpsWouldInflateAnOdometerOfPositions() {
        // What the Doppler odometer is for: the same jumps, summed as positions, add far more than 1%.
        var rng = SplitMix64(seed: 5)
        let drive = Self.drive(&rng)
        let episodes = stride(from: 60.0, to: drive.duration - 60, by: 120).map {
            MultipathEpisode(start: drive.start.addingTimeInterval($0), ramp: 1, hold: 5, offset: 150, bearing: 45)
        }
        let fixes = drive.fixes(Self.receiver, seed: 5, episodes: episodes)
        let moving = fixes.indices.dropFirst().filter { fixes[$0].speed >= 0.5 }
        let positions = moving.reduce(0.0) { $0 + Geodesic.distance(fixes[$1 - 1].coordinate, fixes[$1].coordinate) }
        let truth = drive.legs.reduce(0) { $0 + $1.distance }
        #expect(positions > truth * 1.05, "positions give \(positions) m for \(truth) m")
        let found = Self.run(fixes)
        let odometer = found.trips.reduce(0) { $0 + $1.distance }
        #expect(abs(odometer - truth) / truth < 0.01, "the odometer gives \(odometer) m for \(truth) m")
    }

    @Test func aStopNamesTheConditionsItIsIn() throws {
        var rng = SplitMix64(seed: 9)
        let drive = Self.drive(&rng)
        let end = try #require(drive.samples.last?.coordinate)
        var monitors = MonitorSet()
        monitors.add(try .circle(center: end, radius: 80), identifier: "depot", monitor: "default")
        monitors.add(try .circle(center: drive.origin, radius: 80), identifier: "home", monitor: "default")
        var stops: [Stop] = []
        for fix in drive.fixes(Self.receiver, seed: 9) {
            for case .stopStarted(let s) in monitors.process(fix).tripEvents { stops.append(s) }
        }
        #expect(stops.first?.conditions == ["home"])
        #expect(stops.last?.conditions == ["depot"])
    }

    @Test func aSilenceLongerThanTheNoDataDurationEndsTheTripAtItsLastFix() {
        let legs = [StopAndGoDrive.Leg(distance: 3000, cruise: 15, park: 30)]
        let drive = StopAndGoDrive(legs: legs)
        let fixes = drive.fixes(Self.receiver, seed: 1)
        // The receiver goes quiet mid-leg for two hours, then reports from where the vehicle then is.
        let cut = fixes.firstIndex { $0.timestamp > drive.legTimes[0].start.addingTimeInterval(120) }!
        var later = Array(fixes[(cut + 60)...])
        for k in later.indices { later[k].timestamp.addTimeInterval(7200) }
        let found = Self.run(Array(fixes[..<cut]) + later)
        #expect(found.trips.first?.end == fixes[cut - 1].timestamp)
        #expect(found.events.map(\.name).prefix(4) == ["stopStarted", "stopEnded", "tripStarted", "tripEnded"])
    }

    @Test func aTripInProgressResumesAfterARestartInsteadOfSplitting() throws {
        var rng = SplitMix64(seed: 3)
        let drive = Self.drive(&rng)
        let fixes = drive.fixes(Self.receiver, seed: 3)
        let whole = Self.run(fixes)
        // Cut mid-way through the first trip; the second run resumes from the first's phase, as the agent
        // resumes from its store.
        let cut = fixes.firstIndex { $0.timestamp > drive.legTimes[0].start.addingTimeInterval(100) }!
        var first = MonitorSet()
        var events: [TripEvent] = []
        for fix in fixes[..<cut] { events += first.process(fix).tripEvents }
        var second = MonitorSet(trips: first.trips.phase)
        for fix in fixes[cut...] { events += second.process(fix).tripEvents }
        #expect(events.map(\.name) == whole.events.map(\.name))
        let trips = events.compactMap { e -> Trip? in
            if case .tripEnded(let t) = e { return t }
            return nil
        }
        #expect(trips.first?.start == whole.trips.first?.start)
        // The fix the restart lost is a second of travel at most.
        let lost = abs((trips.first?.distance ?? 0) - (whole.trips.first?.distance ?? 0))
        #expect(lost <= 30, "\(lost) m")
    }
}
