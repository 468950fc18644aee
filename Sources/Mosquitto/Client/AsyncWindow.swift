import Synchronization

/// A counting semaphore for async callers: at most `limit` holders at once, the rest wait in order.
final class AsyncWindow: Sendable {
    private struct State {
        var available: Int
        /// Waiters in arrival order from `head` on; the array is compacted as it drains, so waking one
        /// is O(1) even with thousands queued.
        var waiters: [CheckedContinuation<Void, Never>] = []
        var head = 0

        mutating func popWaiter() -> CheckedContinuation<Void, Never>? {
            guard head < waiters.count else { return nil }
            let next = waiters[head]
            head += 1
            if head > 1024 && head * 2 > waiters.count {
                waiters.removeFirst(head)
                head = 0
            }
            return next
        }
    }
    private let state: Mutex<State>

    init(limit: Int) { state = Mutex(State(available: max(limit, 1))) }

    func acquire() async {
        let acquired = state.withLock { s -> Bool in
            guard s.available > 0 else { return false }
            s.available -= 1
            return true
        }
        if acquired { return }
        await withCheckedContinuation { continuation in
            let now = state.withLock { s -> Bool in
                if s.available > 0 { s.available -= 1; return true }
                s.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    func release() {
        let next = state.withLock { s -> CheckedContinuation<Void, Never>? in
            if let next = s.popWaiter() { return next }
            s.available += 1
            return nil
        }
        next?.resume()
    }
}
