import Foundation

/// What the motion-consistency check made of a fix (docs/monitoring.md, "Multipath").
public enum MotionVerdict: String, Sendable, Equatable, Codable, CaseIterable {
    /// The position agrees with where the vehicle's own Doppler motion carried the trusted ones.
    case consistent
    /// It does not: reflections pulled it aside. Not evidence for any decision.
    case excursion
    /// Not checked, decided as before the check: the fix carries no Doppler speed and course.
    case noDoppler
    /// Not checked: the vehicle is at rest, where a receiver's course means nothing; a rest is decided on
    /// its averaged position.
    case stationary
    /// Not checked: the first fix, the first after a gap (an outage, a tunnel), the first after a change of
    /// velocity no vehicle makes, or a new anchor after an excursion too long to be one.
    case reacquiring
}

/// How the motion-consistency check works; the defaults and the statistics behind them are in
/// docs/monitoring.md, "Multipath".
public struct MotionCheckSettings: Sendable, Equatable, Codable {
    /// Off, every fix gets no verdict and is decided as before.
    public var enabled = true
    /// The probability that a fix whose error is what its receiver states agrees: a two-dimensional
    /// (chi-square, 2 degrees of freedom) bound on the disagreement.
    public var confidence = 0.9999
    /// The Doppler velocity's 1-sigma error per axis, m/s, when the receiver states a smaller one or none.
    public var dopplerSigma = 0.1
    /// Below this Doppler speed, m/s, the vehicle is at rest for the check.
    public var stationarySpeed = 0.5
    /// A longer gap between fixes, seconds, ends the carried-forward track: the next fix starts a new one.
    public var maximumGap = 10.0
    /// Disagreement that lasts longer than this, seconds, is where the vehicle is, not an excursion: the
    /// check starts again from the fix then. It starts again sooner when the disagreement has lasted longer
    /// than the track it disagrees with had been followed (a track begun during an excursion).
    public var maximumExcursion = 120.0
    /// A change of Doppler velocity faster than this, m/s², is no motion a vehicle makes (a GPX whose course
    /// flips at a turn, a receiver's glitch): nothing can be carried across it, so the check starts again.
    public var maximumAcceleration = 10.0

    public init() {}

    /// The squared bound, in standard deviations, on a two-dimensional disagreement: −2 ln(1 − confidence).
    var chiSquare: Double { -2 * log(max(1 - confidence, 1e-300)) }
}

/// Checks each position against the vehicle's own motion. Under urban multipath a receiver's position is
/// pulled tens to hundreds of metres aside for seconds while its stated accuracy stays the same; its
/// Doppler speed and course stay true, as they come from carrier frequencies, not ranges.
///
/// Two positions are carried forward with the Doppler velocity (the mean of two fixes' over the interval):
/// - the anchor, a slow average of the trusted positions (a Kalman gain for errors correlated over
///   `correlationTime`), whose own uncertainty grows with the Doppler's error while it is carried;
/// - the last fix, when it was trusted: a ramp away shows as a step that the motion does not explain.
/// A fix further from either than the combined 1-sigma errors allow at `confidence` is an excursion. The
/// first agreeing fix after an excursion is held back too, as the way back is a ramp as well. Pure: the
/// same fixes give the same verdicts.
public struct MotionCheck: Sendable {
    public let settings: MotionCheckSettings
    /// τ of the receiver's error, seconds: n fixes pin the anchor as n·Δt/(2τ) independent ones would.
    public let correlationTime: Double
    /// The 1-sigma accuracy assumed for a fix that states none.
    public let unknownAccuracy: Double

    private struct Track: Sendable {
        var anchor: Coordinate
        /// The anchor's error variance per axis, m².
        var variance: Double
        var lastCoordinate: Coordinate
        /// The last fix's error variance per axis, m².
        var lastVariance: Double
        var lastTime: Date
        var lastVelocity: SIMD2<Double>
        var lastVerdict: MotionVerdict
        /// The last fix disagreed: the next one that agrees is held back all the same.
        var lastDisagreed = false
        /// When this track began (the first fix or a reacquisition).
        var since: Date
        var excursionSince: Date?
    }
    private var track: Track?

    public init(settings: MotionCheckSettings = MotionCheckSettings(), correlationTime: Double, unknownAccuracy: Double)
    {
        self.settings = settings
        self.correlationTime = correlationTime
        self.unknownAccuracy = unknownAccuracy
    }

    public init(configuration: MonitorConfiguration) {
        self.init(
            settings: configuration.motionCheck, correlationTime: configuration.noiseCorrelationTime,
            unknownAccuracy: configuration.unknownAccuracy)
    }

