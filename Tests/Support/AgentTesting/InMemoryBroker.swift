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
        /// Filters it refuses (SUBACK 0x80), as a cluster does while it elects its leaders; their
        /// subscribers get nothing until `grant`.
        var refusing: Set<String> = []
        /// Subscribers of a refused filter, waiting for its grant.
        var waiting: [Int: (filter: String, continuation: AsyncStream<MQTTMessage>.Continuation)] = [:]
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

    /// Subscribes: the retained messages it matches first (flagged `retained`), then every message live. A
    /// refused filter's subscription waits, with nothing, until the filter is granted.
    package func subscribe(_ filter: String) -> MQTTSubscription {
        let (stream, continuation) = AsyncStream<MQTTMessage>.makeStream(bufferingPolicy: .unbounded)
        let id = state.withLock { s -> Int in
            s.next += 1
            if s.refusing.contains(filter) {
                s.waiting[s.next] = (filter, continuation)
            } else {
                Self.sendRetained(s.retained, matching: filter, to: continuation)
                s.subscribers[s.next] = (filter, continuation)
            }
            return s.next
        }
        return MQTTSubscription(filter: filter, stream: stream) { [weak self] in
            self?.state.withLock { s in
                s.subscribers[id] = nil
                s.waiting[id] = nil
            }
            continuation.finish()
        }
    }

    private static func sendRetained(
        _ retained: [String: [UInt8]], matching filter: String, to continuation: AsyncStream<MQTTMessage>.Continuation
    ) {
        for (topic, payload) in retained.sorted(by: { $0.key < $1.key }) where TopicFilter.matches(filter, topic) {
            continuation.yield(MQTTMessage(topic: topic, payload: payload, retained: true))
        }
    }

    /// Refuses `filter` from now on: a subscription to it gets SUBACK 0x80 until `grant`.
    package func refuse(_ filter: String) { state.withLock { _ = $0.refusing.insert(filter) } }

    /// Grants `filter` at last: its waiting subscribers get its retained messages, then every message live.
    package func grant(_ filter: String) {
        state.withLock { s in
            s.refusing.remove(filter)
            for (id, subscriber) in s.waiting where subscriber.filter == filter {
                s.waiting[id] = nil
                Self.sendRetained(s.retained, matching: filter, to: subscriber.continuation)
                s.subscribers[id] = subscriber
            }
        }
    }

    /// The refused filters that someone waits on, as a client that asks again reports them.
    package var refusedSubscriptions: [String: MQTTSubscriptionRefusal] {
        state.withLock { s in
            Dictionary(
                s.waiting.values.map { ($0.filter, MQTTSubscriptionRefusal(reason: MQTTReasonCode(0x80), count: 1)) },
                uniquingKeysWith: { a, _ in a })
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
            defer {
                s.subscribers = [:]
                s.waiting = [:]
            }
            return (s.subscribers.values.map(\.continuation) + s.waiting.values.map(\.continuation))
        }
        for continuation in continuations { continuation.finish() }
    }
}
