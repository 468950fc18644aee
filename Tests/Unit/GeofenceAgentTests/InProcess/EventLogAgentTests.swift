import AgentJobs
import AgentTestSupport
import AgentTesting
import Foundation
import TestSupport
import Testing

@testable import GeofenceAgent

/// The event log of the whole agent in process: it replays the synthetic drive, and its log holds
/// simulate's events.
@Suite(.offTheCooperativePool(.agentsPool)) struct EventLogAgentTests {
    @Test func theAgentsLogHoldsSimulatesEvents() async throws {
        let drive = try SyntheticDriveFiles()
        defer { drive.remove() }
        let log = drive.directory.appendingPathComponent("events.jsonl")
        let expected = try drive.simulatedEvents()
        #expect(!expected.isEmpty)

        func logged() -> [[String: Any]] {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        }
        try await withTestAgent(#"{"fleet":"test","vehicle":"v1","eventLog":{"path":"\#(log.path)"}}"#) {
            configuration in
            configuration.conditionsFile = drive.conditions
            configuration.replay = .init(gpx: drive.gpx, speedFactor: 400)
        } _: { agent in
            _ = await agent.messages("events", within: 90) { _ in logged().count >= expected.count }
        }
        #expect(perCondition(logged()) == perCondition(expected))
    }
}
