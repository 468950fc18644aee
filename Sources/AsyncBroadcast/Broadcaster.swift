import Synchronization

/// Hands every element to every current listener. Listeners are `AsyncStream`s and `UnboundedChannel`s, each
/// with an unbounded queue (a slow consumer delays nothing and loses nothing), or sinks that take an element
/// on the yielding thread (`ElementSink`: the fix path). `@inlinable`, so that all are specialized for the
/// element.
public final class Broadcaster<Element: Sendable>: Sendable {
    @usableFromInline let continuations = Mutex<[Int: AsyncStream<Element>.Continuation]>([:])
    @usableFromInline let channels = Mutex<[UnboundedChannel<Element>]>([])
    @usableFromInline let sinks = Mutex<[any ElementSink<Element>]>([])
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

    /// A new channel that sees every element yielded from now on, until its consumer is cancelled.
    public func channel() -> UnboundedChannel<Element> {
        let channel = UnboundedChannel<Element>()
        channels.withLock { $0.append(channel) }
        return channel
    }

    /// Hands every element yielded from now on to `sink`, on the yielding thread, until it is finished.
    public func attach(_ sink: any ElementSink<Element>) {
        sinks.withLock { $0.append(sink) }
    }

    @inlinable
    public func yield(_ element: Element) {
        // Copied out of the locks, so that no consumer is resumed under them; an empty dictionary costs no
        // array.
        let streams = continuations.withLock { $0.isEmpty ? [] : Array($0.values) }
        let listeners = channels.withLock { list in
            list.removeAll { $0.isFinished }
            return list
        }
        let direct = sinks.withLock { list in
            list.removeAll { $0.isFinished }
            return list
        }
        for c in streams { c.yield(element) }
        for c in listeners { c.yield(element) }
        for s in direct { s.accept(element) }
    }

    /// Ends every stream and channel.
    public func finish() {
        let current = continuations.withLock { dict in
            defer { dict.removeAll() }
            return Array(dict.values)
        }
        let listeners = channels.withLock { list in
            defer { list.removeAll() }
            return list
        }
        let direct = sinks.withLock { list in
            defer { list.removeAll() }
            return list
        }
        for c in current { c.finish() }
        for c in listeners { c.finish() }
        for s in direct { s.finish() }
    }
}
