import AgentFormats
import AgentOutputs
import Foundation
import GPSD
import GeofenceCore
import GeofenceStore
import Logging
import Mosquitto
import Places
import ServiceLifecycle
import SystemMemory

/// Builds the agent for `configuration` and does not run it, after Hummingbird's `buildApplication`:
/// the store opened and migrated, the outbox and the monitors restored, the outputs the configuration
/// turns on, every part wired into one service group. A configuration or store that cannot work fails
/// here, before anything is published.
public func buildAgent(_ configuration: AgentConfiguration, logger: Logger) async throws(AgentError) -> AgentApplication
{
    let topics = Topics(
        prefix: configuration.mqtt.topicPrefix, fleet: configuration.fleet, vehicle: configuration.vehicle)
    // What needs no store first: a failure here leaves nothing to close.
    let client: MQTTClient
    do {
        client = try MQTTClient(
            configuration: AgentRunner.mqttConfiguration(configuration, topics: topics), logger: logger)
    } catch {
        throw AgentError("cannot start the MQTT client: \(error)")
    }
    return try await buildAgent(configuration, transport: client, logger: logger)
}

/// `buildAgent` over any transport, and with locations from `locations` when given (in place of gpsd or
/// the configured replay): how the `AgentTesting` kit runs the whole agent in process. Without
/// `handlingSignals` only `stop()` ends it (a test process's signals are not the agent's).
package func buildAgent(
    _ configuration: AgentConfiguration, transport client: any AgentTransport,
    locations: AsyncStream<Location>? = nil, handlingSignals: Bool = true, logger: Logger
) async throws(AgentError) -> AgentApplication {
    let topics = Topics(
        prefix: configuration.mqtt.topicPrefix, fleet: configuration.fleet, vehicle: configuration.vehicle)
    let outputs = OutputRegistry.outputs(configuration.outputContext(topics: topics, logger: logger))
    let outputServices: [any Service]
    do { outputServices = try outputs.services() } catch {
        throw error as? AgentError ?? AgentError("cannot start an output: \(error)")
    }
    var replay: GPXReplay?
    if locations == nil, let r = configuration.replay {
        do {
            replay = try GPXReplay(path: r.gpx, speedFactor: r.speedFactor, horizontalAccuracy: r.horizontalAccuracy)
        } catch {
            throw AgentError("replay: \(error.message)")
        }
    }
    let places = await AgentBuild.places(configuration, logger: logger)

    let store: AgentStore
    do {
        store = try await AgentStore.open(path: configuration.storePath, logger: logger)
    } catch {
        throw AgentError("cannot start: \(error)")
    }
    let build = AgentBuild(
        configuration: configuration, topics: topics, logger: logger, store: store, client: client,
        outputServices: outputServices, replay: replay, locations: locations, outputs: outputs, places: places,
        handlingSignals: handlingSignals)
    do {
        return try await build.application()
    } catch {
        // The one other place the store closes: the agent was never run.
        await store.close()
        throw AgentError("cannot start: \(error)")
    }
}

/// The agent, built: `run()` runs every part until SIGTERM or SIGINT, then closes the store.
public struct AgentApplication: Service {
    let group: ServiceGroup
    let store: AgentStore
    let reporter: StateReporter
    let logger: Logger

    public func run() async throws {
        do {
            try await group.run()
        } catch {
            logger.error("agent stopped with an error", metadata: ["error": "\(error)"])
        }
        await reporter.writeStatusFile(online: false, force: true)
        await store.close()
    }

    /// Stops it as SIGTERM would: every part ends gracefully, then `run()` returns.
    package func stop() async {
        await group.triggerGracefulShutdown()
    }

    /// Runs to the end; an error is logged, never thrown (the store is closed either way).
    public func runToEnd() async {
        try? await run()
    }
}

/// The parts `buildAgent` wires together once the store is open.
struct AgentBuild {
    let configuration: AgentConfiguration
    let topics: Topics
    let logger: Logger
    let store: AgentStore
    let client: any AgentTransport
    /// What the outputs run beside the agent (OwnTracks' will connection, the Prometheus endpoint, ...).
    let outputServices: [any Service]
    let replay: GPXReplay?
    /// Locations a test hands over one by one, in place of gpsd or a replay.
    let locations: AsyncStream<Location>?
    let outputs: MultiplexOutput
    let places: GazetteerPlaces?
    /// Whether SIGTERM and SIGINT stop it gracefully (the process's agent), or only `stop()` does.
    var handlingSignals = true

