import Synchronization

/// Hands every element to every current listener. Each stream is unbounded, so a slow consumer delays
/// nothing and loses nothing.
public final class Broadcaster<Element: Sendable>: Sendable {
    private let continuations = Mutex<[Int: AsyncStream<Element>.Continuation]>([:])
    private let nextID = Atomic<Int>(0)

    public init() {}

    /// A new stream that sees every element yielded from now on.
    public func stream() -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: .unbounded)
        let id = nextID.add(1, ordering: .relaxed).newValue
        continuation.onTermination = { [weak self] _ in
            _ = self?.continuations.withLock { $0.removeValue(forKey: id) }
        }
        continuations.withLock { $0[id] = continuation }
        return stream
    }

    public func yield(_ element: Element) {
        let current = continuations.withLock { Array($0.values) }
        for c in current { c.yield(element) }
    }

    /// Ends every stream.
    public func finish() {
        let current = continuations.withLock { dict in
            defer { dict.removeAll() }
            return Array(dict.values)
        }
        for c in current { c.finish() }
    }
}
