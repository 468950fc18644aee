import AgentTestSupport
import Foundation
import GeofenceCore
import GeofenceStore
import Logging
import TestSupport
import Testing

@testable import GeofenceAgent

/// Fixes a source hands over on the store's thread are decided there, in the source's wake-up: a fix that
/// changes nothing costs no job on the thread, and one that must wait (a commit, a live update) goes to the
/// processor's follower with every fix after it, in order.
@Suite(.offTheCooperativePool(.agentsPool)) struct FixDeliveryTests {
    let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    /// A processor over a store in `directory`, with a circle of 100 m at (52, 5).
    func processor(in directory: URL, liveUpdates: Bool) async throws -> (FixProcessor, AgentStore) {
        let json = #"{"fleet":"test","vehicle":"v1","liveUpdates":{"startedByDefault":\#(liveUpdates)}}"#
        var configuration = try AgentConfiguration.parse(JSONParser.parse(Array(json.utf8)))
        configuration.storePath = directory.appendingPathComponent("agent.sqlite").path
        configuration.monitor = .eachFixAlone
        let store = try await AgentStore.open(path: configuration.storePath, logger: logger)
        let outbox = try await Outbox.open(store, logger: logger)
        let processor = try await FixProcessor(
            configuration: configuration, store: store, outbox: outbox, outputs: testOutputs(configuration),
            logger: logger)
        let centre = Coordinate(latitude: 52, longitude: 5)
        await processor.apply([
            .add(monitor: "default", identifier: "depot", condition: try Condition.circle(center: centre, radius: 100))
        ])
        return (processor, store)
    }

    func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("delivery-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// The events queued for the events topic, in order: `enter`, `exit`.
    func eventNames(in store: AgentStore) async throws -> [String] {
        try await store.pending(after: 0, limit: 1_000).filter { $0.topic == testTopics.events }.compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any])?["event"] as? String
        }
    }

    /// A GPX file in `directory`: 61 fixes a second apart, driving east through the circle at 10 m/s, or
    /// parked 300 m west of it.
    func drive(in directory: URL, parked: Bool) throws -> String {
        let start = Date(timeIntervalSince1970: 1_767_225_600)
        let points = (0...60).map { k -> String in
            let east = parked ? -300.0 : -300.0 + Double(k) * 10
            let longitude = 5 + east / (111_320 * cos(52 * Double.pi / 180))
            let time = ISO8601DateFormatter().string(from: start.addingTimeInterval(Double(k)))
            return #"<trkpt lat="52" lon="\#(longitude)"><time>\#(time)</time></trkpt>"#
        }
        let gpx = """
            <?xml version="1.0"?><gpx version="1.1" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>
            \(points.joined(separator: "\n"))
            </trkseg></trk></gpx>
            """
        let path = directory.appendingPathComponent("drive.gpx").path
        try gpx.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func aFixThatChangesNothingIsDecidedInTheSourcesWakeUpWithoutAJob() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (processor, store) = try await processor(in: directory, liveUpdates: false)
        let replay = try GPXReplay(path: try drive(in: directory, parked: true), speedFactor: 200)

        let executor = processor.storeExecutor
        let jobsBefore = executor.enqueuedJobs
        let delivery = FixDelivery(processor: processor)
        replay.deliver(on: executor, to: delivery)
        await processor.follow(delivery)
        let jobs = executor.enqueuedJobs - jobsBefore

        #expect(await processor.lastAcceptedFixTime == replay.locations.last?.timestamp, "every fix was decided")
        // The follower's start and its end, and the test's own calls: a handful, where a fix resumed by a
        // channel was a job each (61).
        #expect(jobs < 10, "\(jobs) jobs for 61 fixes")
        let rows = try await store.pending(after: 0, limit: 100)
        #expect(rows.isEmpty, "a parked vehicle with live updates off queues nothing")
        await store.close()
    }

    @Test func whatMustWaitGoesToTheFollowerAndEveryFixKeepsItsOrder() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Live updates on: every fix has a live update to queue after its decision.
        let (processor, store) = try await processor(in: directory, liveUpdates: true)
        let replay = try GPXReplay(path: try drive(in: directory, parked: false), speedFactor: 200)

        let delivery = FixDelivery(processor: processor)
        replay.deliver(on: processor.storeExecutor, to: delivery)
        await processor.follow(delivery)

        #expect(try await eventNames(in: store) == ["enter", "exit"])
        #expect(await processor.lastAcceptedFixTime == replay.locations.last?.timestamp)
        #expect(delivery.outstanding.load(ordering: .relaxed) == 0, "the follower took every step")
        await store.close()
    }

    /// A fix handed over on another thread (gpsd's reader, once the store's thread has gone) is not decided
    /// there: the follower decides it on the store's thread, in the order given.
    @Test func aFixFromAnotherThreadIsDecidedByTheFollower() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (processor, store) = try await processor(in: directory, liveUpdates: false)
        let replay = try GPXReplay(path: try drive(in: directory, parked: false), speedFactor: 200)

        let delivery = FixDelivery(processor: processor)
        #expect(!processor.storeExecutor.isCurrentThread)
        for location in replay.locations { delivery.accept(location) }
        delivery.finish()
        await processor.follow(delivery)

        #expect(try await eventNames(in: store) == ["enter", "exit"])
        #expect(await processor.lastAcceptedFixTime == replay.locations.last?.timestamp)
        await store.close()
    }
}
