import Foundation
import GeofenceCore
import Logging
import PropertyBased
import SQLite
import TestSupport
import Testing

@testable import GeofenceStore

func temporaryStorePath() -> String {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("store-test-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory.appendingPathComponent("agent.sqlite").path
}

let quietLogger = Logger(label: "test.store") { _ in SwiftLogNoOpLogHandler() }

/// `TestSupport.reopenStore` with this file's quiet logger.
func reopenStore(path: String) async throws -> AgentStore {
    try await reopenStore(path: path, logger: quietLogger)
}

let depot = Coordinate(latitude: 52.37, longitude: 4.89)

func fix(_ lat: Double, _ lon: Double, t: Double, accuracy: Double = 5) -> Location {
    Location(
        coordinate: Coordinate(latitude: lat, longitude: lon), horizontalAccuracy: accuracy,
        timestamp: Date(timeIntervalSince1970: 1_700_000_000 + t))
}

@Suite(.offTheCooperativePool(.waiting)) struct MigrationTests {
    @Test func everyStepAppliesOnceInOrder() throws {
        let path = temporaryStorePath()
        let db = try Database(path: path)
        for step in Migrations.all {
            let applied = try Migrations.migrate(db, to: step.version, now: 0)
            #expect(applied == [step.version], "step \(step.version) '\(step.name)'")
            #expect(try Migrations.version(db) == step.version)
        }
        #expect(try Migrations.migrate(db, now: 0).isEmpty, "migrating an up-to-date store changes nothing")
        // Step 1's tables are there and usable.
        for table in ["monitors", "conditions", "outbox", "settings"] {
            let s = try db.statement("SELECT count(*) FROM \(table)")
            #expect(try s.step())
        }
    }

    /// A store at version 1 holding one condition, `depot`, satisfied, with `definition` from `source`.
    static func version1Store(definition: String, source: String) throws -> String {
        let path = temporaryStorePath()
        let circle = try Condition.circle(center: depot, radius: 150, name: "Depot")
        let db = try Database(path: path)
        try Migrations.migrate(db, to: 1, now: 0)
        try db.execute("INSERT INTO monitors (name, created_at) VALUES ('default', 0)")
        try db.statement(
            """
            INSERT INTO conditions (monitor, identifier, definition, compiled, version, source, updated_at, state, since)
            VALUES ('default', 'depot', ?2, ?1, 3, ?3, 0, 'satisfied', 1700000000)
            """
        ).bind(.blob(ConditionCodec.encode(circle)), .text(definition), .text(source)).run()
        db.close()
        return path
    }

    @Test func aVersion1StoreKeepsItsConditionsAndRecordsThroughStep2() async throws {
        let path = try Self.version1Store(definition: #"{"text":"as written"}"#, source: "local:x")
        let circle = try Condition.circle(center: depot, radius: 150, name: "Depot")
        let store = try await AgentStore.open(path: path, logger: quietLogger)
        let listed = try await store.conditions()
        #expect(listed.map(\.identifier) == ["depot"])
        #expect(
            listed.first?.definition == #"{"text":"as written"}"#, "a version-1 definition is read as it was stored")
        #expect(listed.first?.state == .satisfied && listed.first?.version == 3)
        let engine = try await store.openMonitor("default")
        #expect(engine.record(for: "depot")?.state == .satisfied, "the record is restored")
        // A new write stores the definition deflated; both read back the same through the reader.
        _ = try await store.putConditions([
            .init(
                monitor: "default", identifier: "gate", condition: circle, definition: #"{"id":"gate"}"#,
                source: "local:y")
        ])
        await store.close()
        let reader = try #require(try StoreReader.open(path))
        #expect(try reader.definitions(of: "gate").map(\.definition) == [#"{"id":"gate"}"#])
        #expect(try reader.definitions(of: "depot").map(\.definition) == [#"{"text":"as written"}"#])
        #expect(try reader.conditions().map(\.identifier) == ["depot", "gate"])
    }

    @Test func aStoreFromANewerAgentIsRefused() async throws {
        let path = temporaryStorePath()
        do {
            let db = try Database(path: path)
            try Migrations.migrate(db, now: 0)
            try db.execute("INSERT INTO schema_migrations VALUES (99, 'future', 0)")
        }
        await #expect { try await AgentStore.open(path: path, logger: quietLogger) } throws: { error in
            guard case StoreError.newerSchema(99, Migrations.latest) = error else { return false }
            return true
        }
    }
}

@Suite(.offTheCooperativePool(.waiting)) struct StoreTests {
    @Test func conditionsRecordsAndTheLastFixSurviveAReopen() async throws {
        let path = temporaryStorePath()
        let circle = try Condition.circle(center: depot, radius: 150, name: "Depot", dwell: 30)
        let square = try Condition(
            geometry: .polygon(parts: [
                [
                    [
                        Coordinate(latitude: 52.36, longitude: 4.88), Coordinate(latitude: 52.36, longitude: 4.90),
                        Coordinate(latitude: 52.38, longitude: 4.90), Coordinate(latitude: 52.38, longitude: 4.88),
                        Coordinate(latitude: 52.36, longitude: 4.88),
                    ]
                ]
            ]), name: "Square", version: 7)
        var engine: MonitorEngine
        do {
            let store = try await AgentStore.open(path: path, logger: quietLogger)
            #expect(
                try await store.putCondition(
                    monitor: "fleet", identifier: "depot", condition: circle, definition: "{}", source: "local")
                    == .stored)
            #expect(
                try await store.putCondition(
                    monitor: "fleet", identifier: "square", condition: square, definition: "{}", source: "mqtt")
                    == .stored)
            engine = try await store.openMonitor("fleet", configuration: .eachFixAlone)
            let outcome = engine.process(fix(52.37, 4.89, t: 0))
            #expect(outcome.events.count == 2)
            let records = outcome.events.map { ($0.identifier, engine.record(for: $0.identifier)!) }
            _ = try await store.commit(monitor: "fleet", records: records, lastFix: engine.lastAcceptedFix)
            await store.close()
        }
        let store = try await reopenStore(path: path)
        let restored = try await store.openMonitor("fleet", configuration: .eachFixAlone)
        #expect(restored.identifiers == ["depot", "square"])
        for id in restored.identifiers {
            let a = try #require(engine.record(for: id))
            let b = try #require(restored.record(for: id))
            #expect(a.state == b.state && a.since == b.since && a.dwellReported == b.dwellReported)
            #expect(a.lastEvent?.kind == b.lastEvent?.kind && a.lastEvent?.date == b.lastEvent?.date)
            #expect(
                a.condition.name == b.condition.name && a.condition.version == b.condition.version
                    && a.condition.dwell == b.condition.dwell)
            #expect(a.condition.geometry == b.condition.geometry)
        }
        #expect(restored.lastAcceptedFix == engine.lastAcceptedFix)
        // Still inside after the restart: no second enter.
        var resumed = restored
        #expect(resumed.process(fix(52.37001, 4.89, t: 5)).events.isEmpty)
        await store.close()
    }

    @Test func recordsFindTheirConditionsWhateverTheIdentifiersBytes() async throws {
        let path = temporaryStorePath()
        let ids = ["b", "Ärhus depot", "a", "Zürich", "zz", "日本"]
        do {
            let store = try await AgentStore.open(path: path, logger: quietLogger)
            for id in ids {
                _ = try await store.putCondition(
                    monitor: "m", identifier: id, condition: try .circle(center: depot, radius: 100), definition: "{}",
                    source: "local")
            }
            var engine = try await store.openMonitor("m", configuration: .eachFixAlone)
            let outcome = engine.process(fix(52.37, 4.89, t: 0))
            _ = try await store.commit(
                monitor: "m", records: outcome.events.map { ($0.identifier, engine.record(for: $0.identifier)!) },
                lastFix: nil)
            await store.close()
        }
        let store = try await reopenStore(path: path)
        let restored = try await store.openMonitor("m", configuration: .eachFixAlone)
        for id in ids { #expect(restored.record(for: id)?.state == .satisfied, "\(id)") }
        await store.close()
    }

    /// More conditions than one decoding chunk: every record comes back to its own condition.
    @Test func aLargeMonitorRestoresEveryRecordToItsCondition() async throws {
        let path = temporaryStorePath()
        let n = 20_000
        var engine: MonitorEngine
        do {
            let store = try await AgentStore.open(path: path, logger: quietLogger)
            var inputs: [AgentStore.ConditionInput] = []
            for k in 0..<n {
                let center = Coordinate(latitude: 52 + Double(k % 100) * 0.01, longitude: 4 + Double(k / 100) * 0.01)
                let condition = try Condition.circle(center: center, radius: 100 + Double(k % 7), name: "n\(k)")
                inputs.append(
                    .init(monitor: "m", identifier: "c\(k)", condition: condition, definition: "{}", source: "local"))
            }
            _ = try await store.putConditions(inputs)
            engine = try await store.openMonitor("m", configuration: .eachFixAlone)
            let outcome = engine.process(fix(52.5, 4.5, t: 0))
            let changed = Set(outcome.events.map(\.identifier))
            #expect(changed.count == n)
            _ = try await store.commit(
                monitor: "m", records: engine.records.filter { changed.contains($0.identifier) },
                lastFix: engine.lastAcceptedFix,
                indexFloor: engine.indexFloor)
            await store.close()
        }
        let store = try await reopenStore(path: path)
        let restored = try await store.openMonitor("m", configuration: .eachFixAlone)
        #expect(restored.count == n)
        for k in stride(from: 0, to: n, by: 97) {
            let a = try #require(engine.record(for: "c\(k)"))
            let b = try #require(restored.record(for: "c\(k)"))
            #expect(
                a.state == b.state && a.condition.name == b.condition.name
                    && a.condition.geometry == b.condition.geometry)
        }
        #expect(
            restored.records.filter { $0.record.state == .satisfied }.map(\.identifier)
                == engine.records.filter { $0.record.state == .satisfied }.map(\.identifier))
        await store.close()
    }

    @Test func anOlderVersionIsIgnored() async throws {
        let store = try await AgentStore.open(path: temporaryStorePath(), logger: quietLogger)
        var v5 = try Condition.circle(center: depot, radius: 100)
        v5.version = 5
        var v4 = v5
        v4.version = 4
        #expect(
            try await store.putCondition(monitor: "m", identifier: "a", condition: v5, definition: "v5", source: "mqtt")
                == .stored)
        #expect(
            try await store.putCondition(monitor: "m", identifier: "a", condition: v4, definition: "v4", source: "mqtt")
                == .olderVersion(stored: 5))
        #expect(try await store.conditions().map(\.definition) == ["v5"])
        await store.close()
    }

    @Test func oneLiveInstancePerNameAndOneAgentPerStore() async throws {
        let path = temporaryStorePath()
        let store = try await AgentStore.open(path: path, logger: quietLogger)
        _ = try await store.openMonitor("fleet", configuration: .eachFixAlone)
        await #expect { try await store.openMonitor("fleet", configuration: .eachFixAlone) } throws: { error in
            guard case StoreError.monitorInUse("fleet") = error else { return false }
            return "\(error)".contains("already open")
        }
        await store.closeMonitor("fleet")
        _ = try await store.openMonitor("fleet", configuration: .eachFixAlone)
        await #expect { try await AgentStore.open(path: path, logger: quietLogger) } throws: { error in
            guard case StoreError.locked = error else { return false }
            return "\(error)".contains("in use by another geofence-agent process")
        }
        await store.close()
        let again = try await reopenStore(path: path)
        await again.close()
    }

    @Test(arguments: ["garbage", "half"])
    func aCorruptStoreIsRefusedNeverReplaced(kind: String) async throws {
        let path = temporaryStorePath()
        if kind == "garbage" {
            try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: path))
        } else {
            let store = try await AgentStore.open(path: path, logger: quietLogger)
            for i in 0..<200 {
                _ = try await store.putCondition(
                    monitor: "m", identifier: "c\(i)", condition: try .circle(center: depot, radius: 100),
                    definition: String(repeating: "x", count: 500), source: "local")
            }
            await store.close()
            // Scribble over the middle of the file, past the header.
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            try handle.seek(toOffset: 4096)
            handle.write(Data(repeating: 0xFF, count: 16_384))
            try handle.close()
            try? FileManager.default.removeItem(atPath: path + "-wal")
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        await #expect { try await reopenStore(path: path) } throws: { error in
            guard case StoreError.corrupt = error else { return false }
            let text = "\(error)"
            return text.contains("corrupt") && text.contains("move the file aside")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "the damaged file is left as it was")
    }

    @Test func settingsSurviveARestart() async throws {
        let path = temporaryStorePath()
        do {
            let store = try await AgentStore.open(path: path, logger: quietLogger)
            try await store.setSetting("liveUpdates.started", "true")
            await store.close()
        }
        let store = try await reopenStore(path: path)
        #expect(try await store.setting("liveUpdates.started") == "true")
        await store.close()
    }
}

