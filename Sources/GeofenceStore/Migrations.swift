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
        Step(
            version: 1, name: "monitors, conditions with their records, outbox, settings",
            sql: """
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
        // A sync of 100,000 geofences wrote 2.4 KB per condition: rows of 1 KB in a WITHOUT ROWID table
        // spill into overflow pages and leave its leaves half empty. A rowid table packs them, the key
        // becomes a small unique index, and new definitions are stored zlib-compressed. Rows from
        // version 1 keep their text in `definition`.
        Step(
            version: 2, name: "conditions as a rowid table with compressed definitions",
            sql: """
                CREATE TABLE conditions_v2 (
                    id INTEGER PRIMARY KEY,
                    monitor TEXT NOT NULL REFERENCES monitors(name) ON DELETE CASCADE,
                    identifier TEXT NOT NULL,
                    -- The text as written (rows stored before version 2), or NULL when it is deflated below.
                    definition TEXT,
                    -- The text's UTF-8, zlib-compressed, and its length before compression.
                    definition_deflated BLOB,
                    definition_size INTEGER,
                    compiled BLOB NOT NULL,
                    version INTEGER,
                    source TEXT NOT NULL,
                    updated_at REAL NOT NULL,
                    state TEXT NOT NULL DEFAULT 'unknown',
                    since REAL,
                    dwell_reported INTEGER NOT NULL DEFAULT 0,
                    last_kind TEXT,
                    last_state TEXT,
                    last_date REAL,
                    last_latitude REAL,
                    last_longitude REAL,
                    last_accuracy REAL,
                    UNIQUE (monitor, identifier),
                    CHECK (definition IS NOT NULL OR (definition_deflated IS NOT NULL AND definition_size IS NOT NULL))
                );
                INSERT INTO conditions_v2 (monitor, identifier, definition, compiled, version, source, updated_at, state, since,
                                           dwell_reported, last_kind, last_state, last_date, last_latitude, last_longitude, last_accuracy)
                    SELECT monitor, identifier, definition, compiled, version, source, updated_at, state, since,
                           dwell_reported, last_kind, last_state, last_date, last_latitude, last_longitude, last_accuracy
                    FROM conditions ORDER BY monitor, identifier;
                DROP TABLE conditions;
                ALTER TABLE conditions_v2 RENAME TO conditions;
                -- An empty retained message deletes an identifier from every monitor.
                CREATE INDEX conditions_by_identifier ON conditions(identifier);
                """),
        // The outbox's counters were text in `settings`; the outbox owner keeps them as integers in one row,
        // written in the same transaction as the rows they count.
        Step(
            version: 3, name: "outbox counters as integers",
            sql: """
                CREATE TABLE outbox_state (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    next_sequence INTEGER NOT NULL CHECK (next_sequence >= 1),
                    dropped_locations INTEGER NOT NULL DEFAULT 0,
                    dropped_transitions INTEGER NOT NULL DEFAULT 0
                );
                INSERT INTO outbox_state (id, next_sequence, dropped_locations, dropped_transitions) VALUES (1,
                    MAX(COALESCE((SELECT CAST(value AS INTEGER) FROM settings WHERE key = 'outbox.nextSequence'), 1),
                        COALESCE((SELECT MAX(sequence) + 1 FROM outbox), 1)),
                    COALESCE((SELECT CAST(value AS INTEGER) FROM settings WHERE key = 'outbox.droppedLocations'), 0),
                    COALESCE((SELECT CAST(value AS INTEGER) FROM settings WHERE key = 'outbox.droppedTransitions'), 0));
                DELETE FROM settings WHERE key IN ('outbox.nextSequence', 'outbox.droppedLocations', 'outbox.droppedTransitions');
                """),
        // Every insert into the outbox and every delete also wrote a page of this index: a quarter of the
        // bytes a transition cost the flash. The outbox is read in sequence order, and it is small.
        Step(version: 4, name: "outbox without its kind index", sql: "DROP INDEX outbox_kind;"),
        // The same for the unique index on `event_id`: a page of it was written with every transition and
        // every deletion, and nothing reads by it. An id is 122 random bits, unique without it.
        Step(
            version: 5, name: "outbox without the unique index on event_id",
            sql: """
                CREATE TABLE outbox_v5 (
                    sequence INTEGER PRIMARY KEY,
                    event_id TEXT NOT NULL,
                    kind TEXT NOT NULL CHECK (kind IN ('transition', 'location')),
                    topic TEXT NOT NULL,
                    payload BLOB NOT NULL,
                    qos INTEGER NOT NULL,
                    retain INTEGER NOT NULL,
                    created_at REAL NOT NULL
                );
                INSERT INTO outbox_v5 (sequence, event_id, kind, topic, payload, qos, retain, created_at)
                    SELECT sequence, event_id, kind, topic, payload, qos, retain, created_at FROM outbox ORDER BY sequence;
                DROP TABLE outbox;
                ALTER TABLE outbox_v5 RENAME TO outbox;
                """),
        // A manifest names each geofence's digest (`GeofenceDigest`); kept beside the row, a vehicle compares
        // 100,000 of them without inflating a definition. Rows stored before it are digested when read.
        Step(version: 6, name: "conditions' digests", sql: "ALTER TABLE conditions ADD COLUMN digest TEXT;"),
    ]

    public static var latest: Int { all.last?.version ?? 0 }

    /// Brings the database to the latest version, or to `target`. Returns the versions applied.
    @discardableResult
    public static func migrate(_ db: Database, to target: Int = latest, now: Double) throws -> [Int] {
        try db.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL)"
        )
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
        // Reset once read: a statement left on its row keeps a read open, and a later step that drops a
        // table would find it locked.
        defer { s.reset() }
        return try s.step() ? Int(s.int(0)) : 0
    }
}
