import Foundation

/// Decides whether the vehicle is at rest, and what its rest says about where it is.
///
/// A rest is the run of fixes that agree with the mean of the rest so far: within
/// max(minimumRadius, accuracyFactor × √(a² + m²)) of it, where a is the larger of the fix's 1-sigma accuracy
/// and the rest's typical (RMS) accuracy, and m is the mean's own 1-sigma radius. Taking the larger accuracy
/// means a receiver that under-reports one epoch cannot break a rest. A fix whose Doppler speed shows motion
/// does not agree, wherever it is. `breakFixes` consecutive fixes that do not agree end the rest, and a new
/// one starts at the first of them.
///
/// With accuracyFactor 5 the circle is 7.07 σ per axis, so a receiver whose error is Gaussian with its stated
/// accuracy leaves it once in 10^11 fixes (exp(−25)): noise, even correlated over minutes, never reads as
/// motion. The vehicle is stationary once the rest has lasted `duration` over at least three fixes.
public struct StationaryDetector: Sendable {
    /// Whether the vehicle moves, as far as the fixes so far show.
    public enum Motion: Sendable, Equatable {
        /// The first fixes agree with a rest that has not lasted long enough, and none has moved yet.
        case unknown
        /// It has moved, and is not (yet again) stationary.
        case moving
        case stationary
    }

    public var settings: RestDetection
    /// The receiver error's correlation time, for the mean's uncertainty (see `RestEstimate`).
    public var correlationTime: Double

    /// The rest's first fix: positions are metres from it, in a projection made only once a second fix
    /// needs it (a vehicle whose Doppler speed shows motion never does).
    private var origin: Coordinate?
    private var projectionCache: LocalProjection?
    private var sumX = 0.0, sumY = 0.0, sumXX = 0.0, sumYY = 0.0, sumVariance = 0.0, count = 0.0
    private var since: Date?
    private var latest: Date?
    private var outside: [(fix: Location, accuracy: Double)] = []
    /// Consecutive fixes whose Doppler speed shows motion.
    private var motionRun = 0
    private var hasMoved = false
    public private(set) var motion: Motion = .unknown

    public init(settings: RestDetection, correlationTime: Double = 60) {
        self.settings = settings
        self.settings.breakFixes = max(1, settings.breakFixes)
        self.correlationTime = correlationTime
    }

    /// With `duration` and the defaults of `RestDetection` otherwise.
    public init(duration: Double) {
        var settings = RestDetection()
        settings.duration = duration
        self.init(settings: settings)
    }

    public init(policy: LiveUpdatePolicy) {
        self.init(settings: policy.rest)
    }

    /// Feeds a fix; returns whether the vehicle is stationary at it. A fix with no accuracy counts as 0 m:
    /// the rest's typical accuracy then judges it.
    @discardableResult
    public mutating func update(_ fix: Location) -> Bool {
        update(fix, accuracy: max(fix.horizontalAccuracy, 0))
    }

    /// The same, judging the fix by `accuracy` instead of its own (a monitor's conservative default for
    /// a fix that has none).
    @discardableResult
    public mutating func update(_ fix: Location, accuracy: Double) -> Bool {
        guard let origin else {
            restart(at: fix, accuracy)
            motionRun = showsMotion(fix) ? 1 : 0
            return decide(fix)
        }
        if showsMotion(fix) {
            motionRun += 1
            if motionRun >= settings.breakFixes {
                // Moving by its own speed, fix after fix: no position test, and no rest worth keeping.
                hasMoved = true
                restart(at: fix, accuracy)
                return decide(fix)
            }
        } else {
            motionRun = 0
        }
        if motionRun == 0, agrees(fix, accuracy, origin) {
            if !outside.isEmpty { outside.removeAll(keepingCapacity: true) }
            add(fix, accuracy)
        } else {
            outside.append((fix, accuracy))
            if outside.count >= settings.breakFixes {
                // Moving: the new rest, if any, starts at the first fix that left.
                let left = outside
                hasMoved = true
                restart(at: left[0].fix, left[0].accuracy)
                for f in left.dropFirst() { update(f.fix, accuracy: f.accuracy) }
                return decide(fix)
            }
        }
        return decide(fix)
    }

    /// The rest the vehicle is in (or the one forming), once it holds a fix.
    public var rest: RestEstimate? {
        guard let origin, let since, let latest, count > 0 else { return nil }
        let mean =
            count == 1
            ? origin : (projectionCache ?? LocalProjection(origin: origin)).unproject(x: sumX / count, y: sumY / count)
        return RestEstimate(
            mean: mean, fixes: Int(count), duration: latest.timeIntervalSince(since),
            sigmaPerAxis: meanSigmaPerAxis, typicalAccuracy: typicalAccuracy)
    }

    /// The radius of the circle a fix of this 1-sigma accuracy must lie in to agree with the rest. From
    /// stated accuracies only: the fixes' own scatter would grow with a vehicle creeping away and let the
    /// circle follow it.
    public func radius(forAccuracy accuracy: Double) -> Double {
        let a = max(accuracy, typicalAccuracy)
        let m = statedSigmaPerAxis * gain.squareRoot() * 2.0.squareRoot()
        return max(settings.minimumRadius, settings.accuracyFactor * (a * a + m * m).squareRoot())
    }

    // MARK: The rest's statistics

