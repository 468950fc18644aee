import Foundation

/// Decides whether the vehicle is at rest. A rest is a cluster of fixes around the mean of its first 5; a fix
/// stays in it when it lies within max(minimum radius, k x its 1-sigma accuracy) of that mean. With
/// k = 3.5 a receiver whose jitter matches its stated accuracy leaves the circle about once in 200,000
/// fixes, and two consecutive fixes outside are needed to end the rest, so jitter never reads as motion.
/// The vehicle is stationary once the rest has lasted `duration`.
public struct StationaryDetector: Sendable {
    public var duration: Double
    public var minimumRadius: Double
    public var accuracyFactor: Double
    public var breakFixes: Int

    private var sumX = 0.0, sumY = 0.0, count = 0.0
    private var projection: LocalProjection?
    private var since: Date?
    private var outside: [Location] = []

    public init(duration: Double, minimumRadius: Double = 5, accuracyFactor: Double = 3.5, breakFixes: Int = 2) {
        self.duration = duration
        self.minimumRadius = minimumRadius
        self.accuracyFactor = accuracyFactor
        self.breakFixes = max(1, breakFixes)
    }

    public init(policy: LiveUpdatePolicy) {
        self.init(duration: policy.stationaryDuration, minimumRadius: policy.stationaryMinimumRadius,
                  accuracyFactor: policy.stationaryAccuracyFactor, breakFixes: policy.stationaryBreakFixes)
    }

    /// Feeds a fix; returns whether the vehicle is stationary at it.
    public mutating func update(_ fix: Location) -> Bool {
        guard let projection, let since else {
            restart(at: fix)
            return false
        }
        let p = projection.project(longitude: fix.coordinate.longitude, latitude: fix.coordinate.latitude)
        let centre = (x: sumX / min(count, Self.centreFixes), y: sumY / min(count, Self.centreFixes))
        let distance = ((p.x - centre.x) * (p.x - centre.x) + (p.y - centre.y) * (p.y - centre.y)).squareRoot()
        let radius = max(minimumRadius, accuracyFactor * max(fix.horizontalAccuracy, 0))
        if distance <= radius {
            outside.removeAll()
            // The centre settles on the first five fixes; later ones do not move it, so a vehicle
            // creeping away cannot drag its rest along.
            if count < Self.centreFixes {
                sumX += p.x
                sumY += p.y
            }
            count += 1
        } else {
            outside.append(fix)
            if outside.count >= breakFixes {
                // Moving: the new rest, if any, starts at the first fix that left.
                let left = outside
                restart(at: left[0])
                for f in left.dropFirst() { _ = update(f) }
                return false
            }
        }
        // At least three fixes: one fix and a long gap (a time jump, a tunnel) are not a rest.
        return count >= Self.minimumFixes && fix.timestamp.timeIntervalSince(since) >= duration
    }

    public static let minimumFixes = 3.0
    public static let centreFixes = 5.0

    private mutating func restart(at fix: Location) {
        projection = LocalProjection(origin: fix.coordinate)
        since = fix.timestamp
        sumX = 0
        sumY = 0
        count = 1
        outside.removeAll()
    }
}
