import Foundation

/// Why a fix never reached the conditions.
public enum FixRejection: String, Sendable, Equatable, Codable {
    case noFix
    case invalidCoordinate
    case poorAccuracy
    /// Older than, or as old as, the last accepted fix: a duplicate or a late arrival.
    case outOfOrder
    case impossibleSpeed
}

/// Decides which fixes are fit to change states. Pure: the same fixes in give the same verdicts out.
public struct FixFilter: Sendable {
    public var configuration: MonitorConfiguration
    /// The last fix accepted.
    public private(set) var lastAccepted: Location?
    /// The last accepted fix's point, prepared.
    private(set) var lastPoint: PreparedPoint?
    private var speedRejections = 0

    public init(configuration: MonitorConfiguration, lastAccepted: Location? = nil) {
        self.configuration = configuration
        self.lastAccepted = lastAccepted
    }

    /// Accepts the fix (and remembers it) or says why not.
    public mutating func admit(_ fix: Location) -> FixRejection? {
        admit(fix, PreparedPoint(fix.coordinate))
    }

    /// The same, with the fix's point already prepared (the monitor prepares it once per fix).
    mutating func admit(_ fix: Location, _ point: PreparedPoint) -> FixRejection? {
        if fix.mode == .noFix { return .noFix }
        if !fix.coordinate.isValid { return .invalidCoordinate }
        // A fix with no accuracy is judged by the conservative `unknownAccuracy`, not rejected.
        let accuracy = configuration.usableAccuracy(fix.horizontalAccuracy)
        if accuracy > configuration.maximumHorizontalAccuracy { return .poorAccuracy }
        if let last = lastAccepted {
            let dt = fix.timestamp.timeIntervalSince(last.timestamp)
            if dt <= 0 { return .outOfOrder }
            if dt <= configuration.speedCheckMaximumGap {
                // Both fixes may be off by their accuracies; only the rest of the jump needs explaining.
                let allowance = configuration.maximumSpeed * dt + accuracy + configuration.usableAccuracy(last.horizontalAccuracy)
                // The chord bounds the distance from above: an ordinary jump needs no geodesic.
                let surelyWithin = lastPoint.map { Geodesic.upperBound(chordBetween: $0, point) <= allowance } ?? false
                if !surelyWithin, Geodesic.distance(last.coordinate, fix.coordinate) > allowance {
                    speedRejections += 1
                    if speedRejections <= configuration.speedRejectionsBeforeReanchor { return .impossibleSpeed }
                }
            }
        }
        speedRejections = 0
        lastAccepted = fix
        lastPoint = point
        return nil
    }
}
