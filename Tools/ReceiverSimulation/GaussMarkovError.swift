import Foundation
import GeofenceCore

/// A GNSS receiver's horizontal error as it really behaves: Gaussian, and correlated over time.
///
/// Each axis is a first-order Gauss-Markov process (the error at t + Δt keeps e^(−Δt/τ) of the error
/// at t) plus white noise, with a total standard deviation per axis of `sigmaPerAxis`. A receiver whose
/// 1-sigma horizontal accuracy is h has σ = h/√2 per axis, so its error exceeds h about a third of the time
/// (exp(−1) = 37%) and, over an hour, 2–3 h several times.
public struct GaussMarkovError: Sendable {
    public var sigmaPerAxis: Double
    /// τ, seconds.
    public var correlationTime: Double
    /// The share of the variance that is white (uncorrelated from fix to fix).
    public var whiteFraction: Double
    private var east = 0.0, north = 0.0
    private var started = false

    public init(sigmaPerAxis: Double, correlationTime: Double, whiteFraction: Double = 0.2) {
        self.sigmaPerAxis = sigmaPerAxis
        self.correlationTime = correlationTime
        self.whiteFraction = min(max(whiteFraction, 0), 1)
    }

    /// The error, east and north in metres, `dt` seconds after the previous one.
    public mutating func next(after dt: Double, using rng: inout SplitMix64) -> (east: Double, north: Double) {
        let correlated = sigmaPerAxis * (1 - whiteFraction).squareRoot()
        let white = sigmaPerAxis * whiteFraction.squareRoot()
        if !started {
            // Start in the stationary distribution, not at zero.
            east = correlated * Gaussian.next(&rng)
            north = correlated * Gaussian.next(&rng)
            started = true
        } else {
            let rho = exp(-max(dt, 0) / correlationTime)
            let innovation = correlated * (1 - rho * rho).squareRoot()
            east = rho * east + innovation * Gaussian.next(&rng)
            north = rho * north + innovation * Gaussian.next(&rng)
        }
        return (east + white * Gaussian.next(&rng), north + white * Gaussian.next(&rng))
    }
}

/// Standard normal draws (Box-Muller).
public enum Gaussian {
    public static func next(_ rng: inout SplitMix64) -> Double {
        let u1 = max(Double.random(in: 0..<1, using: &rng), 1e-300)
        let u2 = Double.random(in: 0..<1, using: &rng)
        return (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }
}
