/// What one fix's decisions rest on: a position, how far beyond a boundary it must lie, and, at rest, the
/// rest whose mean it is.
struct Evidence {
    var coordinate: Coordinate
    var margin: Double
    /// At rest: the rest the position is the mean of. nil: the position is the fix itself.
    var rest: RestEstimate?
    /// The position prepared for exact tests, made on the first one: most fixes need none.
    private var prepared: PreparedPoint?

    init(coordinate: Coordinate, margin: Double, rest: RestEstimate? = nil) {
        self.coordinate = coordinate
        self.margin = margin
        self.rest = rest
    }

    /// At rest: no `crossed` between noisy fixes of a vehicle that does not move.
    var atRest: Bool { rest != nil }

    mutating func point() -> PreparedPoint {
        if let prepared { return prepared }
        let made = PreparedPoint(coordinate)
        prepared = made
        return made
    }

    /// The location the events this evidence causes carry: the fix, or at rest the fix moved to the rest's
    /// mean with the mean's accuracy.
    func location(_ fix: Location) -> Location {
        guard let rest else { return fix }
        var location = fix
        location.coordinate = rest.mean
        location.horizontalAccuracy = rest.horizontalAccuracy
        return location
    }
}

/// A transition that has been confident since `location`'s time but has not yet held for the
/// condition's minimum duration.
struct PendingTransition: Sendable {
    var kind: EventKind
    var state: ConditionState
    var location: Location
}
