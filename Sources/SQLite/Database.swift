import CSQLite
import Foundation

/// One SQLite connection: the only owner of its `sqlite3*`. Not thread-safe and every call may block on
/// the disk, so a `Database` belongs to one thread (see `ThreadExecutor`).
public final class Database {
    var handle: OpaquePointer?
    public let path: String
    private var statements: [String: Statement] = [:]
    private var walCounter: WALCounter?
    /// Set by `keepLog(size:)`: the log's file outlives the connection, at this size.
    var keptLogSize = 0

    /// Opens (creating if asked) a database in WAL mode with `synchronous=FULL`: a committed transaction
    /// survives a power cut.
    public init(path: String, create: Bool = true, readOnly: Bool = false) throws(SQLiteError) {
        self.path = path
        var db: OpaquePointer?
        let flags =
            (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0))
            | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_close_v2(db)
            throw SQLiteError(code: rc, message: message)
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, 5000)
        if readOnly {
            // A reader beside the running agent: WAL lets it read while the agent writes.
            try execute("SELECT count(*) FROM sqlite_master")
            return
        }
        // Reading the schema is the first real read: a file that is not a database fails here.
        try execute("PRAGMA journal_mode=WAL")
        try execute("PRAGMA synchronous=FULL")
        try execute("PRAGMA foreign_keys=ON")
    }

    deinit { close() }

    public func close() {
        statements.removeAll()
        if let handle {
            // A kept log with a size limit is cut to zero bytes at the close (SQLite's rule), which would undo
            // `keepLog(size:)`; without the limit its file stays as it is. One that outgrew its size (an
            // outage) is left to that rule, and the next `allocateLog()` writes it again.
            if keptLogSize > 0, let size = fileSize(logPath), size <= keptLogSize {
                sqlite3_exec(handle, "PRAGMA journal_size_limit=-1", nil, nil, nil)
            }
            sqlite3_close_v2(handle)
        }
        handle = nil
    }

    /// Turns SQLite's automatic checkpoint off (it runs inside whichever commit crosses 1,000 pages of
    /// log, however urgent that commit is) so that the owner checkpoints when it chooses; `walFrames`
    /// says how big the log has grown.
    public func manualCheckpoints() {
        let counter = WALCounter()
        walCounter = counter
        // Setting a WAL hook replaces the automatic checkpoint, which is itself such a hook.
        sqlite3_wal_hook(
            handle,
            { context, _, _, frames in
                if let context { Unmanaged<WALCounter>.fromOpaque(context).takeUnretainedValue().frames = Int(frames) }
                return SQLITE_OK
            }, Unmanaged.passUnretained(counter).toOpaque())
    }

    /// Frames in the write-ahead log at the last commit (with `manualCheckpoints()`; else 0).
    public var walFrames: Int { walCounter?.frames ?? 0 }

    /// Copies the log into the database as far as readers allow, without waiting for them.
    public func checkpoint() throws(SQLiteError) {
        // A cached statement left after its first row keeps a read open, and SQLite then refuses
        // (SQLITE_LOCKED) to checkpoint on this connection.
        for statement in statements.values { statement.reset() }
        let rc = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc, "PRAGMA wal_checkpoint(PASSIVE)") }
        walCounter?.frames = 0
    }

    /// Runs one or more statements without results.
    public func execute(_ sql: String) throws(SQLiteError) {
        var error: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &error)
        if rc != SQLITE_OK {
            let message = error.map { String(cString: $0) } ?? lastMessage
            sqlite3_free(error)
            throw SQLiteError(code: sqlite3_extended_errcode(handle), message: message, sql: sql)
        }
    }

    /// A prepared statement, cached by its text.
    public func statement(_ sql: String) throws(SQLiteError) -> Statement {
        if let cached = statements[sql] {
            cached.reset()
            return cached
        }
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw error(rc, sql) }
        let statement = Statement(stmt, database: self, sql: sql)
        statements[sql] = statement
        return statement
    }

    /// Runs `body` in one transaction (BEGIN IMMEDIATE ... COMMIT), rolled back if it throws.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        // Prepared once: `execute` parsed both statements again at every commit of a fix.
        try statement("BEGIN IMMEDIATE").run()
        do {
            let value = try body()
            try statement("COMMIT").run()
            return value
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }
    public var changes: Int { Int(sqlite3_changes(handle)) }

    var lastMessage: String { handle.map { String(cString: sqlite3_errmsg($0)) } ?? "database closed" }

    func error(_ rc: Int32, _ sql: String?) -> SQLiteError {
        SQLiteError(code: handle.map { sqlite3_extended_errcode($0) } ?? rc, message: lastMessage, sql: sql)
    }
}

