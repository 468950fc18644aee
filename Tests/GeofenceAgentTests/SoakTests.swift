import Foundation
import LocalServers
import Testing
import TestSupport

/// A short `geofence-bench soak` (docs/testing.md): half an hour of driving at 50 times real time through
/// a real gpsd and mosquitto, with a broker restart and outage, a gpsd restart and a SIGKILL of the agent.
/// The run checks delivery itself; the test reads its verdict and what it measured.
@Suite(.offTheCooperativePool(.waiting)) struct SoakTests {
    @Test(.enabled(if: LocalGPSD.isInstalled)) func aShortSoakDeliversEveryTransitionOnceInOrder() throws {
        let bench = AgentBinary.url.deletingLastPathComponent().appendingPathComponent("geofence-bench").path
        let out = try AgentBinary.temporaryFile("", suffix: ".jsonl"), err = try AgentBinary.temporaryFile("", suffix: ".log")
        let pid = try LocalProcess.spawn(bench, [
            "soak", "--hours", "0.5", "--speed", "50", "--broker-restart-every", "8", "--outage", "6",
            "--gpsd-restarts", "1", "--kills", "1", "--agent", AgentBinary.url.path,
        ], standardOutput: out, standardError: err)
        let finished = LocalProcess.reap(pid, within: 300)
        if !finished { LocalProcess.terminate(pid) }
        #expect(finished)
        let line = try String(contentsOfFile: out, encoding: .utf8)
        let log = (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
        let parsed = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        let result = try #require(parsed, "\(line) \(log)")
        #expect(result["passed"] as? Bool == true, "\(line) \(log.suffix(3000))")
        #expect(result["delivered_exactly_once_in_order"] as? Bool == true)
        #expect(result["transitions_expected"] as? Int == 36, "three passes through each of six geofences")
        #expect(result["agent_processes"] as? Int == 2, "started, killed, started again")
        #expect((result["fds_last"] as? Int ?? 999) <= (result["fds_first"] as? Int ?? 0) + 3)
        #expect((result["threads_last"] as? Int ?? 999) <= (result["threads_first"] as? Int ?? 0) + 2)
    }
}
