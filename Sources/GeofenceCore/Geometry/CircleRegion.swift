/// A geodesic circle: every point whose ellipsoidal distance from the centre is at most the radius.
public struct CircleRegion: Sendable {
    public let center: Coordinate
    public let radius: Double
    let centerECEF: ECEF
    public let boundingBox: BoundingBox

    public init(center: Coordinate, radius: Double) {
        self.center = center
        self.radius = radius
        centerECEF = ECEF(center)
        boundingBox = Self.box(center: center, radius: radius)
    }

    /// True when the geodesic distance is at most the radius.
    @inline(__always)
    public func contains(_ p: PreparedPoint) -> Bool {
        let c = p.ecef.chord(to: centerECEF)
        if c > radius { return false }  // the chord never exceeds the arc
        if c < ChordBounds.maximumChord && ChordBounds.upper(chord: c) <= radius { return true }
        return Geodesic.distance(center, p.coordinate) <= radius
    }

    /// Inside or outside by more than `margin` metres, or uncertain.
    public func classify(_ p: PreparedPoint, margin: Double) -> Containment {
        let c = p.ecef.chord(to: centerECEF)
        if c > radius + margin { return .outside }
        if c < ChordBounds.maximumChord {
            let upper = ChordBounds.upper(chord: c)
            if upper < radius - margin { return .inside }
            if c >= radius - margin && upper <= radius + margin { return .uncertain }
        }
        let d = Geodesic.distance(center, p.coordinate)
        if d < radius - margin { return .inside }
        if d > radius + margin { return .outside }
        return .uncertain
    }

    /// A box that surely holds the circle: its latitude span from the meridian arc, its longitude span
    /// from the parallel's radius at the latitude farthest from the equator.
    static func box(center: Coordinate, radius: Double) -> BoundingBox {
        let projection = LocalProjection(origin: center)
        // 2% plus a metre of slack covers the change of the radii of curvature across the circle.
        let padded = radius * 1.02 + 1
        let dLat = padded / projection.metresPerDegreeLatitude
        let south = center.latitude - dLat
        let north = center.latitude + dLat
        if south <= -90 || north >= 90 || radius > 2_000_000 {
            return BoundingBox(
                minLongitude: -180, minLatitude: max(south, -90), maxLongitude: 180, maxLatitude: min(north, 90))
        }
        let farthest = max(abs(south), abs(north))
        let edge = LocalProjection(origin: Coordinate(latitude: farthest, longitude: 0))
        let dLon = padded / edge.metresPerDegreeLongitude
        if dLon >= 180 {
            return BoundingBox(minLongitude: -180, minLatitude: south, maxLongitude: 180, maxLatitude: north)
        }
        var west = center.longitude - dLon
        var east = center.longitude + dLon
        if west < -180 {
            west += 360
            east += 360
        }
        return BoundingBox(minLongitude: west, minLatitude: south, maxLongitude: east, maxLatitude: north)
    }
}
