import AgentOutputs
import AgentTestSupport
import Foundation
import GPSD
import GeofenceCore
import GeofenceStore
import Logging
import Places
import Synchronization
import TestSupport
import Testing

@testable import GeofenceAgent

/// The state topic stays small whatever the number of conditions, and the detail comes in pages.
@Suite(.offTheCooperativePool(.computing)) struct StateReporterTests {
    /// A monitor of `count` circles, where the first `inside` are satisfied and the next `unknown` unknown.
    static func monitor(_ name: String = "default", count: Int, inside: Int, unknown: Int) -> MonitorEngine {
        var engine = MonitorEngine(name: name)
        for k in 0..<count {
            let state: ConditionState = k < inside ? .satisfied : (k < inside + unknown ? .unknown : .unsatisfied)
            engine.restore(
                MonitorRecord(
                    condition: try! Condition.circle(
                        center: Coordinate(latitude: 52, longitude: 5 + Double(k) * 1e-3), radius: 50),
                    state: state, since: Date(timeIntervalSince1970: 1_767_225_600)),
                identifier: String(format: "customer-%06d", k))
        }
        return engine
    }

    func reporter(_ source: FakeSnapshotSource, _ publisher: FakePublisher) -> StateReporter {
        let configuration = try! AgentConfiguration.parse(
            JSONParser.parse(Array(#"{"fleet":"test","vehicle":"v1","mqtt":{"host":"127.0.0.1","port":1883}}"#.utf8)))
        return StateReporter(
            source: source, publisher: publisher, topics: testTopics, configuration: configuration,
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }, brokerDescription: { "connected" })
    }

    @Test(arguments: [(100, 3, 0), (100_000, 2, 0), (100_000, 0, 100_000), (100_000, 5_000, 20_000)])
    func theStateFitsIn64KilobytesAndItsCountsAreExact(count: Int, inside: Int, unknown: Int) async throws {
        let source = FakeSnapshotSource(monitors: [Self.monitor(count: count, inside: inside, unknown: unknown)])
        let publisher = FakePublisher()
        await reporter(source, publisher).publishStateIfChanged()
        let message = try #require(publisher.messages.first { $0.topic == testTopics.state })
        #expect(message.retain)
        #expect(message.payload.count <= StateReporter.maximumMessageBytes, "\(message.payload.count) bytes")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any])
        #expect(object["conditions"] as? Int == count)
        let m = try #require((object["monitors"] as? [String: Any])?["default"] as? [String: Any])
        #expect(
            m["satisfied"] as? Int == inside && m["unknown"] as? Int == unknown
                && m["unsatisfied"] as? Int == count - inside - unknown)
        let listed = (m["inside"] as? [String: Any])?.count ?? -1
        #expect(listed == min(inside, StateReporter.listing) || (m["truncated"] as? Bool == true && listed > 0))
        #expect(
            (m["truncated"] as? Bool) == (listed < inside || ((m["unknownConditions"] as? [Any])?.count ?? 0) < unknown)
        )
    }

    @Test func theStateIsPublishedOnlyWhenItChangedAndNotWhileTheBrokerIsAway() async throws {
        let publisher = FakePublisher(connected: false)
        let r = reporter(FakeSnapshotSource(monitors: [Self.monitor(count: 10, inside: 1, unknown: 0)]), publisher)
        await r.publishStateIfChanged()
        await r.publishStatus()
        #expect(publisher.messages.isEmpty, "nothing is queued for a broker that is away")
        publisher.setConnected(true)
        await r.publishStateIfChanged()
        await r.publishStateIfChanged()
        #expect(
            publisher.messages.filter { $0.topic == testTopics.state }.count == 1,
            "the same generation is published once")
        await r.publishStateIfChanged(force: true)
        #expect(
            publisher.messages.filter { $0.topic == testTopics.state }.count == 2, "after a reconnect it goes out again"
        )
    }

    @Test func theDetailOnRequestCoversEveryConditionInPagesOfAtMost64Kilobytes() async throws {
        let publisher = FakePublisher()
        let r = reporter(
            FakeSnapshotSource(monitors: [
                Self.monitor(count: 20_000, inside: 7, unknown: 0),
                Self.monitor("depots", count: 3, inside: 1, unknown: 1),
            ]), publisher)
        await r.publishDetail(monitor: nil)
        let pages = publisher.messages.filter { $0.topic == testTopics.stateDetail }
        #expect(pages.count > 1)
        #expect(pages.allSatisfy { $0.payload.count <= StateReporter.maximumMessageBytes && !$0.retain })
        let objects = publisher.objects(on: testTopics.stateDetail)
        let conditions = objects.flatMap { $0["conditions"] as? [[String: Any]] ?? [] }
        #expect(conditions.count == 20_003)
        #expect(conditions.filter { $0["state"] as? String == "satisfied" }.count == 8)
        #expect(objects.map { $0["page"] as? Int ?? 0 } == Array(1...pages.count))
        #expect(objects.allSatisfy { $0["pages"] as? Int == pages.count })
    }

    /// A fresh directory for a store's files (the status file is written beside the store).
    static func storeDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reporter-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    static func configuration(storeIn directory: URL) throws -> AgentConfiguration {
        var configuration = try AgentConfiguration.parse(
            JSONParser.parse(Array(#"{"fleet":"test","vehicle":"v1","mqtt":{"host":"127.0.0.1","port":1883}}"#.utf8)))
        configuration.storePath = directory.appendingPathComponent("agent.sqlite").path
        return configuration
    }

    /// The round runs every second; a gazetteer lookup a second costs a vehicle, so only a status that goes
    /// out looks its place up.
    @Test func theRoundLooksThePlaceUpOnlyForAStatusThatGoesOut() async throws {
        let directory = try Self.storeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let configuration = try Self.configuration(storeIn: directory)
        let place = try JSONDecoder().decode(
            PlaceSummary.self, from: Data(#"{"locality":"East","distance":12.3}"#.utf8))
        let source = FakeSnapshotSource(monitors: [Self.monitor(count: 4, inside: 2, unknown: 0)], place: place)
        let publisher = FakePublisher(connected: true)
        let r = StateReporter(
            source: source, publisher: publisher, topics: testTopics, configuration: configuration,
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }, brokerDescription: { "connected" })
        await r.reportStatus()
        #expect(source.placeLookups.count == 1, "the first round writes the file and publishes: one lookup")
        let written = try JSONDecoder().decode(
            AgentStatus.self, from: Data(contentsOf: URL(fileURLWithPath: StorePaths(configuration.storePath).status)))
        #expect(written.place == place)
        let published = publisher.objects(on: testTopics.status)
        #expect(published.count == 1)
        #expect((published.first?["place"] as? [String: Any])?["locality"] as? String == "East")
        for _ in 0..<5 { await r.reportStatus() }
        #expect(source.placeLookups.count == 1, "nothing changed and no heartbeat is due: no lookup")
        #expect(publisher.objects(on: testTopics.status).count == 1)
    }

    /// At 1 Hz a status built every second is most of what a second costs the agent beyond its fix: the round
    /// builds one only when what it would say may have changed, and then writes and publishes it in that round.
    @Test func theRoundBuildsAStatusOnlyWhenItsInputsMoved() async throws {
        let directory = try Self.storeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let configuration = try Self.configuration(storeIn: directory)
        let source = FakeSnapshotSource(monitors: [Self.monitor(count: 4, inside: 2, unknown: 0)])
        let publisher = FakePublisher(connected: true)
        let broker = Mutex("connected")
        let r = StateReporter(
            source: source, publisher: publisher, topics: testTopics, configuration: configuration,
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() },
            brokerDescription: { broker.withLock { $0 } })
        let file = URL(fileURLWithPath: StorePaths(configuration.storePath).status)
        func fileSays() throws -> AgentStatus {
            try JSONDecoder().decode(AgentStatus.self, from: Data(contentsOf: file))
        }

        await r.reportStatus()
        #expect(source.snapshots.count == 1 && publisher.objects(on: testTopics.status).count == 1)
        for _ in 0..<5 { await r.reportStatus() }
        #expect(source.snapshots.count == 1, "nothing moved and no heartbeat is due: no status built")
        // The agent's round asks the gate from the processor's isolation, without entering the reporter.
        #expect(!r.needsRound(r.roundInputs(await source.statusInputs())))

        source.present.value.withLock { $0.gps = GPSStatus(state: .noFix, detail: "no satellites") }
        #expect(r.needsRound(r.roundInputs(await source.statusInputs())), "an input moved")
        await r.reportStatus()
        #expect(try fileSays().gps.state == "noFix", "a changed input is in the file at the next round")
        let gps = publisher.objects(on: testTopics.status).last?["gps"] as? [String: Any]
        #expect(gps?["state"] as? String == "noFix", "and published")
        source.present.value.withLock { $0.storeProblem = "disk full" }
        await r.reportStatus()
        #expect(try fileSays().storeProblem == "disk full")
        broker.withLock { $0 = "disconnected: link lost" }
        await r.reportStatus()
        #expect(try fileSays().broker == "disconnected: link lost")
        // A change already sent outside the round (a reconnection's forced status): the round builds one
        // status, finds nothing to send, and settles.
        source.present.value.withLock { $0.storeProblem = nil }
        await r.writeStatusFile(online: true, force: true)
        await r.publishStatus(force: true)
        let sent = publisher.objects(on: testTopics.status).count
        let before = source.snapshots.count
        await r.reportStatus()
        #expect(source.snapshots.count == before + 1 && publisher.objects(on: testTopics.status).count == sent)
        let built = source.snapshots.count
        for _ in 0..<5 { await r.reportStatus() }
        #expect(source.snapshots.count == built, "settled again")
        #expect(publisher.objects(on: testTopics.status).count == sent)
    }

    /// An output that follows every status (Prometheus' gauges: the fix's age) is told one each round.
    @Test func anOutputThatFollowsEveryStatusIsToldOneEachRound() async throws {
        let directory = try Self.storeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let following = CountingOutput(observesStatus: true) {
            if case .status = $0 { true } else { false }
        }
        let r = StateReporter(
            source: FakeSnapshotSource(monitors: [Self.monitor(count: 4, inside: 2, unknown: 0)]),
            publisher: FakePublisher(connected: true), topics: testTopics,
            configuration: try Self.configuration(storeIn: directory), outputs: MultiplexOutput([following]),
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }, brokerDescription: { "connected" })
        for _ in 0..<4 { await r.reportStatus() }
        #expect(following.told.count == 4)
    }

    @Test func theStatusFileIsWrittenWithNoBroker() async throws {
        let directory = try Self.storeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let configuration = try Self.configuration(storeIn: directory)
        let r = StateReporter(
            source: FakeSnapshotSource(monitors: [Self.monitor(count: 4, inside: 2, unknown: 0)]),
            publisher: FakePublisher(connected: false),
            topics: testTopics, configuration: configuration,
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() },
            brokerDescription: { "unreachable: no connection" })
        await r.writeStatusFile(online: true)
        let status = try JSONDecoder().decode(
            AgentStatus.self, from: Data(contentsOf: URL(fileURLWithPath: StorePaths(configuration.storePath).status)))
        #expect(status.broker == "unreachable: no connection")
        #expect(status.conditions == 4 && status.monitors.first?.satisfied == 2)
    }
}
