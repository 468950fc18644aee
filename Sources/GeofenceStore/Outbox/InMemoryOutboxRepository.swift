import GeofenceCore

/// The outbox's rows, and what a fix's commit and a sync record, in memory: the same contract as the
/// store's, for unit tests of the outbox and of what drives it. Nothing survives the process.
public actor InMemoryOutboxRepository: OutboxRepository {
    private var rows: [OutboxEntry] = []
    private var counters = OutboxCounters()
    /// The conditions, with each one's latest record, by monitor and identifier.
    private var conditions: [String: [String: (condition: Condition?, record: MonitorRecord?)]] = [:]
    private var lastFixes: [String: Location] = [:]
    /// Settings written with outbox rows.
    public private(set) var settings: [String: String] = [:]
    /// Writes fail with this while it is set (a full disk).
    private var failure: StoreError?

    public init() {}

    /// Makes every write fail with `error` (a full disk), or succeed again with nil.
    public func fail(with error: StoreError?) { failure = error }

    /// Every row held, in sequence order.
    public var held: [OutboxEntry] { rows }

    /// The record committed last for a condition.
    public func record(monitor: String, identifier: String) -> MonitorRecord? {
        conditions[monitor]?[identifier]?.record
    }

    private nonisolated func onExecutor<T: Sendable>(
        _ body: @Sendable (isolated InMemoryOutboxRepository) throws(StoreError) -> T
    )
        throws(StoreError) -> T
    {
        try assumeIsolated { repository in Result { () throws(StoreError) -> T in try body(repository) } }.get()
    }

    public nonisolated func outboxContents() throws(StoreError) -> OutboxContents {
        try onExecutor { r in
            var contents = OutboxContents()
            contents.counters = r.counters
            for row in r.rows {
                let held = contents.rows[row.kind] ?? (0, 0, 0)
                contents.rows[row.kind] = (held.count + 1, held.bytes + row.payload.count, row.sequence)
            }
            return contents
        }
    }

    public nonisolated func oldestOutboxRows(kind: OutboxEntry.Kind, limit: Int) throws(StoreError) -> [(
        sequence: Int64, bytes: Int
    )] {
        try onExecutor { r in
            r.rows.lazy.filter { $0.kind == kind }.prefix(limit).map { ($0.sequence, $0.payload.count) }
        }
    }

    public nonisolated func pendingOutbox(kind: OutboxEntry.Kind, after sequence: Int64, limit: Int)
        throws(StoreError) -> [OutboxEntry]
    {
        try onExecutor { r in
            Array(r.rows.lazy.filter { $0.kind == kind && $0.sequence > sequence }.prefix(limit))
        }
    }

    public nonisolated func writeOutbox(_ write: OutboxWrite) throws(StoreError) {
        try onExecutor { r throws(StoreError) in try r.apply(write) }
    }

    public nonisolated func deleteOutbox(_ sequences: [Int64]) throws(StoreError) -> Set<Int64> {
        try onExecutor { r throws(StoreError) in
            if let failure = r.failure { throw failure }
            let gone = Set(sequences)
            let deleted = Set(r.rows.map(\.sequence)).intersection(gone)
            r.rows.removeAll { gone.contains($0.sequence) }
            return deleted
        }
    }

    public nonisolated func maintain() {}

    public nonisolated func commitFix(
        monitor: String, records: [(identifier: String, record: MonitorRecord)], lastFix: Location?,
        indexFloor: Int?, removing: [String], outbox: OutboxWrite
    ) throws(StoreError) {
        try onExecutor { r throws(StoreError) in
            try r.apply(outbox)
            for identifier in removing { r.conditions[monitor]?[identifier] = nil }
            for (identifier, record) in records where r.conditions[monitor]?[identifier] != nil {
                r.conditions[monitor]![identifier]!.record = record
            }
            if let lastFix { r.lastFixes[monitor] = lastFix }
        }
    }

    public nonisolated func applyChanges(_ changes: [AgentStore.ConditionChange], outbox: OutboxWrite)
        throws(StoreError)
        -> [AgentStore.ChangeResult]
    {
        try onExecutor { r throws(StoreError) in
            try r.apply(outbox)
            return changes.map { change in
                switch change {
                case .put(let input):
                    r.conditions[input.monitor, default: [:]][input.identifier] = (input.condition, nil)
                    return .stored
                case .remove(let identifier, let monitor):
                    let names = r.conditions.keys.sorted().filter {
                        (monitor == nil || monitor == $0) && r.conditions[$0]?[identifier] != nil
                    }
                    for name in names { r.conditions[name]?[identifier] = nil }
                    return .removed(monitors: names)
                }
            }
        }
    }

    private func apply(_ write: OutboxWrite) throws(StoreError) {
        if let failure { throw failure }
        let dropping = Set(write.dropping)
        rows.removeAll { dropping.contains($0.sequence) }
        // Droppable rows are stored in group commits, after rows of the other kind numbered later.
        let inOrder = write.rows.allSatisfy { $0.sequence > rows.last?.sequence ?? 0 }
        rows += write.rows
        if !inOrder { rows.sort { $0.sequence < $1.sequence } }
        counters = write.counters
        for (key, value) in write.settings { settings[key] = value }
    }
}
