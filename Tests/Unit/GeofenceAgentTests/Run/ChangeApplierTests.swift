import AgentOutputs
import AgentTestSupport
import Foundation
import GeofenceCore
import GeofenceStore
import Logging
import Mosquitto
import TestSupport
import Testing

@testable import GeofenceAgent

/// The change applier with an in-memory store, monitors and broker: what a sync, a command or the CLI's
/// inbox does, without a process or a broker.
@Suite(.offTheCooperativePool(.agentsPool)) struct ChangeApplierTests {
    let store = FakeConditionStore()
    let host = FakeMonitorHost()
    let publisher = FakePublisher()
    let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    func applier(stateRequest: @escaping @Sendable (String?) async -> Void = { _ in }) -> ChangeApplier {
        ChangeApplier(
            store: store, host: host, publisher: publisher, topics: testTopics, logger: logger,
            stateRequest: stateRequest)
    }

    @Test func aBatchStoresEveryGoodGeofenceInOneTransactionAndRefusesEachBadOneByName() async throws {
        var messages = (0..<500).map { geofenceMessage("g\($0)", circleFeature("g\($0)")) }
        messages.insert(
            geofenceMessage(
                "bad",
                #"{"type":"Feature","id":"bad","geometry":{"type":"Point","coordinates":[5,95]},"properties":{"radius":10}}"#
            ), at: 100)
        messages.insert(geofenceMessage("mismatch", circleFeature("other")), at: 200)
        messages.insert(geofenceMessage("bad id!", circleFeature("x")), at: 300)
        let count = await applier().geofences(messages)
        #expect(count == .init(stored: 500, deleted: 0, older: 0, rejected: 3))
        #expect(store.transactions == 1, "one transaction for the whole batch")
        #expect(await host.identifiers["default"]?.count == 500)
        let errors = publisher.objects(on: testTopics.errors)
        #expect(errors.count == 3)
        #expect(errors.allSatisfy { $0["kind"] as? String == "geofence" })
        #expect(
            errors.contains {
                ($0["reason"] as? String)?.contains("latitude 95") == true && $0["identifier"] as? String == "bad"
            })
        #expect(errors.contains { ($0["reason"] as? String)?.contains("does not match the topic") == true })
    }

    @Test func versionsAndDeletionsKeepTheirMeaningWithinABatch() async throws {
        let a = applier()
        await a.geofences([geofenceMessage("depot", circleFeature("depot", version: 5, monitor: "depots"))])
        // Older, then newer, then a deletion and a re-creation, all in one batch, in order.
        let count = await a.geofences([
            geofenceMessage("depot", circleFeature("depot", version: 4, monitor: "depots")),
            geofenceMessage("depot", circleFeature("depot", version: 6, monitor: "depots")),
            geofenceMessage("gone", circleFeature("gone")),
            geofenceMessage("gone", nil),
            geofenceMessage("never-existed", nil),
        ])
        #expect(count == .init(stored: 2, deleted: 2, older: 1, rejected: 0))
        #expect(store.rows["depots"]?["depot"]?.version == 6)
        #expect(store.rows["default"]?["gone"] == nil)
        #expect(await host.identifiers == ["depots": ["depot"], "default": []])
    }

    @Test func aStoreFailureRefusesOnlyTheGeofencesItHitsAndSaysSo() async throws {
        store.fail(identifiers: ["g3"])
        let count = await applier().geofences((0..<6).map { geofenceMessage("g\($0)", circleFeature("g\($0)")) })
        #expect(count.stored == 5 && count.rejected == 1)
        #expect(store.rows["default"]?.keys.sorted() == ["g0", "g1", "g2", "g4", "g5"])
        let errors = publisher.objects(on: testTopics.errors)
        #expect(errors.count == 1)
        #expect(errors.first?["kind"] as? String == "store")
        #expect((errors.first?["reason"] as? String)?.contains("no space left") == true)
        #expect(
            await host.identifiers["default"]?.contains("g3") == false,
            "what the store refused never reaches the monitors")
    }

    @Test func whileTheBrokerIsAwayRefusalsAreLoggedNotQueued() async throws {
        publisher.setConnected(false)
        let count = await applier().geofences([geofenceMessage("bad", "{")])
        #expect(count.rejected == 1)
        #expect(publisher.messages.isEmpty)
    }

    @Test func commandsAreAppliedOrRefusedAsCommands() async throws {
        let requests = RequestLog()
        let a = applier(stateRequest: { await requests.add($0) })
        let cmd = testTopics.command
        #expect(await a.command(MQTTMessage(topic: cmd, payload: Array("startLiveUpdates".utf8))))
        #expect(await host.liveUpdates == true)
        #expect(store.settings["liveUpdates.started"] == "true")
        #expect(await a.command(MQTTMessage(topic: cmd, payload: Array(#"{"command":"reportLocation"}"#.utf8))))
        #expect(await host.locationReports == 1)
        #expect(
            await a.command(
                MQTTMessage(topic: cmd, payload: Array(#"{"command":"reportState","monitor":"depots"}"#.utf8))))
        #expect(await requests.monitors == ["depots"])
        #expect(
            await a.command(MQTTMessage(topic: cmd, payload: Array("resync".utf8))) == false, "resync is the caller's")
        #expect(await a.command(MQTTMessage(topic: cmd, payload: Array("selfDestruct".utf8))))
        #expect(await a.command(MQTTMessage(topic: cmd, payload: Array(#"{"verb":"x"}"#.utf8))))
        let errors = publisher.objects(on: testTopics.errors)
        #expect(errors.count == 2)
        #expect(errors.allSatisfy { $0["kind"] as? String == "command" })
        #expect((errors.first?["reason"] as? String)?.contains("unknown command 'selfDestruct'") == true)
    }

    @Test func aSettingTheStoreCannotKeepIsReportedNotSwallowed() async throws {
        store.failEverything(true)
        #expect(await applier().command(MQTTMessage(topic: testTopics.command, payload: Array("stopLiveUpdates".utf8))))
        #expect(await host.liveUpdates == false)
        let errors = publisher.objects(on: testTopics.errors)
        #expect(errors.first?["kind"] as? String == "store")
        #expect((errors.first?["reason"] as? String)?.contains("could not record it") == true)
    }

    @Test func theInboxAppliesAddsAndRemovalsAndRenamesWhatItRefuses() async throws {
        let inbox = FileManager.default.temporaryDirectory.appendingPathComponent("inbox-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: inbox) }
        try circleFeature("gate").write(
            to: inbox.appendingPathComponent("add-1.geojson"), atomically: true, encoding: .utf8)
        try #"{"monitor":"default","identifier":"gate"}"#.write(
            to: inbox.appendingPathComponent("remove-2.json"), atomically: true, encoding: .utf8)
        try "not json".write(to: inbox.appendingPathComponent("remove-3.json"), atomically: true, encoding: .utf8)
        let a = applier()
        await a.processInbox(inbox.path)
        #expect(await host.changes.count == 2)
        #expect(store.rows["default"]?["gate"] == nil)
        let left = try FileManager.default.contentsOfDirectory(atPath: inbox.path).sorted()
        #expect(left == ["remove-3.json.rejected"])
        #expect(publisher.objects(on: testTopics.errors).first?["kind"] as? String == "local")
    }

    /// The rounds that find a quiet inbox skip its listing; a request renamed in afterwards is still applied.
    @Test func aRequestAfterQuietRoundsIsStillApplied() async throws {
        let inbox = FileManager.default.temporaryDirectory.appendingPathComponent("inbox-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: inbox) }
        let past = timespec(tv_sec: time(nil) - 10, tv_nsec: 0)
        #expect(utimensat(AT_FDCWD, inbox.path, [past, past], 0) == 0)
        let a = applier()
        for _ in 0..<3 { await a.processInbox(inbox.path) }
        let request = inbox.appendingPathComponent("add-1.geojson")
        try circleFeature("late").write(to: request, atomically: true, encoding: .utf8)
        await a.processInbox(inbox.path)
        #expect(await host.identifiers["default"] == Set(["late"]))
        #expect(try FileManager.default.contentsOfDirectory(atPath: inbox.path).isEmpty)
    }
}

actor RequestLog {
    private(set) var monitors: [String?] = []
    func add(_ monitor: String?) { monitors.append(monitor) }
}
