import AgentOutputs
import Logging
import Mosquitto

/// Operators' commands on the vehicle's `cmd` topic (`AgentCommand`, docs/topics.md). `resync` subscribes
/// to the geofence filters again, so that the broker sends every retained geofence again and the store
/// keeps what is new (versions order them).
struct OperatorCommandInput: AgentInput {
    let filters: [String]
    let geofenceFilters: [String]
    let transport: any AgentTransport
    let logger: Logger

    static func make(_ context: InputContext) -> OperatorCommandInput? {
        OperatorCommandInput(
            filters: [context.topics.command], geofenceFilters: GeofenceSyncInput.filters(context.topics),
            transport: context.transport, logger: context.logger)
    }

    func run(_ subscriptions: [MQTTSubscription], into applier: ChangeApplier) async {
        for subscription in subscriptions {
            for await message in subscription {
                // The applier does every command but `resync`, which needs the broker.
                if await !applier.command(message) { await resync() }
            }
        }
    }

    private func resync() async {
        logger.info("resync: asking the broker for every retained geofence again")
        for filter in geofenceFilters {
            do { _ = try await transport.subscribe(filter) } catch {
                logger.error("resync failed", metadata: ["filter": "\(filter)", "error": "\(error)"])
            }
        }
    }
}
