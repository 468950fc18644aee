/// The files that belong to one store: the database, and the side paths the running agent and the CLI
/// share (beside it, but for a status file configured elsewhere). Named here once, so that the agent,
/// `status` and `conditions` cannot disagree about where they are.
public struct StorePaths: Sendable, Equatable {
    /// The SQLite database.
    public let database: String

    /// The running agent's status, replaced atomically when it changes and else every 30 s, for
    /// `geofence-agent status`: beside the store unless configured elsewhere (RAM, on a vehicle).
    public let status: String

    public init(_ database: String, status: String? = nil) {
        self.database = database
        self.status = status ?? database + ".status.json"
    }

    /// Held with an exclusive lock while an agent has the store open.
    public var lock: String { database + ".lock" }
    /// Changes that `geofence-agent conditions add/remove` leave for the running agent.
    public var inbox: String { database + ".inbox" }
    /// SQLite's write-ahead log.
    public var writeAheadLog: String { database + "-wal" }
}
