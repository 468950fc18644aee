import Foundation
import Synchronization

/// A serial executor on one dedicated thread. An actor that uses it runs every method there, so its
/// blocking C calls (SQLite's writes and fsyncs) never occupy Swift's cooperative pool.
///
/// It is a task executor too: a task that prefers it (`withTaskExecutorPreference`) runs its nonisolated
/// code, and resumes after each suspension, on the same thread, so a value that wakes an actor on it (a
/// fix for the store's thread) wakes that one thread, not a pool thread first.
///
/// `finish()` ends the thread once its queue is empty. A job enqueued after that still runs, on a thread
/// started for it that ends again when the queue is empty: never two at once, so jobs stay serial.
public final class ThreadExecutor: SerialExecutor, TaskExecutor, @unchecked Sendable {
    private struct State {
        var jobs: [UnownedJob] = []
        var head = 0
        var finished = false
        var threadRunning = false
    }
    private let state = Mutex(State())
    private let signal = DispatchSemaphore(value: 0)
    private let name: String

    public init(name: String) {
        self.name = name
        state.withLock { $0.threadRunning = true }
        startThread()
    }

    private func startThread() {
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let start = state.withLock { s -> Bool in
            s.jobs.append(unowned)
            guard !s.threadRunning else { return false }
            s.threadRunning = true
            return true
        }
        if start { startThread() } else { signal.signal() }
    }

    /// Ends the thread once every job enqueued so far has run.
    public func finish() {
        state.withLock { $0.finished = true }
        signal.signal()
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }

    private enum Next {
        case run(UnownedJob)
        case wait, exit
    }

    private func run() {
        // Foundation does not pass `Thread.name` to the kernel on Linux (and Swift does not import
        // pthread_setname_np); the kernel's name is what `ps -L`, top and gdb show.
        try? String(name.prefix(15)).write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
        while true {
            let next = state.withLock { s -> Next in
                if s.head < s.jobs.count {
                    let job = s.jobs[s.head]
                    s.head += 1
                    if s.head == s.jobs.count {
                        s.jobs.removeAll(keepingCapacity: true)
                        s.head = 0
                    }
                    return .run(job)
                }
                if s.finished {
                    s.threadRunning = false
                    return .exit
                }
                return .wait
            }
            switch next {
            // Isolated to this executor whichever way the job came: an actor on it then runs inline.
            case .run(let job):
                job.runSynchronously(isolatedTo: asUnownedSerialExecutor(), taskExecutor: asUnownedTaskExecutor())
            case .wait: signal.wait()
            case .exit: return
            }
        }
    }
}
