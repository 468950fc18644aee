import AgentOutputs
import Mosquitto

/// OwnTracks' commands on its own `cmd` topic (`OwnTracksCommand`), when the vehicle speaks OwnTracks:
/// `reportLocation`, and regions set, cleared and listed.
struct OwnTracksCommandInput: AgentInput {
    let filters: [String]

    static func make(_ context: InputContext) -> OwnTracksCommandInput? {
        context.ownTracks.map { OwnTracksCommandInput(filters: [$0.command]) }
    }

    func run(_ subscriptions: [MQTTSubscription], into applier: ChangeApplier) async {
        for subscription in subscriptions {
            for await message in subscription { await applier.ownTracksCommand(message) }
        }
    }
}
