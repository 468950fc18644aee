import Foundation

/// An equirectangular projection centred on one point, scaled by the ellipsoid's radii there.
///
/// It is affine in longitude and latitude, so GeoJSON's lon/lat-straight edges stay straight, and it is
/// true to scale at its centre, which is where distances to nearby edges are measured.
struct LocalProjection: Sendable {
    let origin: Coordinate
    /// Metres per degree of longitude and of latitude at the origin.
    let metresPerDegreeLongitude: Double
    let metresPerDegreeLatitude: Double

    init(origin: Coordinate) {
        let rad = Double.pi / 180
        self.init(
            origin: origin, primeVerticalRadius: WGS84.primeVerticalRadius(latitude: origin.latitude),
            meridionalRadius: WGS84.meridionalRadius(latitude: origin.latitude), cosLatitude: cos(origin.latitude * rad)
        )
    }

    /// From the ellipsoid's radii of curvature and the cosine at the origin's latitude, when the caller
    /// has them already.
    @inline(__always)
    init(origin: Coordinate, primeVerticalRadius: Double, meridionalRadius: Double, cosLatitude: Double) {
        self.origin = origin
        let rad = Double.pi / 180
        metresPerDegreeLatitude = meridionalRadius * rad
        // Keep a tiny positive scale at the pole itself so that divisions stay finite.
        metresPerDegreeLongitude = max(primeVerticalRadius * cosLatitude * rad, 1e-6)
    }

    /// Planar metres east and north of the origin. `longitude` may be unwrapped (beyond ±180).
    @inline(__always)
    func project(longitude: Double, latitude: Double) -> SIMD2<Double> {
        SIMD2(
            wrappedLongitudeDelta(longitude - origin.longitude) * metresPerDegreeLongitude,
            (latitude - origin.latitude) * metresPerDegreeLatitude)
    }

    /// The position `x` metres east and `y` north of the origin: the inverse of `project`.
    func unproject(x: Double, y: Double) -> Coordinate {
        Coordinate(
            latitude: min(max(origin.latitude + y / metresPerDegreeLatitude, -90), 90),
            longitude: wrapLongitude(origin.longitude + x / metresPerDegreeLongitude))
    }

    /// Degrees of longitude and latitude that span at least `metres` around the origin.
    func degreeSpan(metres: Double) -> (longitude: Double, latitude: Double) {
        (min(metres / metresPerDegreeLongitude, 360), min(metres / metresPerDegreeLatitude, 180))
    }
}

/// Distance from point `p` to segment `a`-`b` in a plane, and where along the segment it is closest.
@inline(__always)
func planarSegmentDistance(_ p: SIMD2<Double>, _ a: SIMD2<Double>, _ b: SIMD2<Double>) -> (distance: Double, t: Double)
{
    let ab = b - a
    let len2 = (ab * ab).sum()
    var t = len2 > 0 ? ((p - a) * ab).sum() / len2 : 0
    t = min(max(t, 0), 1)
    let d = p - (a + t * ab)
    return ((d * d).sum().squareRoot(), t)
}

/// Shortest distance between two planar segments.
func planarSegmentToSegmentDistance(
    _ a: SIMD2<Double>, _ b: SIMD2<Double>, _ c: SIMD2<Double>, _ d: SIMD2<Double>
) -> Double {
    if segmentsIntersect(a, b, c, d) { return 0 }
    return min(
        planarSegmentDistance(a, c, d).distance, planarSegmentDistance(b, c, d).distance,
        planarSegmentDistance(c, a, b).distance, planarSegmentDistance(d, a, b).distance)
}
