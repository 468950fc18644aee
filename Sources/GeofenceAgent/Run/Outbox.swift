import GeofenceCore
import GeofenceStore
import Synchronization

/// The one owner of the outbox. The store keeps its rows, sequence numbers, caps and statistics in the
/// same transactions as the state changes they report; this type is the only way in and out of them:
/// committing (a fix's changes with their events), queueing (locations), handing fresh entries to the
/// publisher without a read of the store, reading what to send next, and deleting what the broker
/// acknowledged.
public final class Outbox: Sendable {
    private let store: AgentStore
    public let wakes: AsyncStream<Void>
    private let wakeContinuation: AsyncStream<Void>.Continuation
    /// Entries just committed, handed over so that the next event does not wait for a read of the store.
    private let handOff = Mutex(HandOff())

    private struct HandOff {
        var entries: [OutboxEntry] = []
        /// The store's count of entries dropped at the caps when the last entries were handed over.
        var dropped: Int64 = 0
    }

    /// More than this waiting means the publisher is behind (broker away): the store has them.
    static let maximumHandOff = 256

    public init(store: AgentStore) {
        self.store = store
        (wakes, wakeContinuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// What the outbox holds and has dropped.
    public var stats: OutboxStats { get async { await store.outboxStats } }

    /// Commits what a fix changed (records, last fix, events) in one transaction, then hands the new
    /// entries to the publisher. Nothing is published before the commit returns.
    public func commit(monitor: String, records: [(identifier: String, record: MonitorRecord)], lastFix: Location?,
                       indexFloor: Int, removing: [String] = [], items: [OutboxItem]) async throws(StoreError) {
        let entries = try await store.commit(monitor: monitor, records: records, lastFix: lastFix, indexFloor: indexFloor, removing: removing,
                                             outbox: items)
        await handOver(entries)
    }

    /// Applies condition changes (a sync, a removal) with the exit of each condition deleted while the
    /// vehicle was inside, in one transaction, then hands those exits to the publisher.
    public func apply(_ changes: [AgentStore.ConditionChange], exits: @escaping @Sendable (AgentStore.RemovedWhileInside) -> OutboxItem?)
        async throws(StoreError) -> [AgentStore.ChangeResult] {
        let (results, entries) = try await store.apply(changes, exits: exits)
        await handOver(entries)
        return results
    }

    /// Queues messages that change no state (location updates).
    public func enqueue(_ items: [OutboxItem]) async throws(StoreError) {
        await handOver(try await store.enqueue(items))
    }

    /// Wakes the publisher: rows may be waiting (at the start).
    public func wake() { wakeContinuation.yield() }

    /// Ends the publisher's wait for new rows (the agent stops).
    func stopWaking() { wakeContinuation.finish() }

    /// Gives the publisher what was just committed. When the store dropped entries at the caps since the
    /// last hand-over, entries handed over may be gone: they are forgotten and the store is read instead.
    private func handOver(_ entries: [OutboxEntry]) async {
        guard !entries.isEmpty else { return }
        let stats = await store.outboxStats
        let dropped = stats.droppedLocations + stats.droppedTransitions
        handOff.withLock { h in
            if h.dropped != dropped || h.entries.count + entries.count > Self.maximumHandOff {
                h.entries.removeAll()
                h.dropped = dropped
            } else {
                h.entries += entries
            }
        }
        wake()
    }

    /// What to issue next, in sequence order: the entries handed over when they follow on directly from
    /// the last one issued (nothing else can sit between them), else a read of the store, which is the
    /// record (at the start, after a gap, or when the hand-over was skipped).
    func next(after issuedUpTo: Int64) async throws(StoreError) -> [OutboxEntry] {
        let handed = handOff.withLock { h -> [OutboxEntry] in
            defer { h.entries.removeAll() }
            return h.entries
        }.filter { $0.sequence > issuedUpTo }.sorted { $0.sequence < $1.sequence }
        let contiguous = zip(handed, handed.dropFirst()).allSatisfy { $1.sequence == $0.sequence + 1 }
        if let first = handed.first, issuedUpTo > 0, first.sequence == issuedUpTo + 1, contiguous { return handed }
        return try await store.pending(after: issuedUpTo, limit: 256)
    }

    /// Deletes entries the broker acknowledged, in one transaction.
    func acknowledge(_ entries: [OutboxEntry]) async throws(StoreError) {
        try await store.acknowledge(entries)
    }
}
