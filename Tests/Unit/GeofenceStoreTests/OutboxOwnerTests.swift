import Foundation
import GeofenceCore
import SQLite
import TestSupport
import Testing

@testable import GeofenceStore

/// The outbox's owner decides the same over either repository: numbers that never repeat, payloads made
/// with their stamp, caps that drop locations first, a hand-over that follows on, acknowledgements that
/// leave. Then what only the store can show: the counters' migration from text to integers.
@Suite(.offTheCooperativePool(.waiting)) struct OutboxOwnerTests {
    enum Kind: String, CaseIterable { case sqlite, memory }

    func repository(_ kind: Kind) async throws -> any OutboxRepository {
        switch kind {
        case .sqlite: try await AgentStore.open(path: temporaryStorePath(), logger: quietLogger)
        case .memory: InMemoryOutboxRepository()
        }
    }

    func item(_ kind: OutboxEntry.Kind, _ text: String) -> OutboxItem {
        OutboxItem(kind: kind, topic: "t/\(kind.rawValue)") { id, seq in Array("\(text) \(id) \(seq)".utf8) }
    }

    func texts(_ entries: [OutboxEntry]) -> [String] {
        entries.map { String(String(decoding: $0.payload, as: UTF8.self).split(separator: " ")[0]) }
    }

    @Test(arguments: Kind.allCases) func payloadsAreStampedWithTheirIdAndSequence(kind: Kind) async throws {
        let outbox = try await Outbox.open(try await repository(kind), logger: quietLogger)
        let written = try await outbox.enqueue([item(.transition, "a"), item(.location, "b"), item(.transition, "c")])
        #expect(written.map(\.sequence) == [1, 2, 3])
        #expect(Set(written.map(\.eventID)).count == 3)
        for entry in written {
            #expect(String(decoding: entry.payload, as: UTF8.self).hasSuffix("\(entry.eventID) \(entry.sequence)"))
        }
        let stats = await outbox.stats
        #expect(stats.rows == 3 && stats.transitions == 2 && stats.locations == 1)
    }

    @Test(arguments: Kind.allCases) func theHandOverFollowsOnAndAGapReadsTheRepository(kind: Kind) async throws {
        let outbox = try await Outbox.open(try await repository(kind), logger: quietLogger)
        try await outbox.enqueue([item(.transition, "a"), item(.transition, "b")])
        // At the start nothing has been issued: the repository is the record.
        #expect(texts(try await outbox.next(.transition, after: nil)) == ["a", "b"])
        try await outbox.enqueue([item(.transition, "c")])
        #expect(texts(try await outbox.next(.transition, after: 2)) == ["c"])
        // Issued up to 1 only (the client refused 2): the hand-over does not follow on, the repository is read.
        try await outbox.enqueue([item(.transition, "d")])
        #expect(texts(try await outbox.next(.transition, after: 1)) == ["b", "c", "d"])
        #expect(try await outbox.next(.transition, after: 4).isEmpty, "nothing written after 4")
    }

    @Test(arguments: Kind.allCases) func acknowledgedRowsLeaveAndTheRestStay(kind: Kind) async throws {
        let outbox = try await Outbox.open(try await repository(kind), logger: quietLogger)
        let written = try await outbox.enqueue((0..<5).map { item(.transition, "e\($0)") })
        outbox.acknowledged(written[0])
        outbox.acknowledged(written[3])
        #expect(outbox.acknowledgedWaiting == 2)
        try await outbox.deleteAcknowledged()
        #expect(outbox.acknowledgedWaiting == 0)
        #expect(texts(try await outbox.next(.transition, after: nil)) == ["e1", "e2", "e4"])
        #expect(await outbox.stats.rows == 3)
    }

    @Test(arguments: Kind.allCases) func capsDropTheOldestLocationsThenTransitions(kind: Kind) async throws {
        var limits = OutboxLimits()
        limits.maximumRows = 4
        limits.hardMaximumRows = 6
        limits.groupCommitSeconds = 0
        let outbox = try await Outbox.open(try await repository(kind), limits: limits, logger: quietLogger)
        try await outbox.enqueue((0..<3).map { item(.location, "l\($0)") })
        try await outbox.enqueue((0..<3).map { item(.transition, "t\($0)") })
        #expect(texts(try await outbox.next(.location, after: nil)) == ["l2"])
        #expect(texts(try await outbox.next(.transition, after: nil)) == ["t0", "t1", "t2"])
        // No location is left to drop: above the hard cap the oldest transitions go.
        try await outbox.enqueue((3..<8).map { item(.transition, "t\($0)") })
        #expect(texts(try await outbox.next(.transition, after: nil)) == ["t2", "t3", "t4", "t5", "t6", "t7"])
        let stats = await outbox.stats
        #expect(stats.droppedLocations == 3 && stats.droppedTransitions == 2 && stats.capReached)
        #expect(stats.rows == 6 && stats.locations == 0)
    }

    @Test(arguments: Kind.allCases) func transitionsAndDroppableRowsAreReadApart(kind: Kind) async throws {
        let outbox = try await Outbox.open(try await repository(kind), logger: quietLogger)
        try await outbox.enqueue([item(.location, "l1"), item(.transition, "t1")])
        try await outbox.enqueue([item(.location, "l2"), item(.transition, "t2")])
        #expect(texts(try await outbox.next(.transition, after: nil)) == ["t1", "t2"])
        #expect(texts(try await outbox.next(.location, after: nil, limit: 1)) == ["l1"])
        #expect(texts(try await outbox.next(.location, after: 1)) == ["l2"])
    }

    /// A droppable row the broker acknowledges before the group commit is never written; one it has not
    /// is stored then, and read again by the next start.
    @Test(arguments: Kind.allCases) func droppableRowsAreStoredOnlyByTheGroupCommit(kind: Kind) async throws {
        var limits = OutboxLimits()
        limits.groupCommitSeconds = 3600
        let repository = try await repository(kind)
        let outbox = try await Outbox.open(repository, limits: limits, logger: quietLogger)
        // The first row takes a lease of numbers, which is a write.
        let first = try await outbox.enqueue([item(.transition, "t")])
        outbox.acknowledged(first[0])
        try await outbox.deleteAcknowledged()
        let rows = try await outbox.enqueue([item(.location, "a"), item(.location, "b")])
        #expect(texts(try await outbox.next(.location, after: 0)) == ["a", "b"], "handed over at once")
        #expect(try await Outbox.open(repository, logger: quietLogger).stats.locations == 0, "nothing stored yet")
        outbox.acknowledged(rows[0])
        try await outbox.deleteAcknowledged()
        #expect(await outbox.stats.locations == 1)
        #expect(await outbox.unstoredRows == 1)
        try await outbox.groupCommit()
        let restarted = try await Outbox.open(repository, logger: quietLogger)
        #expect(texts(try await restarted.next(.location, after: nil)) == ["b"])
        // Acknowledged once stored, it is deleted at the next group commit.
        outbox.acknowledged(rows[1])
        try await outbox.deleteAcknowledged()
        try await outbox.groupCommit()
        #expect(try await Outbox.open(repository, logger: quietLogger).stats.rows == 0)
        #expect(await outbox.stats.rows == 0)
    }

    /// The reporter's round asks `tickMayHaveWork` every second without a suspension: yes while
    /// `deleteAcknowledged` has something to do (acknowledgements to take in, a checkpoint owed, a group
    /// commit due), no once it has done it, and while rows only wait for their time.
    @Test(arguments: Kind.allCases) func theTickTellsWhetherItHasWorkWithoutEnteringTheOutbox(kind: Kind) async throws {
        var limits = OutboxLimits()
        limits.groupCommitSeconds = 3600
        limits.acknowledgedDeletionSeconds = 3600
        let repository = try await repository(kind)
        let outbox = try await Outbox.open(repository, limits: limits, logger: quietLogger)
        #expect(await !outbox.tickMayHaveWork, "nothing waits")
        let first = try await outbox.enqueue([item(.transition, "t")])
        #expect(await !outbox.tickMayHaveWork, "a transition is stored at once")
        outbox.acknowledged(first[0])
        #expect(await outbox.tickMayHaveWork, "an acknowledgement to take in")
        try await outbox.deleteAcknowledged()
        #expect(await !outbox.tickMayHaveWork, "the acknowledged row waits for the next write, an hour at most")
        try await outbox.enqueue([item(.location, "a")])
        #expect(await !outbox.tickMayHaveWork, "a droppable row waits for its group commit, an hour away")
        #expect(await outbox.statsWithoutWaitingAcknowledgements == (await outbox.stats))

        limits.groupCommitSeconds = 0
        let eager = try await Outbox.open(repository, limits: limits, logger: quietLogger)
        // The first row takes a lease of numbers, which is a write; the second waits in memory.
        try await eager.enqueue([item(.location, "b")])
        try await eager.enqueue([item(.location, "c")])
        #expect(await eager.unstoredRows == 1)
        #expect(await eager.tickMayHaveWork, "a group commit due at once")
        try await eager.deleteAcknowledged()
        #expect(await !eager.tickMayHaveWork, "the group commit made")
    }

    /// An acknowledged transition costs no transaction of its own: it is deleted with the next write, or on
    /// its own once `acknowledgedDeletionSeconds` pass without one. Meanwhile it is neither counted nor
    /// read again.
    @Test(arguments: Kind.allCases) func anAcknowledgedTransitionIsDeletedWithTheNextWrite(kind: Kind) async throws {
        var limits = OutboxLimits()
        limits.acknowledgedDeletionSeconds = 3600
        let repository = try await repository(kind)
        let outbox = try await Outbox.open(repository, limits: limits, logger: quietLogger)
        let first = try await outbox.enqueue([item(.transition, "t1")])
        outbox.acknowledged(first[0])
        try await outbox.deleteAcknowledged()
        #expect(await outbox.stats.rows == 0)
        #expect(try await outbox.next(.transition, after: nil).isEmpty, "not read again")
        #expect(try await Outbox.open(repository, logger: quietLogger).stats.rows == 1, "still stored")
        try await outbox.enqueue([item(.transition, "t2")])
        let restarted = try await Outbox.open(repository, logger: quietLogger)
        #expect(texts(try await restarted.next(.transition, after: nil)) == ["t2"], "gone with the next write")
        // With no write to go with, it goes on its own when its time is up.
        limits.acknowledgedDeletionSeconds = 0
        limits.groupCommitSeconds = 0
        let eager = try await Outbox.open(repository, limits: limits, logger: quietLogger)
        let second = try await eager.next(.transition, after: nil)
        eager.acknowledged(second[0])
        try await eager.deleteAcknowledged()
        #expect(try await Outbox.open(repository, logger: quietLogger).stats.rows == 0)
    }

    /// Numbers given to droppable rows never stored are not given again after a restart (a crash).
    @Test(arguments: Kind.allCases) func aNumberIsNeverGivenTwiceAcrossARestart(kind: Kind) async throws {
        var limits = OutboxLimits()
        limits.groupCommitSeconds = 3600
        let repository = try await repository(kind)
        let outbox = try await Outbox.open(repository, limits: limits, logger: quietLogger)
        let lost = try await outbox.enqueue((0..<5).map { item(.location, "l\($0)") })
        let restarted = try await Outbox.open(repository, logger: quietLogger)
        let next = try await restarted.enqueue([item(.transition, "t")])
        #expect(next[0].sequence > lost.last!.sequence)
    }

    @Test func aFailedWriteTakesNoNumberAndChangesNoCount() async throws {
        let memory = InMemoryOutboxRepository()
        let outbox = try await Outbox.open(memory, logger: quietLogger)
        try await outbox.enqueue([item(.transition, "a")])
        await memory.fail(with: .diskFull(detail: "memory"))
        await #expect(throws: StoreError.self) { try await outbox.enqueue([item(.transition, "b")]) }
        #expect(await outbox.stats.rows == 1)
        await memory.fail(with: nil)
        let next = try await outbox.enqueue([item(.transition, "c")])
        #expect(next.map(\.sequence) == [2], "the failed write's number is given again")
    }

    /// A store from before migration 3 kept its counters as text in `settings`: they become integers,
    /// and the next row follows on from the larger of the counter and the rows held.
    @Test func migrationThreeMovesTheCountersToIntegers() async throws {
        let path = temporaryStorePath()
        do {
            let db = try Database(path: path)
            try Migrations.migrate(db, to: 2, now: 0)
            try db.execute(
                """
                INSERT INTO outbox (sequence, event_id, kind, topic, payload, qos, retain, created_at)
                    VALUES (41, 'x', 'transition', 'events', X'7B7D', 1, 0, 0);
                INSERT INTO settings (key, value) VALUES ('outbox.nextSequence', '40'), ('outbox.droppedLocations', '7'),
                    ('outbox.droppedTransitions', '2');
                """)
            db.close()
        }
        let store = try await AgentStore.open(path: path, logger: quietLogger)
        let outbox = try await Outbox.open(store, logger: quietLogger)
        let stats = await outbox.stats
        #expect(stats.droppedLocations == 7 && stats.droppedTransitions == 2 && stats.rows == 1)
        #expect(try await outbox.enqueue([item(.transition, "next")]).map(\.sequence) == [42])
        #expect(try await store.setting("outbox.nextSequence") == nil, "the text counters are gone")
        await store.close()
    }

    /// Migration 5 rebuilds the outbox without the unique index on `event_id`: every row waiting keeps its
    /// number, id and bytes, in order, and is sent as before.
    @Test func migrationFiveKeepsEveryWaitingRow() async throws {
        let path = temporaryStorePath()
        do {
            let db = try Database(path: path)
            try Migrations.migrate(db, to: 4, now: 0)
            try db.execute(
                """
                INSERT INTO outbox (sequence, event_id, kind, topic, payload, qos, retain, created_at) VALUES
                    (7, 'e7', 'transition', 'events', X'7B7D', 1, 0, 0),
                    (9, 'e9', 'location', 'location', X'5B5D', 1, 1, 0);
                UPDATE outbox_state SET next_sequence = 10;
                """)
            db.close()
        }
        let store = try await AgentStore.open(path: path, logger: quietLogger)
        let outbox = try await Outbox.open(store, logger: quietLogger)
        let transitions = try await outbox.next(.transition, after: nil)
        let locations = try await outbox.next(.location, after: nil)
        #expect(transitions.map(\.eventID) == ["e7"] && transitions.first?.payload == Array("{}".utf8))
        #expect(locations.map(\.sequence) == [9] && locations.first?.retain == true)
        #expect(try await outbox.enqueue([item(.transition, "next")]).map(\.sequence) == [10])
        await store.close()
        let db = try Database(path: path)
        let indexes = try db.statement(
            "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'outbox'")
        #expect(try indexes.step() && indexes.int(0) == 0, "the outbox has no index but its primary key")
        db.close()
    }
}