/// The outbox's owner over the store: numbers, caps, counters and the log, through restarts.
@Suite(.offTheCooperativePool(.waiting)) struct OutboxTests {
    func item(_ kind: OutboxEntry.Kind, _ text: String) -> OutboxItem {
        OutboxItem(kind: kind, topic: "t/\(kind.rawValue)") { id, seq in Array("\(text) \(id) \(seq)".utf8) }
    }

    /// The broker acknowledges `entries`, and they are deleted as the next write, or the stop, deletes them.
    func acknowledge(_ entries: [OutboxEntry], in outbox: Outbox) async throws {
        for entry in entries { outbox.acknowledged(entry) }
        try await outbox.deleteAcknowledged()
        try await outbox.groupCommit()
    }

    /// SQLite would checkpoint inside whichever commit crossed 1,000 frames, a transition's included; the
    /// store leaves commits alone below 10,000 and checkpoints after acknowledgements instead.
    @Test func theLogIsCheckpointedAfterAcknowledgementsNotInsideCommits() async throws {
        let path = temporaryStorePath()
        let store = try await AgentStore.open(path: path, logger: quietLogger)
        let outbox = try await Outbox.open(store, logger: quietLogger)
        var entries: [OutboxEntry] = []
        // A transition's commit is about one frame (the outbox has no index since migration 5).
        for k in 0..<1_100 { entries += try await outbox.enqueue([item(.transition, "e\(k)")]) }
        let grown = await store.logFrames
        #expect(grown >= 1000, "1,100 commits left \(grown) frames: something checkpointed them")
        for entry in entries.prefix(10) { outbox.acknowledged(entry) }
        try await outbox.deleteAcknowledged()
        #expect(await store.logFrames == 0, "acknowledging checkpointed the log")
        try await outbox.groupCommit()  // the deletion, as at the stop
        await store.close()
        let reopened = try await reopenStore(path: path)
        #expect(try await reopened.pending(after: 0, limit: 2000).count == 1_090)
        await reopened.close()
    }

    /// A broker outage grows the log to thousands of frames (the soak's 10 minutes left 39 MB); once the
    /// rows are acknowledged and the log checkpointed, its file is cut back to `logSizeLimit`.
    @Test func theLogFileShrinksAfterAnOutageDrains() async throws {
        let path = temporaryStorePath()
        let store = try await AgentStore.open(path: path, logger: quietLogger)
        var limits = OutboxLimits()
        limits.groupCommitSeconds = 0  // every location stored as it comes: the broker is away
        let outbox = try await Outbox.open(store, limits: limits, logger: quietLogger)
        let padding = String(repeating: "x", count: 6_000)
        var entries: [OutboxEntry] = []
        for k in 0..<1_000 { entries += try await outbox.enqueue([item(.location, "\(padding) \(k)")]) }
        func logBytes() -> Int {
            (try? FileManager.default.attributesOfItem(atPath: StorePaths(path).writeAheadLog)[.size] as? Int) ?? 0
        }
        let grown = logBytes()
        let frames = await store.logFrames
        #expect(grown > 2 * AgentStore.logSizeLimit, "the outage grew the log to \(grown) bytes, \(frames) frames")
        try await acknowledge(entries, in: outbox)
        // The next commit after the checkpoint starts the log again, and cuts the file back.
        try await outbox.enqueue([item(.transition, "after")])
        #expect(logBytes() <= AgentStore.logSizeLimit, "\(logBytes()) bytes after the outage drained")
        await store.close()
    }

    @Test func entriesKeepTheirOrderIdsAndSequenceAcrossRestarts() async throws {
        let path = temporaryStorePath()
        var ids: Set<String> = []
        do {
            let store = try await AgentStore.open(path: path, logger: quietLogger)
            let outbox = try await Outbox.open(store, logger: quietLogger)
            let a = try await outbox.enqueue([item(.transition, "a"), item(.location, "b")])
            #expect(a.map(\.sequence) == [1, 2])
            ids.formUnion(a.map(\.eventID))
            try await acknowledge([a[0]], in: outbox)
            await store.close()
        }
        let store = try await reopenStore(path: path)
        let outbox = try await Outbox.open(store, logger: quietLogger)
        let pending = try await store.pending()
        #expect(pending.map(\.sequence) == [2])
        let b = try await outbox.enqueue([item(.transition, "c")])
        // The store leases numbers ahead (droppable rows are numbered before they are stored): a restart
        // skips the rest of the lease.
        #expect(
            b.map(\.sequence) == [3 + Outbox.sequenceLease],
            "sequence numbers never repeat, even after the rows are gone")
        #expect(!ids.contains(b[0].eventID))
        #expect(String(decoding: b[0].payload, as: UTF8.self) == "c \(b[0].eventID) \(b[0].sequence)")
        #expect(await outbox.stats.rows == 2)
        await store.close()
    }

    @Test func whenFullLocationsGoFirstThenTransitionsAtTheHardCap() async throws {
        var limits = OutboxLimits()
        limits.maximumRows = 10
        limits.hardMaximumRows = 15
        let store = try await AgentStore.open(path: temporaryStorePath(), logger: quietLogger)
        let outbox = try await Outbox.open(store, limits: limits, logger: quietLogger)
        for i in 0..<8 { try await outbox.enqueue([item(.location, "l\(i)")]) }
        for i in 0..<6 { try await outbox.enqueue([item(.transition, "t\(i)")]) }
        var stats = await outbox.stats
        #expect(stats.rows == 10 && stats.transitions == 6 && stats.locations == 4)
        #expect(stats.droppedLocations == 4 && stats.droppedTransitions == 0 && stats.capReached)
        let left = try await store.pending().filter { $0.kind == .location }.map {
            String(decoding: $0.payload, as: UTF8.self).prefix(2)
        }
        #expect(left == ["l4", "l5", "l6", "l7"], "the oldest locations went first")
        for i in 6..<20 { try await outbox.enqueue([item(.transition, "t\(i)")]) }
        stats = await outbox.stats
        #expect(stats.rows == 15 && stats.locations == 0 && stats.transitions == 15)
        #expect(stats.droppedTransitions == 5)
        let first = try await store.pending().first.map { String(decoding: $0.payload, as: UTF8.self).prefix(2) }
        #expect(first == "t5")
        await store.close()
        // The counters are integers beside the rows, and come back with them.
        let reopened = try await reopenStore(path: store.path)
        let again = try await Outbox.open(reopened, limits: limits, logger: quietLogger)
        #expect(await again.stats == stats.withoutCapReached)
        await reopened.close()
    }
}

