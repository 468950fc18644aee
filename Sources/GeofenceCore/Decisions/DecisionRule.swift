/// The statistics of a confident decision: how far beyond a boundary the evidence must lie.
///
/// A fix's `horizontalAccuracy` h is a 1-sigma radius (Core Location's meaning): each axis, and so the
/// direction normal to any boundary, has σ = h/√2. A state changes only when the evidence is beyond the
/// boundary by z(confidence) σ, so that the probability it is really on the old side is at most
/// 1 − confidence.
public struct DecisionRule: Sendable {
    public let configuration: MonitorConfiguration
    /// z: the one-sided standard normal quantile of the configured confidence (3.09 at 0.999).
    public let standardDeviations: Double

    public init(_ configuration: MonitorConfiguration) {
        self.configuration = configuration
        standardDeviations = NormalDistribution.quantile(configuration.confidence)
    }

    /// max(minimumMargin, z · h/√2), with h the fix's accuracy or `unknownAccuracy` when it has none.
    @inline(__always)
    public func margin(forAccuracy accuracy: Double) -> Double {
        max(configuration.minimumMargin, standardDeviations * configuration.usableAccuracy(accuracy) * 0.5.squareRoot())
    }

    /// max(restMinimumMargin, z · σ of the rest's mean).
    public func margin(for rest: RestEstimate) -> Double {
        max(configuration.restMinimumMargin, standardDeviations * rest.sigmaPerAxis)
    }
}
