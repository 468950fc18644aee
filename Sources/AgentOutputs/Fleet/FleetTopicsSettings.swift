import AgentFormats
import GeofenceCore

/// `fleetTopics` in config.json: how often our own topics carry what a vehicle does between transitions
/// (docs/topics.md). Chosen for their bytes on a paid cellular link (docs/benchmarks.md#budget-what-a-fix-costs-a-vehicle).
public struct FleetTopicsSettings: OutputSettings {
    public static let key = "fleetTopics"

    /// Live updates are sent as batches on `track`, one when this many seconds of fixes are gathered;
    /// 0: no track.
    public var trackBatchSeconds = 20.0
    /// At most this many fixes in one batch.
    public var trackMaximumPoints = 120
    /// The retained `location` is replaced at most this often while moving (a request is always answered).
    public var locationIntervalSeconds = 120.0
    /// ... and this often while parked: with the status heartbeat, all a parked vehicle sends.
    public var parkedIntervalSeconds = 900.0
    /// The retained `status` is sent when it changes, and at least this often.
    public var statusHeartbeatSeconds = 900.0

    public init() {}

    public init(parsing o: inout ConfigObject) throws(ConfigError) {
        var s = Self()
        s.trackBatchSeconds = try o.number("trackBatchSeconds", in: 0...3600) ?? s.trackBatchSeconds
        s.trackMaximumPoints = try o.integer("trackMaximumPoints", in: 1...10_000) ?? s.trackMaximumPoints
        s.locationIntervalSeconds =
            try o.number("locationIntervalSeconds", in: 0...86_400) ?? s.locationIntervalSeconds
        s.parkedIntervalSeconds = try o.number("parkedIntervalSeconds", in: 0...86_400) ?? s.parkedIntervalSeconds
        s.statusHeartbeatSeconds =
            try o.number("statusHeartbeatSeconds", in: 10...86_400) ?? s.statusHeartbeatSeconds
        try o.finish()
        self = s
    }

    public var json: JSONValue {
        .object([
            "trackBatchSeconds": .number(trackBatchSeconds),
            "trackMaximumPoints": .number(Double(trackMaximumPoints)),
            "locationIntervalSeconds": .number(locationIntervalSeconds),
            "parkedIntervalSeconds": .number(parkedIntervalSeconds),
            "statusHeartbeatSeconds": .number(statusHeartbeatSeconds),
        ])
    }
}
