import Foundation
import GeofenceCore
import TestSupport
import Testing

@testable import GeofenceStore

/// A condition deleted while the vehicle is inside: its exit goes in the same transaction as the delete;
/// one the vehicle is outside of, or an expired one the fix removed, leaves no stray row.
@Suite(.offTheCooperativePool(.waiting)) struct RemovalExitStoreTests {
    let depot = Coordinate(latitude: 52.0, longitude: 5.0)

    @Test func aSatisfiedConditionsDeleteCarriesItsExit() async throws {
        let store = try await AgentStore.open(path: temporaryStorePath(), logger: quietLogger)
        let inside = try Condition.circle(center: depot, radius: 150, name: "Depot")
        let outside = try Condition.circle(center: Coordinate(latitude: 52.1, longitude: 5.0), radius: 150)
        for (id, c) in [("inside", inside), ("outside", outside)] {
            #expect(
                try await store.putCondition(
                    monitor: "m", identifier: id, condition: c, definition: "{}", source: "mqtt") == .stored)
        }
        var engine = try await store.openMonitor("m", configuration: .eachFixAlone)
        let events = engine.process(fix(52.0, 5.0, t: 0)).events
        _ = try await store.commit(
            monitor: "m", records: events.map { ($0.identifier, engine.record(for: $0.identifier)!) },
            lastFix: engine.lastAcceptedFix)

        // The monitors decide which removals exit (`MonitorSet.removalExits`); the outbox writes them with
        // the delete.
        var monitors = MonitorSet(configuration: .eachFixAlone)
        monitors.insert(engine)
        let changes: [AgentStore.ConditionChange] = [
            .remove(identifier: "inside", monitor: nil), .remove(identifier: "outside", monitor: nil),
        ]
        let seen = monitors.removalExits([("inside", nil), ("outside", nil)])
        let outbox = try await Outbox.open(store, logger: quietLogger)
        let results = try await outbox.apply(
            changes,
            exits: seen.map { removed in
                OutboxItem(kind: .transition, topic: "events") { _, _ in
                    Array("exit \(removed.event.identifier)".utf8)
                }
            })
        let entries = try await store.pending()
        #expect(results == [.removed(monitors: ["m"]), .removed(monitors: ["m"])])
        #expect(seen.map(\.event.identifier) == ["inside"])
        #expect(seen.first?.event.conditionName == "Depot")
        #expect(seen.first?.event.location == engine.lastAcceptedFix)
        #expect(entries.map { String(decoding: $0.payload, as: UTF8.self) } == ["exit inside"])
        #expect(try await store.conditions().isEmpty)
        await store.close()
    }

    @Test func aFixsExpiredConditionsLeaveInTheSameCommit() async throws {
        let store = try await AgentStore.open(path: temporaryStorePath(), logger: quietLogger)
        let expiring = try Condition(
            geometry: .circle(center: depot, radius: 150),
            rules: ConditionRules(expires: Date(timeIntervalSince1970: 1_700_000_010)))
        #expect(
            try await store.putCondition(
                monitor: "m", identifier: "expiring", condition: expiring, definition: "{}", source: "mqtt") == .stored)
        var engine = try await store.openMonitor("m", configuration: .eachFixAlone)
        _ = engine.process(fix(52.0, 5.0, t: 0))
        let events = engine.process(fix(52.0, 5.0, t: 20)).events
        #expect(events.map(\.reason) == [.expired])
        #expect(engine.expiredIdentifiers == ["expiring"])
        let outbox = try await Outbox.open(store, logger: quietLogger)
        let entries = try await outbox.commit(
            monitor: "m", records: [], lastFix: engine.lastAcceptedFix, removing: engine.expiredIdentifiers,
            items: [OutboxItem(kind: .transition, topic: "events") { _, _ in Array("exit".utf8) }])
        #expect(entries.count == 1)
        #expect(try await store.conditions().isEmpty)
        await store.close()
    }
}
