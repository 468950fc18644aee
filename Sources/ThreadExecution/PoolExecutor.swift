import Foundation
@_spi(ExperimentalCustomExecutors) @_spi(ExperimentalScheduling) import _Concurrency

#if canImport(Glibc)
    import Glibc
#endif

/// A pool of a few threads of its own, one per core, that runs Swift's tasks in the order they were
/// enqueued: the agent's default executor in place of libdispatch's worker pool.
///
/// Why: libdispatch on Linux watches its worker pool with a timer on its manager thread, once a second for
/// as long as the process lives, from the first time a task runs on the pool (`_dispatch_workq_init_once`
/// in swift-corelibs-libdispatch). That is a wake-up a second that a parked vehicle pays for nothing. This
/// pool's idle threads wait on a condition variable and wake only for a job. Its timers (`Task.sleep`) run
/// on a serial dispatch queue, whose threads libdispatch does not watch.
///
/// Unlike libdispatch's pool, it never adds a thread for one that blocks: a blocking call must not run on
/// it, which the agent's rule already is (blocking C calls run on threads of their own).
package final class PoolExecutor: TaskExecutor, SchedulingExecutor, @unchecked Sendable {
    // Allocated, not stored properties: a pthread object must not move.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let ready = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// Guarded by `mutex`: the jobs in order, from `head`, and how many threads wait for one.
    private var jobs: [UnownedJob] = []
    private var head = 0
    private var idle = 0
    private var threads: [pthread_t] = []

    /// Whether the calling thread is one of the pool's.
    package var runsCurrentThread: Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return threads.contains { pthread_equal($0, pthread_self()) != 0 }
    }
    private let timers = DispatchQueue(label: "geofence.pool-executor.timers")

    /// Starts `threads` threads, named `name-0`, `name-1`…
    package init(threads: Int, name: String = "swift-pool") {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(ready, nil)
        for index in 0..<max(1, threads) {
            let thread = Thread { [self] in work() }
            thread.name = "\(name)-\(index)"
            thread.start()
        }
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        pthread_mutex_lock(mutex)
        jobs.append(job)
        if idle > 0 { pthread_cond_signal(ready) }
        pthread_mutex_unlock(mutex)
    }

    private func work() {
        let executor = asUnownedTaskExecutor()
        pthread_mutex_lock(mutex)
        threads.append(pthread_self())
        pthread_mutex_unlock(mutex)
        while true {
            pthread_mutex_lock(mutex)
            while head == jobs.count {
                idle += 1
                pthread_cond_wait(ready, mutex)
                idle -= 1
            }
            let job = jobs[head]
            head += 1
            // Taken jobs are dropped in one step once there are many, not one by one from the front.
            if head == jobs.count || head >= 1_024 {
                jobs.removeFirst(head)
                head = 0
            }
            pthread_mutex_unlock(mutex)
            job.runSynchronously(on: executor)
        }
    }

    // `Task.sleep` and clocks' sleeps: the job is enqueued once its time has come (the tolerance is not used).

    package func enqueue<C: Clock>(
        _ job: consuming ExecutorJob, after delay: C.Duration, tolerance: C.Duration?, clock: C
    ) {
        enqueue(job, at: clock.now.advanced(by: delay), tolerance: tolerance, clock: clock)
    }

    package func enqueue<C: Clock>(
        _ job: consuming ExecutorJob, at instant: C.Instant, tolerance: C.Duration?, clock: C
    ) {
        let job = UnownedJob(job)
        schedule(job, at: instant, clock: clock)
    }

    private func schedule<C: Clock>(_ job: UnownedJob, at instant: C.Instant, clock: C) {
        // The standard clocks count in `Duration`; another clock's time is looked at again every 10 ms.
        let exact = clock.now.duration(to: instant) as? Duration
        let wait = exact ?? (clock.now < instant ? .milliseconds(10) : .zero)
        guard wait > .zero else {
            enqueue(ExecutorJob(job))
            return
        }
        timers.asyncAfter(deadline: Self.deadline(after: wait)) { [self] in
            if exact != nil { enqueue(ExecutorJob(job)) } else { schedule(job, at: instant, clock: clock) }
        }
    }

    /// Beyond this a sleep is "forever": its job waits for good (a cancelled sleep does not need it).
    private static let longestWait: Duration = .seconds(100 * 365 * 86_400)

    private static func deadline(after wait: Duration) -> DispatchTime {
        guard wait < longestWait else { return .distantFuture }
        let (seconds, attoseconds) = wait.components
        return .now() + .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }
}

/// Makes a `PoolExecutor` of a thread a core the process's default executor; the main actor keeps the
/// platform's. Call it first thing in `main`, before any task runs on the default executor: a task that
/// libdispatch's pool ran once starts its monitor for good.
package func installPoolExecutorAsDefault() {
    _createExecutors(factory: PoolExecutorFactory.self)
}

private enum PoolExecutorFactory: ExecutorFactory {
    static let pool = PoolExecutor(threads: ProcessInfo.processInfo.activeProcessorCount)
    static var mainExecutor: any MainExecutor { PlatformExecutorFactory.mainExecutor }
    static var defaultExecutor: any TaskExecutor { pool }
}
