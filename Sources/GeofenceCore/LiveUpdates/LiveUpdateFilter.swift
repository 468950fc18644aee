import Foundation

/// One live update, shaped like Core Location's `CLLocationUpdate`.
public struct LiveUpdate: Sendable, Equatable {
    public var location: Location
    /// At rest within the fixes' accuracy for the configuration's stationary duration.
    public var isStationary: Bool

    public init(location: Location, isStationary: Bool) {
        self.location = location
        self.isStationary = isStationary
    }
}

/// Decides which locations become live updates. Pure: the same locations give the same updates.
///
/// A location is delivered when it is accurate enough and
/// - it is the first; or
/// - `isStationary` changed (always delivered, so a dashboard sees a stop and a start at once); or
/// - the heartbeat has elapsed since the last delivered update; or
/// - at least `minimumInterval` has passed and it is at least `distanceFilter` metres from the last
///   delivered one. While stationary, movement within the rest circle is not movement.
public struct LiveUpdateFilter: Sendable {
    public let policy: LiveUpdatePolicy
    private var stationary: StationaryDetector
    private var last: LiveUpdate?

    public init(policy: LiveUpdatePolicy) {
        self.policy = policy
        stationary = StationaryDetector(policy: policy)
    }

    public init(configuration: LiveConfiguration) {
        self.init(policy: configuration.policy)
    }

    public mutating func update(_ location: Location) -> LiveUpdate? {
        guard location.horizontalAccuracy >= 0, location.horizontalAccuracy <= policy.maximumHorizontalAccuracy else {
            return nil
        }
        let isStationary = stationary.update(location)
        let candidate = LiveUpdate(location: location, isStationary: isStationary)
        guard let last else {
            self.last = candidate
            return candidate
        }
        let elapsed = location.timestamp.timeIntervalSince(last.location.timestamp)
        let deliver: Bool
        if isStationary != last.isStationary && !policy.significantChangesOnly {
            deliver = true
        } else if elapsed >= policy.heartbeat {
            deliver = true
        } else if isStationary && !policy.significantChangesOnly {
            deliver = false
        } else {
            deliver =
                elapsed >= policy.minimumInterval
                && Geodesic.distance(last.location.coordinate, location.coordinate) >= policy.distanceFilter
        }
        guard deliver else { return nil }
        self.last = candidate
        return candidate
    }
}

/// Heading updates, as Core Location's `headingFilter`: delivered when the course has turned by at least
/// `headingFilter` degrees since the last delivered one. Courses are only trusted while moving.
public struct HeadingFilter: Sendable {
    public var headingFilter: Double
    /// Below this speed (m/s) a receiver's course is noise.
    public var minimumSpeed: Double
    private var last: Double?

    public init(headingFilter: Double = 1, minimumSpeed: Double = 1) {
        self.headingFilter = headingFilter
        self.minimumSpeed = minimumSpeed
    }

    /// The course to deliver, degrees clockwise from true north, or nil.
    public mutating func update(_ location: Location) -> Double? {
        guard location.course >= 0, location.course.isFinite, location.speed >= minimumSpeed else { return nil }
        let course = location.course.truncatingRemainder(dividingBy: 360)
        if let last {
            var turn = abs(course - last).truncatingRemainder(dividingBy: 360)
            if turn > 180 { turn = 360 - turn }
            guard turn >= headingFilter else { return nil }
        }
        last = course
        return course
    }
}
