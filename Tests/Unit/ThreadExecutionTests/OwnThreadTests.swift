import Foundation
import Testing
import ThreadExecution

/// CPU-bound work off the cooperative pool: its result comes back, and a cancelled caller does not wait.
@Suite(.offTheCooperativePool(.waiting)) struct OwnThreadTests {
    @Test func theWorksResultComesBack() async {
        let result = await onOwnThread(name: "test-work") { (Thread.isMainThread, (1...1_000).reduce(0, +)) }
        #expect(result?.0 == false && result?.1 == 500_500)
    }

    @Test func aCancelledCallerGetsNilWithoutWaitingForTheWork() async {
        // Cancelled before it began, the work is not started at all.
        let early = Task { await onOwnThread(name: "test-never") { 1 } }
        early.cancel()
        _ = await early.value

        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let caller = Task {
            await onOwnThread(name: "test-blocked") { () -> Int in
                started.signal()
                release.wait()
                finished.signal()
                return 1
            }
        }
        #expect(started.wait(timeout: .now() + 60) == .success)
        caller.cancel()
        // The work is still blocked: the caller's nil cannot have waited for it.
        #expect(await caller.value == nil)
        #expect(finished.wait(timeout: .now()) == .timedOut)
        release.signal()
        #expect(finished.wait(timeout: .now() + 60) == .success, "the work finishes unseen")
    }
}
