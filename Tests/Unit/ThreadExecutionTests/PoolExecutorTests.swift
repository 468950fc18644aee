import Foundation
import Testing
import ThreadExecution

/// The agent's default executor: a pool of its own threads, with its own timers for `Task.sleep`.
@Suite(.offTheCooperativePool(.waiting)) struct PoolExecutorTests {
    /// One pool for the suite: its threads live as long as the process.
    static let pool = PoolExecutor(threads: 2, name: "test-pool")

    static func onThePool() -> Bool { pool.runsCurrentThread }

    @Test func tasksThatPreferThePoolRunOnItsThreads() async {
        #expect(!Self.onThePool())
        let onPool = await withTaskExecutorPreference(Self.pool) {
            await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<200 { group.addTask { Self.onThePool() } }
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
        }
        #expect(onPool.count == 200)
        #expect(onPool.allSatisfy { $0 })
    }

    @Test func anActorsCallsFromThePoolAllRun() async {
        actor Tally {
            var count = 0
            func add() { count += 1 }
        }
        let tally = Tally()
        await withTaskExecutorPreference(Self.pool) {
            await withDiscardingTaskGroup { group in
                for _ in 0..<8 { group.addTask { for _ in 0..<1_000 { await tally.add() } } }
            }
        }
        #expect(await tally.count == 8_000)
    }

    @Test func aSleepOnThePoolLastsItsDurationAndResumesOnThePool() async throws {
        let clock = ContinuousClock()
        let (elapsed, onPool) = try await withTaskExecutorPreference(Self.pool) {
            let start = clock.now
            try await Task.sleep(for: .milliseconds(60))
            return (start.duration(to: clock.now), Self.onThePool())
        }
        #expect(elapsed >= .milliseconds(60))
        #expect(onPool)
    }

    @Test func aSuspendingClocksDeadlineIsKeptToo() async throws {
        let clock = SuspendingClock()
        let deadline = clock.now.advanced(by: .milliseconds(40))
        try await withTaskExecutorPreference(Self.pool) {
            try await clock.sleep(until: deadline)
        }
        #expect(clock.now >= deadline)
    }

    @Test func aSleepForeverEndsWithCancellation() async {
        let sleeper = Task(executorPreference: Self.pool) {
            try await Task.sleep(for: .seconds(Int64.max))
        }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }

    @Test func aCancelledSleepEndsWithCancellation() async {
        let sleeper = Task(executorPreference: Self.pool) {
            try await Task.sleep(for: .seconds(3_600))
        }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }
}
