import CSQLite

#if canImport(Glibc)
    import Glibc
#endif

/// The write-ahead log's file, written once and then reused.
///
/// `fdatasync` after an append, or after a write into blocks only reserved for the file (`fallocate`), also
/// commits the file system's journal, because the file's size or its extents changed. On the ext4 of the
/// machine the tests run on, that costs about 75 µs more per commit: 431–456 µs against 355–389 µs at the
/// median after 100 ms idle.
/// SQLite appends to its log until a checkpoint lets it start again at the beginning, and by default it
/// deletes the file at every close. So the first 1,000 or so frames of every run are appends, and a
/// transition's commit is among them.
extension Database {
    /// Keeps the log's file at `size` bytes: the limit SQLite cuts it back to after a checkpoint
    /// (`journal_size_limit`), and kept when the connection closes (SQLite's persistent WAL), so that blocks
    /// written once serve every later run. `allocateLog()` writes them.
    public func keepLog(size: Int) throws(SQLiteError) {
        try execute("PRAGMA journal_size_limit=\(size)")
        var persist: Int32 = 1
        let rc = sqlite3_file_control(handle, "main", SQLITE_FCNTL_PERSIST_WAL, &persist)
        guard rc == SQLITE_OK else { throw error(rc, "SQLITE_FCNTL_PERSIST_WAL") }
        keptLogSize = size
    }

    /// Writes zeros from the end of the log's file to its kept size, and syncs them. Call it between
    /// transactions, on the connection's thread: SQLite writes nothing there meanwhile, and its frames all
    /// lie before the file's end.
    ///
    /// SQLite reads zeros as no frame: each frame carries the log's salts and a checksum. A store whose
    /// log already has the size costs nothing, and so does one with no log yet. When the disk cannot hold
    /// the zeros, the file is cut back to where it was and the error names the file. The log then grows as
    /// SQLite writes it, as it did without this.
    public func allocateLog() throws(SQLiteError) {
        let size = keptLogSize
        guard size > 0 else { return }
        let log = logPath
        let fd = open(log, O_WRONLY | O_CLOEXEC)
        // No log yet: nothing has been written. SQLite makes it at the first write.
        if fd < 0, errno == ENOENT { return }
        guard fd >= 0 else { throw Self.fileError(log, "cannot open") }
        defer { Glibc.close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw Self.fileError(log, "cannot read the size of") }
        let start = Int(info.st_size)
        guard start < size else { return }
        // A page at a time: the page cache keeps what one write brings in as one folio, and a commit that
        // dirties part of a 64 KB folio is counted in /proc/PID/io as 64 KB written (the disk is sent only
        // the blocks that changed). The budget's storage figure doubled with 64 KB writes.
        let zeros = [UInt8](repeating: 0, count: 4096)
        var offset = start
        while offset < size {
            let count = min(zeros.count, size - offset)
            let written = zeros.withUnsafeBytes { pwrite(fd, $0.baseAddress, count, off_t(offset)) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else {
                let failure = Self.fileError(log, "cannot extend to \(size) bytes")
                _ = ftruncate(fd, off_t(start))
                throw failure
            }
            offset += written
        }
        guard fdatasync(fd) == 0 else {
            let failure = Self.fileError(log, "cannot sync the extension of")
            _ = ftruncate(fd, off_t(start))
            throw failure
        }
    }

    /// SQLite's write-ahead log beside the database.
    var logPath: String { path + "-wal" }

    /// A file's size in bytes, or nil when it cannot be read.
    func fileSize(_ path: String) -> Int? {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : nil
    }

    /// The error for the last failed call, from its `errno`.
    private static func fileError(_ path: String, _ what: String) -> SQLiteError {
        let number = errno
        let code = number == ENOSPC || number == EFBIG ? SQLITE_FULL : SQLITE_IOERR
        return SQLiteError(code: code, message: "\(what) \(path): \(String(cString: strerror(number)))")
    }
}
