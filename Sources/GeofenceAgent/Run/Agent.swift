import Foundation
import GeofenceCore
import GeofenceStore
import GPSD
import Logging
import Mosquitto
import ServiceLifecycle

/// `geofence-agent run`: gpsd (or a replayed drive) → filters → monitors → store → outbox → MQTT, with
/// geofences synced from MQTT and a status for operators. Every long-running part is a `Service`;
/// SIGTERM or SIGINT stops them in order and publishes the offline status.
public enum AgentRunner {
    public static func run(configurationPath: String, logger: Logger) async throws(AgentError) {
        let configuration = try AgentConfiguration.load(configurationPath)
        try await run(configuration, logger: logger)
    }

    public static func run(_ configuration: AgentConfiguration, logger: Logger) async throws(AgentError) {
        let store: AgentStore
        do {
            store = try await AgentStore.open(path: configuration.storePath, limits: configuration.outbox, logger: logger)
        } catch {
            throw AgentError("cannot start: \(error)")
        }
        let topics = Topics(prefix: configuration.mqtt.topicPrefix, fleet: configuration.fleet, vehicle: configuration.vehicle)
        let client: MQTTClient
        do {
            client = try MQTTClient(configuration: mqttConfiguration(configuration, topics: topics), logger: logger)
        } catch {
            await store.close()
            throw AgentError("cannot start the MQTT client: \(error)")
        }
        let outbox = Outbox(store: store)
        let metrics = configuration.metrics.enabled || configuration.metrics.textfile != nil ? AgentMetrics() : nil
        let publisher = OutboxPublisher(outbox: outbox, client: client, metrics: metrics, logger: logger)
        var places: GazetteerPlaces?
        if configuration.places.enabled {
            // Without the gazetteer the agent still runs; its messages then say "place": null.
            switch await GazetteerPlaces.load(path: configuration.places.gazetteer) {
            case .success(let loaded): places = loaded
            case .failure(let error): logger.warning("places are off", metadata: ["reason": "\(error)"])
            }
        }
        let processor: FixProcessor
        do {
            processor = try await FixProcessor(configuration: configuration, store: store, outbox: outbox, places: places, metrics: metrics, logger: logger)
        } catch {
            await store.close()
            throw AgentError("cannot start: \(error)")
        }
        // Restoring 100,000 conditions decodes them in parallel parts and leaves freed heap behind.
        HeapTrim.giveBackFreedMemory()
        let reporter = StateReporter(source: processor, publisher: client, topics: topics, configuration: configuration, logger: logger,
                                     brokerDescription: { configuration.mqtt.failover.isEmpty ? "\(client.status)" : "\(client.status) (\(client.broker))" })
        let conditions = ConditionStoreWithExits(store: store, outbox: outbox, topics: topics, fleet: configuration.fleet,
                                                 vehicle: configuration.vehicle, places: places)
        let ownTracks = configuration.owntracks.enabled ? configuration.owntracks.identity(fleet: configuration.fleet, vehicle: configuration.vehicle) : nil
        let applier = ChangeApplier(store: conditions, host: processor, publisher: client, topics: topics, logger: logger, ownTracks: ownTracks,
                                    stateRequest: { await reporter.publishDetail(monitor: $0) },
                                    conditionsChanged: { await reporter.conditionsChanged() })
        if let file = configuration.conditionsFile {
            do { try await applier.importLocalConditions(file) } catch {
                await store.close()
                throw AgentError("cannot start: \(error)")
            }
        }
        let source: LocationFeed
        if let replay = configuration.replay {
            do {
                source = .replay(try GPXReplay(path: replay.gpx, speedFactor: replay.speedFactor, horizontalAccuracy: replay.horizontalAccuracy))
            } catch {
                await store.close()
                throw AgentError("replay: \(error.message)")
            }
        } else {
            var gps = GPSSourceConfiguration(host: configuration.gpsd.host, port: configuration.gpsd.port, device: configuration.gpsd.device)
            gps.noDataTimeout = configuration.gpsd.noDataTimeout
            gps.epochQuietPeriod = configuration.gpsd.epochQuietPeriod
            gps.epochEarlyClose = configuration.gpsd.epochEarlyClose
            // After a crash, the timeline goes on from where the store left it (FixClock(resumingAfter:)).
            gps.assembly.timelineFloor = await processor.latestFixTime()
            source = .gpsd(GPSLocationSource(configuration: gps, logger: logger))
        }
        let agentService = AgentService(processor: processor, applier: applier, reporter: reporter, client: client, outbox: outbox,
                                        source: source, topics: topics, ownTracks: ownTracks,
                                        homeAssistant: configuration.homeAssistant.enabled
                                            ? HomeAssistant.Identity(discoveryPrefix: configuration.homeAssistant.discoveryPrefix, topics: topics) : nil,
                                        metrics: metrics, textfile: configuration.metrics.textfile.map(MetricsTextfile.init(path:)),
                                        paths: StorePaths(configuration.storePath),
                                        exitAtReplayEnd: configuration.replay?.exitAtEnd ?? false, logger: logger)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: client),
            .init(service: publisher),
        ]
        if case .gpsd(let gps) = source { services.append(.init(service: gps)) }
        if let metrics, configuration.metrics.enabled {
            // A taken port costs the endpoint, not the vehicle's geofencing: said loudly, and the agent runs on.
            do {
                services.append(.init(service: try MetricsServer(host: configuration.metrics.host, port: configuration.metrics.port, logger: logger) {
                    metrics.text()
                }))
            } catch {
                logger.error("metrics are not served", metadata: ["reason": "\(error)"])
            }
        }
        if let ownTracks {
            // OwnTracks' will (`_type: lwt`) needs a connection of its own: MQTT gives one will per connection,
            // and ours is the offline status. It publishes nothing else, and its will explicitly on a clean stop.
            var m = mqttConfiguration(configuration, topics: topics)
            m.clientID += "-owntracks"
            m.will = MQTTWill(topic: ownTracks.base, payload: OwnTracks.lastWill(connectedAt: Date()), qos: .atLeastOnce, retain: false)
            do {
                services.append(.init(service: try MQTTClient(configuration: m, logger: logger)))
            } catch {
                await store.close()
                throw AgentError("cannot start OwnTracks' MQTT client: \(error)")
            }
        }
        services.append(.init(service: agentService, successTerminationBehavior: .gracefullyShutdownGroup))
        services.append(.init(service: SystemdNotifier(logger: logger)))
        var groupConfiguration = ServiceGroupConfiguration(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        // A stop must always finish (systemd and a reboot wait for it): what has not ended gracefully after
        // 3 s is cancelled, and every part ends promptly on cancellation (AgentStopTests). Should one ever
        // not, service-lifecycle ends the process 5 s later rather than hang; the outbox is intact either
        // way, it is a transaction log.
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(3)
        groupConfiguration.maximumCancellationDuration = .seconds(5)
        let group = ServiceGroup(configuration: groupConfiguration)
        do {
            try await group.run()
        } catch {
            logger.error("agent stopped with an error", metadata: ["error": "\(error)"])
        }
        await reporter.writeStatusFile(online: false)
        await store.close()
    }

    static func mqttConfiguration(_ c: AgentConfiguration, topics: Topics) -> MQTTConfiguration {
        var m = MQTTConfiguration(host: c.mqtt.host, port: c.mqtt.port, clientID: c.mqtt.clientID ?? "geofence-agent-\(c.fleet)-\(c.vehicle)")
        m.protocolVersion = c.mqtt.protocolVersion == "mqttv311" ? .v311 : .v5
        m.keepAlive = c.mqtt.keepAlive
        m.failover = c.mqtt.failover
        m.connectTimeout = c.mqtt.failoverAfter
        m.username = c.mqtt.username
        m.password = c.mqtt.passwordFile.map(MQTTPasswordSource.file) ?? .none
        m.tls = c.mqtt.tls.map { MQTTTLS(caFile: $0.caFile, certificateFile: $0.certificateFile, keyFile: $0.keyFile) }
        var offline = JSONLine()
        offline.add("status", "offline")
        offline.add("fleet", c.fleet)
        offline.add("vehicle", c.vehicle)
        m.will = MQTTWill(topic: topics.status, payload: Array(offline.text.utf8), qos: .atLeastOnce, retain: true)
        return m
    }
}

/// Where locations come from.
enum LocationFeed: Sendable {
    case gpsd(GPSLocationSource)
    case replay(GPXReplay)
}

