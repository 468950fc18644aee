import Foundation
import PropertyBased
import TestSupport
import Testing

@testable import GeofenceCore

/// The one loop the agent, `simulate` and `Monitor` share: each monitor sees every fix in name order and
/// decides as it would alone.
@Suite(.offTheCooperativePool(.computing)) struct MonitorSetTests {
    let depot = Coordinate(latitude: 52, longitude: 5)

    /// Random circles split over three monitors, a random walk through them: the set's steps are, monitor
    /// by monitor, exactly what each engine gives alone, and the verdict is the first monitor's.
    @Test func eachMonitorDecidesAsItWouldAlone() async {
        await propertyCheck(count: 60, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var random = SplitMix64(seed: UInt64(seed))
            var set = MonitorSet(configuration: .eachFixAlone)
            var alone: [String: MonitorEngine] = [:]
            for k in 0..<12 {
                let monitor = ["b", "a", "c"][k % 3]
                let centre = offset(
                    depot, metres: Double.random(in: 0...800, using: &random),
                    bearing: Double.random(in: 0..<360, using: &random))
                let circle = try! Condition.circle(center: centre, radius: Double.random(in: 30...200, using: &random))
                set.add(circle, identifier: "c\(k)", monitor: monitor)
                alone[monitor, default: MonitorEngine(name: monitor, configuration: .eachFixAlone)].add(
                    circle, identifier: "c\(k)")
            }
            #expect(set.names == ["a", "b", "c"])
            var position = depot
            for t in 0..<120 {
                position = offset(
                    position, metres: Double.random(in: 0...40, using: &random),
                    bearing: Double.random(in: 0..<360, using: &random))
                // Now and then a fix out of order, which every monitor refuses alike.
                let time = Double(t) - (t % 17 == 16 ? 30 : 0)
                let location = fix(position.latitude, position.longitude, t: time, accuracy: 5)
                let result = set.process(location)
                var expected: [(String, [MonitorEvent])] = []
                var firstRejection: FixRejection??
                for name in alone.keys.sorted() {
                    // The same fix, with the set's motion check verdict on it.
                    let outcome = alone[name]!.process(result.location)
                    if firstRejection == nil {
                        if case .rejected(let r) = outcome {
                            firstRejection = .some(r)
                        } else {
                            firstRejection = .some(nil)
                        }
                    }
                    if case .accepted(let events) = outcome, !events.isEmpty { expected.append((name, events)) }
                }
                #expect(result.offered && result.rejection == firstRejection!)
                #expect(result.steps.map(\.monitor) == expected.map(\.0))
                #expect(result.steps.map(\.events) == expected.map(\.1))
            }
        }
    }

    @Test func anEmptySetIsOfferedNothing() {
        var set = MonitorSet()
        let result = set.process(fix(52, 5, t: 0))
        #expect(!result.offered && result.rejection == nil && result.steps.isEmpty)
    }

    @Test func publishedKindsLeaveOutTheInitialState() {
        #expect(!EventKind.published.contains(.initial))
        #expect(EventKind.published.count == EventKind.allCases.count - 1)
    }
}
