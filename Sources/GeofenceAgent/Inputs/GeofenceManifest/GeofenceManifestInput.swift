import Mosquitto

/// The manifests of the fleet's and the vehicle's geofence sets (docs/topics.md, "manifests"), handed to
/// the `ManifestCheck`, which confirms what the vehicle holds against them.
struct GeofenceManifestInput: AgentInput {
    let check: ManifestCheck

    static func make(_ context: InputContext) -> GeofenceManifestInput? {
        context.manifestCheck.map(GeofenceManifestInput.init(check:))
    }

    var filters: [String] { check.sets.map(\.manifestTopic) }

    func run(_ subscriptions: [MQTTSubscription], into applier: ChangeApplier) async {
        await withDiscardingTaskGroup { group in
            for subscription in subscriptions {
                group.addTask {
                    for await message in subscription {
                        await check.received(topic: message.topic, payload: message.payload)
                    }
                }
            }
            group.addTask { await check.run() }
        }
    }
}
