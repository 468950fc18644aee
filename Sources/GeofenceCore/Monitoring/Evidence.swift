/// What one fix's decisions rest on: a point, how far beyond a boundary it must lie, and the location the
/// events it causes carry.
struct Evidence {
    var point: PreparedPoint
    var margin: Double
    /// At rest: the fix moved to the rest's mean, with the mean's accuracy, for the events to carry. nil:
    /// the fix itself.
    var restLocation: Location?
    /// At rest: no `crossed` between noisy fixes of a vehicle that does not move.
    var atRest: Bool
}

/// A transition that has been confident since `location`'s time but has not yet held for the
/// condition's minimum duration.
struct PendingTransition: Sendable {
    var kind: EventKind
    var state: ConditionState
    var location: Location
}
