import Synchronization

/// A counting semaphore for async callers: at most `limit` holders at once, the rest wait in order.
/// A waiter whose task is cancelled leaves the queue at once (a stopping agent must not hang on a
/// window that a dead broker keeps full).
final class AsyncWindow: Sendable {
    private struct State {
        var available: Int
        /// Waiters in arrival order from `head` on; the array is compacted as it drains, so waking one
        /// is O(1) even with thousands queued. A cancelled waiter's slot is `nil`.
        var waiters: [(id: Int, continuation: CheckedContinuation<Bool, Never>)?] = []
        var head = 0
        var nextID = 0

        mutating func popWaiter() -> CheckedContinuation<Bool, Never>? {
            while head < waiters.count {
                let next = waiters[head]
                waiters[head] = nil
                head += 1
                if head > 1024 && head * 2 > waiters.count {
                    waiters.removeFirst(head)
                    head = 0
                }
                if let next { return next.continuation }
            }
            return nil
        }

        mutating func removeWaiter(_ id: Int) -> CheckedContinuation<Bool, Never>? {
            guard let index = waiters[head...].firstIndex(where: { $0?.id == id }) else { return nil }
            defer { waiters[index] = nil }
            return waiters[index]?.continuation
        }
    }
    private let state: Mutex<State>

    init(limit: Int) { state = Mutex(State(available: max(limit, 1))) }

    /// Takes a slot, waiting in order for one. Returns `false`, holding nothing, when the task is
    /// cancelled first.
    func acquire() async -> Bool {
        let acquired = state.withLock { s -> Bool in
            guard s.available > 0 else { return false }
            s.available -= 1
            return true
        }
        if acquired { return true }
        let id = state.withLock { s -> Int in
            defer { s.nextID += 1 }
            return s.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { s -> Bool? in
                    if Task.isCancelled { return false }
                    if s.available > 0 {
                        s.available -= 1
                        return true
                    }
                    s.waiters.append((id, continuation))
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            state.withLock { $0.removeWaiter(id) }?.resume(returning: false)
        }
    }

    func release() {
        let next = state.withLock { s -> CheckedContinuation<Bool, Never>? in
            if let next = s.popWaiter() { return next }
            s.available += 1
            return nil
        }
        next?.resume(returning: true)
    }
}
