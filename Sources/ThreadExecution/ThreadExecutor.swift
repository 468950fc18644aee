import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A serial executor on one dedicated thread. An actor that uses it runs every method there, so its
/// blocking C calls (SQLite's writes and fsyncs) never occupy Swift's cooperative pool.
///
/// It is a task executor too: a task that prefers it (`withTaskExecutorPreference`) runs its nonisolated
/// code, and resumes after each suspension, on the same thread, so a value that wakes an actor on it (a
/// fix for the store's thread) wakes that one thread, not a pool thread first.
///
/// Between jobs the thread waits in `epoll_wait`, for its jobs and for the sources attached to it
/// (`ThreadExecutorSource`): a source's socket or timer then wakes this thread alone, and a job enqueued
/// from this thread wakes nothing.
///
/// `finish()` ends the thread once its queue is empty, and detaches its sources. A job enqueued after that
/// still runs, on a thread started for it that ends again when the queue is empty: never two at once, so
/// jobs stay serial.
public final class ThreadExecutor: SerialExecutor, TaskExecutor, @unchecked Sendable {
    private struct State {
        var jobs: [UnownedJob] = []
        var head = 0
        var finished = false
        var threadRunning = false
        /// The thread is in its wait, or about to be: an enqueue wakes it (once).
        var waiting = false
        /// Sources attached since the thread last looked.
        var attached: [any ThreadExecutorSource] = []
        /// Tasks sleeping until a deadline (`sleep(until:)`): a few at most.
        var sleepers: [SleepTicket] = []
        /// Every job enqueued so far.
        var enqueued = 0
    }
    private let state = Mutex(State())
    private let wakePipe = WakePipe()
    /// The thread that runs the loop (`pthread_self()`), 0 while none does: what `isCurrentThread` and the
    /// runtime's isolation checks compare with.
    private let loopThread = Atomic<UInt>(0)
    private let name: String
    /// This executor as the runtime's references, made once: each job runs isolated to both, and making
    /// them per job looked up the conformances' witness tables every time.
    private var unownedSerial: UnownedSerialExecutor!
    private var unownedTask: UnownedTaskExecutor!

    public init(name: String) {
        self.name = name
        unownedSerial = UnownedSerialExecutor(ordinary: self)
        unownedTask = UnownedTaskExecutor(ordinary: self)
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
        enum Wake { case none, pipe, start }
        let wake = state.withLock { s -> Wake in
            s.jobs.append(unowned)
            s.enqueued &+= 1
            if !s.threadRunning {
                s.threadRunning = true
                return .start
            }
            guard s.waiting else { return .none }
            s.waiting = false
            return .pipe
        }
        switch wake {
        case .none: break
        case .pipe: wakePipe.wake()
        case .start: startThread()
        }
    }

    /// How many jobs were enqueued here so far: each is a pass through the thread's loop, and a hop between
    /// executors costs one on each side. A test counts a loop's hops with it.
    public var enqueuedJobs: Int { state.withLock { $0.enqueued } }

    /// Waits for `source` on this executor's thread from its next wait on. False when the executor has
    /// finished: the source is not attached.
    @discardableResult
    public func attach(_ source: any ThreadExecutorSource) -> Bool {
        let attached = state.withLock { s -> Bool in
            guard !s.finished else { return false }
            s.attached.append(source)
            return true
        }
        if attached { wake() }
        return attached
    }

    /// Makes the thread ask its sources again what they wait for (one of them changed its mind).
    public func wake() {
        let waiting = state.withLock { s -> Bool in
            defer { s.waiting = false }
            return s.waiting
        }
        if waiting { wakePipe.wake() }
    }

    /// Ends the thread once every job enqueued so far has run.
    public func finish() {
        state.withLock { $0.finished = true }
        wakePipe.wake()
    }

    /// Whether the caller runs on this executor's thread: in one of its jobs, or in a source's `fire`
    /// between them. Either way nothing else it runs can run meanwhile.
    public var isCurrentThread: Bool { loopThread.load(ordering: .relaxed) == UInt(pthread_self()) }

    /// On the executor's thread the caller is isolated to it, inside a job or not: a source's `fire` may
    /// then enter an actor on this executor with `assumeIsolated`.
    public func isIsolatingCurrentContext() -> Bool? { isCurrentThread }

    public func checkIsolated() {
        precondition(isCurrentThread, "not on the thread of the executor \(name)")
    }

