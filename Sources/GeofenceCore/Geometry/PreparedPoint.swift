/// A position with what every region test needs computed once per fix, not once per condition.
public struct PreparedPoint: Sendable {
    public let coordinate: Coordinate
    let ecef: ECEF
    let projection: LocalProjection

    public init(_ coordinate: Coordinate) {
        self.coordinate = coordinate
        ecef = ECEF(coordinate)
        projection = LocalProjection(origin: coordinate)
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
