import AgentFormats
import GeofenceCore

/// `homeAssistant` in config.json: the vehicle announces itself to Home Assistant (docs/integrations.md).
public struct HomeAssistantSettings: OutputSettings {
    public static let key = "homeAssistant"

    public var enabled = false
    /// Home Assistant's `discovery_prefix`.
    public var discoveryPrefix = "homeassistant"
    /// The tracker's attributes are replaced after a live update at most this often while moving (after a
    /// transition always); 0: after every live update.
    public var locationIntervalSeconds = 30.0
    /// ... and this often while parked.
    public var parkedIntervalSeconds = 900.0

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
        s.locationIntervalSeconds =
            try o.number("locationIntervalSeconds", in: 0...86_400) ?? s.locationIntervalSeconds
        s.parkedIntervalSeconds = try o.number("parkedIntervalSeconds", in: 0...86_400) ?? s.parkedIntervalSeconds
        try o.finish()
        self = s
    }

    public var json: JSONValue {
        .object([
            "enabled": .bool(enabled), "discoveryPrefix": .string(discoveryPrefix),
            "locationIntervalSeconds": .number(locationIntervalSeconds),
            "parkedIntervalSeconds": .number(parkedIntervalSeconds),
        ])
    }
}
