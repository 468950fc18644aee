import Foundation
import Mosquitto
import Synchronization

/// A broker in memory for the agent's in-process tests: retained messages (an empty one deletes), topic
/// filters with `+` and `#`, every message delivered at once and in order to every matching subscription,
/// and every publish recorded. What a real broker adds (sessions, QoS on the wire, a link) is the
/// integration lane's, with a real mosquitto.
package final class InMemoryBroker: Sendable {
    private struct State {
        var retained: [String: [UInt8]] = [:]
        var subscribers: [Int: (filter: String, continuation: AsyncStream<MQTTMessage>.Continuation)] = [:]
        var next = 0
        var published: [MQTTMessage] = []
    }
    private let state = Mutex(State())

    package init() {}

    /// Publishes as any client would (an operator, a dashboard, the agent).
    package func publish(_ topic: String, payload: [UInt8], retain: Bool = false) {
        state.withLock { s in
            let message = MQTTMessage(topic: topic, payload: payload, retained: false)
            s.published.append(message)
            if retain { s.retained[topic] = payload.isEmpty ? nil : payload }
            for subscriber in s.subscribers.values where TopicFilter.matches(subscriber.filter, topic) {
                subscriber.continuation.yield(message)
            }
        }
    }

    /// `publish` of UTF-8 text.
    package func publish(_ topic: String, text: String, retain: Bool = false) {
        publish(topic, payload: Array(text.utf8), retain: retain)
    }

    /// Subscribes: the retained messages it matches first (flagged `retained`), then every message live.
    package func subscribe(_ filter: String) -> MQTTSubscription {
        let (stream, continuation) = AsyncStream<MQTTMessage>.makeStream(bufferingPolicy: .unbounded)
        let id = state.withLock { s -> Int in
            for (topic, payload) in s.retained.sorted(by: { $0.key < $1.key })
            where TopicFilter.matches(filter, topic) {
                continuation.yield(MQTTMessage(topic: topic, payload: payload, retained: true))
            }
            s.next += 1
            s.subscribers[s.next] = (filter, continuation)
            return s.next
        }
        return MQTTSubscription(filter: filter, stream: stream) { [weak self] in
            self?.state.withLock { $0.subscribers[id] = nil }
            continuation.finish()
        }
    }

    /// Every message published so far on a topic that `filter` matches, in order.
    package func published(_ filter: String) -> [MQTTMessage] {
        state.withLock { s in s.published.filter { TopicFilter.matches(filter, $0.topic) } }
    }

    /// The retained message on `topic`, if any.
    package func retained(_ topic: String) -> [UInt8]? { state.withLock { $0.retained[topic] } }

    /// Ends every subscription (the agent's loops over them end).
    package func close() {
        let continuations = state.withLock { s in
            defer { s.subscribers = [:] }
            return s.subscribers.values.map(\.continuation)
        }
        for continuation in continuations { continuation.finish() }
    }
}
