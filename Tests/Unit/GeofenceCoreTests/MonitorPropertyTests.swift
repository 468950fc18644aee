import Foundation
import PropertyBased
import TestSupport
import Testing

@testable import GeofenceCore

/// The four properties the monitor promises, each checked over random setups.
@Suite(.offTheCooperativePool(.computing)) struct MonitorPropertyTests {
    static let center = Coordinate(latitude: 52.37, longitude: 4.89)

    func engine(radius: Double, configuration: MonitorConfiguration = .eachFixAlone) -> MonitorEngine {
        var e = MonitorEngine(name: "test", configuration: configuration)
        e.add(try! .circle(center: Self.center, radius: radius), identifier: "fence")
        return e
    }

    /// A point whose distance from the centre is `distance`, along `bearing`, placed exactly on the ellipsoid.
    func atDistance(_ distance: Double, bearing: Double) -> Coordinate {
        var q = offset(Self.center, metres: distance, bearing: bearing)
        // Correct the tangent-plane offset so that the geodesic distance is what was asked.
        for _ in 0..<3 {
            let d = Geodesic.distance(Self.center, q)
            q = offset(Self.center, metres: distance * distance / max(d, 1e-9), bearing: bearing)
        }
        return q
    }

    // A receiver at rest near a boundary, with real (correlated Gaussian) noise: DecisionNoiseTests.

    @Test func aCrossingGivesOneTransitionAtTheFirstFixBeyondTheMargin() async {
        await propertyCheck(
            count: 200, input: Gen.double(in: 1...40), Gen.double(in: 1...30), Gen.double(in: 0...360),
            Gen.double(in: 10...2000)
        ) { speed, accuracy, bearing, beyondMargin in
            let margin = DecisionRule(MonitorConfiguration()).margin(forAccuracy: accuracy)
            // A circle the vehicle can be confidently inside: wider than the margin (up to 65.6 m at 30 m).
            let radius = margin + beyondMargin
            // Through the agent's loop, with the Doppler speed and course a receiver gives: the motion check
            // judges every fix, and a real crossing must still be decided at its first confident fix.
            var monitors = MonitorSet(configuration: .eachFixAlone)
            monitors.add(try! .circle(center: Self.center, radius: radius), identifier: "fence", monitor: "m")
            // Drive straight out from the centre, then back in.
            var distances: [Double] = []
            var d = 0.0
            while d < radius + margin + 3 * speed {
                distances.append(d)
                d += speed
            }
            let path = distances + distances.reversed()
            var transitions: [(Int, EventKind)] = []
            // What each fix really is: its geodesic distance, not the distance it was aimed at.
            var actual: [Double] = []
            var verdicts: [MotionVerdict?] = []
            for (k, dist) in path.enumerated() {
                let q = atDistance(dist, bearing: bearing)
                actual.append(Geodesic.distance(Self.center, q))
                var f = fix(q.latitude, q.longitude, t: Double(k), accuracy: accuracy)
                f.speed = speed
                f.course = (k < distances.count ? bearing : bearing + 180).truncatingRemainder(dividingBy: 360)
                let result = monitors.process(f)
                verdicts.append(result.location.motionVerdict)
                for ev in result.steps.flatMap(\.events) where ev.kind != .initial {
                    transitions.append((k, ev.kind))
                }
            }
            // Every fix checked and consistent, but the first and the turn, where the velocity flips in a fix
            // faster than a vehicle can brake (the check starts again there).
            #expect(!verdicts.contains(.excursion))
            #expect(verdicts.filter { $0 == .consistent }.count >= path.count - 2)
            let firstOut = try #require(actual.firstIndex { $0 > radius + margin })
            let firstBackIn = try #require(actual.indices.first { $0 > firstOut && actual[$0] < radius - margin })
            #expect(transitions.map(\.1) == [.exit, .enter], "speed \(speed) accuracy \(accuracy) radius \(radius)")
            #expect(transitions.map(\.0) == [firstOut, firstBackIn])
        }
    }

    /// A case the property test found: driving back up to a large circle produced a `crossed` event
    /// when the flat segment test came up decimetres short.
    @Test func drivingUpToALargeCircleIsNotACrossing() {
        let (speed, accuracy, bearing, radius) = (11.04557827748579, 1.0, 270.00141267972333, 1480.1074891831045)
        var e = engine(radius: radius)
        let margin = DecisionRule(MonitorConfiguration()).margin(forAccuracy: accuracy)
        var distances: [Double] = []
        var d = 0.0
        while d < radius + margin + 3 * speed {
            distances.append(d)
            d += speed
        }
        var kinds: [EventKind] = []
        for (k, dist) in (distances + distances.reversed()).enumerated() {
            let q = atDistance(dist, bearing: bearing)
            kinds += e.process(fix(q.latitude, q.longitude, t: Double(k), accuracy: accuracy)).events.map(\.kind)
        }
        #expect(kinds == [.initial, .exit, .enter])
    }

    @Test func shuffledDuplicateAndLateFixesChangeNothing() async {
        await propertyCheck(count: 50, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var rng = SplitMix64(seed: UInt64(seed))
            // A wandering track over three overlapping fences.
            var track: [Location] = []
            var position = Self.center
            for k in 0..<300 {
                position = offset(
                    position, metres: Double.random(in: 0...30, using: &rng),
                    bearing: Double.random(in: 0..<360, using: &rng))
                track.append(
                    fix(
                        position.latitude, position.longitude, t: Double(k),
                        accuracy: Double.random(in: 2...20, using: &rng)))
            }
            // The same track with copies of earlier fixes slipped in after later ones.
            var noisy: [Location] = []
            for (k, f) in track.enumerated() {
                noisy.append(f)
                if k > 0, Bool.random(using: &rng) {
                    noisy.append(track[Int.random(in: 0...k, using: &rng)])
                }
            }
            func run(_ fixes: [Location]) -> [MonitorEvent] {
                var e = MonitorEngine(name: "order", configuration: .eachFixAlone)
                e.add(try! .circle(center: Self.center, radius: 100), identifier: "a")
                e.add(try! .circle(center: offset(Self.center, metres: 80, bearing: 45), radius: 60), identifier: "b")
                e.add(
                    try! .circle(center: offset(Self.center, metres: 150, bearing: 200), radius: 200), identifier: "c")
                return fixes.flatMap { e.process($0).events }
            }
            #expect(run(track) == run(noisy))
        }
    }

    @Test func everyConditionGetsItsInitialEventOnceTheVehicleIsClearlyInOrOut() async {
        await propertyCheck(count: 30, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var rng = SplitMix64(seed: UInt64(seed))
            var e = MonitorEngine(name: "initial", configuration: .eachFixAlone)
            var definitions: [(String, Coordinate, Double)] = []
            for k in 0..<200 {
                let c = offset(
                    Self.center, metres: Double.random(in: 0...3000, using: &rng),
                    bearing: Double.random(in: 0..<360, using: &rng))
                let r = Double.random(in: 20...800, using: &rng)
                definitions.append(("f\(k)", c, r))
                e.add(try! .circle(center: c, radius: r), identifier: "f\(k)")
            }
            var initial: [String: ConditionState] = [:]
            var position = Self.center
            for k in 0..<200 {
                position = offset(position, metres: 15, bearing: Double(k))
                let accuracy = 8.0
                let events = e.process(fix(position.latitude, position.longitude, t: Double(k), accuracy: accuracy))
                    .events
                for ev in events where ev.kind == .initial {
                    #expect(initial[ev.identifier] == nil, "one initial per condition")
                    initial[ev.identifier] = ev.state
                }
                // Whatever is clearly decided by now must have had its initial event.
                for (id, c, r) in definitions {
                    let d = Geodesic.distance(c, position)
                    if abs(d - r) > DecisionRule(.eachFixAlone).margin(forAccuracy: accuracy) + 1e-6 {
                        #expect(
                            initial[id] == (d < r ? .satisfied : .unsatisfied) || e.record(for: id)?.state != .unknown)
                        #expect(e.record(for: id)?.state != .unknown)
                    }
                }
            }
        }
    }
}