    /// The verdict on a fix, or nil for one the check cannot use (no fix, an invalid position, not later
    /// than the last): it changes nothing.
    public mutating func check(_ fix: Location) -> MotionVerdict? {
        guard settings.enabled, fix.mode != .noFix, fix.coordinate.isValid else { return nil }
        if let t = track, fix.timestamp <= t.lastTime { return nil }
        let accuracy =
            fix.horizontalAccuracy.isFinite && fix.horizontalAccuracy >= 0 ? fix.horizontalAccuracy : unknownAccuracy
        // Per axis: a 1-sigma horizontal accuracy h is h/√2 on each.
        let fixVariance = max(accuracy * accuracy / 2, 0.01)
        guard let velocity = Self.velocity(of: fix) else {
            track = nil
            return .noDoppler
        }
        guard var t = track, fix.timestamp.timeIntervalSince(t.lastTime) <= settings.maximumGap else {
            return start(at: fix, velocity: velocity, variance: fixVariance)
        }
        let dt = fix.timestamp.timeIntervalSince(t.lastTime)
        let sigmaV = max(settings.dopplerSigma, fix.speedAccuracy.isFinite ? fix.speedAccuracy : 0)
        let change = velocity - t.lastVelocity
        if Self.squared(change).squareRoot() > settings.maximumAcceleration * dt + 4 * sigmaV {
            return start(at: fix, velocity: velocity, variance: fixVariance)
        }
        let travel = (t.lastVelocity + velocity) * (dt / 2)
        let carriedVariance = (sigmaV * dt) * (sigmaV * dt)
        t.anchor = Self.moved(t.anchor, by: travel)
        t.variance += carriedVariance
        let fromAnchor = Self.offset(from: t.anchor, to: fix.coordinate)
        var agrees = Self.squared(fromAnchor) <= settings.chiSquare * (fixVariance + t.variance)
        if agrees, t.lastVerdict != .excursion, t.lastVerdict != .stationary {
            // The step since a trusted fix: the difference of two errors. Bounded as two independent ones:
            // a receiver's error is partly white, its correlation time is not known here, and one fix in ten
            // may state a smaller accuracy than it has (crediting the correlation flagged about one
            // crossing in 350 under such noise, DecisionNoiseTests).
            let step = Self.offset(from: t.lastCoordinate, to: fix.coordinate) - travel
            agrees = Self.squared(step) <= settings.chiSquare * (fixVariance + t.lastVariance + carriedVariance)
        }
        let verdict: MotionVerdict
        let atRest = fix.speed < settings.stationarySpeed
        if atRest || (agrees && !t.lastDisagreed) {
            verdict = atRest ? .stationary : .consistent
            if agrees {
                // A Kalman update whose measurement noise counts the fixes' correlation: the anchor follows
                // the positions slowly, so a slow drift does not carry it away.
                let correlated = fixVariance * max(1, 2 * correlationTime / max(dt, 0.1))
                let gain = t.variance / (t.variance + correlated)
                t.anchor = Self.moved(t.anchor, by: fromAnchor * gain)
                t.variance *= 1 - gain
            } else {
                // At rest nothing is checked; a position that left the anchor becomes it.
                t.anchor = fix.coordinate
                t.variance = fixVariance
            }
            t.excursionSince = nil
        } else {
            let since = t.excursionSince ?? fix.timestamp
            let followed = since.timeIntervalSince(t.since)
            if fix.timestamp.timeIntervalSince(since) > min(settings.maximumExcursion, followed) {
                return start(at: fix, velocity: velocity, variance: fixVariance)
            }
            // Disagreeing, or the first agreeing fix after an excursion (the way back is a ramp too).
            verdict = .excursion
            t.excursionSince = agrees ? nil : since
        }
        t.lastDisagreed = !agrees && !atRest
        t.lastCoordinate = fix.coordinate
        t.lastVariance = fixVariance
        t.lastTime = fix.timestamp
        t.lastVelocity = velocity
        t.lastVerdict = verdict
        track = t
        return verdict
    }

    private mutating func start(at fix: Location, velocity: SIMD2<Double>, variance: Double) -> MotionVerdict {
        track = Track(
            anchor: fix.coordinate, variance: variance, lastCoordinate: fix.coordinate, lastVariance: variance,
            lastTime: fix.timestamp,
            lastVelocity: velocity, lastVerdict: .reacquiring, since: fix.timestamp)
        return .reacquiring
    }

    /// East and north metres per second from the fix's speed and course; at rest the course may be
    /// anything, and a speed without a course is no velocity.
    static func velocity(of fix: Location) -> SIMD2<Double>? {
        guard fix.speed.isFinite, fix.speed >= 0, fix.course.isFinite, fix.course >= 0 else { return nil }
        let radians = fix.course * .pi / 180
        return SIMD2(fix.speed * sin(radians), fix.speed * cos(radians))
    }

    static func offset(from a: Coordinate, to b: Coordinate) -> SIMD2<Double> {
        LocalProjection(origin: a).project(longitude: b.longitude, latitude: b.latitude)
    }

    static func moved(_ c: Coordinate, by metres: SIMD2<Double>) -> Coordinate {
        LocalProjection(origin: c).unproject(x: metres.x, y: metres.y)
    }

    static func squared(_ v: SIMD2<Double>) -> Double { (v * v).sum() }
}
