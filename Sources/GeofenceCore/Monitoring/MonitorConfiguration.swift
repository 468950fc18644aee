/// How a monitor turns fixes into decisions. Every default is documented in docs/monitoring.md.
public struct MonitorConfiguration: Sendable, Equatable, Codable {
    /// The smallest margin, in metres, by which a fix must be inside or outside a boundary to change
    /// a state. Guards against fixes that claim an accuracy better than they have.
    public var minimumMargin: Double = 5
    /// The margin is at least this many times the fix's horizontal accuracy. At 1, a receiver whose
    /// jitter stays within its reported accuracy can never flip a state back and forth.
    public var accuracyFactor: Double = 1
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
    /// `crossed` is only inferred between fixes at most this many seconds apart...
    public var crossingMaximumInterval: Double = 30
    /// ...and at most this many metres apart.
    public var crossingMaximumDistance: Double = 5000

    public init() {}

    /// The margin for a fix of the given horizontal accuracy.
    public func margin(forAccuracy accuracy: Double) -> Double {
        max(minimumMargin, accuracyFactor * max(accuracy, 0))
    }
}
