/// Work that a `ThreadExecutor`'s thread does between its jobs, waiting for it in the same system call
/// as for its jobs: a descriptor to read, a time to act, or both. A fix read from gpsd's socket or due in
/// a replay then wakes one thread, the one that handles it, and the work it starts (the processor's job,
/// enqueued from that thread) runs there without another wake-up.
///
/// Every method is called on the executor's thread, one at a time; a source is attached to one executor.
public protocol ThreadExecutorSource: AnyObject, Sendable {
    /// What to wait for next, asked before every wait; nil detaches the source (then `detached()` is
    /// called). Another thread that changes the answer calls the executor's `wake()`. The executor registers
    /// a descriptor with the kernel once (epoll), so one that a wait names stays open until a later wait
    /// names another, or until `detached()`: closed and opened again under the same number, it would not be
    /// waited for.
    func nextWait() -> ThreadExecutorWait?

    /// The descriptor is readable (`readable`), or the deadline (or the earliest time) has come, or both.
    func fire(readable: Bool)

    /// The source is no longer waited for: it asked to be, or the executor's thread has ended.
    func detached()
}

/// What a `ThreadExecutorSource` waits for.
public struct ThreadExecutorWait: Sendable, Equatable {
    /// A descriptor to wait to read, or -1.
    public var descriptor: Int32
    /// When to call `fire` anyway, in `CLOCK_MONOTONIC` nanoseconds; nil: never.
    public var deadline: UInt64?
    /// From this time on (before `deadline`), `fire` is called at whatever wakes the thread first: a
    /// timer once a second then rides on another source's wake-up and wakes the thread itself only at
    /// `deadline`. Nil: at `deadline`.
    public var earliest: UInt64?

    public init(descriptor: Int32 = -1, earliest: UInt64? = nil, deadline: UInt64? = nil) {
        self.descriptor = descriptor
        self.earliest = earliest
        self.deadline = deadline
    }

    /// Whether `fire` is due at `now` for its time (a readable descriptor aside).
    func isDue(at now: UInt64) -> Bool {
        guard let due = earliest ?? deadline else { return false }
        return due <= now
    }
}
