import CMosquitto
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import ThreadExecution

/// An MQTT client over libmosquitto that never gives up and never loses a message it was handed.
///
/// - `publish` returns once the broker acknowledged a QoS 1 message (with its reason code), across
///   disconnects and broker restarts in between; at most `maximumInflight` wait for PUBACK at once.
/// - `subscribe` gives an `AsyncSequence` of messages; subscriptions are restored after a reconnect. One the
///   broker refuses there (a cluster electing its leaders answers SUBACK 0x80) is asked for again with
///   backoff until granted (`refusedSubscriptions`).
/// - A supervisor keeps the connection: it reconnects after any outage, and retries with backoff where
///   libmosquitto itself stops (a refused login under MQTT 5, a TLS verification failure), reporting each as
///   a status (`status`, `statusUpdates`).
/// - As a `Service`, it runs until graceful shutdown, then publishes its will explicitly (the "offline"
///   status) and disconnects.
///
/// Blocking libmosquitto calls run on a dedicated thread, never on the cooperative pool.
public final class MQTTClient: Service, Sendable {
    public let configuration: MQTTConfiguration
    let core: ClientCore
    /// One handle per broker, each with its own client id (`MQTTConfiguration.clientID(forBroker:)`); the
    /// one in use is `core.handle`.
    private let handles: [MosquittoHandle]
    private let worker: BlockingWorker
    private let window: AsyncWindow
    private let supervisor = Mutex<Task<Void, Never>?>(nil)
    private let started = Atomic<Bool>(false)
    /// The index in `configuration.brokers` of the broker in use.
    private let brokerIndex = Atomic<Int>(0)

    /// Prepares the client; nothing touches the network until `start()` (or `run()`).
    public init(configuration: MQTTConfiguration, logger: Logger) throws(MQTTError) {
        self.configuration = configuration
        core = ClientCore(
            logger: logger, stallTimeout: configuration.stallTimeout,
            refusalRetry: (configuration.minimumRetryDelay, configuration.maximumRetryDelay))
        guard (1...65_000).contains(configuration.maximumInflight) else {
            throw MQTTError.configuration(
                "maximumInflight \(configuration.maximumInflight) must be from 1 to 65000 (message ids are 16-bit)")
        }
        guard !configuration.clientID.isEmpty else { throw MQTTError.configuration("the client id is empty") }
        let password = try configuration.password.resolve()
        if let tls = configuration.tls {
            for (what, path) in [
                ("CA file", tls.caFile), ("certificate file", tls.certificateFile), ("key file", tls.keyFile),
            ] {
                if let path, !FileManager.default.isReadableFile(atPath: path) {
                    throw MQTTError.configuration("TLS \(what) '\(path)' cannot be read")
                }
            }
        }
        let events = core
        do throws(MosquittoError) {
            var made: [MosquittoHandle] = []
            for index in configuration.brokers.indices {
                made.append(
                    try Self.makeHandle(
                        configuration, clientID: configuration.clientID(forBroker: index), password: password,
                        events: events))
            }
            handles = made
        } catch {
            throw .library(error)
        }
        // Started only once nothing can fail: a thrown init never reaches deinit to end the thread.
        worker = BlockingWorker(name: "mqtt-\(configuration.clientID)")
        window = AsyncWindow(limit: configuration.maximumInflight)
        core.handle.withLock { $0 = handles[0] }
    }

    private static func makeHandle(
        _ configuration: MQTTConfiguration, clientID: String, password: String?, events: ClientCore
    ) throws(MosquittoError) -> MosquittoHandle {
        let handle = try MosquittoHandle(
            clientID: clientID, cleanStart: configuration.sessionExpiry == 0, events: events)
        try handle.setProtocolVersion(configuration.protocolVersion == .v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311)
        try handle.setNoDelay()
        try handle.setReconnectDelay(
            minimum: UInt32(max(configuration.minimumRetryDelay, 1)),
            maximum: UInt32(max(configuration.maximumRetryDelay, 1)))
        if let username = configuration.username {
            try handle.setCredentials(username: username, password: password)
        }
        if let tls = configuration.tls {
            try handle.setTLS(caFile: tls.caFile, certificateFile: tls.certificateFile, keyFile: tls.keyFile)
        }
        if let will = configuration.will {
            try handle.setWill(topic: will.topic, payload: will.payload, qos: will.qos.rawValue, retain: will.retain)
        }
        return handle
    }

