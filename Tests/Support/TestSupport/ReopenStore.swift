import GeofenceStore
import Logging

/// Opens a store that a test had open and closed a moment ago. A child process that another test
/// spawns meanwhile holds a copy of the lock file's descriptor until it execs (posix_spawn copies the
/// descriptor table; close-on-exec closes the copies only at exec), so for a few milliseconds after
/// `close()` the lock can look taken. The agent spawns nothing, so only this test process meets it.
public func reopenStore(path: String, logger: Logger) async throws -> AgentStore {
    let deadline = ContinuousClock.now + .seconds(30)
    while true {
        do {
            return try await AgentStore.open(path: path, logger: logger)
        } catch {
            guard case .locked = error, ContinuousClock.now < deadline else { throw error }
        }
        try await Task.sleep(for: .milliseconds(20))
    }
}