    /// The clock of the sources' deadlines: `CLOCK_MONOTONIC` in nanoseconds.
    public static func now() -> UInt64 { SourceWaiter.now() }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor { unownedSerial }

    public func asUnownedTaskExecutor() -> UnownedTaskExecutor { unownedTask }

    func register(_ ticket: SleepTicket, _ continuation: UnsafeContinuation<Void, any Error>) {
        let (cancelled, wake) = state.withLock { s -> (Bool, Bool) in
            // After `finish()` nothing would end the sleep: it ends at once, as a cancelled one does.
            if ticket.cancelled || s.finished {
                ticket.done = true
                return (true, false)
            }
            ticket.continuation = continuation
            s.sleepers.append(ticket)
            // The thread's wait may end later than this deadline.
            defer { s.waiting = false }
            return (false, s.waiting)
        }
        if cancelled { continuation.resume(throwing: CancellationError()) }
        if wake { wakePipe.wake() }
    }

    func cancel(_ ticket: SleepTicket) {
        let continuation = state.withLock { s -> UnsafeContinuation<Void, any Error>? in
            ticket.cancelled = true
            guard !ticket.done, let continuation = ticket.continuation else { return nil }
            ticket.done = true
            s.sleepers.removeAll { $0 === ticket }
            return continuation
        }
        continuation?.resume(throwing: CancellationError())
    }

    /// Resumes the sleepers whose deadline has come: a task that prefers this executor is enqueued here.
    private func wakeSleepers() {
        let now = Self.now()
        state.withLock { s in
            for index in s.sleepers.indices.reversed() {
                let ticket = s.sleepers[index]
                guard ticket.deadline <= now, let continuation = ticket.continuation else { continue }
                ticket.done = true
                dueSleepers.append(continuation)
                s.sleepers.remove(at: index)
            }
        }
        // Oldest registration first, as they were registered.
        for continuation in dueSleepers.reversed() { continuation.resume() }
        dueSleepers.removeAll(keepingCapacity: true)
    }

    /// The sleepers `wakeSleepers` resumes, kept between calls so that a wake-up allocates nothing. Only the
    /// executor's thread touches it.
    private var dueSleepers: [UnsafeContinuation<Void, any Error>] = []

    private enum Next {
        case run(UnownedJob)
        case wait([any ThreadExecutorSource], sleeper: UInt64?)
        case exit([any ThreadExecutorSource], sleepers: [UnsafeContinuation<Void, any Error>])
    }

    private func run() {
        // Foundation does not pass `Thread.name` to the kernel on Linux (and Swift does not import
        // pthread_setname_np); the kernel's name is what `ps -L`, top and gdb show.
        try? String(name.prefix(15)).write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
        let me = UInt(pthread_self())
        loopThread.store(me, ordering: .relaxed)
        // A thread started for a job enqueued after `finish()` may have taken over already.
        defer { _ = loopThread.compareExchange(expected: me, desired: 0, ordering: .relaxed) }
        var waiter = SourceWaiter(wakeDescriptor: wakePipe.readEnd)
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
                defer { s.attached.removeAll() }
                if s.finished {
                    s.threadRunning = false
                    // Nothing would end their sleep once the thread has gone: they end now.
                    let sleepers = s.sleepers.compactMap { ticket in
                        ticket.done = true
                        return ticket.continuation
                    }
                    s.sleepers.removeAll()
                    return .exit(s.attached, sleepers: sleepers)
                }
                s.waiting = true
                guard !s.sleepers.isEmpty else { return .wait(s.attached, sleeper: nil) }
                // Awake already: a sleeper past its earliest end ends now (a wait that returns at once);
                // otherwise the thread wakes for the first latest end.
                let now = Self.now()
                if s.sleepers.contains(where: { $0.deadline <= now }) { return .wait(s.attached, sleeper: now) }
                return .wait(s.attached, sleeper: s.sleepers.lazy.map(\.latest).min())
            }
            switch next {
            // Isolated to this executor whichever way the job came: an actor on it then runs inline.
            case .run(let job):
                job.runSynchronously(isolatedTo: unownedSerial, taskExecutor: unownedTask)
            case .wait(let attached, let sleeper):
                waiter.attach(attached)
                if waiter.wait(until: sleeper) { wakePipe.drain() }
                state.withLock { $0.waiting = false }
                waiter.fireDue()
                wakeSleepers()
            case .exit(let attached, let sleepers):
                waiter.attach(attached)
                waiter.detachAll()
                for sleeper in sleepers { sleeper.resume(throwing: CancellationError()) }
                return
            }
        }
    }
}