    /// The handle in use.
    var handle: MosquittoHandle { core.handle.withLock { $0 } ?? handles[0] }

    deinit { worker.stop() }

    /// The connection's current state.
    public var status: MQTTConnectionStatus { core.state.withLock { $0.status } }

    /// `status` as text (its `description`), made once each time it changes.
    public var statusDescription: String { core.state.withLock { $0.statusDescription } }

    /// The broker in use (or being tried).
    public var broker: MQTTBroker { configuration.brokers[brokerPosition] }

    /// The broker in use's place in `configuration.brokers`: a key for what is known of each broker, with no
    /// copy of its address.
    public var brokerPosition: Int { brokerIndex.load(ordering: .relaxed) }

    /// Why the last connection attempt failed, when libmosquitto said (for example "Connection refused").
    public var lastConnectionError: String? { core.state.withLock { $0.lastConnectionError } }

    /// Every status change from now on.
    public var statusUpdates: AsyncStream<MQTTConnectionStatus> { core.statusBroadcaster.stream() }

    /// Starts the network loop, then connects: in that order, or libmosquitto never retries a first
    /// connection that fails. Returns once the first attempt is made, connected or not.
    public func start() async {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        core.setStatus(.connecting)
        core.state.withLock { $0.attemptStarted = .now }
        let handle = handle
        let configuration = configuration
        let logger = core.logger
        let core = core
        await worker.run {
            do {
                try handle.loopStart()
                try handle.connect(
                    host: configuration.host, port: Int32(configuration.port),
                    keepAlive: Int32(configuration.keepAlive),
                    sessionExpiry: configuration.protocolVersion == .v5 && configuration.sessionExpiry > 0
                        ? configuration.sessionExpiry : nil)
            } catch {
                logger.warning("MQTT first connection attempt: \(error); retrying")
                core.state.withLock { $0.lastConnectionError = "\(error)" }
            }
        }
        let task = Task(executorPreference: PoolExecutor.preferred) { [weak self] in
            guard let self else { return }
            await withDiscardingTaskGroup { group in
                group.addTask { await self.supervise() }
                group.addTask { await self.askAgainForRefusedSubscriptions() }
            }
        }
        supervisor.withLock { $0 = task }
    }

    /// How often the supervisor looks while not connected. Its deadlines are seconds (the connect timeout, half
    /// the stall timeout, the refused backoff), and a vehicle can be out of coverage for hours: at 200 ms the
    /// looks cost the agent 1.8 ms of CPU a second with no broker, at 1 s 0.5 ms (parked, this VM).
    static let disconnectedLook: Duration = .seconds(1)

