import AgentFormats
import GeofenceCore

/// `metrics` in config.json: Prometheus' `/metrics` endpoint and node_exporter's textfile.
public struct MetricsSettings: OutputSettings {
    public static let key = "metrics"

    /// Serve `/metrics`.
    public var enabled = false
    /// Where: an IPv4 address and port, loopback by default.
    public var host = "127.0.0.1"
    public var port = 9465
    /// Also write the metrics to this `.prom` file every 15 s, for node_exporter's textfile collector.
    public var textfile: String?

    public init() {}

    var listen: String { "\(host):\(port)" }

    public init(parsing o: inout ConfigObject) throws(ConfigError) {
        var s = Self()
        s.enabled = try o.bool("enabled") ?? s.enabled
        if let listen = try o.string("listen") {
            let parts = listen.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, let port = Int(parts[1]), (0...65535).contains(port),
                parts[0].split(separator: ".").count == 4,
                parts[0].split(separator: ".").allSatisfy({ UInt8($0) != nil })
            else {
                throw ConfigError(
                    path: o.key("listen"),
                    message: "expected IPV4ADDRESS:PORT such as \"127.0.0.1:9465\", found \"\(listen.clipped)\"")
            }
            s.host = String(parts[0])
            s.port = port
        }
        s.textfile = try o.string("textfile")
        if let textfile = s.textfile, !textfile.hasSuffix(".prom") {
            throw ConfigError(
                path: o.key("textfile"), message: "node_exporter reads only *.prom files, found \"\(textfile.clipped)\""
            )
        }
        try o.finish()
        self = s
    }

    public var json: JSONValue {
        var keys: [String: JSONValue] = ["enabled": .bool(enabled), "listen": .string(listen)]
        keys["textfile"] = textfile.map(JSONValue.string)
        return .object(keys)
    }
}

extension MetricsSettings {
    public mutating func resolvePaths(_ resolve: (String) -> String) {
        textfile = textfile.map(resolve)
    }
}