/// A prepared statement. Bind with `bind`, then `step()` row by row, or `run()` for no rows.
public final class Statement {
    private let stmt: OpaquePointer
    private unowned let database: Database
    public let sql: String

    init(_ stmt: OpaquePointer, database: Database, sql: String) {
        self.stmt = stmt
        self.database = database
        self.sql = sql
    }

    deinit { sqlite3_finalize(stmt) }

    public func reset() {
        sqlite3_reset(stmt)
        sqlite3_clear_bindings(stmt)
    }

    /// Binds values to ?1, ?2, ... in order.
    @discardableResult
    public func bind(_ values: SQLValue...) throws(SQLiteError) -> Statement {
        for (i, value) in values.enumerated() {
            let index = Int32(i + 1)
            let rc: Int32
            switch value {
            case .null: rc = sqlite3_bind_null(stmt, index)
            case .integer(let v): rc = sqlite3_bind_int64(stmt, index, v)
            case .real(let v): rc = sqlite3_bind_double(stmt, index, v)
            case .text(let v): rc = v.withCString { gfa_sqlite_bind_text(stmt, index, $0, -1) }
            case .blob(let v):
                rc = v.withUnsafeBytes { gfa_sqlite_bind_blob(stmt, index, $0.baseAddress, Int32($0.count)) }
            }
            guard rc == SQLITE_OK else { throw database.error(rc, sql) }
        }
        return self
    }

    /// Advances to the next row; false when there is none.
    public func step() throws(SQLiteError) -> Bool {
        let rc = sqlite3_step(stmt)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        let error = database.error(rc, sql)
        sqlite3_reset(stmt)
        throw error
    }

    /// Runs a statement that returns no rows.
    public func run() throws(SQLiteError) {
        while try step() {}
    }

    public func int(_ column: Int32) -> Int64 { sqlite3_column_int64(stmt, column) }
    public func double(_ column: Int32) -> Double { sqlite3_column_double(stmt, column) }
    public func isNull(_ column: Int32) -> Bool { sqlite3_column_type(stmt, column) == SQLITE_NULL }
    public func text(_ column: Int32) -> String? {
        guard let p = sqlite3_column_text(stmt, column) else { return nil }
        return String(cString: p)
    }
    /// Appends the column's bytes to `buffer` without an intermediate array; returns how many.
    public func appendBlob(_ column: Int32, to buffer: inout [UInt8]) -> Int {
        let n = Int(sqlite3_column_bytes(stmt, column))
        guard n > 0, let p = sqlite3_column_blob(stmt, column) else { return 0 }
        buffer.append(contentsOf: UnsafeRawBufferPointer(start: p, count: n))
        return n
    }

    public func blob(_ column: Int32) -> [UInt8] {
        let n = Int(sqlite3_column_bytes(stmt, column))
        guard n > 0, let p = sqlite3_column_blob(stmt, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: p, count: n))
    }
}

/// A value for a statement's parameter.
public enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    public static func int(_ v: Int) -> SQLValue { .integer(Int64(v)) }
    public static func optional(_ v: String?) -> SQLValue { v.map(SQLValue.text) ?? .null }
    public static func optional(_ v: Double?) -> SQLValue { v.map(SQLValue.real) ?? .null }
}

/// The log size the WAL hook last reported; owned by its `Database`, which outlives the hook.
private final class WALCounter {
    var frames = 0
}
