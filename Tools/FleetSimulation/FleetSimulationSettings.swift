import GeofenceCore

/// The simulated fleet: how many vehicles and geofences, where, and how often each vehicle publishes.
public struct FleetSimulationSettings: Sendable {
    public var vehicles: Int
    public var geofences: Int
    /// The square the vehicles drive in and the geofences lie in: the middle of the Netherlands by default,
    /// with the IJsselmeer's south shore at its northern edge.
    public var centre = Coordinate(latitude: 52.2, longitude: 5.5)
    public var side = 110_000.0
    public var prefix = "fleet"
    public var fleet = "sim"
    /// `fleetTopics.trackBatchSeconds` of every vehicle. Under the 1 s between fixes, each fix closes the
    /// batch before it: every fix goes on `track` as one message, a second after it was made.
    public var trackBatchSeconds = 0.5
    public var locationIntervalSeconds = 120.0
    /// `fleetTopics.statusHeartbeatSeconds`: the status is repeated this often.
    public var statusHeartbeatSeconds = 60.0
    public var seed: UInt64 = 32

    public init(vehicles: Int, geofences: Int) {
        self.vehicles = vehicles
        self.geofences = geofences
    }
}
