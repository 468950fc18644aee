import GeofenceCore

/// Where gpsd is and how the location source treats it. Defaults are documented in docs/locations.md.
public struct GPSSourceConfiguration: Sendable, Equatable {
    public var host: String = "127.0.0.1"
    public var port: Int = 2947
    /// Follow only this device path; nil follows the best active receiver.
    public var device: String?
    /// First wait after a failed connect; it doubles up to `maximumBackoff`. The cap is 1 s so that the
    /// source is back within 2 s of gpsd returning.
    public var initialBackoff: Double = 0.1
    public var maximumBackoff: Double = 1
    /// No report at all for this long while connected is reported as `noData` (no receiver, or a dead one).
    public var noDataTimeout: Double = 5
    /// An epoch's reports close after this much quiet (see `EpochCoalescer`).
    public var epochQuietPeriod: Double = 0.05
    /// Close an epoch at the report count the receiver kept for its last epochs (see `EpochCoalescer`).
    public var epochEarlyClose = true
    public var assembly = LocationAssembler.Settings()

    public init(host: String = "127.0.0.1", port: Int = 2947, device: String? = nil) {
        self.host = host
        self.port = port
        self.device = device
        assembly.device = device
    }
}
