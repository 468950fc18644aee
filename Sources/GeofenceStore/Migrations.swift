import SQLite

/// The schema, as a list of steps. A step is never edited once shipped: a change is a new step.
/// Each step runs in its own transaction and is recorded in `schema_migrations`.
public enum Migrations {
    public struct Step: Sendable {
        public let version: Int
        public let name: String
        public let sql: String
    }

    public static let all: [Step] = [
        Step(version: 1, name: "monitors, conditions with their records, outbox, settings", sql: """
            CREATE TABLE monitors (
                name TEXT PRIMARY KEY,
                created_at REAL NOT NULL,
                last_fix BLOB,
                -- The spatial index's floor when last saved: a restore skips choosing it again.
                index_floor INTEGER
            ) WITHOUT ROWID;
            CREATE TABLE conditions (
                monitor TEXT NOT NULL REFERENCES monitors(name) ON DELETE CASCADE,
                identifier TEXT NOT NULL,
                definition TEXT NOT NULL,
                compiled BLOB NOT NULL,
                version INTEGER,
                source TEXT NOT NULL,
                updated_at REAL NOT NULL,
                -- The record, beside its condition: a restore reads one table in one scan.
                state TEXT NOT NULL DEFAULT 'unknown',
                since REAL,
                dwell_reported INTEGER NOT NULL DEFAULT 0,
                last_kind TEXT,
                last_state TEXT,
                last_date REAL,
                last_latitude REAL,
                last_longitude REAL,
                last_accuracy REAL,
                PRIMARY KEY (monitor, identifier)
            ) WITHOUT ROWID;
            CREATE TABLE outbox (
                sequence INTEGER PRIMARY KEY,
                event_id TEXT NOT NULL UNIQUE,
                kind TEXT NOT NULL CHECK (kind IN ('transition', 'location')),
                topic TEXT NOT NULL,
                payload BLOB NOT NULL,
                qos INTEGER NOT NULL,
                retain INTEGER NOT NULL,
                created_at REAL NOT NULL
            );
            CREATE INDEX outbox_kind ON outbox(kind, sequence);
            CREATE TABLE settings (
                key TEXT PRIMARY KEY,
                value TEXT NOT NULL
            ) WITHOUT ROWID;
            """),
    ]

    public static var latest: Int { all.last?.version ?? 0 }

    /// Brings the database to the latest version, or to `target`. Returns the versions applied.
    @discardableResult
    public static func migrate(_ db: Database, to target: Int = latest, now: Double) throws -> [Int] {
        try db.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL)")
        let current = try version(db)
        if current > latest { throw StoreError.newerSchema(found: current, known: latest) }
        var applied: [Int] = []
        for step in all where step.version > current && step.version <= target {
            try db.transaction {
                try db.execute(step.sql)
                try db.statement("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?1, ?2, ?3)")
                    .bind(.int(step.version), .text(step.name), .real(now)).run()
            }
            applied.append(step.version)
        }
        return applied
    }

    public static func version(_ db: Database) throws(SQLiteError) -> Int {
        let s = try db.statement("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")
        return try s.step() ? Int(s.int(0)) : 0
    }
}
