/// What makes a polygon ring unusable, with the index of the position where it shows.
public struct RingProblem: Error, Sendable, Equatable {
    public var message: String
    /// Index of the offending position in the ring as it was given, if one position is to blame.
    public var position: Int?
}

/// Longitudes made continuous along a path, so that each step is at most 180° and a line across
/// the antimeridian stays short. The path is then shifted so that its westmost point lies in [-180, 180).
func unwrapLongitudes(_ coordinates: [Coordinate]) -> [SIMD2<Double>] {
    guard let first = coordinates.first else { return [] }
    var out: [SIMD2<Double>] = []
    out.reserveCapacity(coordinates.count)
    var previous = first.longitude
    out.append(SIMD2(first.longitude, first.latitude))
    for c in coordinates.dropFirst() {
        let lon = previous + wrappedLongitudeDelta(c.longitude - previous)
        out.append(SIMD2(lon, c.latitude))
        previous = lon
    }
    let west = out.reduce(Double.infinity) { min($0, $1.x) }
    if west < -180 { for i in out.indices { out[i].x += 360 } }
    if west >= 180 { for i in out.indices { out[i].x -= 360 } }
    return out
}

/// Unwraps a ring as `unwrapLongitudes` does, point by point as a decoder reads it: `append` each, then
/// `finish` to bring the west edge into [-180, 180).
struct RingUnwrapper {
    private(set) var points = ContiguousArray<SIMD2<Double>>()
    private var previous = 0.0
    private var west = Double.infinity

    init(capacity: Int) {
        points.reserveCapacity(capacity)
    }

    mutating func append(longitude: Double, latitude: Double) {
        let lon = points.isEmpty ? longitude : previous + wrappedLongitudeDelta(longitude - previous)
        points.append(SIMD2(lon, latitude))
        previous = lon
        west = min(west, lon)
    }

    consuming func finish() -> ContiguousArray<SIMD2<Double>> {
        if west < -180 { for i in points.indices { points[i].x += 360 } }
        if west >= 180 { for i in points.indices { points[i].x -= 360 } }
        return points
    }
}

/// Checks a ring given as coordinates and returns it unwrapped, or the first problem found.
func validatedRing(_ ring: [Coordinate]) -> Result<[SIMD2<Double>], RingProblem> {
    guard ring.count >= 4 else {
        return .failure(
            RingProblem(
                message: "ring has \(ring.count) positions; a closed ring needs at least 4", position: nil))
    }
    guard let first = ring.first, let last = ring.last, first == last else {
        return .failure(
            RingProblem(
                message: "ring is not closed: the last position must equal the first", position: ring.count - 1))
    }
    let points = unwrapLongitudes(ring)
    guard points[0] == points[points.count - 1] else {
        return .failure(
            RingProblem(
                message: "ring winds around a pole; split it into parts that do not enclose a pole", position: nil))
    }
    if let problem = selfIntersection(points) { return .failure(problem) }
    return .success(points)
}

/// Finds a place where a closed ring touches or crosses itself, sweeping its edges by west edge so that
/// a 10,000-vertex ring does not cost 50 million edge pairs.
func selfIntersection(_ ring: [SIMD2<Double>]) -> RingProblem? {
    // Repeated consecutive positions are allowed; drop them, remembering where each vertex came from.
    var vertices: [SIMD2<Double>] = []
    var origin: [Int] = []
    for (i, p) in ring.enumerated() where vertices.last != p {
        vertices.append(p)
        origin.append(i)
    }
    let edgeCount = vertices.count - 1
    guard edgeCount >= 3 else {
        return RingProblem(message: "ring has fewer than 3 distinct positions", position: nil)
    }
    func problem(_ i: Int, _ j: Int) -> RingProblem {
        RingProblem(
            message:
                "ring intersects itself: edge \(origin[i])–\(origin[i + 1]) meets edge \(origin[j])–\(origin[j + 1])",
            position: origin[max(i, j)])
    }
    func adjacent(_ i: Int, _ j: Int) -> Bool {
        abs(i - j) == 1 || (min(i, j) == 0 && max(i, j) == edgeCount - 1)
    }
    // Adjacent edges meet at their shared vertex; they are wrong only when they fold back over each other.
    for i in 0..<edgeCount {
        let j = (i + 1) % edgeCount
        let a = vertices[i]
        let b = vertices[i + 1]
        let c = vertices[j + 1]
        if orientation(a, b, c) == 0 && ((b - a) * (c - b)).sum() < 0 {
            return problem(i, j)
        }
    }
    let order = (0..<edgeCount).sorted {
        min(vertices[$0].x, vertices[$0 + 1].x) < min(vertices[$1].x, vertices[$1 + 1].x)
    }
    var active: [Int] = []
    for i in order {
        let a = vertices[i]
        let b = vertices[i + 1]
        let west = min(a.x, b.x)
        active.removeAll { max(vertices[$0].x, vertices[$0 + 1].x) < west }
        let south = min(a.y, b.y)
        let north = max(a.y, b.y)
        for j in active where !adjacent(i, j) {
            let c = vertices[j]
            let d = vertices[j + 1]
            if max(c.y, d.y) < south || min(c.y, d.y) > north { continue }
            if segmentsIntersect(a, b, c, d) { return problem(min(i, j), max(i, j)) }
        }
        active.append(i)
    }
    return nil
}

/// Where a point lies against one closed ring, boundary included.
enum RingSide { case inside, outside, boundary }

/// Crossing-number test with exact orientation, so a point on an edge or vertex is reported as
/// `boundary` (GeoJSON and GEOS `covers` count it as inside the polygon).
@inline(__always)
func ringSide(_ ring: UnsafeBufferPointer<SIMD2<Double>>, _ p: SIMD2<Double>) -> RingSide {
    var inside = false
    var a = ring[0]
    for k in 1..<ring.count {
        let b = ring[k]
        defer { a = b }
        // Only edges whose latitude range reaches the point can hold it or cross its ray.
        if (a.y < p.y && b.y < p.y) || (a.y > p.y && b.y > p.y) { continue }
        if a.x < p.x && b.x < p.x { continue }
        let o = orientation(a, b, p)
        if o == 0 && onSegment(a, b, p) { return .boundary }
        if (a.y > p.y) != (b.y > p.y) && (o > 0) == (b.y > a.y) { inside.toggle() }
    }
    return inside ? .inside : .outside
}
