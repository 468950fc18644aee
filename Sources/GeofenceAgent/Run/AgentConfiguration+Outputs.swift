import AgentOutputs
import Logging

extension AgentConfiguration {
    /// The vehicle's OwnTracks identity when it speaks OwnTracks: the runtime reads OwnTracks' `cmd` topic.
    package var ownTracksIdentity: OwnTracks.Identity? {
        let settings = outputs[OwnTracksSettings.self]
        return settings.enabled ? settings.identity(fleet: fleet, vehicle: vehicle) : nil
    }

    /// Where outputs are built from.
    package func outputContext(topics: Topics, logger: Logger) -> OutputContext {
        OutputContext(
            fleet: fleet, vehicle: vehicle, topics: topics, settings: outputs,
            mqtt: AgentRunner.mqttConfiguration(self, topics: topics), logger: logger)
    }
}
