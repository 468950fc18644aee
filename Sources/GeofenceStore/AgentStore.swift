import Deflate
import EveryCore
import Foundation
import GeofenceCore
import Logging
import SQLite
import Synchronization
import ThreadExecution

#if canImport(Glibc)
    import Glibc
#endif

/// The agent's durable state in one SQLite file (WAL, synchronous=FULL): monitors, their conditions and
/// records, the outbox of events not yet acknowledged by the broker, and settings. It owns its database
/// (as GRDB's `AppDatabase` does) and runs on its own thread, so SQLite's blocking writes never occupy
/// Swift's cooperative pool.
///
/// One agent process per store (an exclusive lock beside the file), and one live instance per monitor
/// name in the process: a second opener gets `StoreError.monitorInUse`.
public actor AgentStore {
    public nonisolated let path: String
    private nonisolated let executor: ThreadExecutor
    private let logger: Logger
    private var db: Database?
    private var lockFD: Int32 = -1
    private var openMonitors: Set<String> = []
    /// Each open monitor's `index_floor` as stored, so that a commit writes the monitor's row only when it
    /// changes something there.
    private var storedIndexFloors: [String: Int] = [:]

    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    /// The store's thread, for a task whose work is mostly the store's (following fixes), and for the fix
    /// sources that it waits for between its jobs.
    public nonisolated var taskExecutor: ThreadExecutor { executor }

    private init(path: String, logger: Logger) {
        self.path = path
        self.logger = logger
        executor = ThreadExecutor(name: "store")
    }

    /// Opens (creating) the store, takes its lock and migrates it. A corrupt or foreign file is refused,
    /// never replaced.
    public static func open(path: String, logger: Logger) async throws(StoreError) -> AgentStore {
        let store = AgentStore(path: path, logger: logger)
        try await store.prepare()
        return store
    }

    private func prepare() throws(StoreError) {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        lockFD = try StoreLock.take(StorePaths(path))
        do {
            let database = try Database(path: path)
            try Migrations.migrate(database, now: Date().timeIntervalSince1970)
            // Reading every table once finds a damaged file now rather than halfway through a drive.
            try database.execute(
                "SELECT count(*) FROM monitors; SELECT count(*) FROM outbox; SELECT count(*) FROM settings")
            database.manualCheckpoints()
            // After a long outage the log has grown to thousands of frames; once checkpointed, SQLite cuts
            // the file back to this instead of keeping it at its largest (found by the soak: 39 MB). The file
            // is kept at that size, written once, so that a commit overwrites blocks instead of appending:
            // an append costs each commit a journal commit of the file system too (store.md).
            try database.keepLog(size: Self.logSizeLimit)
            do {
                try database.allocateLog()
            } catch {
                logger.warning(
                    "the write-ahead log is not allocated ahead; it grows as it is written",
                    metadata: ["error": "\(error)"])
            }
            db = database
        } catch let error as SQLiteError {
            close()
            throw StoreError.from(error, path: path)
        } catch let error as StoreError {
            close()
            throw error
        } catch {
            close()
            throw .sqlite(SQLiteError(code: 1, message: "\(error)"))
        }
    }

    /// Releases the database and the lock, and lets the store's thread end (a later call still runs, on
    /// a thread started for it).
    public func close() {
        db?.close()
        db = nil
        if lockFD >= 0 { Glibc.close(lockFD) }
        lockFD = -1
        executor.finish()
    }

    func database() throws(StoreError) -> Database {
        guard let db else { throw .sqlite(SQLiteError(code: 21, message: "the store is closed")) }
        return db
    }

    /// Runs `body`, mapping SQLite's errors to the store's.
    func guarded<T>(_ body: (Database) throws -> T) throws(StoreError) -> T {
        let db = try database()
        do {
            return try body(db)
        } catch let error as SQLiteError {
            let mapped = StoreError.from(error, path: path)
            logger.error("store write failed", metadata: ["error": "\(mapped)"])
            throw mapped
        } catch let error as StoreError {
            throw error
        } catch {
            throw .sqlite(SQLiteError(code: 1, message: "\(error)"))
        }
    }

    // MARK: Monitors

    /// Opens a monitor by name, restoring its conditions, records and last accepted fix before any new
    /// fix is evaluated. Creates it when new.
    /// With `refineIndexLater` the monitor's index holds its regions' boxes alone until the caller adopts
    /// its refinement (`MonitorEngine.indexRefinementWork()`): the first fix is answered the same, sooner.
    public func openMonitor(
        _ name: String, configuration: MonitorConfiguration = MonitorConfiguration(), refineIndexLater: Bool = false
    ) throws(StoreError) -> MonitorEngine {
        guard !openMonitors.contains(name) else { throw .monitorInUse(name: name) }
        let engine = try guarded { db -> MonitorEngine in
            try db.statement("INSERT OR IGNORE INTO monitors (name, created_at) VALUES (?1, ?2)")
                .bind(.text(name), .real(Date().timeIntervalSince1970)).run()
            // Counted first (a few ms), so that the engine's tables are made once at their size, not grown.
            let counted = try db.statement("SELECT count(*) FROM conditions WHERE monitor = ?1").bind(.text(name))
            var restoration = MonitorEngine.Restoration(
                MonitorEngine(name: name, configuration: configuration),
                expecting: try counted.step() ? Int(counted.int(0)) : 0)
            // Decoding and preparing 100,000 polygons is most of a restore. One scan of one table, read in
            // chunks that other cores decode while this thread reads on and puts the decoded ones in place.
            let decoder = ParallelDecoder()
            var rows: [RestoreRow] = []
            var blobs: [UInt8] = []
            var newestRecordFix: Location?
            rows.reserveCapacity(ParallelDecoder.chunk)
            let conditions = try db.statement(
                """
                SELECT identifier, compiled, state, since, dwell_reported, last_kind, last_state, last_date,
                       last_latitude, last_longitude, last_accuracy
                FROM conditions WHERE monitor = ?1
                """
            ).bind(.text(name))
            while try conditions.step() {
                let start = blobs.count
                let n = conditions.appendBlob(1, to: &blobs)
                var row = RestoreRow(identifier: conditions.text(0) ?? "", blob: start..<start + n)
                if let state = conditions.text(2).flatMap(ConditionState.init(rawValue:)), state != .unknown {
                    row.state = state
                    row.since = conditions.isNull(3) ? nil : Date(timeIntervalSince1970: conditions.double(3))
                    row.dwellReported = conditions.int(4) != 0
                    if let kind = conditions.text(5).flatMap(EventKind.init(rawValue:)),
                        let lastState = conditions.text(6).flatMap(ConditionState.init(rawValue:))
                    {
                        row.last = (
                            kind, lastState, Date(timeIntervalSince1970: conditions.double(7)),
                            Coordinate(latitude: conditions.double(8), longitude: conditions.double(9)),
                            conditions.double(10)
                        )
                        if let last = row.last, last.date > (newestRecordFix?.timestamp ?? .distantPast) {
                            newestRecordFix = Self.fix(at: last.date, last.coordinate, accuracy: last.accuracy)
                        }
                    }
                }
                rows.append(row)
                if rows.count == ParallelDecoder.chunk {
                    decoder.decode(rows, blobs)
                    rows.removeAll(keepingCapacity: true)
                    let used = blobs.count
                    blobs = []
                    blobs.reserveCapacity(used + used / 4)
                    while let part = try decoder.nextReady() { restoration.add(consume part) }
                }
            }
            decoder.decode(rows, blobs)
            decoder.waitForAll()
            while let part = try decoder.nextReady() { restoration.add(consume part) }
            let floorQuery = try db.statement("SELECT index_floor FROM monitors WHERE name = ?1").bind(.text(name))
            let floor: Int? = try floorQuery.step() && !floorQuery.isNull(0) ? Int(floorQuery.int(0)) : nil
            var engine = restoration.finish(indexFloor: floor, refineIndexLater: refineIndexLater)
            storedIndexFloors[name] = floor

            let fix = try db.statement("SELECT last_fix FROM monitors WHERE name = ?1").bind(.text(name))
            let storedFix =
                try fix.step() && !fix.isNull(0)
                ? try? JSONDecoder().decode(Location.self, from: Data(fix.blob(0))) : nil
            engine.restoreLastAcceptedFix(Self.later(storedFix, newestRecordFix))
            return engine
        }
        openMonitors.insert(name)
        return engine
    }

    struct RestoreRow: Sendable {
        var identifier: String
        var blob: Range<Int>
        var state: ConditionState = .unknown
        var since: Date?
        var dwellReported = false
        var last: (kind: EventKind, state: ConditionState, date: Date, coordinate: Coordinate, accuracy: Double)?
    }

    /// The later of the monitor's stored last fix and the newest of its records' last events: a transition
    /// leaves the monitor's row as it was when its record holds the fix (one page less on flash), so after
    /// a crash the record is the newer ([store.md](../../docs/store.md#the-outbox-at-a-power-cut)).
    static func later(_ stored: Location?, _ fromRecords: Location?) -> Location? {
        guard let fromRecords else { return stored }
        guard let stored, stored.timestamp >= fromRecords.timestamp else { return fromRecords }
        return stored
    }

    /// A record's last event as the fix it was decided on: where, when, how accurate (all a record keeps).
    static func fix(at date: Date, _ coordinate: Coordinate, accuracy: Double) -> Location {
        Location(coordinate: coordinate, horizontalAccuracy: accuracy, timestamp: date)
    }

    public func closeMonitor(_ name: String) {
        storedIndexFloors[name] = nil
        openMonitors.remove(name)
    }

    /// The names of every stored monitor.
    public func monitorNames() throws(StoreError) -> [String] {
        try guarded { db in
            let s = try db.statement("SELECT name FROM monitors ORDER BY name")
            var names: [String] = []
            while try s.step() { names.append(s.text(0) ?? "") }
            return names
        }
    }

    // MARK: Conditions

    public enum PutResult: Sendable, Equatable {
        case stored
        /// A stored version is newer than or as new as this one: nothing changed.
        case olderVersion(stored: Int64)
    }

    /// A condition to store, with the text it was defined by (shown by `conditions show`) and where it
    /// came from (`local`, or the MQTT topic it was pushed on).
    ///
    /// Its stored form (the compressed definition and the compiled condition) is made when it is
    /// created, on the caller's thread: a sync prepares thousands in parallel, and the store's thread
    /// only writes them.
    public struct ConditionInput: Sendable {
        public let monitor: String
        public let identifier: String
        public let condition: Condition
        public let source: String
        /// The definition's UTF-8, zlib-compressed, and its length.
        let deflatedDefinition: [UInt8]
        let definitionSize: Int
        let compiled: [UInt8]
        /// `GeofenceDigest` of the definition's UTF-8: what a manifest names.
        let digest: String

        public init(monitor: String, identifier: String, condition: Condition, definition: String, source: String) {
            self.monitor = monitor
            self.identifier = identifier
            self.condition = condition
            self.source = source
            let text = Array(definition.utf8)
            deflatedDefinition = Deflate.compress(text)
            definitionSize = text.count
            compiled = ConditionCodec.encode(condition)
            digest = GeofenceDigest.of(text)
        }
    }

    /// Stores (or replaces) a condition. An update with a version not newer than the stored one is ignored.
    public func putCondition(
        monitor: String, identifier: String, condition: Condition, definition: String, source: String
    ) throws(StoreError) -> PutResult {
        try putConditions([
            ConditionInput(
                monitor: monitor, identifier: identifier, condition: condition, definition: definition, source: source)
        ])[0]
    }

    /// Stores many conditions in one transaction (an import).
    public func putConditions(_ inputs: [ConditionInput]) throws(StoreError) -> [PutResult] {
        try apply(inputs.map(ConditionChange.put)).map { result in
            if case .olderVersion(let v) = result { return .olderVersion(stored: v) }
            return .stored
        }
    }

    /// One change a sync brings: a condition to store, or an identifier to delete (from one monitor, or
    /// from every monitor when `monitor` is nil, as an empty retained message means).
    public enum ConditionChange: Sendable {
        case put(ConditionInput)
        case remove(identifier: String, monitor: String?)
    }

    /// What one change did.
    public enum ChangeResult: Sendable, Equatable {
        case stored
        case olderVersion(stored: Int64)
        /// The monitors the identifier was removed from (empty when it did not exist).
        case removed(monitors: [String])
    }

    /// Applies a batch of changes in order, in one transaction: a sync of thousands of retained geofences
    /// costs one commit, not one per geofence. Either every change is recorded or none is. Deleting a
    /// condition the vehicle is inside carries its exit: that goes through the `Outbox`, which writes the
    /// exit in the same transaction (`applyChanges(_:outbox:)`).
    public func apply(_ changes: [ConditionChange]) throws(StoreError) -> [ChangeResult] {
        try apply(changes, outbox: nil)
    }

    func apply(_ changes: [ConditionChange], outbox: OutboxWrite?) throws(StoreError) -> [ChangeResult] {
        defer { checkpointIfDue(frames: Self.checkpointFrames) }
        return try guarded { db in
            try db.transaction {
                let now = Date().timeIntervalSince1970
                var monitors: Set<String> = []
                let results = try changes.map { change -> ChangeResult in
                    switch change {
                    case .put(let input):
                        if monitors.insert(input.monitor).inserted {
                            try db.statement("INSERT OR IGNORE INTO monitors (name, created_at) VALUES (?1, ?2)")
                                .bind(.text(input.monitor), .real(now)).run()
                        }
                        return try put(input, now: now, db)
                    case .remove(let identifier, let monitor):
                        let found = try db.statement(
                            """
                            SELECT DISTINCT monitor FROM conditions WHERE identifier = ?1 AND (?2 IS NULL OR monitor = ?2)
                            ORDER BY monitor
                            """
                        ).bind(.text(identifier), .optional(monitor))
                        var names: [String] = []
                        while try found.step() { names.append(found.text(0) ?? "") }
                        try db.statement(
                            "DELETE FROM conditions WHERE identifier = ?1 AND (?2 IS NULL OR monitor = ?2)"
                        )
                        .bind(.text(identifier), .optional(monitor)).run()
                        return .removed(monitors: names)
                    }
                }
                if let outbox { try write(outbox, db) }
                return results
            }
        }
    }

    private func put(_ input: ConditionInput, now: Double, _ db: Database) throws -> ChangeResult {
        let existing = try db.statement("SELECT version FROM conditions WHERE monitor = ?1 AND identifier = ?2")
            .bind(.text(input.monitor), .text(input.identifier))
        if try existing.step(), !existing.isNull(0), let incoming = input.condition.version, existing.int(0) >= incoming
        {
            return .olderVersion(stored: existing.int(0))
        }
        try db.statement(
            """
            INSERT INTO conditions (monitor, identifier, definition, definition_deflated, definition_size, compiled, version, source, updated_at, digest)
            VALUES (?1, ?2, NULL, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
            ON CONFLICT (monitor, identifier) DO UPDATE SET definition = NULL, definition_deflated = ?3, definition_size = ?4,
                compiled = ?5, version = ?6, source = ?7, updated_at = ?8, digest = ?9
            """
        ).bind(
            .text(input.monitor), .text(input.identifier), .blob(input.deflatedDefinition),
            .integer(Int64(input.definitionSize)),
            .blob(input.compiled),
            input.condition.version.map(SQLValue.integer) ?? .null, .text(input.source), .real(now), .text(input.digest)
        ).run()
        return .stored
    }

    /// The monitor and identifier of every condition that came from `source` (`owntracks`, `mqtt:...`).
    public func identifiers(source: String) throws(StoreError) -> [(monitor: String, identifier: String)] {
        try guarded { db in
            let s = try db.statement(
                "SELECT monitor, identifier FROM conditions WHERE source = ?1 ORDER BY monitor, identifier"
            ).bind(.text(source))
            var out: [(monitor: String, identifier: String)] = []
            while try s.step() { out.append((s.text(0) ?? "", s.text(1) ?? "")) }
            return out
        }
    }

    /// The digest of every condition whose source starts with `sourcePrefix` (`mqtt:fleet/demo/geofences/`),
    /// by the rest of its source: the topic's last level, what a manifest names.
    public func digests(sourcePrefix: String) throws(StoreError) -> [String: String] {
        try guarded { db in
            // A range on the text, not LIKE: an identifier may hold `%` or `_`. U+10FFFF sorts after any level.
            let s = try db.statement(
                """
                SELECT source, digest, definition, definition_deflated, definition_size FROM conditions
                WHERE source >= ?1 AND source < ?2
                """
            ).bind(.text(sourcePrefix), .text(sourcePrefix + "\u{10FFFF}"))
            var out: [String: String] = [:]
            while try s.step() {
                let source = s.text(0) ?? ""
                let digest =
                    try s.text(1) ?? GeofenceDigest.of(Self.definition(s, text: 2, deflated: 3, size: 4).utf8)
                out[String(source.dropFirst(sourcePrefix.count))] = digest
            }
            return out
        }
    }

    /// Removes a condition and its record. True when it existed.
    @discardableResult
    public func removeCondition(monitor: String, identifier: String) throws(StoreError) -> Bool {
        defer { checkpointIfDue(frames: Self.checkpointFrames) }
        return try guarded { db in
            try db.statement("DELETE FROM conditions WHERE monitor = ?1 AND identifier = ?2").bind(
                .text(monitor), .text(identifier)
            ).run()
            return db.changes > 0
        }
    }

    public struct StoredCondition: Sendable {
        public var monitor: String
        public var identifier: String
        public var definition: String
        public var version: Int64?
        public var source: String
        public var updatedAt: Date
        public var state: ConditionState
        public var since: Date?
    }

    /// Every stored condition with its state, for `conditions list` and `status`.
    public func conditions(monitor: String? = nil) throws(StoreError) -> [StoredCondition] {
        try guarded { db in
            let s = try db.statement(
                """
                SELECT monitor, identifier, definition, version, source, updated_at, state, since, definition_deflated, definition_size
                FROM conditions WHERE ?1 IS NULL OR monitor = ?1 ORDER BY monitor, identifier
                """
            ).bind(.optional(monitor))
            var out: [StoredCondition] = []
            while try s.step() {
                out.append(
                    StoredCondition(
                        monitor: s.text(0) ?? "", identifier: s.text(1) ?? "",
                        definition: try Self.definition(s, text: 2, deflated: 8, size: 9),
                        version: s.isNull(3) ? nil : s.int(3), source: s.text(4) ?? "",
                        updatedAt: Date(timeIntervalSince1970: s.double(5)),
                        state: s.text(6).flatMap(ConditionState.init(rawValue:)) ?? .unknown,
                        since: s.isNull(7) ? nil : Date(timeIntervalSince1970: s.double(7))))
            }
            return out
        }
    }

    /// A definition as stored: its text (version 1 rows) or its deflated UTF-8 (since version 2).
    static func definition(_ s: Statement, text: Int32, deflated: Int32, size: Int32) throws -> String {
        if !s.isNull(text) { return s.text(text) ?? "" }
        do {
            return String(decoding: try Deflate.decompress(s.blob(deflated), size: Int(s.int(size))), as: UTF8.self)
        } catch {
            throw SQLiteError(code: 11, message: "a stored definition cannot be read: \(error)")
        }
    }

    // MARK: State changes

    /// Commits what a fix changed in one transaction: the records of the conditions that had events, the
    /// monitor's last accepted fix, and (through the `Outbox`) the outbox rows for those events. Nothing is
    /// published before this returns.
    /// `removing` names conditions the fix removed (they expired): their rows go in the same transaction
    /// as their exits.
    public func commit(
        monitor: String, records: [(identifier: String, record: MonitorRecord)], lastFix: Location?,
        indexFloor: Int? = nil, removing: [String] = []
    ) throws(StoreError) {
        try commit(
            monitor: monitor, records: records, lastFix: lastFix, indexFloor: indexFloor, removing: removing,
            outbox: nil)
    }

    func commit(
        monitor: String, records: [(identifier: String, record: MonitorRecord)], lastFix: Location?,
        indexFloor: Int?, removing: [String], outbox: OutboxWrite?
    ) throws(StoreError) {
        defer { checkpointIfDue(frames: Self.checkpointFramesWithoutAcknowledgements) }
        try guarded { db in
            try db.transaction {
                for identifier in removing {
                    try db.statement("DELETE FROM conditions WHERE monitor = ?1 AND identifier = ?2").bind(
                        .text(monitor), .text(identifier)
                    ).run()
                }
                let upsert = try db.statement(
                    """
                    UPDATE conditions SET state = ?3, since = ?4, dwell_reported = ?5, last_kind = ?6,
                        last_state = ?7, last_date = ?8, last_latitude = ?9, last_longitude = ?10, last_accuracy = ?11
                    WHERE monitor = ?1 AND identifier = ?2
                    """)
                for (identifier, record) in records {
                    let e = record.lastEvent
                    try upsert.bind(
                        .text(monitor), .text(identifier), .text(record.state.rawValue),
                        .optional(record.since?.timeIntervalSince1970), .int(record.dwellReported ? 1 : 0),
                        .optional(e?.kind.rawValue), .optional(e?.state.rawValue),
                        .optional(e?.date.timeIntervalSince1970),
                        .optional(e?.location.coordinate.latitude), .optional(e?.location.coordinate.longitude),
                        .optional(e?.location.horizontalAccuracy)
                    ).run()
                    _ = try db.statement(upsert.sql)  // resets the cached statement for the next row
                }
                // The monitor's row is another page of the log on flash: a fix that one of the records holds as
                // its last event is found there again at a restore (`later`), and the floor seldom moves.
                let fixInRecords = lastFix.map { Self.holds(records, $0, removing: removing) } ?? true
                let floorKept = indexFloor == nil || storedIndexFloors[monitor] == indexFloor
                if !fixInRecords || !floorKept {
                    try db.statement(
                        "UPDATE monitors SET last_fix = COALESCE(?2, last_fix), index_floor = COALESCE(?3, index_floor) WHERE name = ?1"
                    )
                    .bind(
                        .text(monitor), lastFix.map { .blob(LastFixJSON.encode($0)) } ?? .null,
                        indexFloor.map { .int($0) } ?? .null
                    ).run()
                }
                if let outbox { try write(outbox, db) }
            }
        }
        if let indexFloor { storedIndexFloors[monitor] = indexFloor }
    }

    /// Whether a record that stays holds `fix` as its last event, so that a restore finds the fix there.
    static func holds(
        _ records: [(identifier: String, record: MonitorRecord)], _ fix: Location, removing: [String]
    ) -> Bool {
        records.contains { identifier, record in
            guard let event = record.lastEvent, !removing.contains(identifier) else { return false }
            return event.date == fix.timestamp && event.location.coordinate == fix.coordinate
                && event.location.horizontalAccuracy == fix.horizontalAccuracy
        }
    }

    /// The log is copied into the database after acknowledgements, off the path from a fix to its
    /// event, once it holds this many frames (SQLite's own default) ...
    static let checkpointFrames = 1000
    /// ... or after any commit once it holds this many: with the broker away there are no
    /// acknowledgements, and the log must not grow for ever.
    static let checkpointFramesWithoutAcknowledgements = 10_000

    /// Bytes the write-ahead log file is cut back to after a checkpoint.
    static let logSizeLimit = 4 << 20

    /// Frames in the write-ahead log at the last commit.
    var logFrames: Int { db?.walFrames ?? 0 }

    func checkpointIfDue(frames threshold: Int) {
        guard let db, db.walFrames >= threshold else { return }
        do {
            try db.checkpoint()
        } catch {
            logger.warning(
                "checkpoint failed; the write-ahead log keeps growing until one succeeds",
                metadata: ["error": "\(error)"])
        }
    }

    // MARK: Settings

    /// A value that survives restarts, such as Core Location's "live updates started".
    public func setting(_ key: String) throws(StoreError) -> String? {
        try guarded { db in try setting(key, db) }
    }

    public func setSetting(_ key: String, _ value: String?) throws(StoreError) {
        try guarded { db in try setSetting(key, value, db) }
    }

    private func setting(_ key: String, _ db: Database) throws -> String? {
        let s = try db.statement("SELECT value FROM settings WHERE key = ?1").bind(.text(key))
        return try s.step() ? s.text(0) : nil
    }

    func setSetting(_ key: String, _ value: String?, _ db: Database) throws {
        if let value {
            try db.statement(
                "INSERT INTO settings (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = ?2"
            )
            .bind(.text(key), .text(value)).run()
        } else {
            try db.statement("DELETE FROM settings WHERE key = ?1").bind(.text(key)).run()
        }
    }
}

