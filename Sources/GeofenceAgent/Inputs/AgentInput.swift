import AgentOutputs
import Logging
import Mosquitto
import ServiceLifecycle
import ThreadExecution

/// One kind of message the agent takes in, after `AgentOutput`: it names the filters it subscribes to, and
/// makes what arrives on them into changes and commands through the `ChangeApplier`, which validates, stores
/// and refuses as it does for every source. The runtime knows no input by name: `InputRegistry` lists them,
/// and each runs as a service of its own until the graceful shutdown.
///
/// Adding one: a folder under `Inputs/`, a line in `InputRegistry.registered`, and docs/topics.md.
protocol AgentInput: Sendable {
    /// The input for this configuration, or nil when it is off.
    static func make(_ context: InputContext) -> Self?
    /// The filters it subscribes to, before the first fix (retained messages arrive first).
    var filters: [String] { get }
    /// Takes what arrives on its subscriptions (one per filter, in `filters`' order) until they end or the
    /// task is cancelled.
    func run(_ subscriptions: [MQTTSubscription], into applier: ChangeApplier) async
}

/// What inputs are built from.
struct InputContext: Sendable {
    var topics: Topics
    /// The vehicle's OwnTracks identity, when it speaks OwnTracks.
    var ownTracks: OwnTracks.Identity?
    /// The agent's broker (an input may subscribe again: `resync`).
    var transport: any AgentTransport
    /// Where the manifests of the geofence sets go (nil: no manifest input).
    var manifestCheck: ManifestCheck?
    var logger: Logger
}

/// Every input the agent has, in the order they are subscribed.
enum InputRegistry {
    static let registered: [any AgentInput.Type] = [
        GeofenceSyncInput.self, GeofenceManifestInput.self, OperatorCommandInput.self, OwnTracksCommandInput.self,
    ]

    /// The inputs this configuration turns on.
    static func inputs(_ context: InputContext) -> [any AgentInput] {
        registered.compactMap { $0.make(context) }
    }
}

/// Runs one input over the subscriptions made for it at build time, until the graceful shutdown.
final class InputService: Service, Sendable {
    let input: any AgentInput
    let subscriptions: [MQTTSubscription]
    let applier: ChangeApplier

    init(input: any AgentInput, subscriptions: [MQTTSubscription], applier: ChangeApplier) {
        self.input = input
        self.subscriptions = subscriptions
        self.applier = applier
    }

    func run() async {
        await runUntilGracefulShutdown { await self.input.run(self.subscriptions, into: self.applier) }
    }
}
