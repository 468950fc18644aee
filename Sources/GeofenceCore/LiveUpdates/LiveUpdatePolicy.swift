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
            p.rest.duration = 30
            p.maximumHorizontalAccuracy = 100
        case .otherNavigation:
            // Boats and trains: slower, and at rest for longer at a quay or platform.
            p.minimumInterval = 0
            p.heartbeat = 60
            p.rest.duration = 60
            p.maximumHorizontalAccuracy = 200
        case .fitness:
            p.minimumInterval = 1
            p.distanceFilter = 2
            p.rest.duration = 20
            p.rest.minimumRadius = 3
            p.maximumHorizontalAccuracy = 50
        case .airborne:
            p.minimumInterval = 0
            p.heartbeat = 30
            p.rest.duration = 120
            p.rest.minimumRadius = 10
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
    /// How a rest is recognised for `isStationary`: `rest.duration` at rest before it turns true.
    public var rest = RestDetection()

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
