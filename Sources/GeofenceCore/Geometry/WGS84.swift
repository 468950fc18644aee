import Foundation

/// The WGS84 ellipsoid and the few derived quantities the geometry needs.
public enum WGS84 {
    /// Semi-major axis in metres.
    public static let a = 6_378_137.0
    /// Flattening.
    public static let f = 1 / 298.257_223_563
    /// Semi-minor axis in metres.
    public static let b = a * (1 - f)
    /// First eccentricity squared.
    public static let e2 = f * (2 - f)
    /// The smallest normal radius of curvature anywhere on the ellipsoid (meridional, at the equator).
    /// No geodesic bends more tightly than a circle of this radius, which bounds arc against chord.
    static let minimumCurvatureRadius = a * (1 - e2)

    /// Meridional radius of curvature at a latitude (metres per radian of latitude).
    public static func meridionalRadius(latitude: Double) -> Double {
        let s = sin(latitude * .pi / 180)
        let w = 1 - e2 * s * s
        return a * (1 - e2) / (w * w.squareRoot())
    }

    /// Prime-vertical radius of curvature at a latitude.
    public static func primeVerticalRadius(latitude: Double) -> Double {
        let s = sin(latitude * .pi / 180)
        return a / (1 - e2 * s * s).squareRoot()
    }
}

/// Earth-centred, earth-fixed position on the ellipsoid's surface, in metres.
struct ECEF: Sendable {
    var x: Double
    var y: Double
    var z: Double

    init(_ c: Coordinate) {
        self.init(parallel: Parallel(latitude: c.latitude), meridian: Meridian(longitude: c.longitude))
    }

    @inline(__always)
    init(x: Double, y: Double, z: Double) {
        self.x = x
        self.y = y
        self.z = z
    }

    /// The point where a parallel and a meridian meet: a grid of points shares their sines and cosines.
    @inline(__always)
    init(parallel: Parallel, meridian: Meridian) {
        x = parallel.radius * meridian.cosLambda
        y = parallel.radius * meridian.sinLambda
        z = parallel.z
    }

    /// What ECEF needs of a latitude.
    struct Parallel {
        /// Distance from the axis.
        var radius: Double
        var z: Double

        init(latitude: Double) {
            let phi = latitude * .pi / 180
            let sinPhi = sin(phi)
            let n = WGS84.a / (1 - WGS84.e2 * sinPhi * sinPhi).squareRoot()
            radius = n * cos(phi)
            z = n * (1 - WGS84.e2) * sinPhi
        }
    }

    /// What ECEF needs of a longitude.
    struct Meridian {
        var cosLambda: Double
        var sinLambda: Double

        init(longitude: Double) {
            let lambda = longitude * .pi / 180
            cosLambda = cos(lambda)
            sinLambda = sin(lambda)
        }
    }

    /// Straight-line (chord) distance: a lower bound of the geodesic distance.
    @inline(__always)
    func chord(to o: ECEF) -> Double {
        let dx = x - o.x
        let dy = y - o.y
        let dz = z - o.z
        return (dx * dx + dy * dy + dz * dz).squareRoot()
    }
}
