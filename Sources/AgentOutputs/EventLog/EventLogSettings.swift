import AgentFormats
import GeofenceCore

/// `eventLog` in config.json: every event also appended to a local file, for a technician on the vehicle.
public struct EventLogSettings: OutputSettings {
    public static let key = "eventLog"

    /// The file; nil (the default): no log.
    public var path: String?
    /// Above this size the file is moved to `PATH.1` (replacing the last one) and started again.
    public var maximumBytes = 1 << 20

    public init() {}

    public init(parsing o: inout ConfigObject) throws(ConfigError) {
        var s = Self()
        s.path = try o.string("path")
        if let path = s.path, path.isEmpty { throw ConfigError(path: o.key("path"), message: "must not be empty") }
        s.maximumBytes = try o.integer("maximumBytes", in: 4096...(1 << 30)) ?? s.maximumBytes
        try o.finish()
        self = s
    }

    public var json: JSONValue {
        var keys: [String: JSONValue] = ["maximumBytes": .number(Double(maximumBytes))]
        keys["path"] = path.map(JSONValue.string)
        return .object(keys)
    }

    public mutating func resolvePaths(_ resolve: (String) -> String) {
        path = path.map(resolve)
    }
}
