import Foundation

/// Geodesic distances on the WGS84 ellipsoid.
///
/// `distance(_:_:)` solves the inverse problem with Vincenty's iteration, which agrees with
/// GeographicLib to far below a millimetre for every pair that is not nearly antipodal.
/// Nearly antipodal pairs (more than about 19,900 km apart), where the iteration may not
/// converge, get the last iterate: a fence boundary is never that far from its centre in practice.
public enum Geodesic {
    /// The geodesic distance in metres between two coordinates.
    public static func distance(_ p: Coordinate, _ q: Coordinate) -> Double {
        inverse(p, q).distance
    }

    /// The geodesic distance in metres and the initial azimuth in degrees (clockwise from north).
    public static func inverse(_ p: Coordinate, _ q: Coordinate) -> (distance: Double, initialBearing: Double) {
        let f = WGS84.f
        let rad = Double.pi / 180
        let l = wrappedLongitudeDelta(q.longitude - p.longitude) * rad
        // Reduced latitudes via atan2 so that the poles need no special case.
        let u1 = atan2((1 - f) * sin(p.latitude * rad), cos(p.latitude * rad))
        let u2 = atan2((1 - f) * sin(q.latitude * rad), cos(q.latitude * rad))
        let sinU1 = sin(u1)
        let cosU1 = cos(u1)
        let sinU2 = sin(u2)
        let cosU2 = cos(u2)

        var lambda = l
        var sinSigma = 0.0
        var cosSigma = 0.0
        var sigma = 0.0
        var cos2Alpha = 0.0
        var cos2SigmaM = 0.0
        var sinAlpha = 0.0
        var sinLambda = 0.0
        var cosLambda = 0.0
        for _ in 0..<1000 {
            sinLambda = sin(lambda)
            cosLambda = cos(lambda)
            let t1 = cosU2 * sinLambda
            let t2 = cosU1 * sinU2 - sinU1 * cosU2 * cosLambda
            sinSigma = (t1 * t1 + t2 * t2).squareRoot()
            if sinSigma == 0 { return (0, 0) }  // coincident points
            cosSigma = sinU1 * sinU2 + cosU1 * cosU2 * cosLambda
            sigma = atan2(sinSigma, cosSigma)
            sinAlpha = cosU1 * cosU2 * sinLambda / sinSigma
            cos2Alpha = 1 - sinAlpha * sinAlpha
            // On the equator cos²α is 0 and the term vanishes.
            cos2SigmaM = cos2Alpha != 0 ? cosSigma - 2 * sinU1 * sinU2 / cos2Alpha : 0
            let c = f / 16 * cos2Alpha * (4 + f * (4 - 3 * cos2Alpha))
            let previous = lambda
            lambda =
                l + (1 - c) * f * sinAlpha
                * (sigma + c * sinSigma * (cos2SigmaM + c * cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM)))
            if abs(lambda - previous) < 1e-13 { break }
        }
        let a = WGS84.a
        let b = WGS84.b
        let u2sq = cos2Alpha * (a * a - b * b) / (b * b)
        let bigA = 1 + u2sq / 16384 * (4096 + u2sq * (-768 + u2sq * (320 - 175 * u2sq)))
        let bigB = u2sq / 1024 * (256 + u2sq * (-128 + u2sq * (74 - 47 * u2sq)))
        let c2 = cos2SigmaM * cos2SigmaM
        let deltaSigma =
            bigB * sinSigma
            * (cos2SigmaM + bigB / 4
                * (cosSigma * (-1 + 2 * c2) - bigB / 6 * cos2SigmaM * (-3 + 4 * sinSigma * sinSigma) * (-3 + 4 * c2)))
        let s = b * bigA * (sigma - deltaSigma)
        let azimuth = atan2(cosU2 * sinLambda, cosU1 * sinU2 - sinU1 * cosU2 * cosLambda) / rad
        return (s, azimuth)
    }
}

/// Cheap two-sided bounds on a geodesic distance from the chord between two surface points.
///
/// The chord is never longer than the geodesic. A geodesic's curvature in space never exceeds
/// 1/ρ, with ρ the ellipsoid's smallest radius of curvature, so by Schur's comparison the arc is at most
/// 2ρ·asin(c/2ρ). At fence scale the two bounds are micrometres apart, so the exact solution is only
/// needed when a boundary falls between them.
enum ChordBounds {
    /// Beyond this chord length the bound is not used (the arc must stay below πρ).
    static let maximumChord = 2_000_000.0
    /// Slack for rounding in the ECEF computation.
    static let slack = 1e-6

    @inline(__always)
    static func upper(chord c: Double) -> Double {
        let rho = WGS84.minimumCurvatureRadius
        return 2 * rho * asin(c / (2 * rho)) + slack
    }
}

extension Geodesic {
    /// A distance the geodesic between two prepared points surely does not exceed, from their chord
    /// alone (no trigonometry); infinity for points too far apart for the bound.
    @inline(__always)
    static func upperBound(chordBetween a: PreparedPoint, _ b: PreparedPoint) -> Double {
        let c = a.ecef.chord(to: b.ecef)
        return c < ChordBounds.maximumChord ? ChordBounds.upper(chord: c) : .infinity
    }
}

extension Geodesic {
    /// A distance the geodesic surely does not exceed, with no trigonometry: the path along the meridian and
    /// then along the parallel is at least as long, and no degree of either is longer than 111,700 m (a
    /// meridian's degree is longest at the poles, 111,694 m; a parallel's at the equator, 111,320 m).
    @inline(__always)
    static func upperBound(degreesBetween a: Coordinate, _ b: Coordinate) -> Double {
        (abs(b.latitude - a.latitude) + abs(wrappedLongitudeDelta(b.longitude - a.longitude))) * 111_700
    }
}

extension Geodesic {
    /// The longest chord `distance(chord:atLatitude:)` answers for.
    public static let shortChordLimit = 50_000.0

    /// The distance along the ellipsoid between two surface points `chord` metres apart in a straight line
    /// near `latitude`: the arc of that chord on the sphere of the ellipsoid's mean (Gaussian) curvature
    /// there. Up to `shortChordLimit` it is within 3 mm of `distance` (the arc exceeds the chord by at most
    /// 13 cm there, and the true curvature along the path differs from the mean by under 0.4%); beyond, nil.
    /// No trigonometry beyond one sine, where `distance` iterates: the arc 2R asin(c / 2R) is its series
    /// c + c³/24R² + 3c⁵/640R⁴, whose next term is under a nanometre this short.
    @inline(__always)
    public static func distance(chord: Double, atLatitude latitude: Double) -> Double? {
        guard chord <= shortChordLimit else { return nil }
        let s = sin(latitude * .pi / 180)
        let radius = WGS84.a * (1 - WGS84.e2).squareRoot() / (1 - WGS84.e2 * s * s)
        let r2 = (chord * chord) / (radius * radius)
        return chord * (1 + r2 / 24 + 3 * r2 * r2 / 640)
    }
}