    /// Restarts the connection wherever libmosquitto has stopped trying, with exponential backoff.
    ///
    /// libmosquitto's network thread retries an unreachable broker by itself; it gives up (and its
    /// thread ends) only when the broker refuses the login or TLS verification fails. Only then is the
    /// loop restarted: joining a thread that is still retrying would block for ever, because a
    /// reconnect in progress overrides the disconnect that asks it to end.
    private func supervise() async {
        var delay = configuration.minimumRetryDelay
        var refusedDelay = configuration.minimumRetryDelay
        var connecting: (socket: Int32, since: ContinuousClock.Instant)?
        while !Task.isCancelled {
            // Connected, there is nothing to look after until the status changes: no timer runs (a wakeup
            // costs a vehicle's battery). Otherwise a look every `disconnectedLook`. The stream is made for one wait
            // only (subscribed, then looked: a change in between is in it), so nothing piles up in it while
            // the supervisor is not waiting on it.
            if status.isConnected {
                delay = configuration.minimumRetryDelay
                refusedDelay = configuration.minimumRetryDelay
                connecting = nil
                var changes = core.statusBroadcaster.stream().makeAsyncIterator()
                if status.isConnected, await changes.next() == nil { return }
                continue
            }
            try? await Task.sleep(for: Self.disconnectedLook, clock: .serialTimer)
            let (status, started, tlsProblem, stopping, lastConnectionError) = core.state.withLock {
                ($0.status, $0.attemptStarted, $0.tlsProblem, $0.stopping, $0.lastConnectionError)
            }
            if stopping { return }
            if status.isConnected {
                delay = configuration.minimumRetryDelay
                refusedDelay = configuration.minimumRetryDelay
                connecting = nil
                continue
            }
            connecting = abortSlowConnect(connecting)
            let refused: Bool
            if case .refused = status { refused = true } else { refused = false }
            guard refused || ContinuousClock.now - started > .seconds(configuration.connectTimeout) else { continue }
            if !refused {
                let lastError = lastConnectionError.map { " (\($0))" } ?? ""
                let reason =
                    tlsProblem.map { "TLS verification failed: \($0)" }
                    ?? "no connection to \(broker) within \(Int(configuration.connectTimeout)) s\(lastError)"
                if case .unreachable(reason) = status {} else { core.setStatus(.unreachable(reason: reason)) }
                if tlsProblem == nil {
                    // One broker: libmosquitto still retries it on its own thread; report, and look again later.
                    guard !configuration.failover.isEmpty else { continue }
                    // Several: the next one. A whole round without a connection backs off before the next.
                    let next = (brokerIndex.load(ordering: .relaxed) + 1) % configuration.brokers.count
                    if next == 0 {
                        try? await Task.sleep(for: .seconds(delay), clock: .serialTimer)
                        delay = min(delay * 2, configuration.maximumRetryDelay)
                    }
                    if Task.isCancelled || core.state.withLock({ $0.stopping }) { return }
                    await failOver(to: next)
                    continue
                }
            }
            // Refused, or TLS verification failed: libmosquitto has stopped trying.
            try? await Task.sleep(for: .seconds(refusedDelay), clock: .serialTimer)
            if Task.isCancelled || core.state.withLock({ $0.stopping }) { return }
            refusedDelay = min(
                refusedDelay * 2, max(configuration.maximumRefusedRetryDelay, configuration.minimumRetryDelay))
            core.state.withLock { $0.attemptStarted = .now }
            let handle = handle
            let logger = core.logger
            let core = core
            await worker.run {
                // Never cancel the loop thread (that corrupts libmosquitto's state) and never reconnect
                // while one runs: ask it to end, join it, reconnect alone, then start a fresh one.
                _ = try? handle.disconnect()
                _ = try? handle.loopStop(force: false)
                do { try handle.reconnect() } catch {
                    logger.debug("MQTT reconnect attempt: \(error)")
                    core.state.withLock { $0.lastConnectionError = "\(error)" }
                }
                do { try handle.loopStart() } catch {
                    logger.error("MQTT network loop did not start: \(error)")
                }
            }
        }
    }

    /// A connection attempt whose SYN has gone unanswered for half the stall timeout is ended, so that
    /// libmosquitto makes a fresh one: after an outage, the kernel's SYN backoff (1, 3, 7, 15, 31 s)
    /// would leave the link unused for as long again. Returns the attempt being watched.
    private func abortSlowConnect(_ watched: (socket: Int32, since: ContinuousClock.Instant)?)
        -> (socket: Int32, since: ContinuousClock.Instant)?
    {
        guard configuration.stallTimeout > 0, let socket = handle.connectingSocket() else { return nil }
        guard let watched, watched.socket == socket else { return (socket, .now) }
        guard ContinuousClock.now - watched.since > .seconds(configuration.stallTimeout / 2) else { return watched }
        core.logger.debug("MQTT connection attempt unanswered for \(configuration.stallTimeout / 2) s; trying again")
        handle.abortConnecting(socket)
        return nil
    }

