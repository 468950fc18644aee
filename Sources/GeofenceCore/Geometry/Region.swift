/// One condition's geometry, prepared for fast tests.
///
/// Indirect, so that a region is one reference (8 bytes) wherever it is held: a condition and the spatial
/// index share one copy instead of holding 88 bytes each, 16 MB over 100,000 geofences. The evaluation
/// reads a polygon's vertices through a reference anyway.
public indirect enum Region: Sendable {
    case circle(CircleRegion)
    case polygon(PolygonRegion)
    case corridor(CorridorRegion)

    public var boundingBox: BoundingBox {
        switch self {
        case .circle(let c): c.boundingBox
        case .polygon(let p): p.boundingBox
        case .corridor(let c): c.boundingBox
        }
    }

    /// Pure containment, boundary included, with no margin.
    @inline(__always)
    public func contains(_ p: PreparedPoint) -> Bool {
        switch self {
        case .circle(let c): c.contains(p)
        case .polygon(let g): g.contains(p)
        case .corridor(let c): c.contains(p)
        }
    }

    /// Inside or outside by more than `margin` metres, or uncertain.
    public func classify(_ p: PreparedPoint, margin: Double) -> Containment {
        switch self {
        case .circle(let c): c.classify(p, margin: margin)
        case .polygon(let g): g.classify(p, margin: margin)
        case .corridor(let c): c.classify(p, margin: margin)
        }
    }

    /// Whether the straight path from `a` to `b` passes through the region. Meant for short paths
    /// (consecutive fixes), where the path's local projection is true to scale.
    public func intersectsSegment(from a: Coordinate, to b: Coordinate) -> Bool {
        switch self {
        case .circle(let c):
            // The closest point of the path is found in a projection at its start, then measured on the
            // ellipsoid: the flat distance alone is short by decimetres at a kilometre, enough to invent a
            // crossing for a vehicle driving up to a large circle.
            let origin = PreparedPoint(a)
            let end = origin.projection.project(longitude: b.longitude, latitude: b.latitude)
            let center = origin.projection.project(longitude: c.center.longitude, latitude: c.center.latitude)
            let t = planarSegmentDistance(center, .zero, end).t
            let closest = Coordinate(
                latitude: a.latitude + t * (b.latitude - a.latitude),
                longitude: wrapLongitude(a.longitude + t * wrappedLongitudeDelta(b.longitude - a.longitude)))
            return Geodesic.distance(c.center, closest) <= c.radius
        case .polygon(let g): return g.intersectsSegment(a, b)
        case .corridor(let c): return c.intersectsSegment(a, b)
        }
    }
}
