/// A Polygon or MultiPolygon with holes, with GeoJSON's semantics: edges are straight in lon/lat and
/// the boundary belongs to the polygon. Parts that cross the antimeridian are held in unwrapped longitude.
///
/// Every ring's vertices live in one array, so that testing the common one-ring polygon reads a single
/// buffer after the region itself.
public struct PolygonRegion: Sendable {
    /// A closed ring's place in `vertices`.
    struct Ring: Sendable {
        var start: Int
        var end: Int
    }

    /// One polygon: its outer ring, then its holes (`rings[firstRing..<endRing]`), and its box.
    struct Part: Sendable {
        var firstRing: Int
        var endRing: Int
        var box: BoundingBox
    }

    let vertices: ContiguousArray<SIMD2<Double>>
    /// The rings and parts of a polygon with holes or several parts. A simple polygon (one ring, no holes:
    /// most geofences) keeps neither, and `rings` and `parts` make up its one ring and part: it costs one
    /// allocation instead of three, about 130 bytes less each.
    private let ringTable: ContiguousArray<Ring>
    private let partTable: ContiguousArray<Part>
    public let boundingBox: BoundingBox
    /// Whether the region is one ring with no holes, which has a faster path.
    let isSimple: Bool
    public var vertexCount: Int { vertices.count }

    var rings: OneOrTable<Ring> {
        OneOrTable(table: ringTable, one: isSimple ? Ring(start: 0, end: vertices.count) : nil)
    }
    var parts: OneOrTable<Part> {
        OneOrTable(table: partTable, one: isSimple ? Part(firstRing: 0, endRing: 1, box: boundingBox) : nil)
    }

    /// A simple polygon's one ring or part, made up when asked; else the table's.
    struct OneOrTable<Element>: RandomAccessCollection {
        let table: ContiguousArray<Element>
        let one: Element?
        var startIndex: Int { 0 }
        var endIndex: Int { one == nil ? table.count : 1 }
        @inline(__always)
        subscript(i: Int) -> Element { one ?? table[i] }
    }

    /// A simple polygon from its one ring, already validated and unwrapped (`unwrapLongitudes`): the same
    /// region as `init(parts: [[ring]])`, without its copies (a restore decodes 100,000 of these).
    init(simpleRing ring: ContiguousArray<SIMD2<Double>>) {
        // unwrapLongitudes leaves the ring's west edge in [-180, 180), so the box needs no shift.
        vertices = ring
        isSimple = true
        ringTable = []
        partTable = []
        boundingBox = BoundingBox(unwrapped: ring)
    }

    /// Builds the region from rings already validated and unwrapped (see `validatedRing`).
    init(parts rawParts: [[[SIMD2<Double>]]]) {
        let isSimple = rawParts.count == 1 && rawParts[0].count == 1
        var vertices = ContiguousArray<SIMD2<Double>>()
        var rings = ContiguousArray<Ring>()
        var parts = ContiguousArray<Part>()
        // Exactly the room needed: grown by appends, the arrays of 100,000 polygons kept a third more.
        vertices.reserveCapacity(rawParts.reduce(0) { $0 + $1.reduce(0) { $0 + $1.count } })
        if !isSimple {
            rings.reserveCapacity(rawParts.reduce(0) { $0 + $1.count })
            parts.reserveCapacity(rawParts.count)
        }
        var boxes: [BoundingBox] = []
        for partRings in rawParts {
            let outerBox = BoundingBox(unwrapped: partRings[0])
            let shift = outerBox.minLongitude - partRings[0].reduce(Double.infinity) { min($0, $1.x) }
            let outerCenter = (outerBox.minLongitude + outerBox.maxLongitude) / 2
            let first = rings.count
            for ring in partRings {
                // Bring each hole into its outer ring's frame.
                var xs = ring.map { $0.x + shift }
                let center = (xs.min()! + xs.max()!) / 2
                let k = ((outerCenter - center) / 360).rounded()
                if k != 0 { xs = xs.map { $0 + 360 * k } }
                let start = vertices.count
                for (x, p) in zip(xs, ring) { vertices.append(SIMD2(x, p.y)) }
                if !isSimple { rings.append(Ring(start: start, end: vertices.count)) }
            }
            if !isSimple { parts.append(Part(firstRing: first, endRing: rings.count, box: outerBox)) }
            boxes.append(outerBox)
        }
        self.vertices = vertices
        self.isSimple = isSimple
        ringTable = rings
        partTable = parts
        boundingBox = Self.enclosingBox(boxes)
    }

