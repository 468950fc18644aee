import GeofenceCore
import Logging
import Synchronization

/// The one owner of the outbox, after GRDB's `DatabaseWriter`: it numbers the rows, makes their payloads,
/// applies the caps, counts, hands fresh rows to the publisher and deletes what the broker acknowledged.
/// The repository only keeps rows.
///
/// It runs on its repository's executor (the store's thread): a fix's commit, made by a processor on
/// the same thread, hops nowhere, and a write is prepared and made with no suspension between, so two
/// writes never interleave.
public actor Outbox {
    private let repository: any OutboxRepository
    public nonisolated let limits: OutboxLimits
    private let logger: Logger
    private var counters = OutboxCounters()
    /// What the outbox holds and has dropped.
    public private(set) var stats = OutboxStats()

    public nonisolated let wakes: AsyncStream<Void>
    private nonisolated let wakeContinuation: AsyncStream<Void>.Continuation
    /// Entries just written, handed over so that the next event does not wait for a read of the store. A
    /// lock, not the actor: the publisher takes them from its own task without a hop to the store's thread.
    private nonisolated let handOff = Mutex<[OutboxEntry]>([])
    /// Entries the broker acknowledged, waiting to be deleted in one transaction (appended from any thread).
    private nonisolated let acknowledgedEntries = Mutex<[OutboxEntry]>([])

    /// More than this waiting means the publisher is behind (broker away): the store has them.
    static let maximumHandOff = 256

    public nonisolated var unownedExecutor: UnownedSerialExecutor { repository.unownedExecutor }

    private init(repository: any OutboxRepository, limits: OutboxLimits, logger: Logger) {
        self.repository = repository
        self.limits = limits
        self.logger = logger
        (wakes, wakeContinuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Opens the outbox over `repository`, reading its counters and what it holds.
    public static func open(
        _ repository: any OutboxRepository, limits: OutboxLimits = OutboxLimits(),
        logger: Logger
    ) async throws(StoreError) -> Outbox {
        let outbox = Outbox(repository: repository, limits: limits, logger: logger)
        try await outbox.load()
        return outbox
    }

    private func load() throws(StoreError) {
        let contents = try repository.outboxContents()
        counters = contents.counters
        stats = OutboxStats()
        stats.droppedLocations = counters.droppedLocations
        stats.droppedTransitions = counters.droppedTransitions
        for (kind, held) in contents.rows {
            stats.rows += held.count
            stats.bytes += held.bytes
            if kind == .transition { stats.transitions += held.count } else { stats.locations += held.count }
        }
    }

    // MARK: Writing

    /// Commits what a fix changed (records, last fix, expired conditions) with the rows for its events, in
    /// one transaction, then hands the rows to the publisher. Nothing is published before it returns.
    @discardableResult
    public func commit(
        monitor: String, records: [(identifier: String, record: MonitorRecord)], lastFix: Location?,
        indexFloor: Int? = nil, removing: [String] = [], items: [OutboxItem]
    ) throws(StoreError) -> [OutboxEntry] {
        let (write, after) = try prepare(items)
        try repository.commitFix(
            monitor: monitor, records: records, lastFix: lastFix, indexFloor: indexFloor, removing: removing,
            outbox: write)
        return written(write, after)
    }

    /// Queues messages that change no state (location updates).
    @discardableResult
    public func enqueue(_ items: [OutboxItem]) throws(StoreError) -> [OutboxEntry] {
        guard !items.isEmpty else { return [] }
        let (write, after) = try prepare(items)
        try repository.writeOutbox(write)
        return written(write, after)
    }

    /// Applies condition changes (a sync, a removal) with the exit of each condition deleted while the
    /// vehicle was inside, in one transaction: a crash never leaves a deleted condition whose vehicle was
    /// inside without its exit, nor an exit for a condition still stored.
    public func apply(
        _ changes: [AgentStore.ConditionChange],
        exits: (AgentStore.RemovedWhileInside) -> [OutboxItem]
    ) throws(StoreError) -> [AgentStore.ChangeResult] {
        let removed = try repository.satisfiedRemovals(changes)
        let (write, after) = try prepare(removed.flatMap(exits))
        let results = try repository.applyChanges(changes, outbox: write)
        written(write, after)
        return results
    }

    /// Numbers the items, makes their payloads and decides what the caps drop: everything the write needs,
    /// made before the transaction.
    private func prepare(_ items: [OutboxItem]) throws(StoreError) -> (OutboxWrite, OutboxStats) {
        var write = OutboxWrite(counters: counters)
        var after = stats
        for item in items {
            let sequence = write.counters.nextSequence
            let id = EventID.make()
            let payload = item.payload(id, sequence)
            write.rows.append(
                OutboxEntry(
                    sequence: sequence, eventID: id, kind: item.kind, topic: item.topic, payload: payload,
                    qos: item.qos, retain: item.retain))
            after.add(item.kind, bytes: payload.count)
            write.counters.nextSequence += 1
        }
        let locations = try drop(.location, &write, &after) {
            $0.rows > limits.maximumRows || $0.bytes > limits.maximumBytes
        }
        let transitions = try drop(.transition, &write, &after) {
            $0.rows > limits.hardMaximumRows || $0.bytes > limits.hardMaximumBytes
        }
        write.counters.droppedLocations += Int64(locations)
        write.counters.droppedTransitions += Int64(transitions)
        after.droppedLocations = write.counters.droppedLocations
        after.droppedTransitions = write.counters.droppedTransitions
        if locations + transitions > 0 { after.capReached = true }
        return (write, after)
    }

    /// Drops the oldest rows of `kind` while `over`: those stored first, then this write's own.
    private func drop(
        _ kind: OutboxEntry.Kind, _ write: inout OutboxWrite, _ after: inout OutboxStats,
        while over: (OutboxStats) -> Bool
    ) throws(StoreError) -> Int {
        var dropped = 0
        var skip = 0
        while over(after) {
            let stored = try repository.oldestOutboxRows(kind: kind, limit: skip + 256).dropFirst(skip)
            guard !stored.isEmpty else { break }
            for row in stored where over(after) {
                write.dropping.append(row.sequence)
                after.remove(kind, bytes: row.bytes)
                dropped += 1
            }
            skip += stored.count
        }
        while over(after), let index = write.rows.firstIndex(where: { $0.kind == kind }) {
            after.remove(kind, bytes: write.rows.remove(at: index).payload.count)
            dropped += 1
        }
        return dropped
    }

    /// The write is in the store: the counters and statistics move, and the rows go to the publisher.
    @discardableResult
    private func written(_ write: OutboxWrite, _ after: OutboxStats) -> [OutboxEntry] {
        counters = write.counters
        let dropped =
            after.droppedLocations - stats.droppedLocations + after.droppedTransitions - stats.droppedTransitions
        if after.droppedLocations > stats.droppedLocations {
            logger.warning(
                "outbox full: dropped the oldest location updates",
                metadata: ["dropped": "\(after.droppedLocations - stats.droppedLocations)", "rows": "\(after.rows)"])
        }
        if after.droppedTransitions > stats.droppedTransitions {
            logger.error(
                "outbox at its hard cap: dropped the oldest transitions",
                metadata: [
                    "dropped": "\(after.droppedTransitions - stats.droppedTransitions)", "rows": "\(after.rows)",
                ])
        }
        stats = after
        guard !write.rows.isEmpty else { return [] }
        // Rows handed over may have been dropped since: forget them, and let the publisher read the store.
        handOff.withLock { handed in
            if dropped > 0 || handed.count + write.rows.count > Self.maximumHandOff {
                handed.removeAll()
            } else {
                handed += write.rows
            }
        }
        wake()
        return write.rows
    }

    // MARK: Handing over and acknowledging

    /// Wakes the publisher: rows may be waiting (at the start).
    public nonisolated func wake() { wakeContinuation.yield() }

    /// Ends the publisher's wait for new rows (the agent stops).
    public nonisolated func stopWaking() { wakeContinuation.finish() }

    /// What to issue next, in sequence order: the entries handed over when they follow on directly from
    /// the last one issued (nothing else can sit between them), else a read of the store, which is the
    /// record (at the start, after a gap, or when the hand-over was skipped).
    public nonisolated func next(after issuedUpTo: Int64, limit: Int = 256) async throws(StoreError) -> [OutboxEntry] {
        let handed = handOff.withLock { handed in
            defer { handed.removeAll() }
            return handed.filter { $0.sequence > issuedUpTo }
        }
        let contiguous = zip(handed, handed.dropFirst()).allSatisfy { $1.sequence == $0.sequence + 1 }
        if let first = handed.first, issuedUpTo > 0, first.sequence == issuedUpTo + 1, contiguous { return handed }
        return try await pending(after: issuedUpTo, limit: limit)
    }

    /// The record: what the repository holds after `sequence`.
    private func pending(after sequence: Int64, limit: Int) throws(StoreError) -> [OutboxEntry] {
        try repository.pendingOutbox(after: sequence, limit: limit)
    }

    /// The broker acknowledged `entry`: it leaves the outbox at the next `deleteAcknowledged()`.
    public nonisolated func acknowledged(_ entry: OutboxEntry) {
        acknowledgedEntries.withLock { $0.append(entry) }
    }

    /// Deletes what the broker acknowledged, in one transaction (one fsync, not one each). On failure
    /// (a full disk) the entries are kept for the next call: dropped, they would stay in the outbox, sent
    /// already, until the next start sent them again.
    public func deleteAcknowledged() throws(StoreError) {
        let batch = acknowledgedEntries.withLock { list -> [OutboxEntry] in
            defer { list.removeAll() }
            return list
        }
        guard !batch.isEmpty else { return }
        do {
            let deleted = try repository.deleteOutbox(batch.map(\.sequence))
            for entry in batch where deleted.contains(entry.sequence) {
                stats.remove(entry.kind, bytes: entry.payload.count)
            }
        } catch {
            acknowledgedEntries.withLock { $0.insert(contentsOf: batch, at: 0) }
            throw error
        }
    }

    /// Acknowledged entries not yet deleted.
    public nonisolated var acknowledgedWaiting: Int { acknowledgedEntries.withLock { $0.count } }
}

extension OutboxStats {
    mutating func add(_ kind: OutboxEntry.Kind, bytes: Int) {
        rows += 1
        self.bytes += bytes
        if kind == .transition { transitions += 1 } else { locations += 1 }
    }

    mutating func remove(_ kind: OutboxEntry.Kind, bytes: Int) {
        rows -= 1
        self.bytes -= bytes
        if kind == .transition { transitions -= 1 } else { locations -= 1 }
    }
}
