extension ThreadExecutor {
    /// Suspends the calling task until `deadline` (`now()`'s clock), when this executor's thread resumes
    /// it. A task that prefers this executor then runs on at once, without waking any other thread: where
    /// `Task.sleep` wakes the dispatch timer thread, then a pool thread, then this one. Throws
    /// `CancellationError` when the task is cancelled first, or when the executor has finished (its thread
    /// ends: nothing would wake the sleeper).
    public func sleep(until deadline: UInt64) async throws {
        let ticket = SleepTicket(deadline: deadline)
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
                register(ticket, continuation)
            }
        } onCancel: {
            cancel(ticket)
        }
    }

    /// `sleep(until:)` for a duration from now.
    public func sleep(for duration: Duration) async throws {
        let (seconds, attoseconds) = duration.components
        let nanoseconds = max(0, seconds) * 1_000_000_000 + max(0, attoseconds) / 1_000_000_000
        try await sleep(until: Self.now() + UInt64(nanoseconds))
    }
}

/// One task sleeping on a `ThreadExecutor`. Its fields are guarded by the executor's lock.
final class SleepTicket: @unchecked Sendable {
    let deadline: UInt64
    var continuation: UnsafeContinuation<Void, any Error>?
    var cancelled = false
    /// Resumed (by its deadline or its cancellation): nothing may resume it again.
    var done = false

    init(deadline: UInt64) {
        self.deadline = deadline
    }
}
