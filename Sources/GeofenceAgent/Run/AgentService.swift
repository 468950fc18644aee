import Foundation
import GeofenceCore
import GeofenceStore
import GPSD
import Logging
import Mosquitto
import ServiceLifecycle
#if canImport(Glibc)
import Glibc
#endif

/// Runs the agent's parts together: locations from gpsd or a replay into the fix processor; geofences,
/// commands and the CLI's inbox into the change applier; the reporter's status file every second and its
/// broker messages when connected. Local work never waits for the broker.
final class AgentService: Service, Sendable {
    let processor: FixProcessor
    let applier: ChangeApplier
    let reporter: StateReporter
    let client: MQTTClient
    let outbox: Outbox
    let source: LocationFeed
    let topics: Topics
    /// OwnTracks' identity when the vehicle speaks OwnTracks: its `cmd` topic is read too.
    let ownTracks: OwnTracks.Identity?
    /// The outputs' announcements (Home Assistant's discovery) go at each connection and when an output's
    /// request topic asks for them again.
    let outputs: MultiplexOutput
    /// Prometheus' metrics, when on: the broker's connections are counted here, and the textfile written.
    let metrics: AgentMetrics?
    let textfile: MetricsTextfile?
    let paths: StorePaths
    let exitAtReplayEnd: Bool
    let logger: Logger

    init(processor: FixProcessor, applier: ChangeApplier, reporter: StateReporter, client: MQTTClient, outbox: Outbox, source: LocationFeed,
         topics: Topics, ownTracks: OwnTracks.Identity? = nil, outputs: MultiplexOutput,
         metrics: AgentMetrics? = nil, textfile: MetricsTextfile? = nil, paths: StorePaths, exitAtReplayEnd: Bool, logger: Logger) {
        self.processor = processor
        self.applier = applier
        self.reporter = reporter
        self.client = client
        self.outbox = outbox
        self.source = source
        self.topics = topics
        self.ownTracks = ownTracks
        self.outputs = outputs
        self.metrics = metrics
        self.textfile = textfile
        self.paths = paths
        self.exitAtReplayEnd = exitAtReplayEnd
        self.logger = logger
    }