    /// Moves the connection to another broker's handle (its own client id: a broker, or a cluster node,
    /// keeps its own session for it). What the gone broker had not acknowledged is handed to the new
    /// handle on its first CONNACK, before anything newer, so the broker sees it again in order; the
    /// connect callback resubscribes where the session is new.
    private func failOver(to next: Int) async {
        let from = broker
        let to = configuration.brokers[next]
        core.logger.warning("MQTT \(from) is gone; failing over to \(to)")
        core.state.withLock { $0.attemptStarted = .now }
        let old = handle
        let new = handles[next]
        await stopLoop(old)
        core.state.withLock { s in
            s.carryOver += s.pendingPublishes.values.sorted { $0.order < $1.order }
            s.pendingPublishes.removeAll()
            s.carryingOver = true
            // Subscriptions waiting for the old broker's SUBACK are made again on the new one.
            for (_, pending) in s.pendingSubscribes { pending.waiter.resume(returning: .success(())) }
            s.pendingSubscribes.removeAll()
            s.pendingResubscribes.removeAll()
            for key in s.filters.keys { s.filters[key]!.confirmed = false }
        }
        core.handle.withLock { $0 = new }
        brokerIndex.store(next, ordering: .relaxed)
        core.setStatus(.connecting)
        let configuration = configuration
        let logger = core.logger
        let core = core
        await worker.run {
            do {
                try new.connect(
                    host: to.host, port: Int32(to.port), keepAlive: Int32(configuration.keepAlive),
                    sessionExpiry: configuration.protocolVersion == .v5 && configuration.sessionExpiry > 0
                        ? configuration.sessionExpiry : nil)
            } catch {
                logger.debug("MQTT connection to \(to): \(error)")
                core.state.withLock { $0.lastConnectionError = "\(error)" }
            }
            // Started whatever the outcome: the loop thread retries this broker until it answers.
            do { try new.loopStart() } catch {
                logger.error("MQTT network loop did not start: \(error)")
            }
        }
    }

    /// Ends libmosquitto's loop thread while it retries a broker that is gone. It ends only when it sees a
    /// disconnect between two attempts (an attempt in progress overrides one made during it), so the
    /// disconnect is asked for again until the join returns. Never a forced cancel: that corrupts the handle.
    private func stopLoop(_ handle: MosquittoHandle) async {
        let joined = Atomic<Bool>(false)
        let asker = Task.detached(executorPreference: PoolExecutor.preferred) {
            while !joined.load(ordering: .relaxed) {
                _ = try? handle.disconnect()
                // An attempt blocked on an address that drops its SYNs (a node cut off by a partition) holds
                // the thread until the kernel gives up, about two minutes: ended, the thread sees the disconnect.
                if let socket = handle.connectingSocket() { handle.abortConnecting(socket) }
                try? await Task.sleep(for: .milliseconds(50), clock: .serialTimer)
            }
        }
        await worker.run { _ = try? handle.loopStop(force: false) }
        joined.store(true, ordering: .relaxed)
        await asker.value
    }

