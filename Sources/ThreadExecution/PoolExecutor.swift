import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A pool of a few threads of its own, one per core, that runs Swift's tasks in the order they were
/// enqueued: the agent's executor in place of libdispatch's worker pool.
///
/// Why: libdispatch on Linux watches its worker pool with a timer on its manager thread, once a second for
/// as long as the process lives, from the first time a task runs on the pool (`_dispatch_workq_init_once`
/// in swift-corelibs-libdispatch). That is a wake-up a second that a parked vehicle pays for nothing. This
/// pool's idle threads wait on a condition variable and wake only for a job.
///
/// Tasks reach it as their preferred executor (`run(_:)`, `withTaskExecutorPreference`): only public API.
/// Their sleeps must use `SerialTimerClock`, whose timers run on a serial dispatch queue that libdispatch
/// does not watch; `Task.sleep` on the standard clocks would time the sleep on the watched pool.
///
/// Unlike libdispatch's pool, it never adds a thread for one that blocks: a blocking call must not run on
/// it, which the agent's rule already is (blocking C calls run on threads of their own).
public final class PoolExecutor: TaskExecutor, @unchecked Sendable {
    // Allocated, not stored properties: a pthread object must not move.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let ready = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// Guarded by `mutex`: the jobs in order, from `head`, and how many threads wait for one.
    private var jobs: [UnownedJob] = []
    private var head = 0
    private var idle = 0
    private var threads: [pthread_t] = []

    /// Whether the calling thread is one of the pool's.
    public var runsCurrentThread: Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return threads.contains { pthread_equal($0, pthread_self()) != 0 }
    }

    /// Starts `threads` threads, named `name-0`, `name-1`…
    public init(threads: Int, name: String = "swift-pool") {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(ready, nil)
        for index in 0..<max(1, threads) {
            let thread = Thread { [self] in work() }
            thread.name = "\(name)-\(index)"
            thread.start()
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
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
}

extension PoolExecutor {
    /// The executor that unstructured tasks started under `run(_:)` should prefer: `Task {}` does not
    /// inherit a task executor preference, a task-local value is inherited. Nil outside `run(_:)`.
    @TaskLocal public static var preferred: PoolExecutor?

    /// Runs `body` with this pool as its preferred executor: its child tasks, and the default actors it
    /// calls, run on the pool's threads; `Task(executorPreference: PoolExecutor.preferred)` started inside
    /// does too.
    public func run<T, Failure: Error>(
        isolation actor: isolated (any Actor)? = #isolation, _ body: () async throws(Failure) -> T
    ) async throws(Failure) -> T {
        let result: Result<T, Failure> = await Self.$preferred.withValue(
            self,
            operation: {
                await withTaskExecutorPreference(self, isolation: actor) { () async -> Result<T, Failure> in
                    do throws(Failure) { return .success(try await body()) } catch { return .failure(error) }
                }
            }, isolation: actor)
        return try result.get()
    }
}
