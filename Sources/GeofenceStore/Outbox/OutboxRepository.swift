import GeofenceCore

/// The outbox's counters, kept in one row beside the outbox (migration 3).
public struct OutboxCounters: Sendable, Equatable {
    /// The sequence number the next row gets; it never goes back, even when the rows are gone. The store
    /// holds a lease: numbers below it may have been given to droppable rows that were never stored.
    public var nextSequence: Int64 = 1
    public var droppedLocations: Int64 = 0
    public var droppedTransitions: Int64 = 0
    public init() {}
}

/// What the outbox holds when it is opened: its counters and, per kind, its rows, bytes and last sequence.
public struct OutboxContents: Sendable, Equatable {
    public var counters = OutboxCounters()
    public var rows: [OutboxEntry.Kind: (count: Int, bytes: Int, last: Int64)] = [:]
    public init() {}

    public static func == (a: Self, b: Self) -> Bool {
        a.counters == b.counters
            && a.rows.mapValues { [Int64($0.count), Int64($0.bytes), $0.last] }
                == b.rows.mapValues { [Int64($0.count), Int64($0.bytes), $0.last] }
    }
}

/// One write to the outbox, prepared by its owner before the transaction: rows with their sequence
/// numbers, ids and payloads made, the rows the caps drop, and the counters after both.
public struct OutboxWrite: Sendable {
    public var rows: [OutboxEntry] = []
    public var dropping: [Int64] = []
    public var counters: OutboxCounters
    /// Whether the counters differ from the stored ones: when not, their row is left alone (one page
    /// less written to flash per transaction).
    public var countersChanged = true
    /// Settings written in the same transaction (a trip's phase with its event): nil deletes one.
    public var settings: [(key: String, value: String?)] = []
    public init(counters: OutboxCounters) { self.counters = counters }

    /// Nothing to write.
    public var isEmpty: Bool { rows.isEmpty && dropping.isEmpty && settings.isEmpty }
}

/// Where the outbox's rows are kept: the store (SQLite) on a vehicle, memory in unit tests. A
/// repository decides nothing; the `Outbox` that owns it numbers, caps and counts.
///
/// Every requirement is synchronous and must be called on the repository's own executor, which the
/// outbox shares: a prepared write and the read it was prepared from then see the same rows, with no
/// suspension between them. Each call checks the executor at run time.
public protocol OutboxRepository: Actor {
    /// The counters and row counts, read once when the outbox opens.
    nonisolated func outboxContents() throws(StoreError) -> OutboxContents
    /// The oldest rows of one kind, in sequence order: the candidates for a cap's drop.
    nonisolated func oldestOutboxRows(kind: OutboxEntry.Kind, limit: Int) throws(StoreError)
        -> [(sequence: Int64, bytes: Int)]
    /// Rows of one kind waiting after `sequence`, in sequence order.
    nonisolated func pendingOutbox(kind: OutboxEntry.Kind, after sequence: Int64, limit: Int) throws(StoreError)
        -> [OutboxEntry]
    /// Writes rows, drops and counters in one transaction.
    nonisolated func writeOutbox(_ write: OutboxWrite) throws(StoreError)
    /// Deletes acknowledged rows in one transaction; returns the sequences that were still there.
    nonisolated func deleteOutbox(_ sequences: [Int64]) throws(StoreError) -> Set<Int64>
    /// Keeps the store's own housekeeping (the write-ahead log's checkpoint) off the path from a fix to its
    /// event: called after acknowledgements and once a second.
    nonisolated func maintain()
    /// Commits what a fix changed (records, last fix, expired conditions) with its outbox write, in one
    /// transaction: nothing is published before this returns.
    nonisolated func commitFix(
        monitor: String, records: [(identifier: String, record: MonitorRecord)],
        lastFix: Location?, indexFloor: Int?, removing: [String],
        outbox: OutboxWrite) throws(StoreError)
    /// Applies condition changes with the outbox write that carries their exits, in one transaction.
    nonisolated func applyChanges(_ changes: [AgentStore.ConditionChange], outbox: OutboxWrite) throws(StoreError)
        -> [AgentStore.ChangeResult]
}
