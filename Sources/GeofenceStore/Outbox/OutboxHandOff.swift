/// Rows written and not yet taken by the publisher, per kind, each run with the sequence of the row of its
/// kind written just before it. The publisher takes a run only when it follows on from the last entry of
/// that kind it issued; otherwise it reads the repository, which is the record.
struct OutboxHandOff: Sendable {
    struct Run: Sendable {
        var previous: Int64?
        var entries: [OutboxEntry] = []
    }

    private var runs: [OutboxEntry.Kind: Run] = [:]
    /// The last sequence written of each kind (nil: not known, read the repository).
    private(set) var lastWritten: [OutboxEntry.Kind: Int64] = [:]

    init(lastWritten: [OutboxEntry.Kind: Int64] = [:]) { self.lastWritten = lastWritten }

    /// Entries waiting, all kinds.
    var count: Int { runs.values.reduce(0) { $0 + $1.entries.count } }

    mutating func append(_ rows: [OutboxEntry]) {
        for row in rows {
            var run = runs[row.kind] ?? Run()
            if run.entries.isEmpty { run.previous = lastWritten[row.kind] }
            run.entries.append(row)
            runs[row.kind] = run
            lastWritten[row.kind] = row.sequence
        }
    }

    /// Forgets what was handed (rows were dropped, or too many wait): the publisher reads the repository.
    mutating func reset() { runs = [:] }

    /// Up to `limit` entries of `kind` that follow on from `issuedUpTo`: none when nothing of that kind was
    /// written after it; nil when the run does not follow on, or when the publisher has not read the
    /// repository yet (`issuedUpTo` nil): read it.
    mutating func take(_ kind: OutboxEntry.Kind, after issuedUpTo: Int64?, limit: Int) -> [OutboxEntry]? {
        guard let issuedUpTo else { return nil }
        guard var run = runs[kind], !run.entries.isEmpty else {
            return lastWritten[kind] == issuedUpTo ? [] : nil
        }
        guard run.previous == issuedUpTo else {
            runs[kind] = nil
            return nil
        }
        let taken = Array(run.entries.prefix(limit))
        run.entries.removeFirst(taken.count)
        run.previous = taken.last?.sequence ?? run.previous
        runs[kind] = run
        return taken
    }
}
