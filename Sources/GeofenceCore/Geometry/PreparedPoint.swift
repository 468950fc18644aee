import Foundation

/// A position with what every region test needs computed once per fix, not once per condition.
public struct PreparedPoint: Sendable {
    public let coordinate: Coordinate
    let ecef: ECEF
    let projection: LocalProjection

    public init(_ coordinate: Coordinate) {
        self.coordinate = coordinate
        // One sine and cosine of each angle, shared by the ECEF position and the projection's scales.
        let phi = coordinate.latitude * .pi / 180, lambda = coordinate.longitude * .pi / 180
        let sinPhi = sin(phi), cosPhi = cos(phi)
        let w = 1 - WGS84.e2 * sinPhi * sinPhi
        let n = WGS84.a / w.squareRoot()
        ecef = ECEF(x: n * cosPhi * cos(lambda), y: n * cosPhi * sin(lambda), z: n * (1 - WGS84.e2) * sinPhi)
        projection = LocalProjection(origin: coordinate, primeVerticalRadius: n, meridionalRadius: WGS84.a * (1 - WGS84.e2) / (w * w.squareRoot()),
                                     cosLatitude: cosPhi)
    }

    /// The position in earth-centred, earth-fixed metres on the WGS84 ellipsoid: the chord between two of
    /// these orders places by distance along the ellipsoid.
    public var earthCentred: SIMD3<Double> { SIMD3(ecef.x, ecef.y, ecef.z) }

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
