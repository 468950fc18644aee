import AgentFormats
import GeofenceCore

/// `homeAssistant` in config.json: the vehicle announces itself to Home Assistant (docs/integrations.md).
public struct HomeAssistantSettings: OutputSettings {
    public static let key = "homeAssistant"

    public var enabled = false
    /// Home Assistant's `discovery_prefix`.
    public var discoveryPrefix = "homeassistant"

    public init() {}

    public init(parsing o: inout ConfigObject) throws(ConfigError) {
        var s = Self()
        s.enabled = try o.bool("enabled") ?? s.enabled
        if let prefix = try o.string("discoveryPrefix") {
            for level in prefix.split(separator: "/", omittingEmptySubsequences: false) {
                if let problem = IdentifierRules.problem(with: String(level), what: "discoveryPrefix level") {
                    throw ConfigError(path: o.key("discoveryPrefix"), message: problem)
                }
            }
            s.discoveryPrefix = prefix
        }
        try o.finish()
        self = s
    }

    public var json: JSONValue { .object(["enabled": .bool(enabled), "discoveryPrefix": .string(discoveryPrefix)]) }
}
