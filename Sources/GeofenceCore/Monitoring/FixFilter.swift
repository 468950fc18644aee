import Foundation

/// Why a fix never reached the conditions.
public enum FixRejection: String, Sendable, Equatable, Codable, CaseIterable {
    case noFix
    case invalidCoordinate
    case poorAccuracy
    /// Older than, or as old as, the last accepted fix: a duplicate or a late arrival.
    case outOfOrder
    case impossibleSpeed
    /// The position disagrees with the vehicle's own Doppler motion: multipath (`MotionCheck`).
    case excursion
}

/// Decides which fixes are fit to change states. Pure: the same fixes in give the same verdicts out.
public struct FixFilter: Sendable {
    public var configuration: MonitorConfiguration
    /// The last fix accepted.
    public private(set) var lastAccepted: Location?
    /// Where and when the last accepted fix was, read in place rather than through a copy of the fix.
    var lastPosition: (coordinate: Coordinate, timestamp: Date)? {
        guard let coordinate = lastAccepted?.coordinate, let timestamp = lastAccepted?.timestamp else { return nil }
        return (coordinate, timestamp)
    }
    private var speedRejections = 0
    /// Fixes were refused as multipath excursions since the last accepted one: where the vehicle went in
    /// between is not the straight line from it, so no `crossed` is inferred across them.
    public private(set) var excursionSinceAccepted = false

    public init(configuration: MonitorConfiguration, lastAccepted: Location? = nil) {
        self.configuration = configuration
        self.lastAccepted = lastAccepted
    }

    /// Accepts the fix (and remembers it) or says why not.
    public mutating func admit(_ fix: Location) -> FixRejection? {
        if fix.mode == .noFix { return .noFix }
        if !fix.coordinate.isValid { return .invalidCoordinate }
        // A fix with no accuracy is judged by the conservative `unknownAccuracy`, not rejected.
        let accuracy = configuration.usableAccuracy(fix.horizontalAccuracy)
        if accuracy > configuration.maximumHorizontalAccuracy { return .poorAccuracy }
        // The last fix's fields are read in place: binding it, or comparing it with nil (`Equatable`'s `==`),
        // copied the whole fix, its device's name retained and released, on every fix.
        if let last = lastPosition {
            let dt = fix.timestamp.timeIntervalSince(last.timestamp)
            if dt <= 0 { return .outOfOrder }
            if fix.motionVerdict == .excursion {
                excursionSinceAccepted = true
                return .excursion
            }
            if dt <= configuration.speedCheckMaximumGap, let lastAccuracy = lastAccepted?.horizontalAccuracy {
                // Both fixes may be off by their accuracies; only the rest of the jump needs explaining.
                let allowance = configuration.maximumSpeed * dt + accuracy + configuration.usableAccuracy(lastAccuracy)
                // A bound from the degrees alone settles an ordinary jump without a geodesic.
                let surelyWithin = Geodesic.upperBound(degreesBetween: last.coordinate, fix.coordinate) <= allowance
                if !surelyWithin, Geodesic.distance(last.coordinate, fix.coordinate) > allowance {
                    speedRejections += 1
                    if speedRejections <= configuration.speedRejectionsBeforeReanchor { return .impossibleSpeed }
                }
            }
        } else if fix.motionVerdict == .excursion {
            return .excursion
        }
        speedRejections = 0
        excursionSinceAccepted = false
        lastAccepted = fix
        return nil
    }
}
