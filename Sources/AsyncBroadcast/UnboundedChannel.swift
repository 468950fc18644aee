import Synchronization

/// One consumer's unbounded queue from a producer thread, as `AsyncStream` is, but compiled into its
/// users (`@inlinable`), so that a hand-over is specialized for the element: `AsyncStream`'s generic
/// implementation looked up type metadata on every yield and every wait, which on the fix path cost more
/// than the fix's decision. The sequence ends when the producer finishes it, or when the consuming task is
/// cancelled; elements yielded after that are dropped. Unlike a stream, a channel does not end when its
/// consumer merely stops iterating: one that leaves its loop early must be cancelled or finished, or the
/// queue grows.
public final class UnboundedChannel<Element: Sendable>: AsyncSequence, Sendable {
    public typealias Failure = Never

    @usableFromInline
    struct State {
        @usableFromInline var buffer: [Element] = []
        /// The next element of `buffer` to hand out.
        @usableFromInline var head = 0
        /// The consumer, waiting on an empty buffer.
        @usableFromInline var waiting: UnsafeContinuation<Element?, Never>?
        @usableFromInline var finished = false
        /// The consuming task was cancelled (told to the producer once).
        @usableFromInline var consumerGone = false

        @usableFromInline init() {}

        /// The next element, `.some(nil)` at the end, or nil when the consumer must wait.
        @inlinable
        mutating func take() -> Element?? {
            if head < buffer.count {
                let element = buffer[head]
                head += 1
                if head == buffer.count {
                    buffer.removeAll(keepingCapacity: true)
                    head = 0
                }
                return .some(element)
            }
            return finished ? .some(nil) : nil
        }
    }

    @usableFromInline let state = Mutex(State())
    /// Called when the consuming task is cancelled, so that the producer can stop at once.
    @usableFromInline let consumerCancelled: (@Sendable () -> Void)?

    public init(onConsumerCancelled: (@Sendable () -> Void)? = nil) {
        consumerCancelled = onConsumerCancelled
    }

    /// Queues an element, or hands it straight to the waiting consumer.
    @inlinable
    public func yield(_ element: Element) {
        let consumer: UnsafeContinuation<Element?, Never>? = state.withLock { s in
            if s.finished { return nil }
            if let waiting = s.waiting {
                s.waiting = nil
                return waiting
            }
            s.buffer.append(element)
            return nil
        }
        consumer?.resume(returning: element)
    }

    /// Ends the sequence after the elements already queued.
    @inlinable
    public func finish() {
        let consumer: UnsafeContinuation<Element?, Never>? = state.withLock { s in
            s.finished = true
            defer { s.waiting = nil }
            return s.waiting
        }
        consumer?.resume(returning: nil)
    }

    /// Whether the sequence has ended (finished, or its consumer gone). Inlinable as the rest: a producer
    /// asks before each element, and unspecialized it looked up the state's type metadata every time.
    @inlinable
    public var isFinished: Bool { state.withLock { $0.finished } }

    /// The next element, waited for in the caller's isolation: an actor that reads the channel (the fix
    /// processor) is resumed on its own executor, with no hop to the generic one and back.
    @inlinable
    func next(isolation actor: isolated (any Actor)? = #isolation) async -> Element? {
        if let ready = state.withLock({ $0.take() }) { return ready }
        return await withTaskCancellationHandler(
            operation: {
                await withUnsafeContinuation(isolation: actor) { (continuation: UnsafeContinuation<Element?, Never>) in
                    let ready: Element?? = state.withLock { s in
                        if let ready = s.take() { return ready }
                        s.waiting = continuation
                        return nil
                    }
                    if let ready { continuation.resume(returning: ready) }
                }
            },
            onCancel: {
                // The consumer is gone: end the sequence, drop what comes, and tell the producer (once: a
                // cancelled consumer that reads on comes here at every read).
                let first = state.withLock { s in
                    defer { s.consumerGone = true }
                    return !s.consumerGone
                }
                finish()
                if first { consumerCancelled?() }
            },
            isolation: actor)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        @usableFromInline let channel: UnboundedChannel

        @usableFromInline init(channel: UnboundedChannel) { self.channel = channel }

        @inlinable
        public mutating func next() async -> Element? { await channel.next(isolation: nil) }

        @inlinable
        public mutating func next(isolation actor: isolated (any Actor)?) async -> Element? {
            await channel.next(isolation: actor)
        }
    }

    @inlinable
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(channel: self) }
}
