import AgentOutputs
import AgentTestSupport
import Foundation
import GeofenceCore
import GeofenceStore
import LocalServers
import Logging
import ServiceLifecycle
import ServiceLifecycleTestKit
import TestSupport
import Testing

@testable import AgentJobs
@testable import GeofenceAgent
@testable import Mosquitto

/// Each of the agent's loops is a `Service` that does its work, then ends when the graceful shutdown
/// comes (SIGTERM in the agent), with service-lifecycle's TestKit standing in for the signal.
@Suite(.offTheCooperativePool(.agentsPool)) struct ServiceTests {
    let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    /// A processor, its outbox and a reporter over a store in a temporary directory.
    struct Parts {
        let configuration: AgentConfiguration
        let store: AgentStore
        let outbox: Outbox
        let processor: FixProcessor
        let reporter: StateReporter
    }

    func parts(publisher: any MessagePublishing = FakePublisher()) async throws -> Parts {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("services-\(UUID().uuidString)")
        var configuration = try AgentConfiguration.parse(
            JSONParser.parse(Array(#"{"fleet":"test","vehicle":"v1"}"#.utf8)))
        configuration.storePath = directory.appendingPathComponent("agent.sqlite").path
        let store = try await AgentStore.open(path: configuration.storePath, logger: logger)
        let outbox = try await Outbox.open(store, logger: logger)
        let processor = try await FixProcessor(
            configuration: configuration, store: store, outbox: outbox,
            outputs: testOutputs(configuration), logger: logger)
        let reporter = StateReporter(
            source: processor, publisher: publisher, topics: testTopics, configuration: configuration,
            logger: logger, brokerDescription: { "connected" })
        return Parts(
            configuration: configuration, store: store, outbox: outbox, processor: processor, reporter: reporter)
    }

    static var sail: String {
        AgentBinary.fixture("ijsselmeer-sail.gpx")
    }
    static var sailGeofences: String {
        AgentBinary.fixture("ijsselmeer.geojson")
    }

    /// What `simulate` decides for the sail: the replay through the service must give the same events.
    func simulatedEvents() throws -> [String] {
        var lines: [String] = []
        try SimulateJob.run(
            conditionsPath: Self.sailGeofences, trackPath: Self.sail, accuracy: 5,
            emit: { lines.append($0) }, warn: { _ in })
        return lines.compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]).flatMap { object in
                (object["event"] as? String).map { "\($0) \(object["identifier"] as? String ?? "")" }
            }
        }.filter { event in EventKind.published.contains { event.hasPrefix($0.rawValue + " ") } }
    }

    /// Polls `condition` every 10 ms for at most `seconds` (a bound for a stuck test, not a timing claim).
    func eventually(_ seconds: Double, _ condition: () async -> Bool) async -> Bool {
        let end = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < end {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return await condition()
    }

    /// After a restart the monitors answer from their regions' boxes; the refinement service gives their
    /// indexes the octagons and masks, then ends by itself while the agent goes on.
    @Test func theRefinementServiceRefinesTheRestoredIndexesThenEnds() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("services-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = try AgentConfiguration.parse(
            JSONParser.parse(Array(#"{"fleet":"test","vehicle":"v1"}"#.utf8)))
        configuration.storePath = directory.appendingPathComponent("agent.sqlite").path
        // A store holding 2,000 conditions, as a stopped agent leaves it.
        let before = try await AgentStore.open(path: configuration.storePath, logger: logger)
        let centre = Coordinate(latitude: 52.8, longitude: 5.3)
        _ = try await before.putConditions(
            try (0..<2_000).map { k in
                let at = Coordinate(
                    latitude: centre.latitude + Double(k % 50) * 0.002,
                    longitude: centre.longitude + Double(k / 50) * 0.003)
                return .init(
                    monitor: "default", identifier: "c\(k)", condition: try Condition.circle(center: at, radius: 80),
                    definition: "{}", source: "test")
            })
        await before.close()

        let store = try await AgentStore.open(path: configuration.storePath, logger: logger)
        let outbox = try await Outbox.open(store, logger: logger)
        let processor = try await FixProcessor(
            configuration: configuration, store: store, outbox: outbox, outputs: testOutputs(configuration),
            logger: logger)
        #expect(await processor.monitorsAwaitingRefinement() == ["default"])
        let service = IndexRefinementService(processor: processor)
        await testGracefulShutdown { _ in await service.run() }
        #expect(await processor.monitorsAwaitingRefinement() == [])
        #expect(await processor.snapshot(listing: 0).conditions == 2_000)
        await store.close()
    }

    @Test func theFixServiceReplaysADriveThenWaitsForTheShutdown() async throws {
        let p = try await parts()
        let applier = ChangeApplier(
            store: FakeConditionStore(), host: p.processor, publisher: FakePublisher(), topics: testTopics,
            logger: logger)
        try await applier.importLocalConditions(Self.sailGeofences)
        let replay = try GPXReplay(path: Self.sail, speedFactor: 10_000)
        let service = FixService(
            processor: p.processor, reporter: p.reporter, outbox: p.outbox, source: .replay(replay),
            exitAtReplayEnd: false)
        try await testGracefulShutdown { trigger in
            let running = Task { try await service.run() }
            let last = try #require(replay.points.last?.time)
            #expect(
                await eventually(120) { await p.processor.lastAcceptedFixTime == last }, "the whole drive was handled")
            // The end is said after the last fix is handled, so it is waited for too.
            #expect(
                await eventually(120) { await p.processor.snapshot(listing: 0).gps.state == .noData },
                "the end of the replay is said")
            trigger.triggerGracefulShutdown()
            try await running.value
        }
        let events = try await p.store.pending(after: 0, limit: 1_000).compactMap { entry -> String? in
            guard entry.topic == testTopics.events,
                let object = try? JSONSerialization.jsonObject(with: Data(entry.payload)) as? [String: Any]
            else { return nil }
            return "\(object["event"] as? String ?? "") \(object["identifier"] as? String ?? "")"
        }
        #expect(events == (try simulatedEvents()), "the service's events are simulate's")
        await p.store.close()
    }

    @Test func aReplayThatExitsAtItsEndEndsTheServiceByItself() async throws {
        let p = try await parts()
        let replay = try GPXReplay(path: Self.sail, speedFactor: 10_000)
        let service = FixService(
            processor: p.processor, reporter: p.reporter, outbox: p.outbox, source: .replay(replay),
            exitAtReplayEnd: true, drainTimeout: .zero)
        try await testGracefulShutdown { _ in try await service.run() }
        #expect(await p.processor.lastAcceptedFixTime == replay.points.last?.time)
        await p.store.close()
    }

    @Test func theSyncInputAppliesGeofencesAndStopsAtTheShutdown() async throws {
        let host = FakeMonitorHost()
        let applier = ChangeApplier(
            store: FakeConditionStore(), host: host, publisher: FakePublisher(), topics: testTopics, logger: logger)
        let (stream, feed) = AsyncStream<MQTTMessage>.makeStream()
        let service = InputService(
            input: GeofenceSyncInput(filters: [testTopics.fleetGeofences]),
            subscriptions: [MQTTSubscription(filter: testTopics.fleetGeofences, stream: stream)],
            applier: applier)
        await testGracefulShutdown { trigger in
            let running = Task { await service.run() }
            for k in 0..<3 { feed.yield(geofenceMessage("g\(k)", circleFeature("g\(k)"))) }
            #expect(await eventually(30) { await host.identifiers["default"] == ["g0", "g1", "g2"] })
            trigger.triggerGracefulShutdown()
            await running.value
        }
        feed.finish()
    }

    @Test func theCommandInputActsOnCommandsAndStopsAtTheShutdown() async throws {
        let host = FakeMonitorHost()
        let applier = ChangeApplier(
            store: FakeConditionStore(), host: host, publisher: FakePublisher(), topics: testTopics, logger: logger)
        let (stream, feed) = AsyncStream<MQTTMessage>.makeStream()
        let client = try MQTTClient(
            configuration: MQTTConfiguration(host: "127.0.0.1", port: try LocalProcess.freePort(), clientID: "c"),
            logger: logger)
        let service = InputService(
            input: OperatorCommandInput(
                filters: [testTopics.command], geofenceFilters: [], transport: client, logger: logger),
            subscriptions: [MQTTSubscription(filter: testTopics.command, stream: stream)], applier: applier)
        await testGracefulShutdown { trigger in
            let running = Task { await service.run() }
            feed.yield(
                MQTTMessage(
                    topic: testTopics.command, payload: Array(#"{"command":"startLiveUpdates"}"#.utf8), retained: false)
            )
            feed.yield(MQTTMessage(topic: testTopics.command, payload: Array("reportLocation".utf8), retained: false))
            let acted = await eventually(30) {
                let started = await host.liveUpdates
                let reports = await host.locationReports
                return started == true && reports == 1
            }
            #expect(acted, "live updates started and the location asked for")
            trigger.triggerGracefulShutdown()
            await running.value
        }
        feed.finish()
    }

    @Test func theReportingServiceKeepsTheStatusFileAndStopsAtTheShutdown() async throws {
        let p = try await parts()
        let applier = ChangeApplier(
            store: FakeConditionStore(), host: p.processor, publisher: FakePublisher(), topics: testTopics,
            logger: logger)
        let paths = StorePaths(p.configuration.storePath)
        let service = ReportingService(
            processor: p.processor, applier: applier, reporter: p.reporter, inbox: paths.inbox)
        await testGracefulShutdown { trigger in
            let running = Task { await service.run() }
            #expect(
                await eventually(30) { FileManager.default.fileExists(atPath: paths.status) },
                "the status file is written")
            trigger.triggerGracefulShutdown()
            await running.value
        }
        let status =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: paths.status)))
            as? [String: Any]
        #expect(status?["status"] as? String == "online")
        await p.store.close()
    }

    /// A second with nothing to do costs the round a look on the store's thread and no job; a change in
    /// what the status says makes a round, and the status file shows it.
    @Test func theReportingServicesRoundRunsOnlyWhenItHasWork() async throws {
        let p = try await parts()
        let paths = StorePaths(p.configuration.storePath)
        // Told by the kernel whether the inbox may hold a request, as in the agent: without it every round
        // lists the inbox.
        let inboxWatch = InboxWatch(inbox: paths.inbox)
        try #require(inboxWatch.attach(to: p.processor.storeExecutor), "inotify watches the store's directory")
        let applier = ChangeApplier(
            store: FakeConditionStore(), host: p.processor, publisher: FakePublisher(), topics: testTopics,
            logger: logger, inboxWatch: inboxWatch)
        let service = ReportingService(
            processor: p.processor, applier: applier, reporter: p.reporter, inbox: paths.inbox,
            inboxWatch: inboxWatch)
        func looks() -> Int { service.roundsLooked.load(ordering: .relaxed) }
        func liveUpdatesInTheStatusFile() -> Bool? {
            let data = try? Data(contentsOf: URL(fileURLWithPath: paths.status))
            let status = data.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
            return status?["liveUpdates"] as? Bool
        }
        await testGracefulShutdown { trigger in
            let running = Task { await service.run() }
            #expect(await eventually(120) { looks() >= 1 })
            let jobs = p.processor.storeExecutor.enqueuedJobs
            #expect(await eventually(120) { looks() >= 3 })
            #expect(service.roundsRun.load(ordering: .relaxed) == 1, "the round at the start, and no other")
            #expect(p.processor.storeExecutor.enqueuedJobs == jobs, "a look enqueued a job")
            #expect(liveUpdatesInTheStatusFile() == false)
            await p.processor.setLiveUpdates(true)
            #expect(await eventually(120) { liveUpdatesInTheStatusFile() == true }, "the change reached the file")
            #expect(service.roundsRun.load(ordering: .relaxed) >= 2)
            trigger.triggerGracefulShutdown()
            await running.value
        }
        await p.store.close()
    }

    /// The state goes out when the conditions' state moves, and never sooner than 250 ms after the last
    /// one: the changes of that wait go in one message, and the last change is always told. Only the lower
    /// bound is checked: a busy machine makes every wait longer, never shorter.
    @Test func theStateFollowsEveryChangeAndKeepsItsSpacing() async throws {
        let publisher = FakePublisher()
        let p = try await parts(publisher: publisher)
        let applier = ChangeApplier(
            store: FakeConditionStore(), host: p.processor, publisher: publisher, topics: testTopics,
            logger: logger)
        let inbox = StorePaths(p.configuration.storePath).inbox
        let service = ReportingService(processor: p.processor, applier: applier, reporter: p.reporter, inbox: inbox)
        func conditionsInTheLastState() -> Int? {
            publisher.objects(on: testTopics.state).last?["conditions"] as? Int
        }
        let circles = try (1...6).map { k in
            try Condition.circle(center: Coordinate(latitude: 52, longitude: 5 + Double(k)), radius: 100)
        }
        await testGracefulShutdown { trigger in
            let running = Task { await service.run() }
            #expect(await eventually(120) { conditionsInTheLastState() == 0 }, "the state at the start")
            for (k, circle) in circles.enumerated() {
                await p.processor.apply([.add(monitor: "default", identifier: "c\(k)", condition: circle)])
                // Three changes at once, then three more after the spacing.
                if k == 2 { try? await Task.sleep(for: .milliseconds(400)) }
            }
            #expect(await eventually(120) { conditionsInTheLastState() == 6 }, "the last change told")
            let times = publisher.times(on: testTopics.state)
            #expect(times.count >= 2, "the state at the start, and the last one")
            for (earlier, later) in zip(times, times.dropFirst()) {
                #expect(later - earlier >= 250_000_000, "\(later - earlier) ns apart")
            }
            trigger.triggerGracefulShutdown()
            await running.value
        }
        await p.store.close()
    }
}