extension OutboxStats {
    /// `capReached` says "since the agent started": a restart clears it.
    var withoutCapReached: OutboxStats {
        var s = self
        s.capReached = false
        return s
    }
}

@Suite(.offTheCooperativePool(.computing)) struct EventIDTests {
    @Test func eventIDsAreVersion4UUIDsInLowerCaseAndDistinct() {
        var seen: Set<String> = []
        for _ in 0..<10_000 {
            let id = EventID.make()
            #expect(id.count == 36 && id == id.lowercased())
            #expect(UUID(uuidString: id) != nil, "\(id)")
            let characters = Array(id)
            #expect(characters[14] == "4", "version 4: \(id)")
            #expect("89ab".contains(characters[19]), "RFC 4122 variant: \(id)")
            seen.insert(id)
        }
        #expect(seen.count == 10_000)
    }
}

@Suite(.offTheCooperativePool(.computing)) struct LastFixJSONTests {
    /// The hand-written JSON reads back, through `Location`'s own `Codable`, as the very fix written.
    @Test func readsBackAsTheFixWritten() async {
        await propertyCheck(count: 500, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var rng = SplitMix64(seed: UInt64(seed))
            func maybe(_ value: Double) -> Double? { Bool.random(using: &rng) ? value : nil }
            let fix = Location(
                coordinate: Coordinate(
                    latitude: .random(in: -90...90, using: &rng), longitude: .random(in: -180...180, using: &rng)),
                altitudeHAE: maybe(.random(in: -500...9000, using: &rng)),
                altitudeMSL: maybe(.random(in: -500...9000, using: &rng)),
                horizontalAccuracy: .random(in: -1...1e4, using: &rng),
                verticalAccuracy: .random(in: -1...100, using: &rng),
                speed: [-1, 0, 1e-7, .random(in: 0...90, using: &rng)][Int.random(in: 0..<4, using: &rng)],
                speedAccuracy: .random(in: -1...5, using: &rng), course: .random(in: -1...360, using: &rng),
                courseAccuracy: -1,
                climb: maybe(.random(in: -50...50, using: &rng)),
                timestamp: Date(timeIntervalSince1970: .random(in: 0...4e9, using: &rng)),
                gpsTime: maybe(.random(in: 0...4e9, using: &rng)).map(Date.init(timeIntervalSince1970:)),
                receivedAtNanoseconds: Bool.random(using: &rng) ? UInt64.random(in: 0...UInt64.max, using: &rng) : nil,
                mode: [.noFix, .twoD, .threeD][Int.random(in: 0..<3, using: &rng)],
                satellitesUsed: Bool.random(using: &rng) ? Int.random(in: 0...40, using: &rng) : nil,
                device: Bool.random(using: &rng) ? "/dev/tty\"USB\\\(seed % 7)\n" : nil)
            let decoded = try? JSONDecoder().decode(Location.self, from: Data(LastFixJSON.encode(fix)))
            #expect(decoded == fix, "\(String(decoding: LastFixJSON.encode(fix), as: UTF8.self))")
        }
    }
}