    /// Publishes a message. For QoS 1 and 2 it returns once the broker acknowledged it; a message handed
    /// over while disconnected waits for the connection. A QoS 0 message while disconnected is refused
    /// rather than dropped silently.
    @discardableResult
    public func publish(_ topic: String, payload: [UInt8], qos: MQTTQoS = .atLeastOnce, retain: Bool = false)
        async throws(MQTTError) -> MQTTReasonCode
    {
        if core.state.withLock({ $0.stopping }) { throw .shutDown }
        if qos == .atMostOnce {
            guard status.isConnected else { throw .notConnected }
            do throws(MosquittoError) {
                _ = try handle.publish(topic: topic, payload: payload, qos: 0, retain: retain)
            } catch { throw .library(error) }
            return .success
        }
        guard await window.acquire() else { throw .cancelled }
        defer { window.release() }
        while true {
            let result = await send(topic, payload: payload, qos: qos, retain: retain, whileStopping: false)
            // Not connected (before CONNACK, or while failing over): hold the message until there is a
            // connection. A message libmosquitto took is never handed over again.
            if case .failure(.library(let error)) = result, error.code == MosquittoError.noConnection {
                try await waitForConnection()
                continue
            }
            return try result.get()
        }
    }

    /// Which message id a `send` got, read and written only under the core's lock, so that a
    /// cancellation and a PUBACK cannot both resume its waiter.
    private final class SendSlot: @unchecked Sendable {
        var mid: Int32?
        var cancelled = false
    }

    /// Hands one QoS 1/2 message to libmosquitto and waits for its PUBACK. The lock is held across the
    /// call so that a fast PUBACK cannot arrive before its waiter is registered.
    /// A cancelled caller stops waiting at once with `.cancelled` (the message stays with libmosquitto).
    private func send(_ topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool, whileStopping: Bool) async
        -> Result<MQTTReasonCode, MQTTError>
    {
        let core = core
        let slot = SendSlot()
        return await withTaskCancellationHandler {
            await withCheckedContinuation {
                (continuation: CheckedContinuation<Result<MQTTReasonCode, MQTTError>, Never>) in
                let waiter = ClientCore.PublishWaiter { continuation.resume(returning: $0) }
                core.state.withLock { s in
                    if slot.cancelled {
                        waiter.resume(returning: .failure(.cancelled))
                        return
                    }
                    switch core.handOver(
                        topic, payload: payload, qos: qos, retain: retain, to: waiter, whileStopping: whileStopping,
                        in: &s)
                    {
                    case .success(let mid): slot.mid = mid
                    case .failure(let refusal): waiter.resume(returning: .failure(refusal))
                    }
                }
            }
        } onCancel: {
            let waiter = core.state.withLock { s -> ClientCore.PublishWaiter? in
                slot.cancelled = true
                guard let mid = slot.mid else { return nil }
                return s.pendingPublishes.removeValue(forKey: mid)?.waiter
            }
            waiter?.resume(returning: .failure(.cancelled))
        }
    }

    /// Hands a QoS 1 message to libmosquitto now and returns a ticket for its PUBACK, so that one task can
    /// keep several messages in flight and still put them on the wire in call order (an outbox drained in
    /// sequence). Waits only for a slot in the in-flight window, and for a first connection.
    public func issue(_ topic: String, payload: [UInt8], retain: Bool = false) async throws(MQTTError) -> PublishTicket
    {
        if core.state.withLock({ $0.stopping }) { throw .shutDown }
        guard await window.acquire() else { throw .cancelled }
        let ticket = PublishTicket(window: window)
        let waiter = ClientCore.PublishWaiter { ticket.fulfil($0) }
        while true {
            let issued: MQTTError? = core.state.withLock { s in
                if case .failure(let refusal) = core.handOver(
                    topic, payload: payload, qos: .atLeastOnce, retain: retain, to: waiter, whileStopping: false,
                    in: &s)
                {
                    return refusal
                }
                return nil
            }
            guard let issued else { return ticket }
            if case .library(let error) = issued, error.code == MosquittoError.noConnection {
                do throws(MQTTError) { try await waitForConnection() } catch {
                    window.release()
                    throw error
                }
                continue
            }
            window.release()
            throw issued
        }
    }

    /// What a publish gets before CONNACK: it waits for the connection, then goes out.
    static let notYetConnected = MosquittoError(code: MosquittoError.noConnection, operation: "publish before CONNACK")

