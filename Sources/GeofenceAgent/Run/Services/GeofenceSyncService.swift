import AgentFormats
import Mosquitto
import ServiceLifecycle
import SystemMemory
import ThreadExecution

/// Geofences from the broker into the store and the monitors, in batches, in two stages: the next batch
/// is validated (on every core) while the last one is stored. Stopping ends the sync at once; the
/// broker sends the rest again at the next connection.
final class GeofenceSyncService: Service, Sendable {
    let subscriptions: [MQTTSubscription]
    let applier: ChangeApplier

    init(subscriptions: [MQTTSubscription], applier: ChangeApplier) {
        self.subscriptions = subscriptions
        self.applier = applier
    }

    func run() async {
        let batcher = MessageBatcher()
        await runUntilGracefulShutdown {
            await withDiscardingTaskGroup { group in
                for subscription in self.subscriptions {
                    group.addTask { for await m in subscription { batcher.add(m) } }
                }
                group.addTask { await self.sync(batcher) }
            }
        }
    }

    private func sync(_ batcher: MessageBatcher) async {
        var storing: Task<Void, Never>?
        await batcher.run(
            { messages in
                let batch = await ChangeApplier.validate(messages)
                await storing?.value
                guard !Task.isCancelled else { return }
                storing = Task(executorPreference: PoolExecutor.preferred) { await self.applier.apply(batch) }
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
