import Foundation
import GPSD
import GPSDTestSupport
import GeofenceCore
import LocalServers
import Logging
import Synchronization
import TestSupport
import Testing
import ThreadExecution

/// gpsd read on a `ThreadExecutor`'s thread, as the agent reads it on its store's: a fix reaches a consumer
/// that prefers that executor on that same thread, and a stop ends the reading.
@Suite(.offTheCooperativePool(.waiting)) struct ExecutorReadingTests {
    actor OnItsThread {
        let executor: ThreadExecutor
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
        init(_ executor: ThreadExecutor) { self.executor = executor }
        func thread() -> Int32 { ExecutorReadingTests.currentThread() }
    }

    static func currentThread() -> Int32 {
        let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
        return Int32(link.split(separator: "/").last ?? "") ?? -1
    }

    @Test func fixesReachTheConsumerOnTheExecutorsThreadAndAStopEndsTheReading() async throws {
        let rig = try GPSDRig(log: "bundg_zeus_9", interval: 0.001)
        defer { rig.stop() }
        let executor = ThreadExecutor(name: "gpsd-exec")
        defer { executor.finish() }
        let executorThread = await OnItsThread(executor).thread()
        var logger = Logger(label: "test.gpsd")
        logger.logLevel = .critical
        let source = GPSLocationSource(configuration: rig.configuration(), logger: logger, readingOn: executor)
        let channel = source.locationChannel()
        let delivered = Mutex(0)
        let consumer = Task {
            await withTaskExecutorPreference(executor) {
                var threads: Set<Int32> = []
                for await _ in channel {
                    threads.insert(Self.currentThread())
                    delivered.withLock { $0 += 1 }
                }
                return threads
            }
        }
        let running = Task { try await source.run() }
        let end = ContinuousClock.now + .seconds(30)
        while delivered.withLock({ $0 }) < 20, ContinuousClock.now < end {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(delivered.withLock { $0 } >= 20, "fixes read on the executor's thread")
        source.stop()
        // The stop wakes the executor's wait: the reading ends and the channel with it.
        try await running.value
        let threads = await consumer.value
        #expect(threads == [executorThread], "consumed on \(threads), the executor's thread is \(executorThread)")
        #expect(source.status.state == .stopped)
    }

    @Test func anExecutorThatEndsHandsTheReadingBackToTheReaderThread() async throws {
        let rig = try GPSDRig(log: "bundg_zeus_9", interval: 0.002)
        defer { rig.stop() }
        let recorder = SourceRecorder(rig.configuration(), reading: .executor)
        #expect(await recorder.wait(30) { $0.locations.count >= 10 })
        recorder.executor!.finish()
        let before = recorder.locations.count
        #expect(await recorder.wait(30) { $0.locations.count > before + 10 }, "the reader thread reads on")
        await recorder.stop()
        let locations = recorder.locations
        for (a, b) in zip(locations, locations.dropFirst()) { #expect(b.timestamp > a.timestamp) }
    }
}
