import AgentOutputs
import Mosquitto
import SystemMemory
import ThreadExecution

/// Geofences from the broker into the store and the monitors (docs/topics.md, "geofences"): the fleet's
/// and the vehicle's retained Features, in batches, in two stages: the next batch is validated (on every
/// core) while the last one is stored. Stopping ends the sync at once; the broker sends the rest again at
/// the next connection.
struct GeofenceSyncInput: AgentInput {
    let filters: [String]

    static func make(_ context: InputContext) -> GeofenceSyncInput? {
        GeofenceSyncInput(filters: filters(context.topics))
    }

    /// The geofence filters: subscribing to them again makes the broker send every retained geofence again.
    static func filters(_ topics: Topics) -> [String] { [topics.fleetGeofences, topics.vehicleGeofences] }

    func run(_ subscriptions: [MQTTSubscription], into applier: ChangeApplier) async {
        let batcher = MessageBatcher()
        await withDiscardingTaskGroup { group in
            for subscription in subscriptions {
                group.addTask { for await m in subscription { batcher.add(m) } }
            }
            group.addTask { await Self.sync(batcher, into: applier) }
        }
    }

    private static func sync(_ batcher: MessageBatcher, into applier: ChangeApplier) async {
        var storing: Task<Void, Never>?
        await batcher.run(
            { messages in
                let batch = await ChangeApplier.validate(messages)
                await storing?.value
                guard !Task.isCancelled else { return }
                storing = Task(executorPreference: PoolExecutor.preferred) { await applier.apply(batch) }
            },
            drained: { count in
                await storing?.value
                // A burst of thousands of messages leaves freed heap behind that malloc keeps; give it back, so
                // that the agent's resident size after a sync is what it holds.
                if count >= 1_000 { HeapTrim.giveBackFreedMemory() }
            })
        // Stopping: the batch being stored finishes before the store closes.
        await storing?.value
    }
}
