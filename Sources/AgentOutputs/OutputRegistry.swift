/// Every output the agent has, in the order their messages are sent. Adding an output is its folder,
/// one line here, and its page in docs/.
package enum OutputRegistry {
    package static let registered: [any AgentOutput.Type] = [
        FleetOutput.self,
        TripsOutput.self,
        OwnTracksOutput.self,
        HomeAssistantOutput.self,
        MetricsOutput.self,
        EventLogOutput.self,
    ]

    /// The settings types of the registered outputs: their objects in config.json.
    package static var settings: [any OutputSettings.Type] { registered.compactMap { $0.settingsType } }

    /// The outputs this configuration turns on.
    package static func outputs(_ context: OutputContext) -> MultiplexOutput {
        MultiplexOutput(registered.compactMap { $0.make(context) })
    }
}
