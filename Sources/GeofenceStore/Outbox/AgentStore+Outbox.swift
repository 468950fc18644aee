import Foundation
import GeofenceCore
import SQLite

/// The store as the outbox's repository: rows in, rows out, counters beside them. What to number, drop
/// and count is the `Outbox`'s to decide.
extension AgentStore: OutboxRepository {
    /// Runs `body` isolated to the store, synchronously: the caller is on the store's thread already
    /// (the outbox shares it), which `assumeIsolated` checks.
    private nonisolated func onStoreThread<T: Sendable>(_ body: @Sendable (isolated AgentStore) throws(StoreError) -> T)
        throws(StoreError) -> T
    {
        try assumeIsolated { store in Result { () throws(StoreError) -> T in try body(store) } }.get()
    }

    public nonisolated func outboxContents() throws(StoreError) -> OutboxContents {
        try onStoreThread { store throws(StoreError) in
            try store.guarded { db in
                var contents = OutboxContents()
                let state = try db.statement(
                    "SELECT next_sequence, dropped_locations, dropped_transitions FROM outbox_state WHERE id = 1")
                if try state.step() {
                    contents.counters.nextSequence = state.int(0)
                    contents.counters.droppedLocations = state.int(1)
                    contents.counters.droppedTransitions = state.int(2)
                }
                state.reset()
                let kinds = try db.statement(
                    """
                    SELECT kind, count(*), COALESCE(sum(length(payload)), 0), max(sequence) FROM outbox GROUP BY kind
                    """)
                while try kinds.step() {
                    guard let kind = kinds.text(0).flatMap(OutboxEntry.Kind.init(rawValue:)) else { continue }
                    contents.rows[kind] = (Int(kinds.int(1)), Int(kinds.int(2)), kinds.int(3))
                }
                return contents
            }
        }
    }

    public nonisolated func oldestOutboxRows(kind: OutboxEntry.Kind, limit: Int) throws(StoreError) -> [(
        sequence: Int64, bytes: Int
    )] {
        try onStoreThread { store throws(StoreError) in
            try store.guarded { db in
                let s = try db.statement(
                    "SELECT sequence, length(payload) FROM outbox WHERE kind = ?1 ORDER BY sequence LIMIT ?2"
                )
                .bind(.text(kind.rawValue), .int(limit))
                var rows: [(sequence: Int64, bytes: Int)] = []
                while try s.step() { rows.append((s.int(0), Int(s.int(1)))) }
                return rows
            }
        }
    }

    public nonisolated func pendingOutbox(kind: OutboxEntry.Kind, after sequence: Int64, limit: Int)
        throws(StoreError) -> [OutboxEntry]
    {
        try onStoreThread { store throws(StoreError) in try store.pending(kind: kind, after: sequence, limit: limit) }
    }

    public nonisolated func writeOutbox(_ write: OutboxWrite) throws(StoreError) {
        try onStoreThread { store throws(StoreError) in
            defer { store.checkpointIfDue(frames: AgentStore.checkpointFramesWithoutAcknowledgements) }
            try store.guarded { db in try db.transaction { try store.write(write, db) } }
        }
    }

    public nonisolated func maintain() {
        try? onStoreThread { store throws(StoreError) in store.checkpointIfDue(frames: AgentStore.checkpointFrames) }
    }

    public nonisolated func deleteOutbox(_ sequences: [Int64]) throws(StoreError) -> Set<Int64> {
        try onStoreThread { store throws(StoreError) in
            defer { store.checkpointIfDue(frames: AgentStore.checkpointFrames) }
            return try store.guarded { db in
                try db.transaction {
                    var deleted: Set<Int64> = []
                    for sequence in sequences {
                        try db.statement("DELETE FROM outbox WHERE sequence = ?1").bind(.integer(sequence)).run()
                        if db.changes > 0 { deleted.insert(sequence) }
                    }
                    return deleted
                }
            }
        }
    }

    public nonisolated func commitFix(
        monitor: String, records: [(identifier: String, record: MonitorRecord)], lastFix: Location?,
        indexFloor: Int?, removing: [String], outbox: OutboxWrite
    ) throws(StoreError) {
        try onStoreThread { store throws(StoreError) in
            try store.commit(
                monitor: monitor, records: records, lastFix: lastFix, indexFloor: indexFloor, removing: removing,
                outbox: outbox)
        }
    }

    public nonisolated func applyChanges(_ changes: [ConditionChange], outbox: OutboxWrite) throws(StoreError)
        -> [ChangeResult]
    {
        try onStoreThread { store throws(StoreError) in try store.apply(changes, outbox: outbox) }
    }

    /// The oldest waiting entries after `sequence` (of one kind, or of all), in order.
    public func pending(kind: OutboxEntry.Kind? = nil, after sequence: Int64 = 0, limit: Int = 256)
        throws(StoreError) -> [OutboxEntry]
    {
        try guarded { db in
            let s = try db.statement(
                """
                SELECT sequence, event_id, kind, topic, payload, qos, retain FROM outbox
                WHERE sequence > ?1 AND (?3 IS NULL OR kind = ?3) ORDER BY sequence LIMIT ?2
                """
            ).bind(.integer(sequence), .int(limit), kind.map { .text($0.rawValue) } ?? .null)
            var out: [OutboxEntry] = []
            while try s.step() {
                out.append(
                    OutboxEntry(
                        sequence: s.int(0), eventID: s.text(1) ?? "",
                        kind: OutboxEntry.Kind(rawValue: s.text(2) ?? "") ?? .transition,
                        topic: s.text(3) ?? "", payload: s.blob(4), qos: Int32(s.int(5)), retain: s.int(6) != 0))
            }
            return out
        }
    }

    /// Inserts the rows, deletes the dropped ones and stores the counters, inside the caller's transaction.
    func write(_ write: OutboxWrite, _ db: Database) throws {
        guard !write.isEmpty else { return }
        let insert = try db.statement(
            """
            INSERT INTO outbox (sequence, event_id, kind, topic, payload, qos, retain, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
            """)
        let now = Date().timeIntervalSince1970
        for row in write.rows {
            try insert.bind(
                .integer(row.sequence), .text(row.eventID), .text(row.kind.rawValue), .text(row.topic),
                .blob(row.payload),
                .integer(Int64(row.qos)), .int(row.retain ? 1 : 0), .real(now)
            ).run()
            _ = try db.statement(insert.sql)  // resets the cached statement for the next row
        }
        for sequence in write.dropping {
            try db.statement("DELETE FROM outbox WHERE sequence = ?1").bind(.integer(sequence)).run()
        }
        for (key, value) in write.settings { try setSetting(key, value, db) }
        guard write.countersChanged else { return }
        let c = write.counters
        try db.statement(
            "UPDATE outbox_state SET next_sequence = ?1, dropped_locations = ?2, dropped_transitions = ?3 WHERE id = 1"
        )
        .bind(.integer(c.nextSequence), .integer(c.droppedLocations), .integer(c.droppedTransitions)).run()
    }
}
