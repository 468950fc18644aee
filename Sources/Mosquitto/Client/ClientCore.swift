import AsyncBroadcast
import CMosquitto
import Foundation
import Logging
import Synchronization

/// The client's shared state, and the receiver of libmosquitto's callbacks (on the loop thread).
final class ClientCore: MosquittoEvents {
    /// Whoever waits for a PUBACK: an awaiting `publish`, or a `PublishTicket`.
    struct PublishWaiter: Sendable {
        let resume: @Sendable (Result<MQTTReasonCode, MQTTError>) -> Void
        func resume(returning result: Result<MQTTReasonCode, MQTTError>) { resume(result) }
    }
    typealias SubscribeWaiter = CheckedContinuation<Result<Void, MQTTError>, Never>

    /// A QoS 1/2 message handed to libmosquitto and not yet acknowledged, kept whole so that it can be
    /// handed again to another broker's handle after a failover, in its order.
    struct PendingPublish {
        var topic: String
        var payload: [UInt8]
        var qos: Int32
        var retain: Bool
        var order: UInt64
        var waiter: PublishWaiter
    }

    struct Subscriber {
        var filter: String
        var continuation: AsyncStream<MQTTMessage>.Continuation
    }

    struct State {
        var status: MQTTConnectionStatus = .idle
        /// `status` as text, made once a change: a status file asks for it every second.
        var statusDescription = MQTTConnectionStatus.idle.description
        /// When the current connection attempt (or outage) began, on the monotonic clock.
        var attemptStarted: ContinuousClock.Instant = .now
        var pendingPublishes: [Int32: PendingPublish] = [:]
        /// Orders publishes across handles.
        var nextOrder: UInt64 = 0
        /// After a failover: what the previous broker had not acknowledged, handed to the new one on its
        /// first CONNACK, before anything else is published (`carryingOver` holds new publishes back).
        var carryOver: [PendingPublish] = []
        var carryingOver = false
        var pendingSubscribes: [Int32: (filter: String, waiter: SubscribeWaiter)] = [:]
        /// Resubscriptions sent from the connect callback, by message id, awaiting their SUBACK.
        var pendingResubscribes: [Int32: String] = [:]
        var subscribers: [Int: Subscriber] = [:]
        var nextSubscriber = 0
        /// Every filter we want, with its QoS, and whether the broker confirmed it in this session.
        var filters: [String: (qos: MQTTQoS, confirmed: Bool)] = [:]
        /// Wanted filters the broker refused, asked for again with backoff (`askAgainForRefusedSubscriptions`).
        var refusals: [String: MQTTSubscriptionRefusal] = [:]
        /// The last TLS problem libmosquitto logged, since it reports verification failures nowhere else.
        var tlsProblem: String?
        /// Why the last connection attempt failed, when libmosquitto said (for example "Connection refused").
        var lastConnectionError: String?
        var stopping = false
    }

    let state = Mutex(State())
    let statusBroadcaster = Broadcaster<MQTTConnectionStatus>()
    let logger: Logger
    /// The handle in use (one per broker; a failover moves to another). Used from the connect callback.
    let handle = Mutex<MosquittoHandle?>(nil)

    /// `TCP_USER_TIMEOUT` for each new connection (0: the kernel's).
    let stallTimeoutMilliseconds: UInt32
    /// The backoff of a refused subscription: the client's retry delays.
    let refusalRetry: (minimum: Double, maximum: Double)
    /// Yields at each refusal: the client's task that asks again waits on it.
    let refusalWakes: AsyncStream<Void>
    private let refusalWake: AsyncStream<Void>.Continuation

