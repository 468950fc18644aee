/// A corridor: every point within `halfWidth` metres of a LineString, for route adherence.
public struct CorridorRegion: Sendable {
    /// The line's vertices in unwrapped longitude.
    let line: ContiguousArray<SIMD2<Double>>
    public let halfWidth: Double
    public let boundingBox: BoundingBox
    public var vertexCount: Int { line.count }

    init(line points: [SIMD2<Double>], halfWidth: Double) {
        self.halfWidth = halfWidth
        // Grow the line's box by the width: latitude by the shortest degree anywhere (110,574 m at the
        // equator), longitude by the parallel's radius at the box's latitude farthest from the equator.
        let lineBox = BoundingBox(unwrapped: points)
        let shift = lineBox.minLongitude - points.reduce(Double.infinity) { min($0, $1.x) }
        line = ContiguousArray(points.map { SIMD2($0.x + shift, $0.y) })
        let padded = halfWidth * 1.02 + 1
        let dLat = padded / 110_574
        let farthest = min(max(abs(lineBox.minLatitude), abs(lineBox.maxLatitude)) + dLat, 90)
        let dLon =
            padded / LocalProjection(origin: Coordinate(latitude: farthest, longitude: 0)).metresPerDegreeLongitude
        boundingBox = lineBox.expanded(longitude: dLon, latitude: dLat)
    }

    /// Distance from the point to the line in metres: the closest point is found in the point's local
    /// projection, then measured on the ellipsoid when it is close enough to matter.
    func distance(_ p: PreparedPoint, exactNear threshold: Double? = nil) -> Double {
        var best = Double.infinity
        var bestPoint = SIMD2<Double>(0, 0)
        var a = p.projection.project(longitude: line[0].x, latitude: line[0].y)
        var aRaw = line[0]
        for k in 1..<line.count {
            let bRaw = line[k]
            let b = p.projection.project(longitude: bRaw.x, latitude: bRaw.y)
            let (d, t) = planarSegmentDistance(.zero, a, b)
            if d < best {
                best = d
                bestPoint = aRaw + t * (bRaw - aRaw)
            }
            a = b
            aRaw = bRaw
        }
        // The projection is exact at the point and drifts slowly; refine only near the threshold.
        if let threshold, abs(best - threshold) <= 0.01 * best + 1 {
            let closest = Coordinate(latitude: bestPoint.y, longitude: wrapLongitude(bestPoint.x))
            return Geodesic.distance(p.coordinate, closest)
        }
        return best
    }

    public func contains(_ p: PreparedPoint) -> Bool {
        guard boundingBox.contains(longitude: p.longitude, latitude: p.latitude) else { return false }
        return distance(p, exactNear: halfWidth) <= halfWidth
    }

    public func classify(_ p: PreparedPoint, margin: Double) -> Containment {
        let inner = halfWidth - margin
        let outer = halfWidth + margin
        let d = distance(p, exactNear: nil)
        let slack = 0.01 * d + 1
        if d < inner - slack { return .inside }
        if d > outer + slack { return .outside }
        let exact = distance(p, exactNear: d)
        if margin <= 0 { return exact <= halfWidth ? .inside : .outside }
        if exact < inner { return .inside }
        if exact > outer { return .outside }
        return .uncertain
    }

    /// Whether the segment from `a` to `b` passes within the half-width of the line.
    func intersectsSegment(_ a: Coordinate, _ b: Coordinate) -> Bool {
        // Measured in a projection true to scale at the segment's start (segments are short).
        let origin = PreparedPoint(a)
        let s = SIMD2<Double>.zero
        let e = origin.projection.project(longitude: b.longitude, latitude: b.latitude)
        var c = origin.projection.project(longitude: line[0].x, latitude: line[0].y)
        for k in 1..<line.count {
            let d = origin.projection.project(longitude: line[k].x, latitude: line[k].y)
            if planarSegmentToSegmentDistance(s, e, c, d) <= halfWidth { return true }
            c = d
        }
        return false
    }
}

/// A longitude folded into [-180, 180].
func wrapLongitude(_ lon: Double) -> Double {
    wrappedLongitudeDelta(lon)
}
