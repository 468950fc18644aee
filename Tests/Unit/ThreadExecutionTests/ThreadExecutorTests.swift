import Foundation
import TestSupport
import Testing
import ThreadExecution

/// The store's thread ends when the store is done with it, and a late call still runs.
@Suite(.offTheCooperativePool(.waiting)) struct ThreadExecutorTests {
    actor OnItsThread {
        let executor: ThreadExecutor
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
        init(_ executor: ThreadExecutor) { self.executor = executor }

        /// The kernel's id and name of the thread this runs on.
        func thread() -> (id: Int32, name: String) {
            // /proc/thread-self links to PID/task/TID.
            (
                Int32(
                    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self"))?.split(
                        separator: "/"
                    ).last ?? "") ?? -1,
                ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "").trimmingCharacters(
                    in: .whitespacesAndNewlines)
            )
        }
    }

    static func exists(_ thread: Int32) -> Bool { FileManager.default.fileExists(atPath: "/proc/self/task/\(thread)") }

    static func waitUntilGone(_ thread: Int32) async throws -> Bool {
        for _ in 0..<300 where exists(thread) { try await Task.sleep(for: .milliseconds(10)) }
        return !exists(thread)
    }

    @Test func finishEndsTheThreadAndALateJobStillRuns() async throws {
        let name = "te-\(UInt16.random(in: 0...UInt16.max))"
        let actor = OnItsThread(ThreadExecutor(name: name))
        let first = await actor.thread()
        #expect(first.name == name, "the thread carries its name: \(first.name)")
        #expect(await actor.thread().id == first.id, "every job runs on the one thread")
        actor.executor.finish()
        #expect(try await Self.waitUntilGone(first.id), "finish ends the thread")
        let late = await actor.thread()
        #expect(late.id != first.id && late.name == name, "a job after finish runs on a thread started for it")
        #expect(try await Self.waitUntilGone(late.id), "and that thread ends too")
    }
}
