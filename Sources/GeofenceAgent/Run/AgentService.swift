import Foundation
import GeofenceCore
import GPSD
import Logging
import Mosquitto
import ServiceLifecycle

/// Feeds the core: locations from gpsd or a replay, gps status, geofences and commands from MQTT; writes
/// the status file that `geofence-agent status` reads and publishes the retained status.
final class AgentService: Service, Sendable {
    let core: AgentCore
    let client: MQTTClient
    let publisher: OutboxPublisher
    let source: LocationFeed
    let topics: Topics
    let statusPath: String
    let exitAtReplayEnd: Bool
    let logger: Logger

    init(core: AgentCore, client: MQTTClient, publisher: OutboxPublisher, source: LocationFeed, topics: Topics,
         statusPath: String, exitAtReplayEnd: Bool, logger: Logger) {
        self.core = core
        self.client = client
        self.publisher = publisher
        self.source = source
        self.topics = topics
        self.statusPath = statusPath
        self.exitAtReplayEnd = exitAtReplayEnd
        self.logger = logger
    }

    func run() async throws {
        // Subscribe before the first fix: retained geofences arrive first.
        let fleetGeofences = try await client.subscribe(topics.fleetGeofences)
        let vehicleGeofences = try await client.subscribe(topics.vehicleGeofences)
        let commands = try await client.subscribe(topics.command)
        publisher.wake()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { for await m in fleetGeofences { await self.core.geofenceMessage(m) } }
            group.addTask { for await m in vehicleGeofences { await self.core.geofenceMessage(m) } }
            group.addTask { for await m in commands { await self.core.command(m) } }
            group.addTask { await self.statusLoop() }
            switch source {
            case .gpsd(let gps):
                let locations = gps.locations(), statuses = gps.statusUpdates()
                group.addTask { for await s in statuses { await self.core.gps(s); await self.publishStatus() } }
                group.addTask { await self.core.follow(locations) }
                try? await gracefulShutdown()
            case .replay(let replay):
                await core.gps(GPSStatus(state: .fix, detail: "replaying \(replay.points.count) points at \(replay.speedFactor)x", device: "gpx"))
                let resumeAfter = await core.lastAcceptedFixTime
                await cancelWhenGracefulShutdown {
                    for await l in replay.stream(after: resumeAfter) { await self.core.handle(l) }
                }
                await core.gps(GPSStatus(state: .noData, detail: "the replay ended", device: "gpx"))
                await publishStatus()
                if !exitAtReplayEnd { try? await gracefulShutdown() } else {
                    // Let the publisher deliver what the drive produced before stopping (what is left stays
                    // in the store for the next start).
                    await drainOutbox(timeout: .seconds(60))
                }
            }
            group.cancelAll()
        }
    }

    private func drainOutbox(timeout: Duration) async {
        let end = ContinuousClock.now + timeout
        while ContinuousClock.now < end, await core.status(online: true).outbox.rows > 0 {
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    private func statusLoop() async {
        var tick = 0
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            await core.flushPending()
            await core.processInbox(statusPath.replacingOccurrences(of: ".status.json", with: ".inbox"))
            await writeStatus(online: true)
            if tick % 10 == 0 { await publishStatus() }
            tick += 1
            try? await Task.sleep(for: .seconds(1))
        }
    }

    func publishStatus() async {
        let status = await core.status(online: true)
        guard let data = try? JSONEncoder().encode(status) else { return }
        do {
            try await client.publish(topics.status, payload: Array(data), retain: true)
        } catch {
            logger.debug("status not published", metadata: ["error": "\(error)"])
        }
    }

    /// The status file beside the store, replaced atomically, for `geofence-agent status`.
    func writeStatus(online: Bool) async {
        let status = await core.status(online: online)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        guard let data = try? encoder.encode(status) else { return }
        do {
            try data.write(to: URL(fileURLWithPath: statusPath), options: .atomic)
        } catch {
            logger.debug("status file not written", metadata: ["error": "\(error)"])
        }
    }
}