/// Decodes chunks of restored rows on `OnEveryCore`'s queues while the store thread reads on.
private final class ParallelDecoder: @unchecked Sendable {
    static let chunk = 8_192
    private let group = DispatchGroup()
    private let parts = Mutex<[Int: Result<MonitorEngine.RestoredRecords, ConditionCodec.DecodingError>]>([:])
    /// Chunks handed out and chunks taken back, both counted on the store thread alone.
    private var next = 0
    private var taken = 0

    func decode(_ rows: [AgentStore.RestoreRow], _ blobs: [UInt8]) {
        guard !rows.isEmpty else { return }
        let index = next
        next += 1
        OnEveryCore.async(group: group, lane: index) { [self] in
            var out = MonitorEngine.RestoredRecords(capacity: rows.count)
            do throws(ConditionCodec.DecodingError) {
                for row in rows {
                    let condition = try ConditionCodec.decode(blobs[row.blob])
                    var record = MonitorRecord(
                        condition: condition, state: row.state, since: row.since, dwellReported: row.dwellReported)
                    if let last = row.last {
                        record.lastEvent = MonitorEvent(
                            identifier: row.identifier, kind: last.kind, state: last.state, date: last.date,
                            location: Location(
                                coordinate: last.coordinate, horizontalAccuracy: last.accuracy, timestamp: last.date),
                            conditionName: condition.name)
                    }
                    out.append(identifier: row.identifier, record: record)
                }
                parts.withLock { $0[index] = .success(out) }
            } catch {
                parts.withLock { $0[index] = .failure(error) }
            }
        }
    }

    /// The next chunk in reading order if it is decoded, without waiting; nil when it is not (yet).
    func nextReady() throws -> MonitorEngine.RestoredRecords? {
        guard taken < next, let result = parts.withLock({ [taken] in $0.removeValue(forKey: taken) }) else {
            return nil
        }
        taken += 1
        switch result {
        case .success(let part): return part
        case .failure(let error):
            throw SQLiteError(code: 11, message: "a stored condition cannot be decoded: \(error)")
        }
    }

    /// Waits until every chunk handed out is decoded.
    func waitForAll() {
        group.wait()
    }
}
