import Foundation

/// CLOCK_MONOTONIC in nanoseconds: ages and latencies never jump with the wall clock.
public enum MonotonicClock {
    public static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