    init(logger: Logger, stallTimeout: Double = 0, refusalRetry: (minimum: Double, maximum: Double) = (1, 30)) {
        self.logger = logger
        stallTimeoutMilliseconds = UInt32(max(0, min(stallTimeout, 3600)) * 1000)
        self.refusalRetry = refusalRetry
        (refusalWakes, refusalWake) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Hands a QoS 1/2 message to libmosquitto, under the state's lock (`s`), for `waiter` to get its
    /// acknowledgement: `publish` and `issue` both come here. Returns its message id, or why it was not
    /// handed over; `.library(noConnection)` means "wait for the connection, then try again".
    func handOver(
        _ topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool, to waiter: PublishWaiter, whileStopping: Bool,
        in s: inout State
    ) -> Result<Int32, MQTTError> {
        if s.stopping && !whileStopping { return .failure(.shutDown) }
        // Moving to another broker: wait, as before a first connection, so that what the last broker did not
        // acknowledge goes out first.
        if s.carryingOver {
            return .failure(
                .library(MosquittoError(code: MosquittoError.noConnection, operation: "publish while failing over")))
        }
        // Only between CONNACK and the disconnect: a message handed to libmosquitto during its blocking connect
        // would go out before CONNECT (the broker drops the client).
        guard s.status.isConnected else { return .failure(.library(MQTTClient.notYetConnected)) }
        let handle = handle.withLock { $0 }!
        let (mid, error) = handle.enqueue(topic: topic, payload: payload, qos: qos.rawValue, retain: retain)
        // NO_CONN after the gate: the socket just closed, and libmosquitto has queued the message for the
        // reconnect. Handing it over again would send it twice under two ids.
        if let error, error.code != MosquittoError.noConnection { return .failure(.library(error)) }
        s.pendingPublishes[mid] = PendingPublish(
            topic: topic, payload: payload, qos: qos.rawValue, retain: retain, order: s.nextOrder, waiter: waiter)
        s.nextOrder += 1
        return .success(mid)
    }

    func setStatus(_ status: MQTTConnectionStatus) {
        let changed = state.withLock { s -> Bool in
            guard s.status != status else { return false }
            s.status = status
            s.statusDescription = status.description
            return true
        }
        guard changed else { return }
        if case .connected = status {
            logger.info("MQTT \(status)")
        } else {
            logger.warning("MQTT \(status)")
        }
        statusBroadcaster.yield(status)
    }

    // MARK: Callbacks (loop thread)

    func connected(reason: Int32, sessionPresent: Bool) {
        guard reason == 0 else {
            let text = String(cString: mosquitto_reason_string(reason))
            setStatus(.refused(reason: "\(text) (CONNACK \(reason))"))
            return
        }
        // Resubscribe what the broker does not hold for us: everything after a fresh session, and
        // filters added while offline after a resumed one.
        let current = handle.withLock { $0 }
        current?.setUserTimeout(milliseconds: stallTimeoutMilliseconds)
        let (wanted, refusedCarry) = state.withLock { s -> ([(String, MQTTQoS)], [PendingPublish]) in
            s.tlsProblem = nil
            // After a failover, what the previous broker never acknowledged goes first, in its order.
            var refused: [PendingPublish] = []
            if s.carryingOver, let current {
                for p in s.carryOver {
                    do throws(MosquittoError) {
                        let mid = try current.publish(topic: p.topic, payload: p.payload, qos: p.qos, retain: p.retain)
                        s.pendingPublishes[mid] = p
                    } catch {
                        refused.append(p)
                    }
                }
                s.carryOver.removeAll()
                s.carryingOver = false
            }
            if !sessionPresent { for key in s.filters.keys { s.filters[key]!.confirmed = false } }
            return (s.filters.filter { !$0.value.confirmed }.map { ($0.key, $0.value.qos) }, refused)
        }
        for p in refusedCarry { p.waiter.resume(returning: .failure(.shutDown)) }
        if let handle = current {
            for (filter, qos) in wanted {
                do throws(MosquittoError) {
                    let mid = try handle.subscribe(filter: filter, qos: qos.rawValue)
                    state.withLock { $0.pendingResubscribes[mid] = filter }
                } catch {
                    logger.error("MQTT resubscribe to \(filter) failed: \(error)")
                }
            }
        }
        setStatus(.connected(sessionPresent: sessionPresent))
    }

    func disconnected(reason: Int32) {
        let (stopping, refused) = state.withLock { s in
            s.attemptStarted = .now
            if case .refused = s.status { return (s.stopping, true) }
            return (s.stopping, false)
        }
        // A refused login is followed by a disconnect; the refusal is what the operator must see.
        if stopping || refused { return }
        let text = reason == 0 ? "closed" : String(cString: mosquitto_strerror(reason))
        setStatus(.disconnected(reason: text))
    }

    func published(mid: Int32, reason: Int32) {
        guard let entry = state.withLock({ $0.pendingPublishes.removeValue(forKey: mid) }) else { return }
        entry.waiter.resume(returning: Self.outcome(MQTTReasonCode(reason), for: entry.topic))
    }

    /// A PUBACK or SUBACK reason as the caller sees it: success, an ACL refusal, or another refusal.
    static func outcome(_ code: MQTTReasonCode, for topic: String) -> Result<MQTTReasonCode, MQTTError> {
        if code.isSuccess { return .success(code) }
        return .failure(code == .notAuthorized ? .notAuthorized(topic: topic) : .refused(topic: topic, reason: code))
    }

    func subscribed(mid: Int32, granted: [Int32]) {
        let code = MQTTReasonCode(granted.first ?? 0x80)
        let (entry, refused, grantedAfter) = state.withLock {
            s -> ((filter: String, waiter: SubscribeWaiter)?, (String, MQTTSubscriptionRefusal)?, (String, Int)?) in
            let entry = s.pendingSubscribes.removeValue(forKey: mid)
            guard let filter = entry?.filter ?? s.pendingResubscribes.removeValue(forKey: mid) else {
                return (entry, nil, nil)
            }
            if code.isSuccess {
                s.filters[filter]?.confirmed = true
                return (entry, nil, s.refusals.removeValue(forKey: filter).map { (filter, $0.count) })
            }
            // A subscribe awaited by its caller is the caller's to retry; one the client holds for a
            // subscriber (made at a CONNACK, or asked again) is asked again here, for as long as it is wanted.
            guard entry == nil, s.filters[filter] != nil else { return (entry, nil, nil) }
            var refusal = s.refusals[filter] ?? MQTTSubscriptionRefusal(reason: code, count: 0)
            refusal.reason = code
            refusal.count += 1
            refusal.nextAttempt =
                .now
                + MQTTClient.refusalBackoff(refusal.count, minimum: refusalRetry.minimum, maximum: refusalRetry.maximum)
            s.refusals[filter] = refusal
            return (entry, (filter, refusal), nil)
        }
        if let (filter, count) = grantedAfter {
            logger.info("MQTT subscription to \(filter) granted after \(count) refusals")
        }
        if let (filter, refusal) = refused {
            // The first refusal and then at each doubling: a broker that refuses for hours logs a few lines.
            if refusal.count & (refusal.count - 1) == 0 {
                logger.warning(
                    "MQTT subscription to \(filter) refused (reason \(refusal.reason)), \(refusal.count) times; asking again"
                )
            }
            refusalWake.yield()
        }
        guard let entry else { return }
        entry.waiter.resume(returning: Self.outcome(code, for: entry.filter).map { _ in })
    }

    func received(_ message: MQTTMessage) {
        let targets = state.withLock { s in
            s.subscribers.values.filter { MosquittoHandle.topic(message.topic, matches: $0.filter) }
        }
        for t in targets { t.continuation.yield(message) }
    }

    func logged(level: Int32, line: String) {
        // libmosquitto logs TLS verification failures and does nothing else about them.
        if line.contains("OpenSSL") || line.contains("certificate") || line.contains("TLS") {
            state.withLock { $0.tlsProblem = line }
            logger.warning("MQTT TLS: \(line)")
        } else if level == Int32(MOSQ_LOG_ERR) {
            logger.error("libmosquitto: \(line)")
        } else {
            logger.debug("libmosquitto: \(line)")
        }
    }

    // MARK: Teardown

    /// Ends every waiting call and every subscription.
    func failEverything() {
        let (publishes, subscribes, subscribers) = state.withLock { s in
            defer {
                s.pendingPublishes.removeAll()
                s.carryOver.removeAll()
                s.pendingSubscribes.removeAll()
                s.subscribers.removeAll()
            }
            return (
                Array(s.pendingPublishes.values) + s.carryOver, Array(s.pendingSubscribes.values),
                Array(s.subscribers.values)
            )
        }
        for p in publishes { p.waiter.resume(returning: .failure(.shutDown)) }
        for s in subscribes { s.waiter.resume(returning: .failure(.shutDown)) }
        for s in subscribers { s.continuation.finish() }
        refusalWake.finish()
    }
}
