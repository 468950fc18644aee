import AgentTestSupport
import Foundation
import GeofenceCore
import PropertyBased
import ReceiverSimulation
import TestSupport
import Testing

@testable import AgentOutputs

/// The `track` topic: its delta encoding reads back to the fixes it was made from (to its resolution),
/// and the pacing sends batches and the retained location at their own rates, and next to nothing parked.
@Suite(.offTheCooperativePool(.computing)) struct TrackTests {
    static let start = Date(timeIntervalSince1970: 1_767_225_600)

    func update(_ second: Double, lat: Double = 52, lon: Double = 5, stationary: Bool = false) -> LiveUpdate {
        LiveUpdate(
            location: Location(
                coordinate: Coordinate(latitude: lat, longitude: lon), horizontalAccuracy: 4.2, speed: 12.34,
                course: 359.7, timestamp: Self.start.addingTimeInterval(second)),
            isStationary: stationary)
    }

    @Test func aBatchReadsBackToItsFixes() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var rng = SplitMix64(seed: UInt64(seed))
            let count = Int.random(in: 1...200, using: &rng)
            var lat = Double.random(in: -89...89, using: &rng)
            var lon = Double.random(in: -179...179, using: &rng)
            var t = Double.random(in: 0...1e9, using: &rng).rounded() / 10
            var points: [TrackEncoding.Point] = []
            for _ in 0..<count {
                t += Double(Int.random(in: 1...600, using: &rng)) / 10
                lat = min(89.9, max(-89.9, lat + Double.random(in: -0.01...0.01, using: &rng)))
                lon = min(179.9, max(-179.9, lon + Double.random(in: -0.01...0.01, using: &rng)))
                let moving = Bool.random(using: &rng)
                var location = Location(
                    coordinate: Coordinate(latitude: lat, longitude: lon),
                    horizontalAccuracy: Double.random(in: -1...50, using: &rng),
                    speed: moving ? Double.random(in: 0...60, using: &rng) : -1,
                    course: moving ? Double.random(in: 0..<360, using: &rng) : -1,
                    timestamp: Date(timeIntervalSince1970: t))
                location.motionVerdict = MotionVerdict.allCases.randomElement(using: &rng)
                points.append(TrackEncoding.Point(LiveUpdate(location: location, isStationary: !moving)))
            }
            let payload = TrackEncoding.encode(points, vehicle: "v\"1", sequence: 812)
            let decoded = TrackEncoding.decode(payload)
            #expect(decoded?.sequence == 812 && decoded?.vehicle == "v\"1")
            #expect(decoded?.points.count == points.count)
            for (a, b) in zip(points, decoded?.points ?? []) {
                #expect(abs(a.time.timeIntervalSince(b.time)) < 0.051, "to the tenth of a second")
                #expect(
                    a.latitude == b.latitude && a.longitude == b.longitude && a.accuracy == b.accuracy
                        && a.speed == b.speed && a.course == b.course && a.stationary == b.stationary
                        && a.excursion == b.excursion)
            }
        }
    }

    @Test func aSteadyPaceSendsZeros() {
        let points = (0..<3).map { TrackEncoding.Point(update(Double($0), lon: 5 + Double($0) * 0.0002)) }
        let payload = String(decoding: TrackEncoding.encode(points, vehicle: "v1", sequence: 812), as: UTF8.self)
        #expect(
            payload
                == #"{"sequence":812,"vehicle":"v1","t":[17672256000,10,0],"lat":[52000000,0,0],"#
                + #""lon":[5000000,200,0],"acc":[5,0,0],"speed":[123,0,0],"course":[0,0,0]}"#)
    }

    @Test func aDrivingFixCostsAboutEighteenBytes() {
        // 15 m/s north-east with a receiver's error as the budget drive has it (Gaussian, 2.5 m 1-sigma a
        // axis, correlated over 30 s, a fifth of it white), and Doppler speed and course with their own noise.
        var rng = SplitMix64(seed: 30)
        var error = GaussMarkovError(sigmaPerAxis: 2.5, correlationTime: 30)
        var points: [TrackEncoding.Point] = []
        for second in 0..<100 {
            let e = error.next(after: 1, using: &rng)
            points.append(
                TrackEncoding.Point(
                    LiveUpdate(
                        location: Location(
                            coordinate: Coordinate(
                                latitude: 52 + (Double(second) * 10 + e.north) / 111_000,
                                longitude: 5 + (Double(second) * 10 + e.east) / 68_000),
                            horizontalAccuracy: 2.5 + abs(Gaussian.next(&rng)) * 0.5,
                            speed: 15 + 0.1 * Gaussian.next(&rng),
                            course: 45 + 0.5 * Gaussian.next(&rng),
                            timestamp: Self.start.addingTimeInterval(Double(second))),
                        isStationary: false)))
        }
        let payload = TrackEncoding.encode(points, vehicle: "v1", sequence: 812)
        #expect(payload.count < 100 + 18 * points.count, "\(payload.count) bytes for \(points.count) fixes")
        #expect(TrackEncoding.decode(payload)?.points == points)
    }

    @Test func aBatchThatIsNotColumnsOfWholeNumbersIsRefused() {
        let good = #"{"sequence":1,"vehicle":"v1","t":[1],"lat":[2],"lon":[3],"acc":[4],"speed":[5],"course":[6]}"#
        #expect(TrackEncoding.decode(Array(good.utf8))?.points.count == 1)
        for bad in [
            good.replacingOccurrences(of: #""lat":[2]"#, with: #""lat":[2.5]"#),
            good.replacingOccurrences(of: #""lon":[3]"#, with: #""lon":[3,4]"#),
            good.replacingOccurrences(of: #","course":[6]"#, with: ""),
            good.replacingOccurrences(of: #""t":[1]"#, with: #""t":[]"#),
        ] {
            #expect(TrackEncoding.decode(Array(bad.utf8)) == nil, "\(bad)")
        }
    }

    @Test func drivingSendsABatchEveryTwentySecondsAndTheLocationEveryTwoMinutes() {
        var pacing = LivePacing(settings: FleetTopicsSettings())
        var batches: [[TrackEncoding.Point]] = []
        var locations: [Double] = []
        for second in 0..<125 {
            let decision = pacing.take(update(Double(second), lon: 5 + Double(second) * 0.0002))
            if let batch = decision.batch { batches.append(batch) }
            if decision.location { locations.append(Double(second)) }
        }
        #expect(batches.count == 6 && batches.allSatisfy { $0.count == 20 })
        #expect(locations == [0, 120])
    }

    @Test func aParkedVehicleSendsItsStopAndThenOnlyAHeartbeat() {
        var pacing = LivePacing(settings: FleetTopicsSettings())
        var batches: [[TrackEncoding.Point]] = []
        var locations: [Double] = []
        for second in 0..<3_600 {
            let decision = pacing.take(update(Double(second) + 5, stationary: second >= 5))
            if let batch = decision.batch { batches.append(batch) }
            if decision.location { locations.append(Double(second)) }
        }
        // The stop closes the batch at once, with the point where the vehicle stopped.
        #expect(batches.map(\.count) == [6])
        #expect(batches.first?.last?.stationary == true)
        #expect(locations == [0, 5, 905, 1805, 2705])
    }

    @Test func noTrackWhenItsBatchesAreTurnedOff() {
        var settings = FleetTopicsSettings()
        settings.trackBatchSeconds = 0
        var pacing = LivePacing(settings: settings)
        #expect((0..<30).allSatisfy { pacing.take(update(Double($0))).batch == nil })
    }
}
