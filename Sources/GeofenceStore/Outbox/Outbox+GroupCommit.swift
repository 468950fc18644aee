import ThreadExecution

/// Droppable rows (live updates, the track) are stored in group commits, not one write each: a flash card
/// wears with every write, and on a working link the broker acknowledges them before they would be stored.
extension Outbox {
    /// Droppable rows have waited `groupCommitSeconds` since the last write, or acknowledged rows have
    /// waited `acknowledgedDeletionSeconds` for one.
    var groupCommitDue: Bool {
        // Nothing waiting, no clock read: the tick asks every second.
        guard !buffered.isEmpty || !acknowledgedStored.isEmpty else { return false }
        let since = Double(ThreadExecutor.now() &- lastGroupCommit) / 1e9
        let deletionSeconds = max(limits.groupCommitSeconds, limits.acknowledgedDeletionSeconds)
        return (!buffered.isEmpty && since >= limits.groupCommitSeconds)
            || (!acknowledgedStored.isEmpty && since >= deletionSeconds)
    }

    /// Stores the droppable rows the broker has not acknowledged and deletes the acknowledged stored ones.
    /// A power cut loses at most the droppable rows of the last interval; never a transition, which is
    /// stored before it is handed to the publisher. Made when due, and when the agent stops.
    public func groupCommit() throws(StoreError) {
        lastGroupCommit = ThreadExecutor.now()
        absorbAcknowledgements()
        guard !buffered.isEmpty else {
            if !acknowledgedStored.isEmpty {
                _ = try repository.deleteOutbox(acknowledgedStored.map(\.sequence))
                acknowledgedStored = []
            }
            return
        }
        let prepared = try prepare([], writing: true)
        try repository.writeOutbox(prepared.write)
        written(prepared)
        // Rows the hand-over had to forget (too many waiting) are in the store now: the publisher reads them.
        wake()
    }

    /// Droppable rows held in memory only, waiting for the broker or the next group commit.
    public var unstoredRows: Int { buffered.count }
}
