import Foundation
import GeofenceCore

/// The fix processor's commits in order. Normally each is committed at once; while the disk is full they
/// queue here (the engines have moved on) and are retried until the store takes them, so a transition made
/// while nothing could be written is still recorded and delivered.
struct CommitQueue {
    /// Beyond this many, the oldest is dropped (and logged): a store that never takes writes again must not
    /// grow the heap without end.
    static let maximum = 100_000

    private(set) var waiting: [PendingCommit] = []
    /// The last fix time committed per monitor in this run.
    private var committedFixTimes: [String: Date] = [:]

    var isEmpty: Bool { waiting.isEmpty }
    var count: Int { waiting.count }
    var first: PendingCommit? { waiting.first }

    /// Queues a commit; true when the oldest had to be dropped to make room.
    @discardableResult
    mutating func append(_ commit: PendingCommit) -> Bool {
        let full = waiting.count >= Self.maximum
        if full { waiting.removeFirst() }
        waiting.append(commit)
        return full
    }

    /// The first commit is in the store.
    mutating func firstCommitted() {
        let done = waiting.removeFirst()
        if let fix = done.lastFix { committedFixTimes[done.monitor] = fix.timestamp }
    }

    /// Queues each monitor's last fix that is newer than the last one committed, at a stop. A fix that changes
    /// nothing writes nothing (flash wears), so the store's last fix is otherwise the last transition's: a
    /// restart would resume a replay, and the timeline's floor, from there, and the vehicle's position would go
    /// back in time by as much.
    mutating func appendLastFixes(of monitors: MonitorSet) {
        for name in monitors.names {
            let engine = monitors[name]!
            guard let fix = engine.lastAcceptedFix, fix.timestamp > (committedFixTimes[name] ?? .distantPast) else {
                continue
            }
            append(PendingCommit(lastFixOf: engine, fix: fix))
        }
    }
}
