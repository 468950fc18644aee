import AgentTestSupport
import Foundation
import TestSupport
import Testing

/// A short `geofence-bench agent-fuzz` (docs/testing.md): mutated geofences and commands over a real
/// mosquitto at the real agent replaying a drive. The run checks itself (every refusal answered, the
/// drive's transitions exact, good geofences held and deleted, a clean stop); the test reads its verdict.
@Suite(.offTheCooperativePool(.waiting)) struct AgentFuzzTests {
    @Test func anAgentUnderMutatedMessagesAnswersEachAndKeepsWorking() throws {
        let run = try BenchBinary.run(
            [
                "agent-fuzz", "--seconds", "15", "--rate", "20", "--seed", "7",
                "--conditions", Repository.url("examples/ijsselmeer.geojson").path,
                "--track", Repository.url("examples/ijsselmeer-sail.gpx").path,
                "--corpus", Repository.url("Fuzz/Corpus/GeoJSON").path,
            ], within: 240)
        let result = run.result
        #expect(result["passed"] as? Bool == true, "\(run.line) \(run.log.suffix(2000))")
        #expect((result["geofence_refusals_due"] as? Int ?? 0) > 100)
        #expect((result["command_refusals_due"] as? Int ?? 0) > 20)
        #expect((result["transitions_expected"] as? Int ?? 0) >= 5)
    }
}
