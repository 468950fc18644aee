import ThreadExecution

/// A filter the client holds for a subscriber and the broker refused (SUBACK 0x80 and above): how often, and
/// why the last time. The client asks again with backoff until the broker grants it.
public struct MQTTSubscriptionRefusal: Sendable, Equatable {
    /// The last SUBACK's reason.
    public var reason: MQTTReasonCode
    /// Refusals since the filter was last granted.
    public var count: Int
    /// When to ask again; nil while asked (its SUBACK awaited) or while there is no connection to ask on.
    var nextAttempt: ContinuousClock.Instant?

    /// A refusal as a transport of another kind reports it (the in-memory broker of the agent's tests).
    package init(reason: MQTTReasonCode, count: Int) {
        self.reason = reason
        self.count = count
    }
}

extension MQTTClient {
    /// The filters the broker refused and the client is asking for again (none once each is granted).
    public var refusedSubscriptions: [String: MQTTSubscriptionRefusal] { core.state.withLock { $0.refusals } }

    /// A refused filter's wait before it is asked again: the retry delay, doubled at each refusal up to
    /// its maximum. A clustered broker refuses while it elects its leaders, for seconds.
    static func refusalBackoff(_ count: Int, minimum: Double, maximum: Double) -> Duration {
        let doubled = minimum * Double(1 << min(max(count - 1, 0), 16))
        return .seconds(min(doubled, max(maximum, minimum)))
    }

    /// Asks again for each refused filter when its backoff has passed, until the client stops: a subscription
    /// made before the connection (or again after one) is never left refused.
    func askAgainForRefusedSubscriptions() async {
        var wakes = core.refusalWakes.makeAsyncIterator()
        while !Task.isCancelled {
            let due = core.state.withLock { s in s.refusals.values.compactMap(\.nextAttempt).min() }
            guard let due else {
                if await wakes.next() == nil { return }
                continue
            }
            do { try await Task.sleep(until: due, clock: .serialTimer) } catch { return }
            if core.state.withLock({ $0.stopping }) { return }
            subscribeAgain(dueBy: .now)
        }
    }

    /// Sends SUBSCRIBE again for the refused filters due by `now` that a subscriber still wants. Without a
    /// connection it sends nothing: the next CONNACK subscribes every filter not granted.
    private func subscribeAgain(dueBy now: ContinuousClock.Instant) {
        let current = self.handle
        let logger = core.logger
        core.state.withLock { s in
            for (filter, refusal) in s.refusals {
                guard let at = refusal.nextAttempt, at <= now else { continue }
                s.refusals[filter]?.nextAttempt = nil
                guard s.status.isConnected, let qos = s.filters[filter]?.qos else { continue }
                do throws(MosquittoError) {
                    let mid = try current.subscribe(filter: filter, qos: qos.rawValue)
                    s.pendingResubscribes[mid] = filter
                } catch {
                    logger.debug("MQTT subscribe to \(filter) again: \(error)")
                }
            }
        }
    }
}
