import GeofenceCore

/// `homeAssistant` in config.json: the vehicle announces itself to Home Assistant (docs/integrations.md).
public struct HomeAssistantSettings: Sendable, Equatable {
    public var enabled = false
    /// Home Assistant's `discovery_prefix`.
    public var discoveryPrefix = "homeassistant"

    public init() {}

    static func parse(_ o: inout AgentConfiguration.Object) throws -> HomeAssistantSettings {
        var s = HomeAssistantSettings()
        s.enabled = try o.bool("enabled") ?? s.enabled
        if let prefix = try o.string("discoveryPrefix") {
            for level in prefix.split(separator: "/", omittingEmptySubsequences: false) {
                if let problem = IdentifierRules.problem(with: String(level), what: "discoveryPrefix level") {
                    throw AgentConfiguration.ConfigError(path: o.key("discoveryPrefix"), message: problem)
                }
            }
            s.discoveryPrefix = prefix
        }
        try o.finish()
        return s
    }

    var json: JSONValue { .object(["enabled": .bool(enabled), "discoveryPrefix": .string(discoveryPrefix)]) }
}
