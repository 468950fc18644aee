import Foundation

/// Turns gpsd's error figures into Core Location's meaning: about one standard deviation, in metres,
/// negative when unknown. gpsd's `ep*` are nominally 95% figures (derived from DOP when the receiver gives
/// none); the receiver's GST is already 1-sigma and wins when it describes the same epoch.
public enum AccuracyModel {
    /// 2D 95% radius to 1-sigma radius: sqrt(-2 ln 0.05).
    public static let twoDimensional95: Double = 2.4477
    /// 1D 95% to 1-sigma.
    public static let oneDimensional95: Double = 1.96
    /// eph (a 95% horizontal figure that gpsd derives as hdop x 19 m) to a 1-sigma radius.
    public static let ephToSigma: Double = 0.58

    /// GST → sqrt(σlat² + σlon²); else sqrt(epx² + epy²) / 2.45; else 0.58 · eph; else -1.
    public static func horizontal(_ report: ReceiverReport, noise: PseudorangeNoise?) -> Double {
        // A figure of 0 or less (or not finite) is no measurement: some receivers send 0 for "not computed",
        // and taking it would claim a perfect position.
        func real(_ v: Double?) -> Double? { v.flatMap { $0.isFinite && $0 > 0 ? $0 : nil } }
        if let la = real(noise?.latitudeSigma), let lo = real(noise?.longitudeSigma) {
            return (la * la + lo * lo).squareRoot()
        }
        if let x = real(report.epx), let y = real(report.epy) {
            return (x * x + y * y).squareRoot() / twoDimensional95
        }
        if let h = real(report.eph) { return ephToSigma * h }
        return -1
    }

    /// GST altitude σ; else epv / 1.96; else -1.
    public static func vertical(_ report: ReceiverReport, noise: PseudorangeNoise?) -> Double {
        if let a = noise?.altitudeSigma, a.isFinite, a > 0 { return a }
        return oneDimensional95Sigma(report.epv)
    }

    /// A 95% figure (eps, epd) to 1-sigma, or -1.
    public static func oneDimensional95Sigma(_ value: Double?) -> Double {
        guard let value, value.isFinite, value > 0 else { return -1 }
        return value / oneDimensional95
    }
}
