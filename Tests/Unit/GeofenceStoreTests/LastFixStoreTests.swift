import Foundation
import GeofenceCore
import TestSupport
import Testing

@testable import GeofenceStore

/// A transition's commit writes the records, not the monitor's row, when a record holds the fix: one page
/// less of the write-ahead log on the vehicle's flash. A restart after a crash must still resume from that
/// fix, and a later fix stored at a stop must still win over an older record.
@Suite(.offTheCooperativePool(.waiting)) struct LastFixStoreTests {
    let depot = Coordinate(latitude: 52.0, longitude: 5.0)

    func openWithTwoCircles(_ path: String) async throws -> (AgentStore, MonitorEngine) {
        let store = try await AgentStore.open(path: path, logger: quietLogger)
        for (id, lat) in [("depot", 52.0), ("yard", 52.1)] {
            _ = try await store.putCondition(
                monitor: "m", identifier: id,
                condition: try .circle(center: Coordinate(latitude: lat, longitude: 5.0), radius: 150),
                definition: "{}", source: "local")
        }
        return (store, try await store.openMonitor("m", configuration: .eachFixAlone))
    }

    func commit(_ store: AgentStore, _ engine: MonitorEngine, _ events: [MonitorEvent]) async throws {
        try await store.commit(
            monitor: "m", records: events.map { ($0.identifier, engine.record(for: $0.identifier)!) },
            lastFix: engine.lastAcceptedFix, indexFloor: engine.indexFloor)
    }

    @Test func aTransitionWritesOnlyItsRecordsPageAndARestartResumesFromItsFix() async throws {
        let path = temporaryStorePath()
        var crossed: Location
        do {
            var (store, engine) = try await openWithTwoCircles(path)
            try await commit(store, engine, engine.process(fix(52.0, 5.0, t: 0)).events)
            let before = await store.logFrames
            let exit = engine.process(fix(52.0, 5.01, t: 60)).events
            #expect(exit.map(\.kind) == [.exit])
            try await commit(store, engine, exit)
            #expect(await store.logFrames - before == 1, "the conditions' page alone: the record holds the fix")
            crossed = try #require(engine.lastAcceptedFix)
            await store.close()  // a crash: no last fix stored at a stop
        }
        let store = try await reopenStore(path: path)
        let restored = try await store.openMonitor("m", configuration: .eachFixAlone)
        let resumed = try #require(restored.lastAcceptedFix)
        #expect(resumed.timestamp == crossed.timestamp && resumed.coordinate == crossed.coordinate)
        #expect(resumed.horizontalAccuracy == crossed.horizontalAccuracy)
        var after = restored
        if case .accepted = after.process(fix(52.0, 5.01, t: 30)) {
            Issue.record("a fix older than the transition's was taken")
        }
        await store.close()
    }

    @Test func aFixStoredAtAStopIsNewerThanTheRecordsAndWins() async throws {
        let path = temporaryStorePath()
        do {
            var (store, engine) = try await openWithTwoCircles(path)
            try await commit(store, engine, engine.process(fix(52.0, 5.0, t: 0)).events)
            _ = engine.process(fix(52.0, 5.0001, t: 50))
            let before = await store.logFrames
            try await commit(store, engine, [])  // the stop's last fix, which no record holds
            #expect(await store.logFrames - before == 1, "the monitor's page")
            await store.close()
        }
        let store = try await reopenStore(path: path)
        let restored = try await store.openMonitor("m", configuration: .eachFixAlone)
        #expect(restored.lastAcceptedFix?.timestamp == Date(timeIntervalSince1970: 1_700_000_050))
        await store.close()
    }

    @Test func aRemovalExitIsDatedAtTheNewerOfTheRowAndTheRecords() async throws {
        let path = temporaryStorePath()
        var (store, engine) = try await openWithTwoCircles(path)
        _ = engine.process(fix(52.0, 5.0, t: 0))
        try await commit(store, engine, [])  // the monitor's row: t 0
        let enter = engine.process(fix(52.1, 5.0, t: 900)).events  // leaves the depot, enters the yard
        #expect(Set(enter.map(\.kind)) == [.exit, .enter])
        try await commit(store, engine, enter)
        await store.close()
        // The monitors decide a removal's exit; restored, the monitor's last fix is the records' newer one.
        let reopened = try await reopenStore(path: path)
        var monitors = MonitorSet(configuration: .eachFixAlone)
        monitors.insert(try await reopened.openMonitor("m", configuration: .eachFixAlone))
        let removed = monitors.removalExits([("yard", "m")])
        #expect(removed.map(\.event.identifier) == ["yard"])
        #expect(removed.first?.event.date == Date(timeIntervalSince1970: 1_700_000_900))
        #expect(removed.first?.event.location.coordinate == Coordinate(latitude: 52.1, longitude: 5.0))
        await reopened.close()
    }
}
