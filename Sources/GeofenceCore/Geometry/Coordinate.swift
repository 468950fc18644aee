/// A WGS84 position in degrees, shaped like Core Location's `CLLocationCoordinate2D`.
public struct Coordinate: Sendable, Hashable, Codable {
    /// Latitude in degrees, positive north, in [-90, 90].
    public var latitude: Double
    /// Longitude in degrees, positive east, in [-180, 180].
    public var longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// True when both values are finite and within their ranges.
    public var isValid: Bool {
        latitude.isFinite && longitude.isFinite && abs(latitude) <= 90 && abs(longitude) <= 180
    }
}

/// Longitude difference folded into [-180, 180], so that a step across the antimeridian is short.
@inlinable
func wrappedLongitudeDelta(_ delta: Double) -> Double {
    var d = delta
    if d > 180 { d -= 360 * ((d + 180) / 360).rounded(.down) }
    if d < -180 { d += 360 * ((180 - d) / 360).rounded(.down) }
    return d
}
