import AgentTestSupport
import Foundation
import LocalServers
import TestSupport
import Testing

/// The event log of the real agent: it replays the synthetic drive against a real broker, and its log holds
/// simulate's events.
@Suite(.offTheCooperativePool(.waiting)) struct EventLogAgentTests {
    @Test func theAgentsLogHoldsSimulatesEvents() async throws {
        let broker = try LocalMosquitto()
        try broker.start()
        defer { broker.stop() }
        let agent = try AgentFixture(brokerPort: broker.port, speedFactor: 20) { config in
            config["eventLog"] = ["path": "events.jsonl"]
        }
        try agent.start()
        #expect(agent.waitForExit(within: 120), "the replay ends the agent: \(agent.log)")
        let text = try String(contentsOf: agent.directory.appendingPathComponent("events.jsonl"), encoding: .utf8)
        let logged = try text.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        let expected = try expectedTransitions(in: agent)
        #expect(!expected.isEmpty)
        #expect(perCondition(logged) == perCondition(expected), "\(text)")
    }
}
