/// The topic contract (docs/topics.md). PREFIX/FLEET/... with PREFIX defaulting to `fleet`.
public struct Topics: Sendable, Equatable {
    public let prefix: String
    public let fleet: String
    public let vehicle: String

    public init(prefix: String, fleet: String, vehicle: String) {
        self.prefix = prefix
        self.fleet = fleet
        self.vehicle = vehicle
    }

    var vehicleBase: String { "\(prefix)/\(fleet)/vehicles/\(vehicle)" }

    /// Operators → all vehicles: one retained GeoJSON Feature per condition.
    public var fleetGeofences: String { "\(prefix)/\(fleet)/geofences/+" }
    /// Operators → this vehicle.
    public var vehicleGeofences: String { "\(vehicleBase)/geofences/+" }
    public func fleetGeofence(_ id: String) -> String { "\(prefix)/\(fleet)/geofences/\(id)" }
    public func vehicleGeofence(_ id: String, vehicle: String? = nil) -> String {
        "\(prefix)/\(fleet)/vehicles/\(vehicle ?? self.vehicle)/geofences/\(id)"
    }
    /// Operators → all vehicles: the retained manifest of the fleet's geofences (`GeofenceManifest`).
    public var fleetManifest: String { "\(prefix)/\(fleet)/manifests/geofences" }
    /// Operators → one vehicle: the manifest of its own geofences.
    public func vehicleManifest(vehicle: String? = nil) -> String {
        "\(prefix)/\(fleet)/vehicles/\(vehicle ?? self.vehicle)/manifests/geofences"
    }
    public var errors: String { "\(vehicleBase)/errors" }
    public var events: String { "\(vehicleBase)/events" }
    public var location: String { "\(vehicleBase)/location" }
    /// Trips and stops as they begin and end (docs/trips.md).
    public var trips: String { "\(vehicleBase)/trips" }
    /// Live updates in batches (`TrackEncoding`).
    public var track: String { "\(vehicleBase)/track" }
    public var state: String { "\(vehicleBase)/state" }
    /// The full state, on request (`reportState`), in pages.
    public var stateDetail: String { "\(vehicleBase)/state/detail" }
    public var status: String { "\(vehicleBase)/status" }
    public var command: String { "\(vehicleBase)/cmd" }
    /// The agent's check that the broker gives retained messages to wildcard subscriptions (`.../probe/+`).
    public var probe: String { "\(vehicleBase)/probe" }
}