    func run() async throws {
        // Subscribe before the first fix: retained geofences arrive first.
        let fleetGeofences = try await client.subscribe(topics.fleetGeofences)
        let vehicleGeofences = try await client.subscribe(topics.vehicleGeofences)
        let commands = try await client.subscribe(topics.command)
        var ownTracksCommands: MQTTSubscription?
        if let ownTracks { ownTracksCommands = try await client.subscribe(ownTracks.command) }
        var announcementRequests: [(MQTTSubscription, String)] = []
        for request in outputs.announcementRequests {
            announcementRequests.append((try await client.subscribe(request.topic), request.payload))
        }
        let brokerStates = client.statusUpdates
        // Connected already (the subscriptions waited for it): the stream only tells of later changes.
        if client.status.isConnected {
            metrics?.brokerConnection(true)
            await announce()
        }
        outbox.wake()
        await reporter.start(metrics: metrics)
        let batcher = MessageBatcher()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { for await m in fleetGeofences { batcher.add(m) } }
            group.addTask { for await m in vehicleGeofences { batcher.add(m) } }
            group.addTask {
                // Stopping ends the sync at once, whatever else still runs: the broker resends the rest.
                await cancelWhenGracefulShutdown { await self.sync(batcher) }
            }
            group.addTask { for await m in commands { await self.command(m) } }
            if let ownTracksCommands {
                group.addTask { for await m in ownTracksCommands { await self.applier.ownTracksCommand(m) } }
            }
            for (requests, payload) in announcementRequests {
                group.addTask {
                    for await m in requests where String(decoding: m.payload, as: UTF8.self) == payload { await self.announce() }
                }
            }
            group.addTask { await self.localLoop() }
            group.addTask { await self.brokerLoop() }
            group.addTask {
                var connected = self.client.status.isConnected
                for await state in brokerStates {
                    if state.isConnected != connected {
                        connected = state.isConnected
                        self.metrics?.brokerConnection(connected)
                    }
                    guard state.isConnected else { continue }
                    await self.reporter.publishStatus()
                    await self.reporter.publishStateIfChanged(force: true)
                    await self.announce()
                }
            }
            switch source {
            case .gpsd(let gps):
                let locations = gps.locations(), statuses = gps.statusUpdates()
                group.addTask {
                    for await s in statuses {
                        await self.processor.gps(s)
                        await self.reporter.publishStatus()
                    }
                }
                group.addTask { await self.processor.follow(locations) }
                try? await gracefulShutdown()
            case .replay(let replay):
                await processor.gps(GPSStatus(state: .fix, detail: "replaying \(replay.points.count) points at \(replay.speedFactor)x", device: "gpx"))
                let resumeAfter = await processor.lastAcceptedFixTime
                await cancelWhenGracefulShutdown {
                    for await l in replay.stream(after: resumeAfter) { await self.processor.handle(l) }
                }
                await processor.gps(GPSStatus(state: .noData, detail: "the replay ended", device: "gpx"))
                if !exitAtReplayEnd { try? await gracefulShutdown() } else {
                    // Let the publisher deliver what the drive produced before stopping (what is left stays
                    // in the store for the next start).
                    await cancelWhenGracefulShutdown { await self.drainOutbox(timeout: .seconds(60)) }
                }
            }
            batcher.finish()
            group.cancelAll()
        }
    }

    /// Geofence messages in batches, in two stages: the next batch is validated (on every core) while
    /// the last one is stored.
    private func sync(_ batcher: MessageBatcher) async {
        var storing: Task<Void, Never>?
        await batcher.run({ messages in
            let batch = await ChangeApplier.validate(messages)
            await storing?.value
            guard !Task.isCancelled else { return }
            storing = Task { await self.applier.apply(batch) }
        }, drained: { count in
            await storing?.value
            // A burst of thousands of messages leaves freed heap behind that malloc keeps; give it back, so
            // that the agent's resident size after a sync is what it holds.
            if count >= 1_000 { HeapTrim.giveBackFreedMemory() }
        })
        // Stopping: the batch being stored finishes before the store closes.
        await storing?.value
    }

    private func command(_ message: MQTTMessage) async {
        guard await !applier.command(message) else { return }
        // resync: subscribing again makes the broker send every retained geofence again; they reach the
        // standing subscriptions, and the store keeps what is new (versions order them).
        logger.info("resync: asking the broker for every retained geofence again")
        for filter in [topics.fleetGeofences, topics.vehicleGeofences] {
            do { _ = try await client.subscribe(filter) } catch {
                logger.error("resync failed", metadata: ["filter": "\(filter)", "error": "\(error)"])
            }
        }
    }

    /// The outputs' announcements (Home Assistant's discovery), sent now and never queued.
    private func announce() async {
        for message in outputs.announcements() {
            do { try await client.publish(message.topic, payload: message.unstampedBytes, retain: message.retain) } catch {
                logger.warning("could not publish an announcement", metadata: ["topic": "\(message.topic)", "error": "\(error)"])
                return
            }
        }
    }

    private func drainOutbox(timeout: Duration) async {
        let end = ContinuousClock.now + timeout
        while ContinuousClock.now < end, await outbox.stats.rows > 0 {
            do { try await Task.sleep(for: .milliseconds(50)) } catch { return }
        }
    }

    /// Every second, broker or not: retry waiting commits, apply the CLI's inbox, write the status file;
    /// every 15 s node_exporter's textfile, when configured.
    private func localLoop() async {
        var tick = 0
        while !Task.isCancelled {
            await processor.flushPending()
            await applier.processInbox(paths.inbox)
            await reporter.writeStatusFile(online: true)
            if let textfile, let metrics, tick % 15 == 0 {
                do { try textfile.write(metrics.text()) } catch {
                    logger.warning("metrics textfile not written", metadata: ["path": "\(textfile.path)", "error": "\(error)"])
                }
            }
            tick += 1
            do { try await Task.sleep(for: .seconds(1)) } catch { return }
        }
    }

    /// While connected: the state when it changed (at most 4 times a second), the status every 10 s.
    private func brokerLoop() async {
        var tick = 0
        while !Task.isCancelled {
            await reporter.publishStateIfChanged()
            if tick % 40 == 0 { await reporter.publishStatus() }
            tick += 1
            do { try await Task.sleep(for: .milliseconds(250)) } catch { return }
        }
    }
}
