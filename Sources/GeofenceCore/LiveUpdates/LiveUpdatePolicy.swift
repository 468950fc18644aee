import Foundation

/// The presets of Core Location's `CLLocationUpdate.LiveConfiguration`, each a documented set of filters
/// (docs/locations.md has the table).
public enum LiveConfiguration: String, Sendable, Codable, CaseIterable {
    case `default`
    case automotiveNavigation
    case otherNavigation
    case fitness
    case airborne

    public var policy: LiveUpdatePolicy {
        var p = LiveUpdatePolicy()
        switch self {
        case .default:
            break
        case .automotiveNavigation:
            p.minimumInterval = 0
            p.heartbeat = 30
            p.stationaryDuration = 30
            p.maximumHorizontalAccuracy = 100
        case .otherNavigation:
            // Boats and trains: slower, and at rest for longer at a quay or platform.
            p.minimumInterval = 0
            p.heartbeat = 60
            p.stationaryDuration = 60
            p.maximumHorizontalAccuracy = 200
        case .fitness:
            p.minimumInterval = 1
            p.distanceFilter = 2
            p.stationaryDuration = 20
            p.stationaryMinimumRadius = 3
            p.maximumHorizontalAccuracy = 50
        case .airborne:
            p.minimumInterval = 0
            p.heartbeat = 30
            p.stationaryDuration = 120
            p.stationaryMinimumRadius = 10
            p.maximumHorizontalAccuracy = 500
        }
        return p
    }
}

/// The filters between raw locations and live updates. All times are on the fixes' timeline (seconds).
public struct LiveUpdatePolicy: Sendable, Equatable, Codable {
    /// Metres from the last delivered location before another is delivered; 0 delivers every fix.
    public var distanceFilter: Double = 0
    /// The shortest time between updates.
    public var minimumInterval: Double = 1
    /// The longest silence: an update is delivered after this long even without movement.
    public var heartbeat: Double = 60
    /// Core Location's significant-change service: at least 500 m and at least 5 minutes apart.
    public var significantChangesOnly = false
    /// Fixes less accurate than this (1-sigma metres) are not delivered.
    public var maximumHorizontalAccuracy: Double = 1000
    /// Seconds at rest, within the fixes' accuracy, before `isStationary` turns true.
    public var stationaryDuration: Double = 10
    /// The rest circle is at least this wide (metres), and at least `stationaryAccuracyFactor` 1-sigma
    /// (of the fix and of the rest's mean together; see `StationaryDetector`).
    public var stationaryMinimumRadius: Double = 5
    public var stationaryAccuracyFactor: Double = 5
    /// A fix whose speed is at least this (m/s) is moving wherever it lies.
    public var stationaryMovingSpeed: Double = 0.5
    /// Consecutive fixes outside the rest circle that end a rest. Two: one wild fix is jitter.
    public var stationaryBreakFixes: Int = 2

    public static let significantChangeDistance: Double = 500
    public static let significantChangeInterval: Double = 300

    public init() {}

    /// The significant-change preset: at least 500 m and 5 minutes between updates.
    public static var significantChanges: LiveUpdatePolicy {
        var p = LiveUpdatePolicy()
        p.significantChangesOnly = true
        p.distanceFilter = significantChangeDistance
        p.minimumInterval = significantChangeInterval
        p.heartbeat = .infinity
        return p
    }
}
