import Mosquitto
import Synchronization

/// Gathers messages that arrive faster than they are applied (a broker sending 100,000 retained
/// geofences at once) into batches, in arrival order: whatever came while the last batch was applied
/// is the next batch, up to `maximum`.
final class MessageBatcher: Sendable {
    private let buffer = Mutex<(messages: [MQTTMessage], head: Int)>(([], 0))
    private let wakes: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    let maximum: Int

    init(maximum: Int = 2_000) {
        self.maximum = maximum
        (wakes, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    func add(_ message: MQTTMessage) {
        buffer.withLock { $0.messages.append(message) }
        wake.yield()
    }

    /// No more messages will be added; `batches` ends once the rest is handed out.
    func finish() { wake.finish() }

    /// The next batch, or empty when none is waiting.
    func take() -> [MQTTMessage] {
        buffer.withLock { b in
            let end = min(b.messages.count, b.head + maximum)
            let batch = Array(b.messages[b.head..<end])
            b.head = end
            if b.head == b.messages.count {
                b.messages.removeAll(keepingCapacity: false)
                b.head = 0
            } else if b.head > 4_096 && b.head * 2 > b.messages.count {
                // Messages that keep arriving never let it drain: drop what was handed out.
                b.messages.removeFirst(b.head)
                b.head = 0
            }
            return batch
        }
    }

    /// Calls `apply` with each batch until `finish()` or cancellation (which leaves the rest: the broker
    /// sends it again at the next connection), and `drained` with the number of messages applied whenever
    /// a burst of them has been.
    func run(_ apply: ([MQTTMessage]) async -> Void, drained: (Int) async -> Void = { _ in }) async {
        for await _ in wakes {
            var applied = 0
            while !Task.isCancelled {
                let batch = take()
                if batch.isEmpty { break }
                await apply(batch)
                applied += batch.count
            }
            if applied > 0 { await drained(applied) }
        }
    }
}