/// What a vehicle compares with a manifest: the digest of each geofence a set's topics gave it.
@Suite(.offTheCooperativePool(.waiting)) struct ConditionDigestTests {
    @Test func digestsAreByTheTopicsLastLevelForOneSetOnly() async throws {
        let store = try await AgentStore.open(path: temporaryStorePath(), logger: quietLogger)
        let circle = try Condition.circle(center: depot, radius: 150, name: "Depot")
        let stored: [(String, String)] = [
            ("a", "mqtt:fleet/demo/geofences/a"), ("b%_", "mqtt:fleet/demo/geofences/b%_"),
            ("v", "mqtt:fleet/demo/vehicles/v1/geofences/v"), ("l", "local:x"),
        ]
        _ = try await store.putConditions(
            stored.map { identifier, source in
                .init(
                    monitor: "default", identifier: identifier, condition: circle,
                    definition: #"{"id":"\#(identifier)"}"#,
                    source: source)
            })
        let fleet = try await store.digests(sourcePrefix: "mqtt:fleet/demo/geofences/")
        #expect(
            fleet == [
                "a": GeofenceDigest.of(Array(#"{"id":"a"}"#.utf8)),
                "b%_": GeofenceDigest.of(Array(#"{"id":"b%_"}"#.utf8)),
            ])
        #expect(try await store.digests(sourcePrefix: "mqtt:fleet/demo/vehicles/v1/geofences/").keys.sorted() == ["v"])
        await store.close()
    }

    /// A row stored before migration 6 has no digest: it is digested from its definition when read.
    @Test func aRowFromBeforeTheDigestsIsDigestedFromItsDefinition() async throws {
        let path = try MigrationTests.version1Store(
            definition: #"{"id":"depot"}"#, source: "mqtt:fleet/demo/geofences/depot")
        let store = try await AgentStore.open(path: path, logger: quietLogger)
        #expect(
            try await store.digests(sourcePrefix: "mqtt:fleet/demo/geofences/")
                == ["depot": GeofenceDigest.of(Array(#"{"id":"depot"}"#.utf8))])
        await store.close()
    }
}
