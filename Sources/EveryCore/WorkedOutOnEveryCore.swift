/// `body(0..<count)`, worked out on every core in chunks (in order when there are few), for pure work that
/// only reads what it is given: a restore's index build. The calling thread takes a share and waits for
/// the rest, so it is best one of its own (the store's thread is).
package func workedOutOnEveryCore<T>(_ count: Int, chunk: Int = 512, _ body: @Sendable (Int) -> T) -> [T] {
    guard count > chunk else { return (0..<count).map(body) }
    return [T](unsafeUninitializedCapacity: count) { buffer, initialized in
        // Each chunk initialises only its own elements.
        nonisolated(unsafe) let results = buffer.baseAddress!
        OnEveryCore.perform(iterations: (count + chunk - 1) / chunk) { c in
            for i in c * chunk..<min(count, (c + 1) * chunk) { (results + i).initialize(to: body(i)) }
        }
        initialized = count
    }
}
