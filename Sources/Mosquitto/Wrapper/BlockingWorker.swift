import Foundation
import Synchronization

/// A dedicated thread for libmosquitto's blocking calls (connect, reconnect, loop_stop), so that they
/// never occupy a thread of Swift's cooperative pool.
final class BlockingWorker: Sendable {
    private struct Job: @unchecked Sendable { let body: () -> Void }
    private struct State {
        var jobs: [Job] = []
        var stopping = false
    }
    private let state = Mutex(State())
    private let signal = DispatchSemaphore(value: 0)

    init(name: String) {
        // The thread holds the worker until `stop()` lets it end.
        let thread = Thread { [self] in loop() }
        thread.name = name
        thread.start()
    }

    private func loop() {
        while true {
            signal.wait()
            let next: Job? = state.withLock { s in s.jobs.isEmpty ? nil : s.jobs.removeFirst() }
            if let next {
                next.body()
                continue
            }
            if state.withLock({ $0.stopping }) { return }
        }
    }

    /// Runs `body` on the worker thread and returns its result.
    func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
            state.withLock { $0.jobs.append(Job { continuation.resume(returning: body()) }) }
            signal.signal()
        }
    }

    /// Lets the thread end once its queue is empty.
    func stop() {
        state.withLock { $0.stopping = true }
        signal.signal()
    }
}
