import Dispatch
import Testing

/// Runs each test of a suite outside Swift's cooperative pool.
///
/// The pool has one thread per core: two on CI. A test that computes for seconds, or waits for a child
/// process, without suspending holds one of them all that time; with two such tests at once, the tests
/// that wait on a real gpsd or broker in the same run stall (their stream consumers cannot run) and miss
/// their deadlines. Outside the pool, such a test holds a thread of its own, and the pool stays free for
/// the code that the other tests exercise.
///
/// For tests whose code under test does not need the pool's parallelism: the test's child tasks
/// inherit its executor.
public struct OffTheCooperativePool: TestTrait, SuiteTrait, TestScoping {
    public enum Kind: Sendable {
        /// Busy computing: on a concurrent queue of libdispatch's own (as many at once as it has cores), so
        /// that long property tests never hold the cooperative pool that the code under test of the waiting
        /// tests in the same lane runs on.
        case computing
        /// Blocked waiting for a child process: a thread per test, since they use little CPU.
        case waiting
    }

    public var kind: Kind
    public var isRecursive: Bool { true }

    private static let computing = QueueExecutor(label: "tests: computing", attributes: .concurrent)

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard !test.isSuite else { return try await function() }
        guard kind == .waiting else {
            return try await withTaskExecutorPreference(Self.computing) { try await function() }
        }
        // At most `waitingAtOnce` such tests run at once: with no bound every one of them starts at the
        // beginning of a run, each with its agents, brokers, receivers or browser, and two cores then serve
        // a hundred processes. A test's own waits start once it runs.
        await Self.waitingSlots.acquire()
        do {
            try await withTaskExecutorPreference(QueueExecutor(label: "test: \(test.name)")) {
                try await function()
            }
        } catch {
            await Self.waitingSlots.release()
            throw error
        }
        await Self.waitingSlots.release()
    }

    /// How many waiting tests run at once.
    public static let waitingAtOnce = 8
    private static let waitingSlots = Slots(waitingAtOnce)
}

extension Trait where Self == OffTheCooperativePool {
    /// Each test outside Swift's cooperative pool: on libdispatch's threads for computing tests, or on a
    /// thread of its own for tests that wait.
    public static func offTheCooperativePool(_ kind: OffTheCooperativePool.Kind) -> Self { Self(kind: kind) }
}

/// A task executor over a dispatch queue. libdispatch backs a serial queue with a thread of its
/// overcommitting pool, which, unlike the cooperative one, grows past the core count when its threads
/// are busy or blocked; a concurrent one runs as many jobs at once as there are cores.
final class QueueExecutor: TaskExecutor {
    private let queue: DispatchQueue

    init(label: String, attributes: DispatchQueue.Attributes = []) {
        queue = DispatchQueue(label: label, attributes: attributes)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// A counting semaphore for tasks: `acquire` suspends (never blocks a thread) until a slot is free.
actor Slots {
    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(_ count: Int) { free = count }

    func acquire() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    /// Hands the slot to the longest waiter, or frees it.
    func release() {
        if waiting.isEmpty { free += 1 } else { waiting.removeFirst().resume() }
    }
}
