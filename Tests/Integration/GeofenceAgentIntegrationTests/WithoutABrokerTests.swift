import AgentTestSupport
import Foundation
import LocalServers
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A vehicle spends hours without a broker: everything local goes on.
@Suite(.offTheCooperativePool(.waiting)) struct WithoutABrokerTests {
    @Test func theStatusStaysFreshAndLocalChangesApply() async throws {
        let agent = try AgentFixture(brokerPort: try LocalProcess.freePort(), speedFactor: 5)
        try agent.start()
        defer { agent.kill(signal: SIGTERM) }
        #expect(await waitUntil(60) { agent.status?["status"] as? String == "online" })
        // The status file keeps being rewritten, and says where the broker stands.
        let first = agent.status?["updated"] as? String
        #expect(
            await waitUntil(30) { (agent.status?["updated"] as? String) != first },
            "the status file is refreshed with no broker")
        #expect(
            await waitUntil(30) { (agent.status?["broker"] as? String)?.hasPrefix("unreachable") == true },
            "the status says the broker is unreachable: \(agent.status?["broker"] ?? "none")")
        // `conditions add` beside the running agent goes through its inbox at once.
        let gate = try AgentBinary.temporaryFile(
            #"{"type":"Feature","id":"gate","geometry":{"type":"Point","coordinates":[5.01,52.0]},"properties":{"radius":30}}"#,
            suffix: ".geojson")
        let added = try AgentBinary.run(["conditions", "add", "--config", agent.configURL.path, "--file", gate])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout.contains("through the running agent"))
        let status = try AgentBinary.run(["status", "--config", agent.configURL.path])
        #expect(status.status == 0 && status.stdout.contains("gate"), "\(status.stdout)")
        #expect(status.stdout.contains("broker       unreachable"), "\(status.stdout)")
    }
}