    /// The rest's RMS accuracy: a fix claiming better is judged by this.
    private var typicalAccuracy: Double { count > 0 ? (sumVariance / count).squareRoot() : 0 }

    /// The per-axis σ of one fix the receiver states (accuracy/√2).
    private var statedSigmaPerAxis: Double { count > 0 ? (sumVariance / count / 2).squareRoot() : 0 }

    /// The per-axis σ of one fix for the mean's uncertainty: the stated one, or the scatter the rest shows
    /// when that is larger (a receiver that under-reports all the time).
    private var fixSigmaPerAxis: Double {
        guard count > 0 else { return 0 }
        let mx = sumX / count
        let my = sumY / count
        let scatter = max(sumXX / count - mx * mx, sumYY / count - my * my, 0)
        return max(statedSigmaPerAxis, scatter.squareRoot())
    }

    /// The share of one fix's variance left in the rest's mean (`RestEstimate.varianceFactor`).
    private var gain: Double {
        guard count > 0, let since, let latest else { return 1 }
        return RestEstimate.varianceFactor(
            fixes: Int(count), duration: latest.timeIntervalSince(since), correlationTime: correlationTime)
    }

    private var meanSigmaPerAxis: Double { fixSigmaPerAxis * gain.squareRoot() }

    private mutating func projection(_ origin: Coordinate) -> LocalProjection {
        if let projectionCache { return projectionCache }
        let made = LocalProjection(origin: origin)
        projectionCache = made
        return made
    }

    private func showsMotion(_ fix: Location) -> Bool {
        guard fix.speed.isFinite, fix.speed >= 0 else { return false }
        let threshold = max(
            settings.movingSpeed, fix.speedAccuracy >= 0 && fix.speedAccuracy.isFinite ? 3 * fix.speedAccuracy : 0)
        return fix.speed >= threshold
    }

    private mutating func agrees(_ fix: Location, _ accuracy: Double, _ origin: Coordinate) -> Bool {
        let p = projection(origin).project(longitude: fix.coordinate.longitude, latitude: fix.coordinate.latitude)
        let dx = p.x - sumX / count
        let dy = p.y - sumY / count
        let r = radius(forAccuracy: accuracy)
        return dx * dx + dy * dy <= r * r
    }

    /// Adds a fix to the rest: the first one at the origin itself.
    private mutating func add(_ fix: Location, _ accuracy: Double) {
        if count > 0, let origin {
            let p = projection(origin).project(longitude: fix.coordinate.longitude, latitude: fix.coordinate.latitude)
            sumX += p.x
            sumY += p.y
            sumXX += p.x * p.x
            sumYY += p.y * p.y
        }
        sumVariance += accuracy * accuracy
        count += 1
        latest = max(latest ?? fix.timestamp, fix.timestamp)
    }

    private mutating func decide(_ fix: Location) -> Bool {
        let stationary =
            count >= Self.minimumFixes && since.map { fix.timestamp.timeIntervalSince($0) >= settings.duration } == true
        motion = stationary ? .stationary : hasMoved ? .moving : .unknown
        return stationary
    }

    /// At least three fixes: one fix and a long gap (a time jump, a tunnel) are not a rest.
    public static let minimumFixes = 3.0

    private mutating func restart(at fix: Location, _ accuracy: Double) {
        origin = fix.coordinate
        projectionCache = nil
        since = fix.timestamp
        latest = nil
        sumX = 0
        sumY = 0
        sumXX = 0
        sumYY = 0
        sumVariance = 0
        count = 0
        add(fix, accuracy)
        if !outside.isEmpty { outside.removeAll(keepingCapacity: true) }
    }
}

/// What a rest says about where the vehicle is: the mean of its fixes and that mean's uncertainty.
public struct RestEstimate: Sendable, Equatable {
    public var mean: Coordinate
    public var fixes: Int
    /// Seconds from the rest's first fix to its last.
    public var duration: Double
    /// The mean's 1-sigma error per axis, in metres.
    public var sigmaPerAxis: Double
    /// The RMS of the rest's stated 1-sigma accuracies.
    public var typicalAccuracy: Double

    /// The mean's 1-sigma radius, as a `horizontalAccuracy`.
    public var horizontalAccuracy: Double { sigmaPerAxis * 2.0.squareRoot() }

    /// How much of one fix's variance is left in the mean of `fixes` fixes spread over `duration` seconds,
    /// when the error is a first-order Gauss-Markov process with correlation time τ (plus white noise):
    ///
    ///     max(1/n, f(T/τ)),  f(x) = 2/x − 2(1 − e^−x)/x²
    ///
    /// f is the variance of the continuous average of such a process over T, relative to its own. It is 1
    /// for T ≪ τ (fixes seconds apart share one error: no gain at all) and 2τ/T for T ≫ τ: an hour at τ = 60 s
    /// is worth 30 independent fixes, not 3,600. 1/n bounds it for white noise and few fixes.
    public static func varianceFactor(fixes: Int, duration: Double, correlationTime tau: Double) -> Double {
        let n = Double(max(fixes, 1))
        let x = max(duration, 0) / tau
        let f: Double
        if x < 1e-4 {
            f = 1 - x / 3
        } else {
            f = 2 / x - 2 * (1 - exp(-x)) / (x * x)
        }
        return min(1, max(1 / n, f))
    }
}
