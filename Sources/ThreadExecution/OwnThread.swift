import Foundation
import Synchronization

/// Runs pure, CPU-bound work on a thread of its own, never on Swift's cooperative pool (whose two threads
/// on a vehicle also carry the agent's loops). A cancelled caller stops waiting at once and gets nil;
/// the work then finishes unseen.
package func onOwnThread<Result: Sendable>(
    name: String, _ work: @escaping @Sendable () -> Result
) async -> Result? {
    let waiter = Mutex<CheckedContinuation<Result?, Never>?>(nil)
    let resume: @Sendable (Result?) -> Void = { value in waiter.withLock { $0.take() }?.resume(returning: value) }
    return await withTaskCancellationHandler {
        await withCheckedContinuation { continuation in
            waiter.withLock { $0 = continuation }
            if Task.isCancelled {
                resume(nil)
                return
            }
            let thread = Thread { resume(work()) }
            thread.name = name
            thread.start()
        }
    } onCancel: {
        resume(nil)
    }
}
