extension ThreadExecutor {
    /// Suspends the calling task until `deadline` (`now()`'s clock), when this executor's thread resumes
    /// it. A task that prefers this executor then runs on at once, without waking any other thread: where
    /// `Task.sleep` wakes the dispatch timer thread, then a pool thread, then this one. Throws
    /// `CancellationError` when the task is cancelled first, or when the executor has finished (its thread
    /// ends: nothing would wake the sleeper).
    ///
    /// With a `tolerance` (nanoseconds) the sleep ends at the first time the thread is awake anyway after
    /// `deadline` (a fix, a job), and wakes the thread itself only at `deadline + tolerance`: a periodic task
    /// then rides on another's wake-up instead of paying one of its own. (A periodic check that needs no task
    /// at all is cheaper as a source with an earliest time: `ThreadExecutorWait(earliest:deadline:)`.)
    ///
    /// It sleeps in the caller's isolation: an actor on this executor that sleeps is resumed on it directly,
    /// with no hop to the generic executor and back.
    public func sleep(
        until deadline: UInt64, tolerance: UInt64 = 0, isolation actor: isolated (any Actor)? = #isolation
    ) async throws {
        let (latest, overflow) = deadline.addingReportingOverflow(tolerance)
        let ticket = SleepTicket(deadline: deadline, latest: overflow ? .max : latest)
        try await withTaskCancellationHandler(
            operation: {
                try await withUnsafeThrowingContinuation(isolation: actor) {
                    (continuation: UnsafeContinuation<Void, any Error>) in
                    register(ticket, continuation)
                }
            },
            onCancel: { cancel(ticket) },
            isolation: actor)
    }

    /// `sleep(until:tolerance:)` for a duration from now.
    public func sleep(
        for duration: Duration, tolerance: Duration = .zero, isolation actor: isolated (any Actor)? = #isolation
    ) async throws {
        try await sleep(
            until: Self.now() + Self.nanoseconds(duration), tolerance: Self.nanoseconds(tolerance), isolation: actor)
    }

    /// A duration in whole nanoseconds; a negative one is none.
    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds) * 1_000_000_000 + max(0, attoseconds) / 1_000_000_000)
    }
}

/// One task sleeping on a `ThreadExecutor`. Its fields are guarded by the executor's lock.
final class SleepTicket: @unchecked Sendable {
    /// The earliest end: from then on, any wake-up of the thread ends the sleep.
    let deadline: UInt64
    /// The latest end: the thread wakes for it if nothing else woke it first.
    let latest: UInt64
    var continuation: UnsafeContinuation<Void, any Error>?
    var cancelled = false
    /// Resumed (by its deadline or its cancellation): nothing may resume it again.
    var done = false

    init(deadline: UInt64, latest: UInt64) {
        self.deadline = deadline
        self.latest = max(deadline, latest)
    }
}