    /// Returns once connected or shutting down; throws `.cancelled` as soon as the caller is cancelled
    /// (a stopping agent's tasks must not spin here while the broker is away).
    private func waitForConnection() async throws(MQTTError) {
        while !status.isConnected && !core.state.withLock({ $0.stopping }) {
            do { try await Task.sleep(for: .milliseconds(20), clock: .serialTimer) } catch { throw .cancelled }
        }
    }

    /// Publishes UTF-8 text.
    @discardableResult
    public func publish(_ topic: String, text: String, qos: MQTTQoS = .atLeastOnce, retain: Bool = false)
        async throws(MQTTError) -> MQTTReasonCode
    {
        try await publish(topic, payload: Array(text.utf8), qos: qos, retain: retain)
    }

    /// Subscribes to a filter. When connected it returns after the broker granted the subscription (or
    /// throws if it refused it); when not, the subscription is sent as soon as the connection is up.
    /// Retained messages arrive first, flagged `retained`.
    public func subscribe(_ filter: String, qos: MQTTQoS = .atLeastOnce) async throws(MQTTError) -> MQTTSubscription {
        if core.state.withLock({ $0.stopping }) { throw .shutDown }
        let (stream, continuation) = AsyncStream<MQTTMessage>.makeStream(bufferingPolicy: .unbounded)
        let id = core.state.withLock { s -> Int in
            let id = s.nextSubscriber
            s.nextSubscriber += 1
            s.subscribers[id] = ClientCore.Subscriber(filter: filter, continuation: continuation)
            if s.filters[filter] == nil { s.filters[filter] = (qos, false) }
            return id
        }
        continuation.onTermination = { [weak self] _ in self?.dropSubscriber(id, filter: filter) }
        let subscription = MQTTSubscription(filter: filter, stream: stream, end: { continuation.finish() })
        guard status.isConnected else { return subscription }
        let handle = handle
        let core = core
        let result = await withCheckedContinuation { (waiter: ClientCore.SubscribeWaiter) in
            core.state.withLock { s in
                do throws(MosquittoError) {
                    let mid = try handle.subscribe(filter: filter, qos: qos.rawValue)
                    s.pendingSubscribes[mid] = (filter, waiter)
                } catch let error where error.code == MosquittoError.noConnection {
                    waiter.resume(returning: .success(()))  // sent on connect
                } catch {
                    waiter.resume(returning: .failure(.library(error)))
                }
            }
        }
        if case .failure(let error) = result {
            continuation.finish()
            throw error
        }
        return subscription
    }

    private func dropSubscriber(_ id: Int, filter: String) {
        let last = core.state.withLock { s -> Bool in
            s.subscribers.removeValue(forKey: id)
            guard !s.subscribers.values.contains(where: { $0.filter == filter }) else { return false }
            s.filters.removeValue(forKey: filter)
            s.refusals.removeValue(forKey: filter)
            return !s.stopping
        }
        if last { try? handle.unsubscribe(filter: filter) }
    }

    /// Has the broker publish the will (a normal disconnect discards it), then stops the network loop.
    /// Waiting calls end with `.shutDown`. With MQTT 5 the DISCONNECT says so (reason 0x04) and nothing
    /// is awaited, so a stop on a stalled link is prompt; the broker then publishes the will when its
    /// keepalive gives up. With MQTT 3.1.1 the will is published explicitly, and its acknowledgement
    /// awaited up to `timeout`.
    public func shutdown(timeout: Duration = .seconds(1)) async {
        guard
            core.state.withLock({ s -> Bool in
                defer { s.stopping = true }
                return !s.stopping
            })
        else { return }
        supervisor.withLock { $0?.cancel() }
        let withWill = configuration.will != nil && configuration.protocolVersion == .v5
        if let will = configuration.will, !withWill, status.isConnected {
            _ = await withTaskGroup(of: Bool.self) { group in
                group.addTask {
                    await self.send(
                        will.topic, payload: will.payload, qos: will.qos, retain: will.retain, whileStopping: true
                    ).isSuccess
                }
                group.addTask {
                    try? await Task.sleep(for: timeout, clock: .serialTimer)
                    return false
                }
                let first = await group.next() ?? false
                group.cancelAll()
                return first
            }
        }
        let handle = handle
        if withWill { await worker.run { _ = try? handle.disconnectWithWill() } }
        // The loop thread may be retrying an unreachable broker: one disconnect may be overridden by the
        // attempt in progress, and the join would then wait for ever.
        await stopLoop(handle)
        core.failEverything()
        core.setStatus(.stopped)
        core.statusBroadcaster.finish()
    }

