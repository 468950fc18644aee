import Synchronization

/// A counting semaphore for async callers: at most `limit` holders at once, the rest wait in order.
final class AsyncWindow: Sendable {
    private struct State {
        var available: Int
        var waiters: [CheckedContinuation<Void, Never>] = []
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
            if s.waiters.isEmpty { s.available += 1; return nil }
            return s.waiters.removeFirst()
        }
        next?.resume()
    }
}
