import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What a process spent: its CPU time (user + system, to the microsecond, from its reaping) and the bytes
/// it caused to be written to storage (`write_bytes` of `/proc/PID/io`, fsyncs and page-cache writes
/// alike).
struct ProcessSpend: Sendable {
    var cpuMicroseconds: Double
    var storageBytes: Double

    static func - (a: Self, b: Self) -> Self {
        Self(cpuMicroseconds: a.cpuMicroseconds - b.cpuMicroseconds, storageBytes: a.storageBytes - b.storageBytes)
    }

    /// The bytes a live process, or one that has exited and is not reaped yet, caused to be written.
    static func storageBytes(_ pid: pid_t) -> Double? {
        guard let io = try? String(contentsOfFile: "/proc/\(pid)/io", encoding: .utf8) else { return nil }
        return io.split(separator: "\n").first { $0.hasPrefix("write_bytes:") }
            .flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
    }

    /// The CPU time of a running process's threads so far, to the nanosecond (each thread's
    /// `/proc/PID/task/TID/schedstat`), in microseconds; nil when it has gone.
    static func runningCPUMicroseconds(_ pid: pid_t) -> Double? {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return nil }
        return tasks.reduce(0) { total, task in
            let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/schedstat", encoding: .utf8)) ?? ""
            return total + (Double(text.split(separator: " ").first ?? "") ?? 0) / 1000
        }
    }

    private static func microseconds(_ time: timeval) -> Double { Double(time.tv_sec) * 1e6 + Double(time.tv_usec) }

    /// Waits for `pid` to exit, reads what it wrote while it is still a zombie, then reaps it. Nil when it
    /// did not exit within `seconds` (it is then killed).
    static func atExit(of pid: pid_t, within seconds: Double) -> ProcessSpend? {
        let deadline = Date().addingTimeInterval(seconds)
        var info = siginfo_t()
        while Date() < deadline {
            info = siginfo_t()
            let r = waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT)
            if r == 0, info._sifields._sigchld.si_pid == pid {
                // Its writes are read while it is a zombie; its CPU time comes with the reaping, to the
                // microsecond (/proc/PID/stat counts 10 ms ticks).
                let written = storageBytes(pid)
                var status: Int32 = 0
                var usage = rusage()
                guard wait4(pid, &status, 0, &usage) == pid, let written else { return nil }
                return ProcessSpend(
                    cpuMicroseconds: microseconds(usage.ru_utime) + microseconds(usage.ru_stime), storageBytes: written)
            }
            if r < 0 { return nil }
            usleep(20_000)
        }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        return nil
    }
}
