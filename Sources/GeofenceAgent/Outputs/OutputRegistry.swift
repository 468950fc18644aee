/// Every output the agent has, in the order their messages are sent. Adding an output is its folder,
/// one line here, and its page in docs/.
enum OutputRegistry {
    static let registered: [any AgentOutput.Type] = [
        FleetOutput.self,
        OwnTracksOutput.self,
        HomeAssistantOutput.self,
        MetricsOutput.self,
    ]

    /// The outputs this configuration turns on.
    static func outputs(_ context: OutputContext) -> MultiplexOutput {
        MultiplexOutput(registered.compactMap { $0.make(context) })
    }
}
