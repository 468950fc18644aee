import AgentFormats
import GeofenceCore

/// `owntracks` in config.json: the vehicle also speaks OwnTracks (docs/integrations.md).
public struct OwnTracksSettings: OutputSettings {
    public static let key = "owntracks"

    public var enabled = false
    /// The first topic level, `owntracks` as the apps use.
    public var topicPrefix = "owntracks"
    /// OwnTracks' user; nil: the fleet.
    public var user: String?
    /// OwnTracks' device; nil: the vehicle.
    public var device: String?
    /// The tracker id a map shows (one or two characters); nil: the device's last two letters or digits.
    public var tid: String?
    /// A ping (a live update's location) is sent at most this often while moving; 0: every live update.
    public var locationIntervalSeconds = 30.0
    /// ... and this often while parked.
    public var parkedIntervalSeconds = 900.0

    public init() {}

    /// The vehicle's OwnTracks identity.
    package func identity(fleet: String, vehicle: String) -> OwnTracks.Identity {
        OwnTracks.Identity(prefix: topicPrefix, user: user ?? fleet, device: device ?? vehicle, tid: tid)
    }

    public init(parsing o: inout ConfigObject) throws(ConfigError) {
        var s = Self()
        s.enabled = try o.bool("enabled") ?? s.enabled
        func level(_ key: String) throws(ConfigError) -> String? {
            guard let v = try o.string(key) else { return nil }
            if let problem = IdentifierRules.problem(with: v, what: key) {
                throw ConfigError(path: o.key(key), message: problem)
            }
            return v
        }
        s.topicPrefix = try level("topicPrefix") ?? s.topicPrefix
        s.user = try level("user")
        s.device = try level("device")
        if let tid = try level("tid") {
            guard (1...2).contains(tid.count) else {
                throw ConfigError(
                    path: o.key("tid"), message: "a tracker id is one or two characters, found \(tid.count)")
            }
            s.tid = tid
        }
        s.locationIntervalSeconds =
            try o.number("locationIntervalSeconds", in: 0...86_400) ?? s.locationIntervalSeconds
        s.parkedIntervalSeconds = try o.number("parkedIntervalSeconds", in: 0...86_400) ?? s.parkedIntervalSeconds
        try o.finish()
        self = s
    }

    public var json: JSONValue {
        var keys: [String: JSONValue] = [
            "enabled": .bool(enabled), "topicPrefix": .string(topicPrefix),
            "locationIntervalSeconds": .number(locationIntervalSeconds),
            "parkedIntervalSeconds": .number(parkedIntervalSeconds),
        ]
        keys["user"] = user.map(JSONValue.string)
        keys["device"] = device.map(JSONValue.string)
        keys["tid"] = tid.map(JSONValue.string)
        return .object(keys)
    }
}
