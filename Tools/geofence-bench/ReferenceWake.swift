import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What a bare timed wake costs this machine now: the CPU time of a thread that does nothing but sleep in
/// `poll` and wake. An agent pays at least one such wake a fix. On a VM the figure moves with the host's
/// load, by as much as the agent's own work does, so `budget` measures it just before each run and prints
/// it beside the run's CPU a fix: the two are read together.
enum ReferenceWake {
    /// CPU microseconds a wake, over `wakes` sleeps of `milliseconds` each, on the calling thread.
    static func cpuMicroseconds(wakes: Int, milliseconds: Int32) -> Double {
        let start = threadCPUMicroseconds()
        for _ in 0..<wakes { _ = poll(nil, 0, milliseconds) }
        return (threadCPUMicroseconds() - start) / Double(max(wakes, 1))
    }

    /// The calling thread's CPU time so far, in microseconds.
    static func threadCPUMicroseconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) * 1e6 + Double(time.tv_nsec) / 1e3
    }
}
