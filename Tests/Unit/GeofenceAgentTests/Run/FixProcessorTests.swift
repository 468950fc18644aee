import AgentOutputs
import AgentTestSupport
import Foundation
import Geocoding
import GeofenceCore
import GeofenceStore
import Logging
import Places
import TestSupport
import Testing

@testable import GeofenceAgent

/// The fix processor over a store in a temporary file and no broker: conditions the applier gives it are
/// decided on, every transition is committed to the outbox, and the snapshot tells the reporter the truth.
@Suite(.offTheCooperativePool(.agentsPool)) struct FixProcessorTests {
    let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    /// A directory of its own for a test's store (the test removes it).
    func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("processor-\(UUID().uuidString)")
    }

    /// `json` parsed, with its store in `directory` and each fix decided alone.
    func testConfiguration(_ json: String, storeIn directory: URL) throws -> AgentConfiguration {
        var configuration = try AgentConfiguration.parse(JSONParser.parse(Array(json.utf8)))
        configuration.storePath = directory.appendingPathComponent("agent.sqlite").path
        configuration.monitor = .eachFixAlone
        return configuration
    }

    @Test func transitionsAreCommittedToTheOutboxAndTheSnapshotFollows() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let configuration = try testConfiguration(
            #"{"fleet":"test","vehicle":"v1","mqtt":{"host":"127.0.0.1","port":1883}}"#, storeIn: directory)
        let store = try await AgentStore.open(path: configuration.storePath, logger: logger)
        let outbox = try await Outbox.open(store, logger: logger)
        let processor = try await FixProcessor(
            configuration: configuration, store: store, outbox: outbox,
            outputs: testOutputs(configuration), logger: logger)
        let centre = Coordinate(latitude: 52, longitude: 5)
        await processor.apply([
            .add(monitor: "default", identifier: "depot", condition: try Condition.circle(center: centre, radius: 100))
        ])
        let generation = processor.generation

        // Outside, in, out again: 1 fix a second at 10 m/s along a parallel, 3 m accuracy.
        let start = Date(timeIntervalSince1970: 1_767_225_600)
        for k in 0...60 {
            let east = -300.0 + Double(k) * 10
            let at = Coordinate(latitude: 52, longitude: 5 + east / (111_320 * cos(52 * Double.pi / 180)))
            await processor.handle(
                Location(
                    coordinate: at, horizontalAccuracy: 3, speed: 10, course: 90,
                    timestamp: start.addingTimeInterval(Double(k))))
            if k == 30 {
                let inside = await processor.snapshot(listing: 10)
                #expect(
                    inside.monitors.first?.satisfied.map(\.identifier) == ["depot"],
                    "the snapshot shows the vehicle inside")
                #expect(inside.generation > generation)
            }
        }
        let all = try await store.pending(after: 0, limit: 100)
        // The 600 m driven make a trip too (500 m, Traccar's minimal trip distance): on `trips`.
        #expect(all.filter { $0.topic == testTopics.trips }.count == 1)
        let entries = all.filter { $0.topic == testTopics.events }
        let events = entries.compactMap { try? JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any] }
        #expect(events.map { $0["event"] as? String } == ["enter", "exit"])
        #expect(all.map(\.sequence) == all.map(\.sequence).sorted())
        let after = await processor.snapshot(listing: 10)
        #expect(after.monitors.first?.satisfiedCount == 0 && after.monitors.first?.unsatisfiedCount == 1)
        #expect(after.outbox.transitions == 3 && after.storeProblem == nil)
        await store.close()
    }

    /// `reportLocation` is answered by the next fix, not the last one: a consumer that keeps only newer
    /// locations (OwnTracks Recorder's `last`) takes it. With no fix within `reportWait`, the last one.
    @Test func reportLocationIsAnsweredByTheNextFixOrAfterAWaitByTheLast() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let configuration = try testConfiguration(
            #"{"fleet":"test","vehicle":"v1","liveUpdates":{"startedByDefault":false}}"#, storeIn: directory)
        let store = try await AgentStore.open(path: configuration.storePath, logger: logger)
        let outbox = try await Outbox.open(store, logger: logger)
        let processor = try await FixProcessor(
            configuration: configuration, store: store, outbox: outbox, outputs: testOutputs(configuration),
            logger: logger)
        let start = Date(timeIntervalSince1970: 1_767_225_600)
        func fix(_ k: Int) -> Location {
            Location(
                coordinate: Coordinate(latitude: 52, longitude: 5 + Double(k) * 1e-4), horizontalAccuracy: 3,
                timestamp: start.addingTimeInterval(Double(k)))
        }
        func answers() async throws -> [String] {
            try await outbox.groupCommit()
            return try await store.pending(after: 0, limit: 100).filter { $0.topic == testTopics.location }.compactMap {
                (try? JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any])?["time"] as? String
            }
        }
        await processor.handle(fix(0))
        await processor.reportLocation()
        await processor.answerOverdueReport()
        #expect(try await answers().isEmpty, "not the fix it had: it waits for the next")
        await processor.handle(fix(1))
        await processor.handle(fix(2))
        #expect(try await answers() == ["2026-01-01T00:00:01.000Z"], "the next fix, once")

        // No fix comes: after the wait, the last one, with its own time.
        await processor.reportLocation()
        try await Task.sleep(for: FixProcessor.reportWait + .milliseconds(200))
        await processor.answerOverdueReport()
        #expect(try await answers() == ["2026-01-01T00:00:01.000Z", "2026-01-01T00:00:02.000Z"])
        await store.close()
    }

    /// A fix that changes nothing writes nothing, so at a stop the last fix is stored: a restart resumes
    /// (a replay, the timeline's floor) from it, not from the last transition's.
    @Test func aStopStoresTheLastFixAndARestartResumesFromIt() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let configuration = try testConfiguration(
            #"{"fleet":"test","vehicle":"v1","liveUpdates":{"startedByDefault":false}}"#, storeIn: directory)
        let start = Date(timeIntervalSince1970: 1_767_225_600)
        do {
            let store = try await AgentStore.open(path: configuration.storePath, logger: logger)
            let processor = try await FixProcessor(
                configuration: configuration, store: store, outbox: try await Outbox.open(store, logger: logger),
                outputs: testOutputs(configuration), logger: logger)
            let centre = Coordinate(latitude: 52, longitude: 5)
            await processor.apply([
                .add(monitor: "default", identifier: "depot", condition: try .circle(center: centre, radius: 100))
            ])
            // Inside from the first fix (a transition, stored), then a minute of fixes that change nothing.
            for k in 0...60 {
                await processor.handle(
                    Location(coordinate: centre, horizontalAccuracy: 3, timestamp: start.addingTimeInterval(Double(k))))
            }
            await processor.recordLastFixes()
            await store.close()
        }
        let store = try await reopenStore(path: configuration.storePath, logger: logger)
        let restarted = try await FixProcessor(
            configuration: configuration, store: store, outbox: try await Outbox.open(store, logger: logger),
            outputs: testOutputs(configuration), logger: logger)
        #expect(await restarted.lastAcceptedFixTime == start.addingTimeInterval(60))
        await store.close()
    }

    /// A place finder that answers by the position's side of a meridian, or not at all.
    struct FakePlaces: PlaceFinding {
        var answers = true
        func place(at coordinate: Coordinate) -> PlaceSummary? {
            guard answers else { return nil }
            var p = PlaceSummary(
                Placemark(
                    name: coordinate.longitude < 5 ? "West" : "East",
                    locality: coordinate.longitude < 5 ? "West" : "East",
                    location: coordinate, population: 1000, distance: 12.34))
            p.isoCountryCode = "NL"
            return p
        }
    }

    @Test(arguments: [true, false])
    func eventsCarryThePlaceOfTheirPositionWhenPlacesAreOn(answers: Bool) async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let configuration = try testConfiguration(#"{"fleet":"test","vehicle":"v1"}"#, storeIn: directory)
        let store = try await AgentStore.open(path: configuration.storePath, logger: logger)
        let processor = try await FixProcessor(
            configuration: configuration, store: store, outbox: try await Outbox.open(store, logger: logger),
            outputs: testOutputs(configuration), places: FakePlaces(answers: answers), logger: logger)
        await processor.apply([
            .add(
                monitor: "default", identifier: "depot",
                condition: try Condition.circle(center: Coordinate(latitude: 52, longitude: 5), radius: 100))
        ])
        let start = Date(timeIntervalSince1970: 1_767_225_600)
        for k in 0...60 {
            let east = -300.0 + Double(k) * 10
            let at = Coordinate(latitude: 52, longitude: 5 + east / (111_320 * cos(52 * Double.pi / 180)))
            await processor.handle(
                Location(
                    coordinate: at, horizontalAccuracy: 3, speed: 10, course: 90,
                    timestamp: start.addingTimeInterval(Double(k))))
        }
        let entries = try await store.pending(after: 0, limit: 100).filter { $0.topic == testTopics.events }
        let events = entries.compactMap { try? JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any] }
        #expect(events.map { $0["event"] as? String } == ["enter", "exit"])
        if answers {
            let places = events.compactMap { $0["place"] as? [String: Any] }
            // Entered west of the centre, left east of it.
            #expect(places.map { $0["locality"] as? String } == ["West", "East"])
            #expect(places.allSatisfy { $0["isoCountryCode"] as? String == "NL" && $0["distance"] as? Double == 12.3 })
            #expect(await processor.lastPlace()?.locality == "East")
        } else {
            #expect(events.allSatisfy { $0.keys.contains("place") && $0["place"] is NSNull }, "no answer: null")
        }
        await store.close()
    }

    @Test func withPlacesOffEventsHaveNoPlaceKey() async throws {
        let payload = Payloads.event(
            MonitorEvent(
                identifier: "a", kind: .enter, state: .satisfied, date: Date(),
                location: Location(
                    coordinate: Coordinate(latitude: 1, longitude: 2), horizontalAccuracy: 3, timestamp: Date())),
            monitor: "default", fleet: "f", vehicle: "v", eventID: "e", sequence: 1)
        #expect(!String(decoding: payload, as: UTF8.self).contains("place"))
        var off = try AgentConfiguration.parse(
            JSONParser.parse(Array(#"{"fleet":"f","vehicle":"v","places":{"enabled":false}}"#.utf8)))
        #expect(off.places.enabled == false)
        off = try AgentConfiguration.parse(JSONParser.parse(Array(#"{"fleet":"f","vehicle":"v"}"#.utf8)))
        #expect(off.places.enabled == true && off.places.gazetteer == nil)
        #expect(throws: (any Error).self) {
            try AgentConfiguration.parse(
                JSONParser.parse(Array(#"{"fleet":"f","vehicle":"v","places":{"on":true}}"#.utf8)))
        }
    }
}

/// The outputs `buildAgent` would make for `configuration` (no metrics).
func testOutputs(_ configuration: AgentConfiguration) -> MultiplexOutput {
    OutputRegistry.outputs(
        configuration.outputContext(
            topics: Topics(
                prefix: configuration.mqtt.topicPrefix, fleet: configuration.fleet, vehicle: configuration.vehicle),
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }))
}
