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

    /// Monitors made, replaced and changed in any order: the names stay sorted, and each name reaches its
    /// own engine, by subscript and in place.
    @Test func everyNameReachesItsOwnEngineWhateverTheOrderTheyCameIn() async {
        await propertyCheck(count: 100, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var random = SplitMix64(seed: UInt64(seed))
            var set = MonitorSet(configuration: .eachFixAlone)
            var expected: [String: Set<String>] = [:]
            for k in 0..<30 {
                let monitor = "m\(Int.random(in: 0..<8, using: &random))"
                let circle = try! Condition.circle(center: depot, radius: 50)
                switch Int.random(in: 0..<4, using: &random) {
                case 0:
                    // Replaced by an empty engine of the same name, as a restore does.
                    set.insert(MonitorEngine(name: monitor, configuration: .eachFixAlone))
                    expected[monitor] = []
                case 1:
                    guard let gone = expected[monitor]?.first else { continue }
                    set.remove(gone, monitor: monitor)
                    expected[monitor]!.remove(gone)
                default:
                    set.add(circle, identifier: "c\(k)", monitor: monitor)
                    expected[monitor, default: []].insert("c\(k)")
                }
            }
            #expect(set.names == expected.keys.sorted())
            #expect(set.conditionCount == expected.values.reduce(0) { $0 + $1.count })
            for name in set.names {
                #expect(set[name]?.name == name)
                #expect(Set(set[name]?.records.map(\.identifier) ?? []) == expected[name])
                #expect(set.withEngine(name) { $0.name } == name)
            }
            #expect(set["absent"] == nil && set.withEngine("absent") { $0.name } == nil)
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

    /// A removal's exit is the monitors' to decide: one per monitor whose vehicle is inside, at its last fix,
    /// in monitor order, each pair once; none for a condition outside, unknown, or whose `notify` leaves
    /// `exit` out.
    @Test func removalExitsComeFromTheMonitorsThatAreInside() throws {
        var set = MonitorSet(configuration: .eachFixAlone)
        let yard = try Condition.circle(center: depot, radius: 150, name: "Yard")
        let far = try Condition.circle(center: Coordinate(latitude: 52.1, longitude: 5), radius: 150)
        let quiet = try Condition(
            geometry: .circle(center: depot, radius: 150), rules: ConditionRules(notify: [.enter]))
        for monitor in ["b", "a"] { set.add(yard, identifier: "yard", monitor: monitor) }
        set.add(far, identifier: "far", monitor: "a")
        set.add(quiet, identifier: "quiet", monitor: "a")
        let inside = fix(52, 5, t: 0)
        _ = set.process(inside)

        let exits = set.removalExits([("yard", nil), ("far", nil), ("quiet", "a"), ("gone", nil), ("yard", "a")])
        #expect(exits.map(\.monitor) == ["a", "b"])
        #expect(exits.allSatisfy { $0.event.identifier == "yard" && $0.event.reason == .removed })
        #expect(exits.allSatisfy { $0.event.kind == .exit && $0.event.location == set[$0.monitor]?.lastAcceptedFix })
        #expect(exits.allSatisfy { $0.event.date == inside.timestamp })
        #expect(exits.first?.event.conditionName == "Yard")
        #expect(set.removalExits([("yard", "b")]).map(\.monitor) == ["b"])
        // Asking changes nothing: the conditions are removed by `remove`, after the store has the exits.
        #expect(set["a"]?.record(for: "yard")?.state == .satisfied)
    }
}
