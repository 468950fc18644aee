import Foundation
import LocalServers
import Testing

/// Runs the built `geofence-bench` for the checks that drive the real agent (agent-fuzz, soak): spawned
/// and reaped by PID, its one JSON line read back.
package enum BenchBinary {
    package struct Run {
        package var result: [String: Any]
        package var line: String
        package var log: String
    }

    package static func run(_ arguments: [String], within seconds: Double) throws -> Run {
        let bench = AgentBinary.url.deletingLastPathComponent().appendingPathComponent("geofence-bench").path
        let out = try AgentBinary.temporaryFile("", suffix: ".jsonl")
        let err = try AgentBinary.temporaryFile("", suffix: ".log")
        let pid = try LocalProcess.spawn(
            bench, arguments + ["--agent", AgentBinary.url.path], standardOutput: out, standardError: err)
        let finished = LocalProcess.reap(pid, within: seconds)
        if !finished { LocalProcess.terminate(pid) }
        #expect(finished, "geofence-bench \(arguments.first ?? "") ran over \(seconds) s")
        let line = try String(contentsOfFile: out, encoding: .utf8)
        let log = (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
        let parsed = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        return Run(result: try #require(parsed, "\(line) \(log.suffix(3000))"), line: line, log: log)
    }
}
