/// How a monitor turns fixes into decisions. Every default, and the statistics behind it, is documented
/// in docs/monitoring.md.
public struct MonitorConfiguration: Sendable, Equatable, Codable {
    // MARK: Confident decisions

    /// The probability, one-sided along the boundary's normal, that a fix which changes a state really is
    /// on the new side. A fix's `horizontalAccuracy` is a 1-sigma radius (about 68%, as Core Location's),
    /// so each axis has σ = accuracy/√2 and the margin is z(confidence) · accuracy/√2: at 0.999, 2.19 ×
    /// the accuracy.
    public var confidence: Double = 0.999
    /// The smallest margin, in metres, for a single fix. Guards against receivers that claim an accuracy
    /// better than they have (an RTK float solution, a receiver that under-reports).
    public var minimumMargin: Double = 5
    /// The 1-sigma accuracy assumed for a fix that carries none (negative or not a number), in metres:
    /// an autonomous fix in a street canyon.
    public var unknownAccuracy: Double = 30

    // MARK: At rest

    /// Whether a vehicle at rest is decided on the position averaged over its rest (and nothing is decided
    /// until the first fixes show whether it moves). Off, every fix is decided on its own.
    public var restAveraging = true
    /// The correlation time, in seconds, assumed for the receiver's error when averaging a rest. GNSS errors
    /// are correlated over tens of seconds, so n fixes are worth far fewer than n independent ones:
    /// the averaging gain is computed for a first-order Gauss-Markov error with this time constant.
    public var noiseCorrelationTime: Double = 60
    /// The smallest margin, in metres, for a rest's averaged position: errors that do not average out
    /// (multipath that stays while the vehicle does).
    public var restMinimumMargin: Double = 1
    /// How a rest is recognised.
    public var rest = RestDetection()

    // MARK: Debounce

    /// Seconds the new side must hold before a transition (`enter`, `exit`) is published; the event keeps
    /// the time of the first confident fix. A condition's own `minimumDuration` overrides it. 0: none.
    public var minimumDuration: Double = 0
    /// How speed zones decide `overspeed`.
    public var overspeed = OverspeedSettings()

    // MARK: Fix filter

    /// Fixes whose horizontal accuracy is worse than this (metres) are rejected, as Core Location
    /// apps discard fixes above 1,000 m.
    public var maximumHorizontalAccuracy: Double = 1000
    /// A fix implying a faster move than this (metres per second) from the last accepted fix is rejected.
    public var maximumSpeed: Double = 100
    /// After a gap longer than this (seconds) any jump is accepted: a vehicle leaving a garage, a ferry.
    public var speedCheckMaximumGap: Double = 300
    /// After this many consecutive fixes rejected for speed, the next one is accepted as a new anchor,
    /// so one bad accepted fix cannot lock the monitor out.
    public var speedRejectionsBeforeReanchor: Int = 5

    /// How positions are checked against the vehicle's own Doppler motion (urban multipath).
    public var motionCheck = MotionCheckSettings()
    /// How trips and stops are told apart (docs/trips.md).
    public var trips = TripSettings()

    // MARK: Crossings

    /// `crossed` is only inferred between fixes at most this many seconds apart...
    public var crossingMaximumInterval: Double = 30
    /// ...and at most this many metres apart.
    public var crossingMaximumDistance: Double = 5000

    public init() {}

    /// The rule the monitor used before decisions were stated as a confidence: margin = max(5 m, 1 ×
    /// accuracy), every fix decided on its own. Kept for comparison (`geofence-bench decisions`).
    public static var perFixOneSigma: MonitorConfiguration {
        var c = MonitorConfiguration()
        c.confidence = NormalDistribution.cumulative(2.0.squareRoot())
        c.restAveraging = false
        c.motionCheck.enabled = false
        return c
    }

    /// Every fix decided on its own, from the first, with the configured confidence: for sparse or replayed
    /// fixes where a rest means nothing, and for tests of the state machine's mechanics.
    /// The rule in force before positions were checked against the vehicle's motion (issue 34).
    public static var withoutMotionCheck: MonitorConfiguration {
        var c = MonitorConfiguration()
        c.motionCheck.enabled = false
        return c
    }

    public static var eachFixAlone: MonitorConfiguration {
        var c = MonitorConfiguration()
        c.restAveraging = false
        return c
    }

    /// The accuracy a decision uses for a fix: its own, or `unknownAccuracy` when it has none.
    @inline(__always)
    public func usableAccuracy(_ accuracy: Double) -> Double {
        accuracy.isFinite && accuracy >= 0 ? accuracy : unknownAccuracy
    }
}