    /// The rings as coordinates again, parts then rings, longitudes folded back into [-180, 180].
    var coordinateParts: [[[Coordinate]]] {
        parts.map { part in
            (part.firstRing..<part.endRing).map { r in
                vertices[rings[r].start..<rings[r].end].map {
                    Coordinate(latitude: $0.y, longitude: wrapLongitude($0.x))
                }
            }
        }
    }

    /// The narrower of two candidate unions: as given, or with western parts moved east by 360°.
    /// Moving a longitude by 360° rounds it, so a moved union is padded outward by a nanodegree to stay
    /// a box that holds every vertex.
    static func enclosingBox(_ boxes: [BoundingBox]) -> BoundingBox {
        let plain = boxes.dropFirst().reduce(boxes[0]) { $0.union($1) }
        guard boxes.count > 1 else { return plain }
        let shifted = boxes.map { b in
            b.minLongitude < 0
                ? BoundingBox(
                    minLongitude: b.minLongitude + 360, minLatitude: b.minLatitude,
                    maxLongitude: b.maxLongitude + 360, maxLatitude: b.maxLatitude) : b
        }
        var east = shifted.dropFirst().reduce(shifted[0]) { $0.union($1) }
        if east.minLongitude >= 180 {
            east.minLongitude -= 360
            east.maxLongitude -= 360
        }
        east.minLongitude -= 1e-9
        east.maxLongitude += 1e-9
        let best = (east.maxLongitude - east.minLongitude) < (plain.maxLongitude - plain.minLongitude) ? east : plain
        if best.maxLongitude - best.minLongitude >= 360 {
            return BoundingBox(
                minLongitude: -180, minLatitude: best.minLatitude, maxLongitude: 180, maxLatitude: best.maxLatitude)
        }
        return best
    }

    @inline(__always)
    func side(ofRing r: Int, _ q: SIMD2<Double>) -> RingSide {
        let ring = rings[r]
        return vertices.withUnsafeBufferPointer {
            ringSide(UnsafeBufferPointer(rebasing: $0[ring.start..<ring.end]), q)
        }
    }

    /// True when the point is inside or on the boundary.
    @inline(__always)
    public func contains(_ p: PreparedPoint) -> Bool {
        contains(longitude: p.longitude, latitude: p.latitude)
    }

    /// True when the point (longitude in [-180, 180]) is inside or on the boundary.
    func contains(longitude: Double, latitude: Double) -> Bool {
        if isSimple {
            guard latitude >= boundingBox.minLatitude, latitude <= boundingBox.maxLatitude,
                let lon = boundingBox.unwrappedLongitude(longitude)
            else { return false }
            return vertices.withUnsafeBufferPointer { ringSide($0, SIMD2(lon, latitude)) } != .outside
        }
        for part in parts {
            guard latitude >= part.box.minLatitude, latitude <= part.box.maxLatitude,
                let lon = part.box.unwrappedLongitude(longitude)
            else { continue }
            if partContains(part, SIMD2(lon, latitude)) { return true }
        }
        return false
    }

    func partContains(_ part: Part, _ q: SIMD2<Double>) -> Bool {
        switch side(ofRing: part.firstRing, q) {
        case .outside: return false
        case .boundary: return true
        case .inside:
            for hole in (part.firstRing + 1)..<part.endRing where side(ofRing: hole, q) == .inside { return false }
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
                p.latitude >= reach.minLatitude, p.latitude <= reach.maxLatitude
            else { continue }
            let south = p.latitude - span.latitude
            let north = p.latitude + span.latitude
            let west = lon - span.longitude
            let east = lon + span.longitude
            for r in part.firstRing..<part.endRing {
                let ring = rings[r]
                var a = vertices[ring.start]
                for k in (ring.start + 1)..<ring.end {
                    let b = vertices[k]
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
            for r in part.firstRing..<part.endRing {
                let ring = rings[r]
                for k in (ring.start + 1)..<ring.end where segmentsIntersect(s, e, vertices[k - 1], vertices[k]) {
                    return true
                }
            }
            if partContains(part, s) || partContains(part, e) { return true }
        }
        return false
    }
}

extension Region {
    /// A polygon from rings already known to be valid, such as a curated dataset's country outlines, built
    /// without the checks `Condition` makes: each part's first ring is its outer one and the rest its holes,
    /// every ring closed and within [-180, 180]. Containment of a ring that is not simple follows the
    /// even-odd rule.
    public static func trustedPolygon(parts: [[[Coordinate]]]) -> Region {
        .polygon(PolygonRegion(parts: parts.map { $0.map { $0.map { SIMD2($0.longitude, $0.latitude) } } }))
    }
}
