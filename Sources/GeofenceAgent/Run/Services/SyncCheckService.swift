import AgentOutputs
import Foundation
import Logging
import Mosquitto
import ServiceLifecycle
import Synchronization
import ThreadExecution

/// Checks each broker the agent connects to, once a run, with `RetainedDeliveryProbe`: a broker that
/// withholds retained messages from wildcard subscriptions can never give the vehicle its geofences. Such a
/// broker is refused for the sync, with the reason in the log, on `errors` and in the status; the agent
/// goes on with the geofences it stores and publishes as before, since the rest works there.
final class SyncCheckService: Service, Sendable {
    let client: any AgentTransport
    let topics: Topics
    let logger: Logger
    /// Each checked broker's verdict, by its place in the configuration's brokers: the status asks every
    /// second, and a key made as text would be made every time.
    private let verdicts = Mutex<[Int: RetainedDeliveryProbe.Verdict]>([:])
    /// The fleet's and the vehicle's geofence filters, made once: the status asks every second.
    private let geofenceFilters: [String]

    init(client: any AgentTransport, topics: Topics, logger: Logger) {
        self.client = client
        self.topics = topics
        self.logger = logger
        geofenceFilters = [topics.fleetGeofences, topics.vehicleGeofences]
    }

    /// For the status: `waiting: WHY` while the broker refuses a geofence subscription (the transport asks
    /// again until it is granted), else `ok`, `unchecked`, or `unavailable: WHY` for the broker in use.
    var description: String {
        if let waiting = Self.waiting(client.refusedSubscriptions, for: geofenceFilters) { return waiting }
        let position = client.brokerPosition
        switch verdicts.withLock({ $0[position] }) {
        case .delivers: return "ok"
        case .withholds: return "unavailable: \(Self.reason(client.brokerName))"
        case nil: return "unchecked"
        }
    }

    /// What the status says while a geofence filter is refused: the first such filter and the broker's reason.
    /// No count: the status is published again only when the sync starts or stops waiting.
    static func waiting(_ refused: [String: MQTTSubscriptionRefusal], for filters: [String]) -> String? {
        guard let filter = filters.first(where: { refused[$0] != nil }), let refusal = refused[filter] else {
            return nil
        }
        return "waiting: the broker refused the subscription to \(filter) (SUBACK \(refusal.reason.rawValue)); "
            + "asking again until it is granted"
    }

    static func reason(_ broker: String) -> String {
        "the broker at \(broker) does not deliver retained messages to wildcard subscriptions (RabbitMQ's MQTT "
            + "plugin does not), so geofences published there never reach this vehicle; use a broker that does "
            + "(mosquitto, EMQX, HiveMQ) or load them from a file (conditions.file)"
    }

    /// Checks at each connection, in a task of its own that a stop does not wait for: a check waiting on a
    /// stalled link for its acknowledgements ends when the client stops, after this service. A new connection
    /// ends the last one's check: a probe whose messages crossed a reconnection proves nothing.
    func run() async {
        let states = client.statusUpdates
        let checking = Mutex<Task<Void, Never>?>(nil)
        let check: @Sendable () -> Void = {
            checking.withLock {
                $0?.cancel()
                $0 = Task(executorPreference: PoolExecutor.preferred) { await self.checkTheBroker() }
            }
        }
        await runUntilGracefulShutdown {
            if self.client.status.isConnected { check() }
            for await state in states where state.isConnected { check() }
        }
        checking.withLock { $0?.cancel() }
    }

    /// Checks the broker in use unless it was checked: one probe a run, not one a reconnection.
    private func checkTheBroker() async {
        let position = client.brokerPosition
        let broker = client.brokerName
        guard verdicts.withLock({ $0[position] }) == nil else { return }
        let verdict = await RetainedDeliveryProbe(topics: topics).run(on: client)
        if Task.isCancelled { return }  // a new connection, whose own check decides
        guard let verdict else {
            logger.info("could not check the broker's retained messages; trying again at the next connection")
            return
        }
        verdicts.withLock { $0[position] = verdict }
        guard verdict == .withholds else {
            logger.debug("the broker delivers retained geofences", metadata: ["broker": "\(broker)"])
            return
        }
        logger.error("geofence sync unavailable: \(Self.reason(broker))")
        let error = ControlPlane(topics: topics).error(
            .broker, about: topics.fleetGeofences, identifier: nil, reason: Self.reason(broker))
        try? await client.publish(error)
    }
}
