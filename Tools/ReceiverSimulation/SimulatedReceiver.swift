import Foundation
import GeofenceCore

/// Fixes as a real receiver reports them for a known true track: the position off by a correlated
/// Gaussian error (`GaussMarkovError`), the receiver's stated 1-sigma accuracy, sometimes too optimistic,
/// and its Doppler speed.
public struct SimulatedReceiver: Sendable {
    /// What the receiver is like.
    public struct Profile: Sendable, CustomStringConvertible {
        /// The true 1-sigma horizontal accuracy, metres (σ per axis = accuracy/√2).
        public var accuracy: Double
        /// τ of the error, seconds.
        public var correlationTime: Double
        public var whiteFraction: Double = 0.2
        /// The share of epochs whose stated accuracy is the true one divided by `underReportingFactor`.
        public var underReportingRate: Double = 0
        public var underReportingFactor: Double = 1.5
        /// The Doppler speed's error per axis, m/s; nil: the receiver reports no speed.
        public var speedSigma: Double? = 0.1

        public init(
            accuracy: Double, correlationTime: Double, underReportingRate: Double = 0, speedSigma: Double? = 0.1
        ) {
            self.accuracy = accuracy
            self.correlationTime = correlationTime
            self.underReportingRate = underReportingRate
            self.speedSigma = speedSigma
        }

        public var description: String {
            "accuracy \(accuracy) m, τ \(correlationTime) s, under-reporting \(underReportingRate), speed σ \(speedSigma.map { "\($0)" } ?? "none")"
        }
    }

    public let profile: Profile
    /// Multipath episodes that pull the position aside (stated accuracy and Doppler untouched).
    public var episodes: [MultipathEpisode] = []
    private var error: GaussMarkovError
    private var rng: SplitMix64
    private var lastTime: Date?

    public init(_ profile: Profile, seed: UInt64) {
        self.profile = profile
        error = GaussMarkovError(
            sigmaPerAxis: profile.accuracy / 2.0.squareRoot(), correlationTime: profile.correlationTime,
            whiteFraction: profile.whiteFraction)
        rng = SplitMix64(seed: seed)
    }

    /// The fix reported at `time` for a vehicle truly at `truth`, moving at `velocity` (m/s east, north).
    public mutating func fix(truth: Coordinate, velocity: (east: Double, north: Double) = (0, 0), at time: Date)
        -> Location
    {
        let dt = lastTime.map { time.timeIntervalSince($0) } ?? 1
        lastTime = time
        let e = error.next(after: dt, using: &rng)
        var pull = (east: 0.0, north: 0.0)
        for episode in episodes where episode.contains(time) {
            let d = episode.displacement(at: time)
            pull = (pull.east + d.east, pull.north + d.north)
        }
        let position = Offsets.moved(truth, east: e.east + pull.east, north: e.north + pull.north)
        var stated = profile.accuracy
        if profile.underReportingRate > 0, Double.random(in: 0..<1, using: &rng) < profile.underReportingRate {
            stated /= profile.underReportingFactor
        }
        var speed = -1.0
        var course = -1.0
        if let s = profile.speedSigma {
            let ve = velocity.east + s * Gaussian.next(&rng)
            let vn = velocity.north + s * Gaussian.next(&rng)
            speed = (ve * ve + vn * vn).squareRoot()
            course = (atan2(ve, vn) * 180 / .pi + 360).truncatingRemainder(dividingBy: 360)
        }
        return Location(coordinate: position, horizontalAccuracy: stated, speed: speed, course: course, timestamp: time)
    }
}

/// Small moves on the ellipsoid, in metres, exact enough for fence-scale tests (a local tangent plane).
public enum Offsets {
    public static func moved(_ c: Coordinate, east: Double, north: Double) -> Coordinate {
        let radians = 180 / Double.pi
        return Coordinate(
            latitude: c.latitude + north / WGS84.meridionalRadius(latitude: c.latitude) * radians,
            longitude: c.longitude + east / (metresPerRadianOfLongitude(at: c.latitude)) * radians)
    }

    /// Metres per radian of longitude along the parallel of a latitude.
    static func metresPerRadianOfLongitude(at latitude: Double) -> Double {
        WGS84.primeVerticalRadius(latitude: latitude) * cos(latitude * .pi / 180)
    }

    public static func moved(_ c: Coordinate, metres: Double, bearing: Double) -> Coordinate {
        let b = bearing * .pi / 180
        return moved(c, east: metres * sin(b), north: metres * cos(b))
    }
}
