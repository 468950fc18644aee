import Dispatch

/// `body(0..<count)`, worked out on every core in chunks (in order when there are few), for pure work that
/// only reads what it is given: a restore's index build. The calling thread waits, so it must not be one
/// of Swift's cooperative pool (a store's own thread is fine).
func workedOutOnEveryCore<T>(_ count: Int, chunk: Int = 512, _ body: @Sendable (Int) -> T) -> [T?] {
    var results = [T?](repeating: nil, count: count)
    guard count > chunk else {
        for i in 0..<count { results[i] = body(i) }
        return results
    }
    results.withUnsafeMutableBufferPointer { out in
        // Each chunk writes only its own elements.
        nonisolated(unsafe) let out = out
        DispatchQueue.concurrentPerform(iterations: (count + chunk - 1) / chunk) { c in
            for i in c * chunk..<min(count, (c + 1) * chunk) { out[i] = body(i) }
        }
    }
    return results
}
