import Foundation
import Testing
import ThreadExecution

/// The agent's executor, a pool of its own threads, and the clock whose timers libdispatch does not watch.
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

    @Test func aTaskStartedUnderRunPrefersThePoolThroughTheTaskLocal() async {
        #expect(PoolExecutor.preferred == nil)
        let onPool = await Self.pool.run {
            await Task(executorPreference: PoolExecutor.preferred) { Self.onThePool() }.value
        }
        #expect(onPool)
        #expect(PoolExecutor.preferred == nil)
    }

    @Test func aSerialTimerSleepLastsItsDurationAndResumesOnThePool() async throws {
        let clock = ContinuousClock()
        let (elapsed, onPool) = try await Self.pool.run {
            let start = clock.now
            try await Task.sleep(for: .milliseconds(60), clock: .serialTimer)
            return (start.duration(to: clock.now), Self.onThePool())
        }
        #expect(elapsed >= .milliseconds(60))
        #expect(onPool)
    }

    @Test func aDeadlineAlreadyPastEndsTheSleepAtOnce() async throws {
        let clock = SerialTimerClock()
        let past = clock.now.advanced(by: .seconds(-1))
        try await clock.sleep(until: past)
        #expect(clock.now >= past)
    }

    @Test func aSleepForeverEndsWithCancellation() async {
        let sleeper = Task(executorPreference: Self.pool) {
            try await Task.sleep(for: .seconds(Int64.max), clock: .serialTimer)
        }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }

    @Test func aSleepCancelledWhileItWaitsEndsWithCancellation() async {
        let started = AsyncStream<Void>.makeStream()
        let sleeper = Task(executorPreference: Self.pool) {
            started.continuation.yield()
            try await Task.sleep(for: .seconds(3_600), clock: .serialTimer)
        }
        var iterator = started.stream.makeAsyncIterator()
        await iterator.next()
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }

    @Test func aTaskCancelledBeforeItSleepsDoesNotSleep() async {
        let sleeper = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await Task.sleep(for: .seconds(3_600), clock: .serialTimer)
        }
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }
}
