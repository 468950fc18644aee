import Dispatch
import Foundation
import Testing
import ThreadExecution

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
        /// Busy computing: a thread per test, and as many such tests at once as there are cores. Never on the
        /// cooperative pool, which the code under test of the waiting tests in the same lane runs on. (On
        /// Linux a concurrent dispatch queue is no way out: it runs on the same global threads as the pool.)
        case computing
        /// Blocked waiting for a child process: a thread per test, since they use little CPU.
        case waiting
        /// The agent's runtime in process: on the executor the agent runs on (`PoolExecutor`, a thread a
        /// core), as `geofence-agent` runs it. Nothing in such a test may block a thread.
        case agentsPool
    }

    public var kind: Kind
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard !test.isSuite else { return try await function() }
        // A serial queue is a thread of libdispatch's overcommitting pool, which grows past the core count.
        // With no bound every waiting test starts at the beginning of a run, each with its agents, brokers,
        // receivers or browser, and two cores then serve a hundred processes. A test's own waits start once
        // it runs.
        let slots = kind == .computing ? Self.computingSlots : Self.waitingSlots
        await slots.acquire()
        do {
            if kind == .agentsPool {
                try await Self.agentsPool.run { try await function() }
            } else {
                try await withTaskExecutorPreference(QueueExecutor(label: "test: \(test.name)")) {
                    try await function()
                }
            }
        } catch {
            await slots.release()
            throw error
        }
        await slots.release()
    }

    /// The runtime tests' pool: one for the process, as the agent has (its threads live as long as it).
    private static let agentsPool = PoolExecutor(
        threads: ProcessInfo.processInfo.activeProcessorCount, name: "agents-pool")

    /// How many waiting tests run at once.
    public static let waitingAtOnce = 8
    private static let waitingSlots = Slots(waitingAtOnce)
    private static let computingSlots = Slots(ProcessInfo.processInfo.activeProcessorCount)
}

extension Trait where Self == OffTheCooperativePool {
    /// Each test outside Swift's cooperative pool, on a thread of its own: at most one a core for computing
    /// tests, at most `waitingAtOnce` for tests that wait.
    public static func offTheCooperativePool(_ kind: OffTheCooperativePool.Kind) -> Self { Self(kind: kind) }
}

/// A task executor over a serial dispatch queue. libdispatch backs such a queue with a thread of its
/// overcommitting pool, which, unlike the cooperative one, grows past the core count when its threads
/// are busy or blocked.
final class QueueExecutor: TaskExecutor {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
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
