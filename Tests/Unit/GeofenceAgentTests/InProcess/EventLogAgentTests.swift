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
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("log-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let gpx = directory.appendingPathComponent("drive.gpx").path
        let conditions = directory.appendingPathComponent("conditions.geojson").path
        let log = directory.appendingPathComponent("events.jsonl")
        try SyntheticDrive.gpx.write(toFile: gpx, atomically: true, encoding: .utf8)
        try SyntheticDrive.conditions.write(toFile: conditions, atomically: true, encoding: .utf8)
        var expected: [[String: Any]] = []
        try SimulateJob.run(
            conditionsPath: conditions, trackPath: gpx, accuracy: 5,
            emit: { line in
                guard let e = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    e["event"] as? String != "initial"
                else { return }
                expected.append(e)
            }, warn: { _ in })
        #expect(!expected.isEmpty)

        func logged() -> [[String: Any]] {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        }
        try await withTestAgent(#"{"fleet":"test","vehicle":"v1","eventLog":{"path":"\#(log.path)"}}"#) {
            configuration in
            configuration.conditionsFile = conditions
            configuration.replay = .init(gpx: gpx, speedFactor: 400)
        } _: { agent in
            _ = await agent.messages("events", within: 90) { _ in logged().count >= expected.count }
        }
        #expect(perCondition(logged()) == perCondition(expected))
    }
}
