import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What a process spent, read from /proc: CPU time (`utime + stime` of `/proc/PID/stat`, or to the
/// microsecond from its reaping when `atExit` reaps it) and the bytes
/// it caused to be written to storage (`write_bytes` of `/proc/PID/io`, fsyncs and page-cache writes
/// alike).
struct ProcessSpend: Sendable {
    var cpuMicroseconds: Double
    var storageBytes: Double

    static func - (a: Self, b: Self) -> Self {
        Self(cpuMicroseconds: a.cpuMicroseconds - b.cpuMicroseconds, storageBytes: a.storageBytes - b.storageBytes)
    }

    /// Reads a live process, or one that has exited and is not reaped yet.
    static func read(_ pid: pid_t) -> ProcessSpend? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let io = try? String(contentsOfFile: "/proc/\(pid)/io", encoding: .utf8)
        else { return nil }
        // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // Fields 14 and 15 of the whole line are the 12th and 13th after the name.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let written = io.split(separator: "\n").first { $0.hasPrefix("write_bytes:") }
            .flatMap { Double($0.split(separator: " ").last ?? "") }
        return ProcessSpend(cpuMicroseconds: (user + system) / ticks * 1e6, storageBytes: written ?? 0)
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

    /// Waits for `pid` to exit, reads what it spent while it is still a zombie, then reaps it. Nil when it
    /// did not exit within `seconds` (it is then killed).
    static func atExit(of pid: pid_t, within seconds: Double) -> ProcessSpend? {
        let deadline = Date().addingTimeInterval(seconds)
        var info = siginfo_t()
        while Date() < deadline {
            info = siginfo_t()
            let r = waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT)
            if r == 0, info._sifields._sigchld.si_pid == pid {
                var spend = read(pid)
                var status: Int32 = 0
                var usage = rusage()
                // The reaping's account is to the microsecond, where /proc/PID/stat counts 10 ms ticks.
                if wait4(pid, &status, 0, &usage) == pid, spend != nil {
                    spend!.cpuMicroseconds = Self.microseconds(usage.ru_utime) + Self.microseconds(usage.ru_stime)
                }
                return spend
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
