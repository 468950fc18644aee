import Foundation
import TestSupport
import Testing

@testable import GeofenceCore

@Suite(.offTheCooperativePool(.computing)) struct MonitorBehaviourTests {
    let depot = Coordinate(latitude: 52.0, longitude: 5.0)

    @Test func initialThenEnterExitWithTheCausingFix() throws {
        var e = MonitorEngine(name: "m", configuration: .eachFixAlone)
        e.add(try .circle(center: depot, radius: 100, name: "Depot"), identifier: "depot")
        let far = offset(depot, metres: 500, bearing: 0)
        let first = e.process(fix(far.latitude, far.longitude, t: 0)).events
        #expect(first.map(\.kind) == [.initial])
        #expect(first[0].state == .unsatisfied)
        #expect(first[0].conditionName == "Depot")
        let inside = e.process(fix(depot.latitude, depot.longitude, t: 10)).events
        #expect(inside.map(\.kind) == [.enter])
        #expect(inside[0].location.coordinate == depot)
        #expect(inside[0].date == Date(timeIntervalSince1970: 1_700_000_010))
        #expect(e.record(for: "depot")?.state == .satisfied)
        #expect(e.record(for: "depot")?.lastEvent == inside[0])
        #expect(e.process(fix(far.latitude, far.longitude, t: 30)).events.map(\.kind) == [.exit])
    }

    @Test func assumingAStateSkipsTheInitialEvent() throws {
        var e = MonitorEngine(name: "m", configuration: .eachFixAlone)
        e.add(try .circle(center: depot, radius: 100), identifier: "depot", assuming: .satisfied)
        #expect(e.process(fix(depot.latitude, depot.longitude, t: 0)).events.isEmpty)
    }

    @Test func dwellFiresOnceAfterTheConditionsDwellTime() throws {
        var e = MonitorEngine(name: "m", configuration: .eachFixAlone)
        e.add(try .circle(center: depot, radius: 100, dwell: 60), identifier: "depot")
        var kinds: [EventKind] = []
        for t in stride(from: 0.0, through: 200, by: 10) {
            kinds += e.process(fix(depot.latitude, depot.longitude, t: t)).events.map(\.kind)
        }
        #expect(kinds == [.initial, .dwell])
        // Leaving and coming back arms it again.
        let far = offset(depot, metres: 500, bearing: 90)
        kinds = e.process(fix(far.latitude, far.longitude, t: 210)).events.map(\.kind)
        for t in stride(from: 220.0, through: 300, by: 10) {
            kinds += e.process(fix(depot.latitude, depot.longitude, t: t)).events.map(\.kind)
        }
        #expect(kinds == [.exit, .enter, .dwell])
    }

    @Test func aFastVehiclePassingASmallFenceBetweenFixesIsReportedAsCrossed() throws {
        var e = MonitorEngine(name: "m", configuration: .eachFixAlone)
        e.add(try .circle(center: depot, radius: 10), identifier: "gate")
        let before = offset(depot, metres: 20, bearing: 270)
        let after = offset(depot, metres: 20, bearing: 90)
        _ = e.process(fix(before.latitude, before.longitude, t: 0, accuracy: 3))
        let events = e.process(fix(after.latitude, after.longitude, t: 1, accuracy: 3)).events
        #expect(events.map(\.kind) == [.crossed])
        #expect(events.first?.state == .unsatisfied)
        // Passing beside it is not a crossing.
        let aside = offset(after, metres: 40, bearing: 0)
        let aside2 = offset(before, metres: 40, bearing: 0)
        #expect(e.process(fix(aside.latitude, aside.longitude, t: 2, accuracy: 3)).events.isEmpty)
        #expect(e.process(fix(aside2.latitude, aside2.longitude, t: 3, accuracy: 3)).events.isEmpty)
        // Nor is a jump after a long gap.
        _ = e.process(fix(before.latitude, before.longitude, t: 4, accuracy: 3))
        #expect(e.process(fix(after.latitude, after.longitude, t: 100, accuracy: 3)).events.isEmpty)
    }

    @Test func rejectsFixesThatCannotBeTrusted() {
        var e = MonitorEngine(name: "m", configuration: .eachFixAlone)
        var noFix = fix(52, 5, t: 0)
        noFix.mode = .noFix
        #expect(e.process(noFix) == .rejected(.noFix))
        #expect(e.process(fix(.nan, 5, t: 0)) == .rejected(.invalidCoordinate))
        #expect(e.process(fix(52, 5, t: 0, accuracy: 1500)) == .rejected(.poorAccuracy))
        #expect(e.process(fix(52, 5, t: 10)) == .accepted([]))
        #expect(e.process(fix(52, 5, t: 10)) == .rejected(.outOfOrder))
        #expect(e.process(fix(52, 5, t: 5)) == .rejected(.outOfOrder))
        // 1 km in one second.
        #expect(e.process(fix(52.009, 5, t: 11)) == .rejected(.impossibleSpeed))
        // The same jump after a long gap is a vehicle that moved while we could not see it.
        #expect(e.process(fix(52.009, 5, t: 10 + 400)) == .accepted([]))
    }

    @Test func aBadAnchorIsAbandonedAfterRepeatedSpeedRejections() {
        var e = MonitorEngine(name: "m", configuration: .eachFixAlone)
        #expect(e.process(fix(10, 10, t: 0)) == .accepted([]))  // an outlier that got in
        var outcomes: [FixOutcome] = []
        for k in 1...7 { outcomes.append(e.process(fix(52, 5 + Double(k) * 0.0001, t: Double(k)))) }
        #expect(outcomes.prefix(5).allSatisfy { $0 == .rejected(.impossibleSpeed) })
        #expect(outcomes[5] == .accepted([]))
        #expect(outcomes[6] == .accepted([]))
    }

    @Test func replacingAConditionKeepsItsStateAndRemovingForgetsIt() throws {
        var e = MonitorEngine(name: "m", configuration: .eachFixAlone)
        e.add(try .circle(center: depot, radius: 100), identifier: "depot")
        _ = e.process(fix(depot.latitude, depot.longitude, t: 0))
        e.add(try .circle(center: depot, radius: 150), identifier: "depot")
        #expect(e.record(for: "depot")?.state == .satisfied)
        #expect(e.process(fix(depot.latitude, depot.longitude, t: 1)).events.isEmpty)
        // Moved away from the vehicle: the next fix exits.
        e.add(try .circle(center: offset(depot, metres: 5000, bearing: 0), radius: 150), identifier: "depot")
        #expect(e.process(fix(depot.latitude, depot.longitude, t: 2)).events.map(\.kind) == [.exit])
        e.remove("depot")
        #expect(e.record(for: "depot") == nil)
        #expect(e.identifiers.isEmpty)
        #expect(e.process(fix(depot.latitude, depot.longitude, t: 3)).events.isEmpty)
    }

    @Test func restoredRecordsResumeWithoutASecondEnter() throws {
        var e = MonitorEngine(name: "m", configuration: .eachFixAlone)
        e.add(try .circle(center: depot, radius: 100), identifier: "depot")
        e.add(try .circle(center: offset(depot, metres: 2000, bearing: 0), radius: 100), identifier: "other")
        _ = e.process(fix(depot.latitude, depot.longitude, t: 0))
        var resumed = MonitorEngine(name: "m", configuration: .eachFixAlone)
        for (id, record) in e.records { resumed.restore(record, identifier: id) }
        resumed.restoreLastAcceptedFix(e.lastAcceptedFix)
        #expect(resumed.process(fix(depot.latitude, depot.longitude, t: 1)).events.isEmpty)
        let far = offset(depot, metres: 500, bearing: 180)
        #expect(resumed.process(fix(far.latitude, far.longitude, t: 60)).events.map(\.kind) == [.exit])
    }

    @Test func theMonitorActorDeliversEventsToEverySequence() async throws {
        let monitor = Monitor("fleet", configuration: .eachFixAlone)
        #expect(monitor.name == "fleet")
        try await monitor.add(.circle(center: depot, radius: 100), identifier: "depot")
        await #expect(throws: ConditionError.self) {
            try await monitor.add(.circle(center: depot, radius: 1), identifier: "a/b")
        }
        #expect(await monitor.identifiers == ["depot"])
        let first = monitor.events
        let second = monitor.events
        await monitor.update(with: fix(depot.latitude, depot.longitude, t: 0))
        let far = offset(depot, metres: 900, bearing: 0)
        await monitor.update(with: fix(far.latitude, far.longitude, t: 20))
        await monitor.finish()
        var seen: [[EventKind]] = []
        for stream in [first, second] {
            var kinds: [EventKind] = []
            for await event in stream { kinds.append(event.kind) }
            seen.append(kinds)
        }
        #expect(seen == [[.initial, .exit], [.initial, .exit]])
        #expect(await monitor.record(for: "depot")?.lastEvent?.kind == .exit)
        await monitor.remove("depot")
        #expect(await monitor.record(for: "depot") == nil)
    }

    @Test func theFirstFixDecidesEveryConditionAtOnce() throws {
        // 20,000 small fences over 200 km, none near the fix: one confident fix gives each its initial event.
        var e = MonitorEngine(name: "big", configuration: .eachFixAlone)
        var rng = SplitMix64(seed: 3)
        for k in 0..<20_000 {
            let c = Coordinate(
                latitude: 50 + Double.random(in: 0...2, using: &rng),
                longitude: 8 + Double.random(in: 0...3, using: &rng))
            e.add(try .circle(center: c, radius: Double.random(in: 50...500, using: &rng)), identifier: "c\(k)")
        }
        let events = e.process(fix(51, 9.5, t: 0)).events
        #expect(events.filter { $0.kind == .initial }.count == 20_000)
        #expect(e.records.filter { $0.record.state == .unknown }.isEmpty)
    }
}
