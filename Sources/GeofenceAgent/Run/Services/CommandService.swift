import AgentOutputs
import Logging
import Mosquitto
import ServiceLifecycle
import ThreadExecution

/// Operators' commands on `cmd`, and OwnTracks' on its own `cmd` topic when the vehicle speaks it.
final class CommandService: Service, Sendable {
    let commands: MQTTSubscription
    let ownTracksCommands: MQTTSubscription?
    let applier: ChangeApplier
    /// Subscribing again to these makes the broker send every retained geofence again (`resync`).
    let geofenceFilters: [String]
    let client: any AgentTransport
    let logger: Logger

    init(
        commands: MQTTSubscription, ownTracksCommands: MQTTSubscription?, applier: ChangeApplier,
        geofenceFilters: [String],
        client: any AgentTransport, logger: Logger
    ) {
        self.commands = commands
        self.ownTracksCommands = ownTracksCommands
        self.applier = applier
        self.geofenceFilters = geofenceFilters
        self.client = client
        self.logger = logger
    }

    func run() async {
        await runUntilGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask { for await m in self.commands { await self.command(m) } }
                if let ownTracks = self.ownTracksCommands {
                    group.addTask { for await m in ownTracks { await self.applier.ownTracksCommand(m) } }
                }
            }
        }
    }

    private func command(_ message: MQTTMessage) async {
        guard await !applier.command(message) else { return }
        // resync: the retained geofences reach the standing subscriptions, and the store keeps what is new
        // (versions order them).
        logger.info("resync: asking the broker for every retained geofence again")
        for filter in geofenceFilters {
            do { _ = try await client.subscribe(filter) } catch {
                logger.error("resync failed", metadata: ["filter": "\(filter)", "error": "\(error)"])
            }
        }
    }
}
