import GeofenceCore
import Logging
import Synchronization
import ThreadExecution

/// The one owner of the outbox, after GRDB's `DatabaseWriter`: it numbers the rows, makes their payloads,
/// applies the caps, counts, hands fresh rows to the publisher and deletes what the broker acknowledged.
/// The repository only keeps rows.
///
/// It runs on its repository's executor (the store's thread): a fix's commit, made by a processor on
/// the same thread, hops nowhere, and a write is prepared and made with no suspension between, so two
/// writes never interleave.
public actor Outbox {
    let repository: any OutboxRepository
    public nonisolated let limits: OutboxLimits
    let logger: Logger
    /// The counters as the repository holds them; `nextSequence` there is a lease (see `sequenceLease`).
    var counters = OutboxCounters()
    /// The number the next row gets.
    var nextSequence: Int64 = 1
    /// What the outbox holds and has dropped, as of the last acknowledgements taken in.
    var counts = OutboxStats()

    /// What the outbox holds and has dropped as of its last operation, without taking in the
    /// acknowledgements that came since (`acknowledgedWaiting`): the reporter's round reads it every second,
    /// from the actor that shares this executor (`assumeIsolated`), without a suspension or a write.
    public var statsWithoutWaitingAcknowledgements: OutboxStats { counts }

    /// What the outbox holds and has dropped, every acknowledgement received so far taken in.
    public var stats: OutboxStats {
        absorbAcknowledgements()
        return counts
    }

    /// Droppable rows numbered and handed to the publisher but not stored: the broker's acknowledgement
    /// usually comes first, and then they are never written. The rest go to the repository at the next
    /// group commit (`OutboxLimits.groupCommitSeconds`), with any write made before it, and at the stop.
    var buffered: [OutboxEntry] = [] {
        didSet { noteTickWork() }
    }
    /// Rows in the repository the broker acknowledged, no longer counted: deleted with the next write, or
    /// on their own after `OutboxLimits.acknowledgedDeletionSeconds` without one (`groupCommit`).
    var acknowledgedStored: [OutboxEntry] = [] {
        didSet { noteTickWork() }
    }
    /// When the last write was made (`ThreadExecutor.now()`, nanoseconds): whole numbers, as the tick compares
    /// them every second while a row waits (`ContinuousClock`'s durations were 128-bit arithmetic).
    var lastGroupCommit = ThreadExecutor.now() {
        didSet { noteTickWork() }
    }
    /// Acknowledgements were taken in since the tick last let the repository checkpoint.
    var acknowledgedSinceMaintenance = false {
        didSet { noteTickWork() }
    }
    /// When the tick (`deleteAcknowledged`) has work, as of the outbox's last operation: at once (0) for a
    /// checkpoint owed, when the group commit falls due (`groupCommitDue`) for rows waiting, never (`.max`)
    /// with nothing waiting. Read every second by the round's gate, which shares this executor.
    private var tickWorkFrom: UInt64 = .max

    private func noteTickWork() {
        let from: UInt64
        if acknowledgedSinceMaintenance {
            from = 0
        } else {
            let storing = buffered.isEmpty ? .max : lastGroupCommit &+ Self.nanoseconds(limits.groupCommitSeconds)
            let deleting =
                acknowledgedStored.isEmpty
                ? .max
                : lastGroupCommit
                    &+ Self.nanoseconds(max(limits.groupCommitSeconds, limits.acknowledgedDeletionSeconds))
            from = min(storing, deleting)
        }
        tickWorkFrom = from
    }

    private static func nanoseconds(_ seconds: Double) -> UInt64 { UInt64(max(0, seconds) * 1e9) }

    /// Whether `deleteAcknowledged` may have something to do now: acknowledgements to take in, a group commit
    /// due, or a checkpoint owed. False: a tick now would change nothing (a parked vehicle's second, or a
    /// driving one whose acknowledged rows wait for the next write). Read without a suspension by the round's
    /// gate, isolated to the actor that shares this executor (`assumeIsolated`).
    public var tickMayHaveWork: Bool {
        acknowledgedWaiting > 0 || tickWorkFrom <= ThreadExecutor.now()
    }

    public nonisolated let wakes: AsyncStream<Void>
    private nonisolated let wakeContinuation: AsyncStream<Void>.Continuation
    /// Entries just written, handed over so that the next event does not wait for a read of the store. A
    /// lock, not the actor: the publisher takes them from its own task without a hop to the store's thread.
    nonisolated let handOff = Mutex(OutboxHandOff())
    /// Entries the broker acknowledged, waiting to be deleted (appended from any thread).
    private nonisolated let acknowledgedEntries = Mutex<[OutboxEntry]>([])

    /// More than this waiting means the publisher is behind (broker away): the store has them.
    static let maximumHandOff = 256
    /// Numbers are reserved this many at a time for droppable rows that are never stored: the store's
    /// counter stays ahead of every number given, so none repeats after a crash (a restart may skip some).
    static let sequenceLease: Int64 = 1_000

    /// The repository's, kept: the runtime asks for it at every call into the outbox, and through the
    /// existential each ask was two calls.
    public nonisolated let unownedExecutor: UnownedSerialExecutor

    private init(repository: any OutboxRepository, limits: OutboxLimits, logger: Logger) {
        self.repository = repository
        unownedExecutor = repository.unownedExecutor
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
        nextSequence = counters.nextSequence
        counts = OutboxStats()
        counts.droppedLocations = counters.droppedLocations
        counts.droppedTransitions = counters.droppedTransitions
        var last: [OutboxEntry.Kind: Int64] = [.transition: 0, .location: 0]
        for (kind, held) in contents.rows {
            counts.rows += held.count
            counts.bytes += held.bytes
            last[kind] = held.last
            if kind == .transition { counts.transitions += held.count } else { counts.locations += held.count }
        }
        handOff.withLock { $0 = OutboxHandOff(lastWritten: last) }
    }

    // MARK: Writing

    /// Commits what a fix changed (records, last fix, expired conditions) with the rows for its events, in
    /// one transaction, then hands the rows to the publisher. Nothing is published before it returns.
    /// `settings` are written in the same transaction (a trip's phase with its events).
    @discardableResult
    public func commit(
        monitor: String, records: [(identifier: String, record: MonitorRecord)], lastFix: Location?,
        indexFloor: Int? = nil, removing: [String] = [], settings: [(key: String, value: String?)] = [],
        items: [OutboxItem]
    ) throws(StoreError) -> [OutboxEntry] {
        var prepared = try prepare(items, writing: true)
        prepared.write.settings = settings
        try repository.commitFix(
            monitor: monitor, records: records, lastFix: lastFix, indexFloor: indexFloor, removing: removing,
            outbox: prepared.write)
        return written(prepared)
    }

    /// Queues messages that change no state (location updates). Droppable ones are written only at the
    /// next group commit, if the broker has not acknowledged them by then.
    @discardableResult
    public func enqueue(_ items: [OutboxItem]) throws(StoreError) -> [OutboxEntry] {
        guard !items.isEmpty else { return [] }
        let prepared = try prepare(items, writing: items.contains { $0.kind == .transition } || groupCommitDue)
        if prepared.writes { try repository.writeOutbox(prepared.write) }
        return written(prepared)
    }

    /// Applies condition changes (a sync, a removal) with the exits of the conditions deleted while the
    /// vehicle was inside (the monitors decide them), in one transaction: a crash never leaves a deleted
    /// condition whose vehicle was inside without its exit, nor an exit for a condition still stored.
    public func apply(_ changes: [AgentStore.ConditionChange], exits: [OutboxItem]) throws(StoreError)
        -> [AgentStore.ChangeResult]
    {
        let prepared = try prepare(exits, writing: true)
        let results = try repository.applyChanges(changes, outbox: prepared.write)
        written(prepared)
        return results
    }

    /// A write prepared: the rows and counters to store, the statistics after it, the new droppable rows
    /// and the next number.
    struct Prepared {
        var write: OutboxWrite
        var after: OutboxStats
        var droppable: [OutboxEntry]
        var next: Int64
        /// Whether anything is to be stored (`writing`, or a new lease for the numbers).
        var writes: Bool
    }

    /// Numbers the items, makes their payloads and decides what the caps drop: everything the write needs,
    /// made before the transaction. When the outbox writes (`writing`), the droppable rows waiting go in
    /// the same transaction (a group commit for free); else the new droppable rows only join them.
    func prepare(_ items: [OutboxItem], writing: Bool) throws(StoreError) -> Prepared {
        // An acknowledged droppable row is never written; an acknowledged stored one goes in this write.
        absorbAcknowledgements()
        var write = OutboxWrite(counters: counters)
        var after = counts
        var next = nextSequence
        var droppable: [OutboxEntry] = []
        for item in items {
            let id = EventID.make()
            let entry = OutboxEntry(
                sequence: next, eventID: id, kind: item.kind, topic: item.topic, payload: item.payload(id, next),
                qos: item.qos, retain: item.retain)
            after.add(item.kind, bytes: entry.payload.count)
            if item.kind == .transition { write.rows.append(entry) } else { droppable.append(entry) }
            next += 1
        }
        // The store's counter is a lease that stays ahead of every number given.
        if next > counters.nextSequence { write.counters.nextSequence = next + Self.sequenceLease }
        let writes = writing || write.counters.nextSequence != counters.nextSequence
        guard writes else {
            return Prepared(write: write, after: after, droppable: droppable, next: next, writes: false)
        }
        write.rows = (write.rows + buffered + droppable).sorted { $0.sequence < $1.sequence }
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
        write.countersChanged = write.counters != counters
        // What the broker acknowledged goes in the same transaction.
        write.dropping += acknowledgedStored.map(\.sequence)
        return Prepared(write: write, after: after, droppable: droppable, next: next, writes: true)
    }

    /// Drops the oldest rows of `kind` while `over`: those stored first, then this write's own.
    private func drop(
        _ kind: OutboxEntry.Kind, _ write: inout OutboxWrite, _ after: inout OutboxStats,
        while over: (OutboxStats) -> Bool
    ) throws(StoreError) -> Int {
        var dropped = 0
        var skip = 0
        // An acknowledged row waits for its deletion: it is not dropped (and counted) again.
        let deleting = Set(acknowledgedStored.map(\.sequence))
        while over(after) {
            let stored = try repository.oldestOutboxRows(kind: kind, limit: skip + 256).dropFirst(skip)
            guard !stored.isEmpty else { break }
            for row in stored where over(after) && !deleting.contains(row.sequence) {
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

    /// A write was made (or none was needed): the counters and statistics move, the droppable rows that
    /// were not stored wait for the next group commit, and the new rows go to the publisher. Returns them.
    @discardableResult
    func written(_ prepared: Prepared) -> [OutboxEntry] {
        let (write, after) = (prepared.write, prepared.after)
        nextSequence = prepared.next
        let fresh: [OutboxEntry]
        if prepared.writes {
            counters = write.counters
            buffered = []
            let deleted = Set(write.dropping)
            acknowledgedStored.removeAll { deleted.contains($0.sequence) }
            lastGroupCommit = ThreadExecutor.now()
            let kept = Set(write.rows.map(\.sequence))
            let stored = prepared.droppable.filter { kept.contains($0.sequence) }
            fresh = (write.rows.filter { $0.kind == .transition } + stored).sorted { $0.sequence < $1.sequence }
        } else {
            buffered += prepared.droppable
            fresh = prepared.droppable
        }
        let dropped =
            after.droppedLocations - counts.droppedLocations + after.droppedTransitions - counts.droppedTransitions
        if after.droppedLocations > counts.droppedLocations {
            logger.warning(
                "outbox full: dropped the oldest location updates",
                metadata: ["dropped": "\(after.droppedLocations - counts.droppedLocations)", "rows": "\(after.rows)"])
        }
        if after.droppedTransitions > counts.droppedTransitions {
            logger.error(
                "outbox at its hard cap: dropped the oldest transitions",
                metadata: [
                    "dropped": "\(after.droppedTransitions - counts.droppedTransitions)", "rows": "\(after.rows)",
                ])
        }
        counts = after
        guard !fresh.isEmpty || dropped > 0 else { return fresh }
        // Rows handed over may have been dropped since: forget them, and let the publisher read the store.
        handOff.withLock { handOff in
            if dropped > 0 || handOff.count + fresh.count > Self.maximumHandOff { handOff.reset() }
            handOff.append(fresh)
        }
        wake()
        return fresh
    }

    // MARK: Handing over and acknowledging

    /// Wakes the publisher: rows may be waiting (at the start).
    public nonisolated func wake() { wakeContinuation.yield() }

    /// Ends the publisher's wait for new rows (the agent stops).
    public nonisolated func stopWaking() { wakeContinuation.finish() }

    /// What to issue next of one kind, in sequence order: the entries handed over when they follow on
    /// directly from the last one of that kind issued (0: none, the repository read), else a read of the
    /// repository, which is the record (at the start, `issuedUpTo` nil; after a gap; or when the hand-over
    /// was skipped). Droppable rows not stored yet are seen only through the hand-over, or once the group
    /// commit has stored them.
    public nonisolated func next(_ kind: OutboxEntry.Kind, after issuedUpTo: Int64?, limit: Int = 256)
        async throws(StoreError) -> [OutboxEntry]
    {
        if let handed = handOff.withLock({ $0.take(kind, after: issuedUpTo, limit: limit) }) { return handed }
        return try await pending(kind, after: issuedUpTo ?? 0, limit: limit)
    }

    /// The record: what the repository holds of `kind` after `sequence`, less what the broker acknowledged
    /// and waits for its deletion.
    private func pending(_ kind: OutboxEntry.Kind, after sequence: Int64, limit: Int) throws(StoreError)
        -> [OutboxEntry]
    {
        absorbAcknowledgements()
        // Usually none: acknowledged rows lie before what the publisher asks for.
        let deleting = Set(acknowledgedStored.lazy.filter { $0.kind == kind && $0.sequence > sequence }.map(\.sequence))
        let rows = try repository.pendingOutbox(kind: kind, after: sequence, limit: limit + deleting.count)
        return deleting.isEmpty ? rows : Array(rows.filter { !deleting.contains($0.sequence) }.prefix(limit))
    }

    /// The broker acknowledged `entry`: it stops counting at the outbox's next operation, and leaves the
    /// repository with its next write. A lock, not the actor, and nothing woken: an acknowledgement costs
    /// the vehicle no thread switch (the store's thread takes them in when it runs anyway).
    public nonisolated func acknowledged(_ entry: OutboxEntry) {
        acknowledgedEntries.withLock { $0.append(entry) }
    }

    /// Takes in what the broker acknowledged: it no longer counts as waiting. A droppable row never stored
    /// is forgotten with no write; a stored row (every transition) is deleted with the next write, which
    /// has its transaction anyway: on flash, a transition then costs one commit, not two.
    /// Takes in the acknowledgements that came since the last call.
    func absorbAcknowledgements() {
        let batch = acknowledgedEntries.withLock { list -> [OutboxEntry] in
            defer { list.removeAll() }
            return list
        }
        for entry in batch {
            if entry.kind != .transition, let index = buffered.firstIndex(where: { $0.sequence == entry.sequence }) {
                counts.remove(.location, bytes: buffered.remove(at: index).payload.count)
            } else {
                counts.remove(entry.kind, bytes: entry.payload.count)
                acknowledgedStored.append(entry)
            }
        }
        if !batch.isEmpty { acknowledgedSinceMaintenance = true }
    }

    /// The publisher's tick (every second, and at the stop): takes in the acknowledgements, makes the group
    /// commit when it is due (which deletes what waited too long) and, after either, lets the repository
    /// checkpoint. On
    /// failure (a full disk) what was to be deleted is kept for the next call: dropped, it would stay in the
    /// outbox, sent already, until the next start sent it again.
    public func deleteAcknowledged() throws(StoreError) {
        absorbAcknowledgements()
        let committing = groupCommitDue
        if committing { try groupCommit() }
        // The log is checkpointed after acknowledgements (`AgentStore.checkpointFrames`): with none since the
        // last tick and no group commit, there is nothing to do, and a parked vehicle's second costs nothing
        // more. Writes with no acknowledgement to follow (the broker away) checkpoint themselves, later.
        guard acknowledgedSinceMaintenance || committing else { return }
        acknowledgedSinceMaintenance = false
        repository.maintain()
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

    /// Never below zero: a row the hard cap dropped while in flight may still be acknowledged after.
    mutating func remove(_ kind: OutboxEntry.Kind, bytes: Int) {
        rows = max(0, rows - 1)
        self.bytes = max(0, self.bytes - bytes)
        if kind == .transition { transitions = max(0, transitions - 1) } else { locations = max(0, locations - 1) }
    }
}
