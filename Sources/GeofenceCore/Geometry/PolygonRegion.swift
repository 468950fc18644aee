/// A Polygon or MultiPolygon with holes, with GeoJSON's semantics: edges are straight in lon/lat and
/// the boundary belongs to the polygon. Parts that cross the antimeridian are held in unwrapped longitude.
public struct PolygonRegion: Sendable {
    struct Part: Sendable {
        /// The outer ring first, then the holes; each closed, with longitudes in the part's frame.
        var rings: [ContiguousArray<SIMD2<Double>>]
        var box: BoundingBox
    }

    let parts: [Part]
    public let boundingBox: BoundingBox
    public let vertexCount: Int

    /// Builds the region from rings already validated and unwrapped (see `validatedRing`).
    init(parts rawParts: [[[SIMD2<Double>]]]) {
        var parts: [Part] = []
        for rings in rawParts {
            let outerBox = BoundingBox(unwrapped: rings[0])
            let shift = outerBox.minLongitude - rings[0].reduce(Double.infinity) { min($0, $1.x) }
            let placed = rings.map { ring -> ContiguousArray<SIMD2<Double>> in
                // Bring each hole into its outer ring's frame.
                var r = ContiguousArray(ring.map { SIMD2($0.x + shift, $0.y) })
                let center = (r.map(\.x).min()! + r.map(\.x).max()!) / 2
                let outerCenter = (outerBox.minLongitude + outerBox.maxLongitude) / 2
                let k = ((outerCenter - center) / 360).rounded()
                if k != 0 { for i in r.indices { r[i].x += 360 * k } }
                return r
            }
            parts.append(Part(rings: placed, box: outerBox))
        }
        self.parts = parts
        self.boundingBox = Self.enclosingBox(parts.map(\.box))
        self.vertexCount = rawParts.joined().reduce(0) { $0 + $1.count }
    }

    /// The narrower of two candidate unions: as given, or with western parts moved east by 360°.
    static func enclosingBox(_ boxes: [BoundingBox]) -> BoundingBox {
        let plain = boxes.dropFirst().reduce(boxes[0]) { $0.union($1) }
        let shifted = boxes.map { b in
            b.minLongitude < 0
                ? BoundingBox(minLongitude: b.minLongitude + 360, minLatitude: b.minLatitude,
                              maxLongitude: b.maxLongitude + 360, maxLatitude: b.maxLatitude) : b
        }
        var east = shifted.dropFirst().reduce(shifted[0]) { $0.union($1) }
        if east.minLongitude >= 180 { east.minLongitude -= 360; east.maxLongitude -= 360 }
        let best = (east.maxLongitude - east.minLongitude) < (plain.maxLongitude - plain.minLongitude) ? east : plain
        if best.maxLongitude - best.minLongitude >= 360 {
            return BoundingBox(minLongitude: -180, minLatitude: best.minLatitude, maxLongitude: 180, maxLatitude: best.maxLatitude)
        }
        return best
    }

    /// True when the point is inside or on the boundary.
    public func contains(_ p: PreparedPoint) -> Bool {
        for part in parts {
            guard p.latitude >= part.box.minLatitude, p.latitude <= part.box.maxLatitude,
                  let lon = part.box.unwrappedLongitude(p.longitude) else { continue }
            if partContains(part, SIMD2(lon, p.latitude)) { return true }
        }
        return false
    }

    @inline(__always)
    func partContains(_ part: Part, _ q: SIMD2<Double>) -> Bool {
        switch ringSide(part.rings[0], q) {
        case .outside: return false
        case .boundary: return true
        case .inside:
            for hole in part.rings.dropFirst() where ringSide(hole, q) == .inside { return false }
            return true
        }
    }

    /// Inside or outside by more than `margin` metres, or uncertain.
    public func classify(_ p: PreparedPoint, margin: Double) -> Containment {
        let inside = contains(p)
        if margin <= 0 { return inside ? .inside : .outside }
        return isBoundary(within: margin, of: p) ? .uncertain : (inside ? .inside : .outside)
    }

    /// Whether any edge passes within `metres` of the point, measured in the point's local projection.
    func isBoundary(within metres: Double, of p: PreparedPoint) -> Bool {
        let span = p.projection.degreeSpan(metres: metres)
        for part in parts {
            let reach = part.box.expanded(longitude: span.longitude, latitude: span.latitude)
            guard let lon = reach.unwrappedLongitude(p.longitude),
                  p.latitude >= reach.minLatitude, p.latitude <= reach.maxLatitude else { continue }
            let south = p.latitude - span.latitude, north = p.latitude + span.latitude
            let west = lon - span.longitude, east = lon + span.longitude
            for ring in part.rings {
                var a = ring[0]
                for k in 1..<ring.count {
                    let b = ring[k]
                    defer { a = b }
                    // Cheap rejection in degrees before projecting.
                    if (a.y < south && b.y < south) || (a.y > north && b.y > north) { continue }
                    if (a.x < west && b.x < west) || (a.x > east && b.x > east) { continue }
                    let pa = p.projection.project(longitude: a.x, latitude: a.y)
                    let pb = p.projection.project(longitude: b.x, latitude: b.y)
                    if planarSegmentDistance(.zero, pa, pb).distance <= metres { return true }
                }
            }
        }
        return false
    }

    /// Whether the lon/lat-straight segment from `a` to `b` touches the polygon's boundary or interior.
    func intersectsSegment(_ a: Coordinate, _ b: Coordinate) -> Bool {
        for part in parts {
            let mid = (part.box.minLongitude + part.box.maxLongitude) / 2
            // Place the segment in the part's frame: its start within 180° of the part's middle.
            let startLon = a.longitude + 360 * ((mid + 180 - a.longitude) / 360).rounded(.down)
            let s = SIMD2(startLon, a.latitude)
            let e = SIMD2(startLon + wrappedLongitudeDelta(b.longitude - a.longitude), b.latitude)
            for ring in part.rings {
                for k in 1..<ring.count where segmentsIntersect(s, e, ring[k - 1], ring[k]) { return true }
            }
            if partContains(part, s) || partContains(part, e) { return true }
        }
        return false
    }
}
