import AgentOutputs
import Dispatch
import Foundation
import GeofenceCore
import GeofenceStore
import Logging
import Mosquitto
import Synchronization
import TestSupport
import Testing

@testable import GeofenceAgent

/// A geofence change is stored and given to the monitors in one step of the fix processor's: a fix that
/// arrives while the store commits is decided after the monitors have the change, never between.
@Suite(.offTheCooperativePool(.agentsPool)) struct ConditionChangeStepTests {
    let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    /// The agent's own store of conditions, which hands a fix to the processor while it commits: the fix's
    /// task is made to wait for the processor before the commit goes on.
    final class StoreThatSeesAFixArrive: ConditionStoring, Sendable {
        let inner: OutboxConditionStore
        let processor: FixProcessor
        let fix: Location
        let decided = Mutex<Task<Void, Never>?>(nil)

        init(inner: OutboxConditionStore, processor: FixProcessor, fix: Location) {
            (self.inner, self.processor, self.fix) = (inner, processor, fix)
        }

        func applyNow(_ changes: [AgentStore.ConditionChange], exits: [RemovalExit]) throws(StoreError)
            -> [AgentStore.ChangeResult]
        {
            let asking = DispatchSemaphore(value: 0)
            let task = Task { [processor, fix] in
                asking.signal()
                await processor.handle(fix)
            }
            decided.withLock { $0 = task }
            asking.wait()
            return try inner.applyNow(changes, exits: exits)
        }

        func setSetting(_ key: String, _ value: String?) async throws(StoreError) {}
        func identifiers(source: String) async throws(StoreError) -> [(monitor: String, identifier: String)] { [] }
    }

    @Test func aDeletedGeofenceExitsOnceWhenAFixArrivesDuringItsCommit() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("step-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = try AgentConfiguration.parse(
            JSONParser.parse(Array(#"{"fleet":"test","vehicle":"v1"}"#.utf8)))
        configuration.storePath = directory.appendingPathComponent("agent.sqlite").path
        configuration.monitor = .eachFixAlone
        let store = try await AgentStore.open(path: configuration.storePath, logger: logger)
        let outbox = try await Outbox.open(store, logger: logger)
        let outputs = testOutputs(configuration)
        let processor = try await FixProcessor(
            configuration: configuration, store: store, outbox: outbox, outputs: outputs, logger: logger)
        let conditions = OutboxConditionStore(store: store, outbox: outbox, outputs: outputs, places: nil)
        let applier = ChangeApplier(
            store: conditions, host: processor, publisher: FakePublisher(), topics: testTopics, logger: logger)
        #expect(await applier.geofences([geofenceMessage("depot", circleFeature("depot", radius: 100))]).stored == 1)

        let start = Date(timeIntervalSince1970: 1_767_225_600)
        // Along a parallel at 10 m/s, 3 m accuracy.
        func fix(east: Double, at second: Double) -> Location {
            Location(
                coordinate: Coordinate(latitude: 52, longitude: 5 + east / (111_320 * cos(52 * Double.pi / 180))),
                horizontalAccuracy: 3, speed: 10, course: 90, timestamp: start.addingTimeInterval(second))
        }
        // From 300 m west into the depot: an `enter`.
        for k in 0...30 { await processor.handle(fix(east: -300 + Double(k) * 10, at: Double(k))) }

        // Deleted while the vehicle is inside, and a fix 200 m on, outside, arrives during the commit.
        let seeing = StoreThatSeesAFixArrive(
            inner: conditions, processor: processor, fix: fix(east: 200, at: 50))
        let deleting = ChangeApplier(
            store: seeing, host: processor, publisher: FakePublisher(), topics: testTopics, logger: logger)
        #expect(await deleting.geofences([geofenceMessage("depot", nil)]).deleted == 1)
        await seeing.decided.withLock { $0 }?.value

        let events = try await store.pending(after: 0, limit: 100).filter { $0.topic == testTopics.events }.compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any]
        }
        #expect(
            events.map { "\($0["event"] as? String ?? "") \($0["reason"] as? String ?? "-")" } == [
                "enter -", "exit removed",
            ])
        #expect(await processor.heldConditions().isEmpty)
        await store.close()
    }
}
