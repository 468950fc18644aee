/// How a rest is recognised: the one test behind live updates' `isStationary` and a monitor's decisions at
/// rest (`StationaryDetector`). docs/monitoring.md has the statistics.
public struct RestDetection: Sendable, Equatable, Codable {
    /// Seconds within the rest before the vehicle counts as stationary.
    public var duration: Double = 10
    /// A fix belongs to the rest while it lies within max(minimumRadius, accuracyFactor × √(a² + m²)) of
    /// the rest's mean, where a is the larger of the fix's 1-sigma accuracy and the rest's typical one, and m
    /// the mean's own 1-sigma radius. At 5, a receiver at rest whose error is Gaussian with its stated
    /// accuracy leaves that circle once in about 10^11 fixes.
    public var accuracyFactor: Double = 5
    public var minimumRadius: Double = 5
    /// A fix whose speed (the receiver's Doppler speed) is at least this, in m/s, is moving wherever it is.
    public var movingSpeed: Double = 0.5
    /// Consecutive fixes outside the rest that end it: one wild fix is noise.
    public var breakFixes: Int = 2

    public init() {}
}