    func application() async throws -> AgentApplication {
        let outbox = try await Outbox.open(store, limits: configuration.outbox, logger: logger)
        let publisher = OutboxPublisher(
            outbox: outbox, client: client, outputs: outputs, runsOn: store.taskExecutor, ticksItself: false,
            logger: logger)
        let processor = try await FixProcessor(
            configuration: configuration, store: store, outbox: outbox, outputs: outputs,
            places: places, logger: logger)
        // Restoring 100,000 conditions decodes them in parallel parts and leaves freed heap behind.
        HeapTrim.giveBackFreedMemory()
        let syncCheck = SyncCheckService(client: client, topics: topics, logger: logger)
        let manifestCheck = ManifestCheck(
            topics: topics, publisher: client, settle: .seconds(configuration.manifestSettleSeconds), logger: logger
        ) {
            [store] prefix in try? await store.digests(sourcePrefix: prefix)
        }
        let reporter = StateReporter(
            source: processor, publisher: client, topics: topics, configuration: configuration, outputs: outputs,
            logger: logger,
            brokerDescription: { [failover = !configuration.mqtt.failover.isEmpty] in
                failover ? "\(client.statusDescription) (\(client.brokerName))" : client.statusDescription
            },
            geofenceSync: { syncCheck.description }, geofenceSet: { manifestCheck.description })
        let conditions = OutboxConditionStore(store: store, outbox: outbox, outputs: outputs, places: places)
        let ownTracks = configuration.ownTracksIdentity
        // The inbox's events are read on the store's thread as they come: the round every second then asks
        // the kernel nothing.
        let inboxWatch = InboxWatch(inbox: configuration.storePaths.inbox)
        inboxWatch.attach(to: processor.storeExecutor)
        let applier = ChangeApplier(
            store: conditions, host: processor, publisher: client, topics: topics, logger: logger,
            ownTracks: ownTracks,
            stateRequest: { await reporter.publishDetail(monitor: $0) },
            conditionsChanged: {
                manifestCheck.geofencesChanged()
                await reporter.conditionsChanged()
            }, inboxWatch: inboxWatch)
        if let file = configuration.conditionsFile { try await applier.importLocalConditions(file) }
        let source: LocationFeed
        if let locations {
            source = .scripted(locations)
        } else if let replay {
            source = .replay(replay)
        } else {
            var gps = GPSSourceConfiguration(
                host: configuration.gpsd.host, port: configuration.gpsd.port,
                device: configuration.gpsd.device)
            gps.noDataTimeout = configuration.gpsd.noDataTimeout
            gps.epochQuietPeriod = configuration.gpsd.epochQuietPeriod
            gps.epochEarlyClose = configuration.gpsd.epochEarlyClose
            // After a crash, the timeline goes on from where the store left it (FixClock(resumingAfter:)).
            gps.assembly.timelineFloor = await processor.latestFixTime()
            // Read on the processor's thread: a report wakes that thread alone.
            source = .gpsd(GPSLocationSource(configuration: gps, logger: logger, readingOn: store.taskExecutor))
        }
        // Every input subscribed before the first fix: the client subscribes them at each connection, and
        // retained geofences arrive first.
        var inputs: [any Service] = []
        for input in InputRegistry.inputs(
            InputContext(
                topics: topics, ownTracks: ownTracks, transport: client, manifestCheck: manifestCheck, logger: logger))
        {
            var subscriptions: [MQTTSubscription] = []
            for filter in input.filters { subscriptions.append(try await client.subscribe(filter)) }
            inputs.append(InputService(input: input, subscriptions: subscriptions, applier: applier))
        }
        var announcementRequests: [(subscription: MQTTSubscription, payload: String)] = []
        for request in outputs.announcementRequests {
            announcementRequests.append((try await client.subscribe(request.topic), request.payload))
        }

        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: client), .init(service: publisher),
        ]
        if case .gpsd(let gps) = source { services.append(.init(service: gps)) }
        services += outputServices.map { .init(service: $0) }
        // The agent's own loops: each ends at the graceful shutdown, and the end of one (a replay that exits
        // at its end) stops the agent.
        var loops: [any Service] = [
            ReportingService(
                processor: processor, applier: applier, reporter: reporter,
                inbox: configuration.storePaths.inbox, publisher: publisher, inboxWatch: inboxWatch),
            ConnectionService(
                client: client, reporter: reporter, outputs: outputs, announcementRequests: announcementRequests,
                logger: logger),
            syncCheck,
        ]
        loops += inputs
        loops.append(
            FixService(
                processor: processor, reporter: reporter, outbox: outbox, source: source,
                exitAtReplayEnd: configuration.replay?.exitAtEnd ?? false))
        services += loops.map { .init(service: $0, successTerminationBehavior: .gracefullyShutdownGroup) }
        services.append(.init(service: SystemdNotifier(logger: logger)))
        // Ends once the restored indexes are refined; the agent goes on.
        services.append(
            .init(service: IndexRefinementService(processor: processor), successTerminationBehavior: .ignore))
        var groupConfiguration = ServiceGroupConfiguration(
            services: services, gracefulShutdownSignals: handlingSignals ? [.sigterm, .sigint] : [],
            logger: logger)
        // A stop must always finish (systemd and a reboot wait for it): what has not ended gracefully after
        // 3 s is cancelled, and every part ends promptly on cancellation (AgentStopTests). Should one ever
        // not, service-lifecycle ends the process 5 s later rather than hang; the outbox is intact either
        // way, it is a transaction log.
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(3)
        groupConfiguration.maximumCancellationDuration = .seconds(5)
        return AgentApplication(
            group: ServiceGroup(configuration: groupConfiguration), store: store, reporter: reporter,
            logger: logger)
    }

    /// The gazetteer, when places are on. Without it the agent still runs; its messages then say
    /// "place": null.
    static func places(_ configuration: AgentConfiguration, logger: Logger) async -> GazetteerPlaces? {
        guard configuration.places.enabled else { return nil }
        switch await GazetteerPlaces.load(path: configuration.places.gazetteer) {
        case .success(let loaded): return loaded
        case .failure(let error):
            logger.warning("places are off", metadata: ["reason": "\(error)"])
            return nil
        }
    }
}
