import Foundation
@testable import GeofenceAgent
import GeofenceCore
import GeofenceStore
import Logging
import Testing

/// The fix processor over a store in a temporary file and no broker: conditions the applier gives it are
/// decided on, every transition is committed to the outbox, and the snapshot tells the reporter the truth.
struct FixProcessorTests {
    let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    @Test func transitionsAreCommittedToTheOutboxAndTheSnapshotFollows() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("processor-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = try AgentConfiguration.parse(JSONParser.parse(Array(#"{"fleet":"test","vehicle":"v1","mqtt":{"host":"127.0.0.1","port":1883}}"#.utf8)))
        configuration.storePath = directory.appendingPathComponent("agent.sqlite").path
        configuration.monitor = .eachFixAlone
        let store = try await AgentStore.open(path: configuration.storePath, logger: logger)
        let outbox = Outbox(store: store)
        let processor = try await FixProcessor(configuration: configuration, store: store, outbox: outbox, logger: logger)
        let centre = Coordinate(latitude: 52, longitude: 5)
        await processor.apply([.add(monitor: "default", identifier: "depot", condition: try Condition.circle(center: centre, radius: 100))])
        let generation = await processor.generation

        // Outside, in, out again: 1 fix a second at 10 m/s along a parallel, 3 m accuracy.
        let start = Date(timeIntervalSince1970: 1_767_225_600)
        for k in 0...60 {
            let east = -300.0 + Double(k) * 10
            let at = Coordinate(latitude: 52, longitude: 5 + east / (111_320 * cos(52 * Double.pi / 180)))
            await processor.handle(Location(coordinate: at, horizontalAccuracy: 3, speed: 10, course: 90, timestamp: start.addingTimeInterval(Double(k))))
            if k == 30 {
                let inside = await processor.snapshot(listing: 10)
                #expect(inside.monitors.first?.satisfied.map(\.identifier) == ["depot"], "the snapshot shows the vehicle inside")
                #expect(inside.generation > generation)
            }
        }
        let entries = try await store.pending(after: 0, limit: 100)
        let events = entries.compactMap { try? JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any] }
        #expect(events.map { $0["event"] as? String } == ["enter", "exit"])
        #expect(entries.allSatisfy { $0.topic == testTopics.events })
        #expect(entries.map(\.sequence) == entries.map(\.sequence).sorted())
        let after = await processor.snapshot(listing: 10)
        #expect(after.monitors.first?.satisfiedCount == 0 && after.monitors.first?.unsatisfiedCount == 1)
        #expect(after.outbox.transitions == 2 && after.storeProblem == nil)
        await store.close()
    }
}
