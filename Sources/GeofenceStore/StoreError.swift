import SQLite

/// Why the store cannot be used, with what to do about it.
public enum StoreError: Error, Sendable, CustomStringConvertible {
    /// The file is damaged or not a database. The agent refuses to start rather than start empty.
    case corrupt(path: String, detail: String)
    /// The disk (or the file-size limit) is full: the write was rolled back and nothing stored was lost.
    case diskFull(detail: String)
    /// Another agent process has this store open.
    case locked(path: String)
    /// A monitor of this name is already open in this process.
    case monitorInUse(name: String)
    /// The store was written by a newer agent.
    case newerSchema(found: Int, known: Int)
    case sqlite(SQLiteError)

    public var description: String {
        switch self {
        case .corrupt(let path, let detail):
            return """
                the store \(path) is corrupt or not a geofence-agent database (\(detail)). Nothing was changed. \
                Stop the agent, move the file aside (keep it for inspection: mv \(path) \(path).corrupt) and start \
                again: the agent then starts with an empty store, conditions pushed over MQTT come back from the \
                broker's retained messages, local conditions must be added again, and events not yet delivered \
                from the old store are lost.
                """
        case .diskFull(let detail):
            return
                "the disk holding the store is full (\(detail)); the last change was rolled back and is retried once space is free"
        case .locked(let path):
            return "the store \(path) is in use by another geofence-agent process; only one agent may run per store"
        case .monitorInUse(let name):
            return "monitor '\(name)' is already open; one live instance per name (close the other first)"
        case .newerSchema(let found, let known):
            return "the store has schema version \(found), newer than this agent's \(known): upgrade the agent"
        case .sqlite(let e):
            return "store: \(e)"
        }
    }

    static func from(_ error: SQLiteError, path: String) -> StoreError {
        if error.isCorrupt { return .corrupt(path: path, detail: error.message) }
        if error.isDiskFull { return .diskFull(detail: error.message) }
        return .sqlite(error)
    }
}
