import CSQLite

/// An SQLite failure: the result code, SQLite's own message, and the statement it came from.
public struct SQLiteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The extended result code (`SQLITE_FULL`, `SQLITE_CORRUPT`, `SQLITE_IOERR_WRITE`...).
    public var code: Int32
    public var message: String
    public var sql: String?

    public init(code: Int32, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    /// The primary result code (the low byte of the extended one).
    public var primaryCode: Int32 { code & 0xFF }

    /// The disk (or the file-size limit) is full.
    public var isDiskFull: Bool {
        primaryCode == SQLITE_FULL || code == gfa_sqlite_ioerr_write() || code == gfa_sqlite_ioerr_fsync()
    }
    /// The file is damaged or not a database at all.
    public var isCorrupt: Bool { primaryCode == SQLITE_CORRUPT || primaryCode == SQLITE_NOTADB }
    /// Another process holds the database.
    public var isBusy: Bool { primaryCode == SQLITE_BUSY || primaryCode == SQLITE_LOCKED }

    public var description: String {
        "\(message) (SQLite code \(code))" + (sql.map { " in: \($0.prefix(120))" } ?? "")
    }
}
