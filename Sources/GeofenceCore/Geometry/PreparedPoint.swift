import Foundation

/// A position with what every region test needs computed once per fix, not once per condition.
public struct PreparedPoint: Sendable {
    public let coordinate: Coordinate
    let ecef: ECEF
    let projection: LocalProjection

    public init(_ coordinate: Coordinate) {
        self.coordinate = coordinate
        // One sine and cosine of each angle, shared by the ECEF position and the projection's scales.
        let (x, y, z, n, w, cosPhi) = Self.ellipsoidTerms(coordinate)
        ecef = ECEF(x: x, y: y, z: z)
        projection = LocalProjection(
            origin: coordinate, primeVerticalRadius: n,
            meridionalRadius: WGS84.a * (1 - WGS84.e2) / (w * w.squareRoot()),
            cosLatitude: cosPhi)
    }

    /// The position in earth-centred, earth-fixed metres on the WGS84 ellipsoid: the chord between two of
    /// these orders places by distance along the ellipsoid.
    public var earthCentred: SIMD3<Double> { SIMD3(ecef.x, ecef.y, ecef.z) }

    /// `PreparedPoint(coordinate).earthCentred`, exactly, without the rest of the preparation.
    @inlinable
    public static func earthCentred(_ coordinate: Coordinate) -> SIMD3<Double> {
        let (x, y, z, _, _, _) = ellipsoidTerms(coordinate)
        return SIMD3(x, y, z)
    }

    /// ECEF x, y, z, the prime-vertical radius, 1 - e² sin²φ and cos φ.
    @inlinable @inline(__always)
    static func ellipsoidTerms(_ coordinate: Coordinate) -> (Double, Double, Double, Double, Double, Double) {
        let phi = coordinate.latitude * .pi / 180
        let lambda = coordinate.longitude * .pi / 180
        let sinPhi = sin(phi)
        let cosPhi = cos(phi)
        let w = 1 - WGS84.e2 * sinPhi * sinPhi
        let n = WGS84.a / w.squareRoot()
        return (n * cosPhi * cos(lambda), n * cosPhi * sin(lambda), n * (1 - WGS84.e2) * sinPhi, n, w, cosPhi)
    }

    @inline(__always) var longitude: Double { coordinate.longitude }
    @inline(__always) var latitude: Double { coordinate.latitude }
}

/// Where a point lies relative to a region, with a margin of doubt around its boundary.
public enum Containment: Sendable, Equatable {
    /// Inside by more than the margin.
    case inside
    /// Outside by more than the margin.
    case outside
    /// Within the margin of the boundary: no confident decision.
    case uncertain
}
