import AsyncBroadcast
import Foundation
import Synchronization
import TestSupport
import Testing
import ThreadExecution

#if canImport(Glibc)
    import Glibc
#endif

/// Sources waited for between a `ThreadExecutor`'s jobs: timers and descriptors fire on its thread, what
/// they start runs there, and every source is detached exactly once.
@Suite(.offTheCooperativePool(.waiting)) struct ThreadExecutorSourceTests {
    /// The kernel's id of the calling thread.
    static func currentThread() -> Int32 {
        let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
        return Int32(link.split(separator: "/").last ?? "") ?? -1
    }

    /// Fires `count` times, `interval` apart, optionally when `descriptor` is readable, and records where
    /// and when.
    final class RecordingSource: ThreadExecutorSource, Sendable {
        struct Record {
            var fires: [(thread: Int32, at: UInt64, due: UInt64?, readable: Bool)] = []
            var detached = 0
            var next: UInt64?
            var bytes = 0
        }
        let record = Mutex(Record())
        let count: Int
        let interval: UInt64?
        let descriptor: Int32
        let onFire: @Sendable (Int) -> Void

        init(
            count: Int, interval: UInt64?, descriptor: Int32 = -1, onFire: @escaping @Sendable (Int) -> Void = { _ in }
        ) {
            self.count = count
            self.interval = interval
            self.descriptor = descriptor
            self.onFire = onFire
        }

        func nextWait() -> ThreadExecutorWait? {
            record.withLock { r in
                guard r.fires.count < count else { return nil }
                if r.next == nil, let interval { r.next = ThreadExecutor.now() + interval }
                return ThreadExecutorWait(descriptor: descriptor, deadline: r.next)
            }
        }

        func fire(readable: Bool) {
            var buffer = [UInt8](repeating: 0, count: 16)
            let read = readable ? Glibc.read(descriptor, &buffer, buffer.count) : 0
            let n = record.withLock { r in
                r.fires.append((ThreadExecutorSourceTests.currentThread(), ThreadExecutor.now(), r.next, readable))
                r.bytes += max(read, 0)
                r.next = nil
                return r.fires.count
            }
            onFire(n)
        }

        func detached() { record.withLock { $0.detached += 1 } }

        var isDetached: Bool { record.withLock { $0.detached > 0 } }
    }

    actor OnItsThread {
        let executor: ThreadExecutor
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
        init(_ executor: ThreadExecutor) { self.executor = executor }
        func thread() -> Int32 { ThreadExecutorSourceTests.currentThread() }
    }

    static func waitUntil(_ seconds: Double, _ condition: () -> Bool) async throws -> Bool {
        let end = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < end, !condition() { try await Task.sleep(for: .milliseconds(5)) }
        return condition()
    }

    @Test func timersFireOnTheThreadNotBeforeTheirTimeAndTheSourceIsDetachedOnce() async throws {
        let actor = OnItsThread(ThreadExecutor(name: "te-timer"))
        let thread = await actor.thread()
        let source = RecordingSource(count: 5, interval: 20_000_000)
        #expect(actor.executor.attach(source))
        #expect(try await Self.waitUntil(30) { source.isDetached })
        let record = source.record.withLock { $0 }
        #expect(record.fires.count == 5)
        #expect(record.detached == 1)
        for fire in record.fires {
            #expect(fire.thread == thread, "fired on thread \(fire.thread), the executor's is \(thread)")
            #expect(fire.at >= fire.due!, "fired \(Double(fire.due! - fire.at) / 1e6) ms early")
            #expect(!fire.readable)
        }
        actor.executor.finish()
    }

    @Test func aReadableDescriptorFiresAndJobsStillRunWhileItWaits() async throws {
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { for fd in ends { close(fd) } }
        let actor = OnItsThread(ThreadExecutor(name: "te-fd"))
        let thread = await actor.thread()
        // No deadline: only the descriptor, or a job, wakes the thread.
        let source = RecordingSource(count: 3, interval: nil, descriptor: ends[0])
        #expect(actor.executor.attach(source))
        for round in 1...3 {
            // A job runs while the source waits on its descriptor.
            #expect(await actor.thread() == thread)
            var byte = UInt8(round)
            #expect(write(ends[1], &byte, 1) == 1)
            #expect(try await Self.waitUntil(30) { source.record.withLock { $0.fires.count } == round })
        }
        #expect(try await Self.waitUntil(30) { source.isDetached })
        let record = source.record.withLock { $0 }
        #expect(record.fires.allSatisfy { $0.readable && $0.thread == thread })
        #expect(record.bytes == 3 && record.detached == 1)
        actor.executor.finish()
    }

    /// A pipe, both ends non-blocking, closed when it goes.
    final class Pipe: Sendable {
        let readEnd: Int32
        let writeEnd: Int32
        init() {
            var ends: [Int32] = [-1, -1]
            precondition(pipe(&ends) == 0)
            for fd in ends { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
            (readEnd, writeEnd) = (ends[0], ends[1])
        }
        deinit {
            close(readEnd)
            close(writeEnd)
        }
        func send() {
            var byte: UInt8 = 1
            precondition(write(writeEnd, &byte, 1) == 1)
        }
    }

    /// Waits on whichever descriptor it is told to, and counts its readable fires.
    final class SwitchingSource: ThreadExecutorSource, Sendable {
        let descriptor: Mutex<Int32>
        let readableFires = Atomic<Int>(0)
        init(_ descriptor: Int32) { self.descriptor = Mutex(descriptor) }
        func nextWait() -> ThreadExecutorWait? { ThreadExecutorWait(descriptor: descriptor.withLock { $0 }) }
        func fire(readable: Bool) {
            guard readable else { return }
            var buffer = [UInt8](repeating: 0, count: 16)
            _ = read(descriptor.withLock { $0 }, &buffer, buffer.count)
            readableFires.add(1, ordering: .relaxed)
        }
        func detached() {}
    }

    /// The executor registers a source's descriptor once (epoll): a source that moves to another descriptor
    /// is woken by the new one, and no longer by the old one.
    @Test func aSourceThatMovesToAnotherDescriptorIsWokenByThatOneOnly() async throws {
        let executor = ThreadExecutor(name: "te-switch")
        defer { executor.finish() }
        let (first, second) = (Pipe(), Pipe())
        let source = SwitchingSource(first.readEnd)
        #expect(executor.attach(source))
        first.send()
        #expect(try await Self.waitUntil(30) { source.readableFires.load(ordering: .relaxed) == 1 })
        source.descriptor.withLock { $0 = second.readEnd }
        // A job makes the thread ask the source again before it waits.
        _ = await OnItsThread(executor).thread()
        first.send()
        try await Task.sleep(for: .milliseconds(100))
        #expect(source.readableFires.load(ordering: .relaxed) == 1, "the old descriptor still woke it")
        second.send()
        #expect(try await Self.waitUntil(30) { source.readableFires.load(ordering: .relaxed) == 2 })
    }

    /// A descriptor epoll cannot wait for is waited for as `poll` would: a regular file is always readable,
    /// and one descriptor two sources wait for wakes both. A pipe beside them still wakes its own.
    @Test func descriptorsEpollRefusesAreWaitedForAsPollWould() async throws {
        let executor = ThreadExecutor(name: "te-refused")
        defer { executor.finish() }
        let file = open("/proc/self/exe", O_RDONLY | O_CLOEXEC)
        #expect(file >= 0)
        defer { close(file) }
        let regular = RecordingSource(count: 3, interval: nil, descriptor: file)
        #expect(executor.attach(regular))
        #expect(try await Self.waitUntil(30) { regular.isDetached }, "a regular file is ready at once")
        #expect(regular.record.withLock { $0.fires.allSatisfy(\.readable) })

        let shared = Pipe()
        let (one, other) = (SwitchingSource(shared.readEnd), SwitchingSource(shared.readEnd))
        let own = Pipe()
        let beside = SwitchingSource(own.readEnd)
        #expect(executor.attach(one) && executor.attach(other) && executor.attach(beside))
        _ = await OnItsThread(executor).thread()
        own.send()
        #expect(try await Self.waitUntil(30) { beside.readableFires.load(ordering: .relaxed) == 1 })
        shared.send()
        #expect(try await Self.waitUntil(30) { one.readableFires.load(ordering: .relaxed) >= 1 })
        #expect(try await Self.waitUntil(30) { other.readableFires.load(ordering: .relaxed) >= 1 })
    }

    /// A detached source's descriptor may be closed and its number given to the next source's: that one is
    /// woken by its own.
    @Test func aDescriptorNumberReusedAfterADetachWakesTheNewSource() async throws {
        let executor = ThreadExecutor(name: "te-reuse")
        defer { executor.finish() }
        let (first, second) = (Pipe(), Pipe())
        let number = first.readEnd
        let source = RecordingSource(count: 1, interval: nil, descriptor: number)
        #expect(executor.attach(source))
        first.send()
        #expect(try await Self.waitUntil(30) { source.isDetached })
        // The number now names the second pipe's read end: `dup2` closes the first's and reuses the number in
        // one step, so no other test of this process can take it in between.
        #expect(dup2(second.readEnd, number) == number)
        let next = RecordingSource(count: 1, interval: nil, descriptor: number)
        #expect(executor.attach(next))
        second.send()
        #expect(try await Self.waitUntil(30) { next.isDetached })
        #expect(next.record.withLock { $0.fires.count == 1 && $0.fires[0].readable && $0.bytes == 1 })
    }

    @Test func whatAFireStartsRunsOnTheSameThread() async throws {
        let executor = ThreadExecutor(name: "te-chain")
        let thread = await OnItsThread(executor).thread()
        let channel = UnboundedChannel<Int>()
        let source = RecordingSource(count: 20, interval: 2_000_000) { n in
            channel.yield(n)
            if n == 20 { channel.finish() }
        }
        let consumer = Task {
            await withTaskExecutorPreference(executor) {
                var seen: [(Int, Int32)] = []
                for await n in channel { seen.append((n, Self.currentThread())) }
                return seen
            }
        }
        #expect(executor.attach(source))
        let seen = await consumer.value
        #expect(seen.map(\.0) == Array(1...20))
        #expect(seen.allSatisfy { $0.1 == thread }, "the consumer ran on \(Set(seen.map(\.1))), not \(thread)")
        executor.finish()
    }

    @Test func finishDetachesTheSourcesAndRefusesNewOnes() async throws {
        let executor = ThreadExecutor(name: "te-finish")
        let waiting = RecordingSource(count: 1, interval: 3_600_000_000_000)
        #expect(executor.attach(waiting))
        executor.finish()
        #expect(try await Self.waitUntil(30) { waiting.isDetached })
        #expect(waiting.record.withLock { $0.fires.isEmpty && $0.detached == 1 })
        let late = RecordingSource(count: 1, interval: 0)
        #expect(!executor.attach(late), "an executor that has finished takes no source")
        #expect(!late.isDetached && late.record.withLock { $0.fires.isEmpty })
    }

    @Test func aSleepEndsOnTheThreadNotBeforeItsDeadlineAndACancelledOneAtOnce() async throws {
        let executor = ThreadExecutor(name: "te-sleep")
        defer { executor.finish() }
        let thread = await OnItsThread(executor).thread()
        let rounds = try await withTaskExecutorPreference(executor) {
            var rounds: [(due: UInt64, woke: UInt64, thread: Int32)] = []
            for _ in 0..<5 {
                let due = ThreadExecutor.now() + 15_000_000
                try await executor.sleep(until: due)
                rounds.append((due, ThreadExecutor.now(), Self.currentThread()))
            }
            return rounds
        }
        for round in rounds {
            #expect(round.woke >= round.due, "woke \(Double(round.due - round.woke) / 1e6) ms early")
            #expect(round.thread == thread, "resumed on \(round.thread), the executor's thread is \(thread)")
        }
        // A sleep of an hour, cancelled from outside, and one whose task was cancelled before it began.
        let long = Task { try await executor.sleep(for: .seconds(3600)) }
        try await Task.sleep(for: .milliseconds(20))
        long.cancel()
        await #expect(throws: CancellationError.self) { try await long.value }
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await executor.sleep(for: .seconds(3600))
        }
        await #expect(throws: CancellationError.self) { try await early.value }
    }

    /// No time limit: with the suite's CPU-bound tests on both of CI's cores, the cooperative pool that runs
    /// this test's waits can be held for more than a minute. A lost wake-up shows instead as a sleep that ran
    /// to its latest time, five minutes on, and says so.
    @Test func aSleepWithAToleranceEndsAtTheThreadsNextWakeAfterItsDeadline() async throws {
        let executor = ThreadExecutor(name: "te-tolerance")
        defer { executor.finish() }
        let actor = OnItsThread(executor)
        let thread = await actor.thread()
        let tolerance: UInt64 = 300_000_000_000
        // Woken by a source: a fix due after the sleep's deadline ends the long tolerance. The deadline is far
        // enough ahead that the thread is waiting before it, however busy the machine (a thread awake after
        // the deadline ends the sleep at once, rightly, and the fix would not be what ended it).
        let fix = RecordingSource(count: 1, interval: 600_000_000)
        let (due, woke, on) = try await withTaskExecutorPreference(executor) {
            let due = ThreadExecutor.now() + 300_000_000
            #expect(executor.attach(fix))
            try await executor.sleep(until: due, tolerance: tolerance)
            return (due, ThreadExecutor.now(), Self.currentThread())
        }
        let fired = try #require(fix.record.withLock { $0.fires.first })
        #expect(woke >= due, "woke \(Double(due - woke) / 1e6) ms early")
        #expect(woke >= fired.at, "the sleep ended before the wake-up it rode on")
        #expect(woke < due + tolerance, "the sleep ran to its latest time: the fix's wake-up did not end it")
        #expect(on == thread, "resumed on \(on), the executor's thread is \(thread)")

        // Woken by a job: the thread, awake for it, ends a sleep past its deadline before it waits again. The
        // job must come after the sleep began (before it, nothing would end the tolerance): the sleep begins
        // in the same job that publishes its deadline, and the executor runs one job at a time.
        let jobDeadline = Atomic<UInt64>(0)
        let sleeping = Task {
            try await withTaskExecutorPreference(executor) {
                let due = ThreadExecutor.now() + 10_000_000
                jobDeadline.store(due, ordering: .releasing)
                try await executor.sleep(until: due, tolerance: tolerance)
                return (due, ThreadExecutor.now())
            }
        }
        #expect(try await Self.waitUntil(120) { jobDeadline.load(ordering: .acquiring) != 0 })
        #expect(try await Self.waitUntil(120) { ThreadExecutor.now() > jobDeadline.load(ordering: .acquiring) })
        #expect(await actor.thread() == thread)
        let (jobDue, jobWoke) = try await sleeping.value
        #expect(jobWoke >= jobDue)
        #expect(jobWoke < jobDue + tolerance, "the sleep ran to its latest time: the job's wake-up did not end it")

        // Nothing else wakes the thread: the sleep ends by its latest time.
        let latest = ThreadExecutor.now() + 30_000_000
        try await executor.sleep(for: .milliseconds(10), tolerance: .milliseconds(20))
        #expect(ThreadExecutor.now() >= latest - 20_000_000)
    }

    /// Fires once, in the window from `earliest` to `deadline`, and records when.
    final class WindowSource: ThreadExecutorSource, Sendable {
        let earliest: UInt64
        let deadline: UInt64
        let firedAt = Mutex<UInt64?>(nil)

        init(earliest: UInt64, deadline: UInt64) {
            self.earliest = earliest
            self.deadline = deadline
        }

        func nextWait() -> ThreadExecutorWait? {
            firedAt.withLock { $0 } == nil ? ThreadExecutorWait(earliest: earliest, deadline: deadline) : nil
        }

        func fire(readable: Bool) { firedAt.withLock { $0 = ThreadExecutor.now() } }

        func detached() {}
    }

    /// A source with an earliest time rides on another's wake-up after it (the reporter's round on a fix's),
    /// and wakes the thread itself only at its deadline; never before its earliest time. No time limit, as
    /// above: a lost fire shows as a source that ran to its deadline, five minutes on.
    @Test func aSourceFiresAtTheFirstWakeAfterItsEarliestTimeOrAtItsDeadline() async throws {
        let executor = ThreadExecutor(name: "te-earliest")
        defer { executor.finish() }
        let late: UInt64 = 300_000_000_000
        let earliest = ThreadExecutor.now() + 300_000_000
        let round = WindowSource(earliest: earliest, deadline: earliest + late)
        let fix = RecordingSource(count: 1, interval: 600_000_000)
        #expect(executor.attach(round))
        #expect(executor.attach(fix))
        #expect(try await Self.waitUntil(600) { round.firedAt.withLock { $0 } != nil })
        let fired = try #require(round.firedAt.withLock { $0 })
        #expect(fired >= earliest, "fired \(Double(earliest - fired) / 1e6) ms before its earliest time")
        #expect(fired < earliest + late, "ran to its deadline: the fix's wake-up did not fire it")
        #expect(fix.record.withLock { $0.fires.count } == 1)

        // Nothing else wakes the thread (its wake-up for the attachment comes long before the earliest time):
        // it fires at its deadline.
        let start = ThreadExecutor.now()
        let alone = WindowSource(earliest: start + 1_000_000_000, deadline: start + 1_500_000_000)
        #expect(executor.attach(alone))
        #expect(try await Self.waitUntil(600) { alone.firedAt.withLock { $0 } != nil })
        let aloneFired = try #require(alone.firedAt.withLock { $0 })
        #expect(aloneFired >= alone.deadline, "fired \(Double(alone.deadline - aloneFired) / 1e6) ms early")
    }

    @Test func aSleepFromAnotherThreadShortensTheThreadsWait() async throws {
        let executor = ThreadExecutor(name: "te-sleep2")
        defer { executor.finish() }
        // The thread waits for an hour-long source deadline; a short sleep from the pool must still end.
        let waiting = RecordingSource(count: 1, interval: 3_600_000_000_000)
        #expect(executor.attach(waiting))
        try await Task.sleep(for: .milliseconds(20))
        let due = ThreadExecutor.now() + 10_000_000
        try await executor.sleep(until: due)
        #expect(ThreadExecutor.now() >= due)
        #expect(waiting.record.withLock { $0.fires.isEmpty })
    }

    @Test func aSleepOnAFinishedExecutorEndsInsteadOfHanging() async throws {
        let executor = ThreadExecutor(name: "te-sleep3")
        let sleeping = Task { try await executor.sleep(for: .seconds(3600)) }
        try await Task.sleep(for: .milliseconds(20))
        executor.finish()
        await #expect(throws: CancellationError.self) { try await sleeping.value }
        await #expect(throws: CancellationError.self) { try await executor.sleep(for: .seconds(3600)) }
    }

    /// An actor on the executor sleeps and reads a channel in its own isolation: each wake-up is one job on
    /// the thread. Resumed on the generic executor instead, each would hop there and back. The task prefers
    /// the executor, as the agent's loops do: without that preference this runtime passed through the
    /// thread's loop 11 times for one such sleep (seen in a debug build).
    actor Reader {
        let executor: ThreadExecutor
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
        /// How many elements it has read.
        nonisolated let count = Atomic<Int>(0)
        init(_ executor: ThreadExecutor) { self.executor = executor }

        func sleep(times: Int) async throws {
            for _ in 0..<times { try await executor.sleep(for: .milliseconds(1)) }
        }

        func read(_ channel: UnboundedChannel<Int>) async -> [Int] {
            var seen: [Int] = []
            for await value in channel {
                seen.append(value)
                count.add(1, ordering: .releasing)
            }
            return seen
        }
    }

    /// The jobs it takes a task to get onto the executor and into the actor, and back out, at most: two or
    /// three on an idle machine, one more seen with both cores busy (the task started off the executor).
    static let entryAndExit = 4

    @Test func anActorOnTheExecutorSleepsAndReadsAChannelAtOneJobAWake() async throws {
        let executor = ThreadExecutor(name: "te-hops")
        defer { executor.finish() }
        let reader = Reader(executor)
        let sleeps = 20
        var before = executor.enqueuedJobs
        try await withTaskExecutorPreference(executor) { try await reader.sleep(times: sleeps) }
        // One per sleep's end, and a few to get onto the executor and the actor and back: `entryAndExit`.
        // Hopping to the generic executor and back, the same loop took 202.
        #expect(executor.enqueuedJobs - before <= sleeps + Self.entryAndExit, "\(executor.enqueuedJobs - before) jobs")

        let channel = UnboundedChannel<Int>()
        let values = 20
        before = executor.enqueuedJobs
        let reading = Task { await withTaskExecutorPreference(executor) { await reader.read(channel) } }
        // One element at a time, each once the reader has the one before: most find it waiting again.
        for value in 0..<values {
            channel.yield(value)
            #expect(try await Self.waitUntil(120) { reader.count.load(ordering: .acquiring) == value + 1 })
        }
        channel.finish()
        #expect(await reading.value == Array(0..<values), "every element, in order")
        // One per element at most, and the end's.
        #expect(
            executor.enqueuedJobs - before <= values + 1 + Self.entryAndExit, "\(executor.enqueuedJobs - before) jobs")
    }
}
