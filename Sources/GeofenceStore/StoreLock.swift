import Foundation
import SQLite

#if canImport(Glibc)
    import Glibc
#endif

/// The exclusive lock beside a store (`StorePaths.lock`) that an agent holds while it has the store open:
/// the one place that takes it and that asks whether someone holds it (`conditions` leaves its change in
/// the agent's inbox then).
enum StoreLock {
    /// Takes the lock, creating its file; returns the descriptor that holds it until closed.
    static func take(_ paths: StorePaths) throws(StoreError) -> Int32 {
        let fd = Glibc.open(paths.lock, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw .sqlite(
                SQLiteError(code: 14, message: "cannot create \(paths.lock): \(String(cString: strerror(errno)))"))
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            Glibc.close(fd)
            throw .locked(path: paths.database)
        }
        return fd
    }
}

extension StorePaths {
    /// Whether an agent holds the store's lock now (it runs, with this store open).
    public var isLockedByAnAgent: Bool {
        let fd = Glibc.open(lock, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { Glibc.close(fd) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return true }
        flock(fd, LOCK_UN)
        return false
    }
}
