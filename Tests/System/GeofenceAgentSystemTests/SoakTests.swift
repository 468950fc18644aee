import AgentTestSupport
import Foundation
import LocalServers
import TestSupport
import Testing

/// A short `geofence-bench soak` (docs/testing.md): half an hour of driving at 50 times real time through
/// a real gpsd and mosquitto, with a broker restart and outage, a gpsd restart and a SIGKILL of the agent.
/// The run checks delivery itself; the test reads its verdict and what it measured.
@Suite(.offTheCooperativePool(.waiting)) struct SoakTests {
    @Test(.enabled(if: LocalGPSD.isInstalled)) func aShortSoakDeliversEveryTransitionOnceInOrder() throws {
        let run = try BenchBinary.run(
            [
                "soak", "--hours", "0.5", "--speed", "50", "--broker-restart-every", "8", "--outage", "6",
                "--gpsd-restarts", "1", "--kills", "1",
            ], within: 300)
        let result = run.result
        #expect(result["passed"] as? Bool == true, "\(run.line) \(run.log.suffix(3000))")
        #expect(result["delivered_exactly_once_in_order"] as? Bool == true)
        #expect(result["transitions_expected"] as? Int == 36, "three passes through each of six geofences")
        #expect(result["agent_processes"] as? Int == 2, "started, killed, started again")
        #expect((result["fds_last"] as? Int ?? 999) <= (result["fds_first"] as? Int ?? 0) + 3)
        #expect((result["threads_last"] as? Int ?? 999) <= (result["threads_first"] as? Int ?? 0) + 2)
    }
}
