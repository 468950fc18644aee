/// The statistics the benchmarks print, in one place with tests of their own.
public enum Statistics {
    /// The q-quantile (0...1) of sorted samples, by nearest rank; NaN for none.
    public static func quantile(_ sorted: [Double], _ q: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        return sorted[min(sorted.count - 1, max(0, Int((q * Double(sorted.count)).rounded(.up)) - 1))]
    }

    /// `quantile` of integer samples (nanoseconds, bytes).
    public static func quantile(_ sorted: [UInt64], _ q: Double) -> Double {
        quantile(sorted.map { Double($0) }, q)
    }

    /// The median of unsorted samples: the middle one, or the mean of the two middle ones; NaN for none.
    public static func median(_ samples: [Double]) -> Double {
        guard !samples.isEmpty else { return .nan }
        let s = samples.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }
}
