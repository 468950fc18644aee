import AgentFormats
import BenchFigures
import Foundation
import GeofenceAgent
import GeofenceCore

/// Nanoseconds on the monotonic clock.
@inline(__always)
func nowNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// The process's resident set size in MiB, from /proc.
func residentMegabytes() -> Double { residentMegabytes(of: nil) }

/// A process's resident set size in MiB (this one's when `pid` is nil), from /proc; `field` names another of
/// its status lines (`RssAnon:`: the part that is not a file's pages, which the kernel cannot take back).
func residentMegabytes(of pid: pid_t?, field: String = "VmRSS:") -> Double {
    guard let status = try? String(contentsOfFile: "/proc/\(pid.map(String.init) ?? "self")/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field) }),
        let kb = Double(line.split(separator: " ").dropFirst().first ?? "")
    else { return -1 }
    return kb / 1024
}

/// The q-quantile (0...1) of samples, nearest rank (`Statistics.quantile`).
func quantile(_ sorted: [UInt64], _ q: Double) -> Double { Statistics.quantile(sorted, q) }

/// A duration in seconds.
func seconds(_ d: Duration) -> Double {
    Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
}

/// Rounds for printing.
func rounded(_ x: Double, _ digits: Int = 3) -> Double {
    let p = pow(10.0, Double(digits))
    return (x * p).rounded() / p
}

/// One JSON line with keys in order, written by the agent's `JSONLine`.
func jsonLine(_ pairs: KeyValuePairs<String, Any>) -> String {
    jsonLine(pairs.map { ($0.key, $0.value) })
}

/// The same, from pairs gathered as a benchmark runs.
func jsonLine(_ pairs: [(String, Any)]) -> String {
    var line = JSONLine()
    for (key, value) in pairs {
        switch value {
        case let s as String: line.add(key, s)
        case let i as Int: line.add(key, i)
        case let d as Double: line.add(key, d)
        case let b as Bool: line.add(key, b)
        case is NSNull: line.add(key, orNull: nil as Double?)
        case let object as [String: Any]:
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
            line.addRaw(key, String(decoding: data, as: UTF8.self))
        default: line.add(key, "\(value)")
        }
    }
    return line.text
}
