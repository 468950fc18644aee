import Synchronization
import ThreadExecution

/// The reporter's round's clock, a source on the store's thread: due `interval` after the last round, it
/// fires at whatever wakes the thread first from then on (at 1 Hz, the next fix) and wakes the thread
/// itself only `tolerance` later, when the receiver is silent. Its `fire` runs on that thread between
/// jobs, so a round with nothing to do resumes no task and enqueues no job: on a vehicle a parked second
/// then costs the fix's wake-up and little more.
final class RoundClock: ThreadExecutorSource, Sendable {
    private let interval: UInt64
    private let tolerance: UInt64
    private let onDue: @Sendable () -> Void
    private let onDetached: @Sendable () -> Void
    /// When the last round was due (`ThreadExecutor.now()`); only the executor's thread touches it.
    private let lastRound: Atomic<UInt64>
    private let stopped = Atomic<Bool>(false)

    /// `onDue` is called on the executor's thread at each round; `onDetached` once, when the clock stops.
    init(
        interval: UInt64, tolerance: UInt64, onDue: @escaping @Sendable () -> Void,
        onDetached: @escaping @Sendable () -> Void
    ) {
        self.interval = interval
        self.tolerance = tolerance
        self.onDue = onDue
        self.onDetached = onDetached
        lastRound = Atomic(ThreadExecutor.now())
    }

    func nextWait() -> ThreadExecutorWait? {
        guard !stopped.load(ordering: .relaxed) else { return nil }
        let earliest = lastRound.load(ordering: .relaxed) &+ interval
        return ThreadExecutorWait(earliest: earliest, deadline: earliest &+ tolerance)
    }

    func fire(readable: Bool) {
        guard !stopped.load(ordering: .relaxed) else { return }
        lastRound.store(ThreadExecutor.now(), ordering: .relaxed)
        onDue()
    }

    func detached() { onDetached() }

    /// No more rounds: the executor's thread detaches the clock at its next wait (`wake` it).
    func stop() { stopped.store(true, ordering: .relaxed) }
}