    /// Runs until graceful shutdown (SIGTERM through a `ServiceGroup`) or cancellation, then shuts down.
    public func run() async throws {
        await start()
        try? await gracefulShutdown()
        await shutdown()
    }
}

extension Result {
    var isSuccess: Bool { if case .success = self { true } else { false } }
}

/// Messages matching one subscription filter.
public struct MQTTSubscription: AsyncSequence, Sendable {
    public typealias Element = MQTTMessage
    public let filter: String
    let stream: AsyncStream<MQTTMessage>
    private let end: @Sendable () -> Void

    /// A subscription over `stream`; `end` runs when it is cancelled. For a transport of another kind (the
    /// in-memory broker of the agent's tests).
    package init(filter: String, stream: AsyncStream<MQTTMessage>, end: @escaping @Sendable () -> Void = {}) {
        self.filter = filter
        self.stream = stream
        self.end = end
    }

    public func makeAsyncIterator() -> AsyncStream<MQTTMessage>.AsyncIterator { stream.makeAsyncIterator() }

    /// Ends the subscription: its messages end, and the client unsubscribes the filter when no other
    /// subscription has it. Leaving a loop over it does not: the client would keep the filter, and
    /// its messages, for ever.
    public func cancel() { end() }
}

/// A QoS 1 message handed to libmosquitto, whose PUBACK can be awaited later (see `MQTTClient.issue`).
public final class PublishTicket: Sendable {
    private typealias Waiter = CheckedContinuation<Result<MQTTReasonCode, MQTTError>, Never>
    private enum State {
        case waiting([Int: Waiter], next: Int)
        case done(Result<MQTTReasonCode, MQTTError>)
    }
    private let state = Mutex(State.waiting([:], next: 0))
    private let window: AsyncWindow

    init(window: AsyncWindow) { self.window = window }

    func fulfil(_ result: Result<MQTTReasonCode, MQTTError>) {
        let waiters = state.withLock { s -> [Waiter] in
            guard case .waiting(let w, _) = s else { return [] }
            s = .done(result)
            return Array(w.values)
        }
        window.release()
        for w in waiters { w.resume(returning: result) }
    }

    /// The broker's acknowledgement: a reason below 0x80, or the refusal or shutdown as an error.
    /// A cancelled caller stops waiting with `.cancelled`; the message stays in flight.
    public func acknowledgement() async throws(MQTTError) -> MQTTReasonCode {
        let id = state.withLock { s -> Int in
            guard case .waiting(let w, let next) = s else { return -1 }
            s = .waiting(w, next: next + 1)
            return next
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (c: Waiter) in
                let done = state.withLock { s -> Result<MQTTReasonCode, MQTTError>? in
                    switch s {
                    case .done(let r): return r
                    case .waiting(var w, let next):
                        if Task.isCancelled { return .failure(.cancelled) }
                        w[id] = c
                        s = .waiting(w, next: next)
                        return nil
                    }
                }
                if let done { c.resume(returning: done) }
            }
        } onCancel: {
            let waiter = state.withLock { s -> Waiter? in
                guard case .waiting(var w, let next) = s, let c = w.removeValue(forKey: id) else { return nil }
                s = .waiting(w, next: next)
                return c
            }
            waiter?.resume(returning: .failure(.cancelled))
        }
        return try result.get()
    }
}
