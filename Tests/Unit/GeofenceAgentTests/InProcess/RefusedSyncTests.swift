import AgentTesting
import Foundation
import Mosquitto
import TestSupport
import Testing

/// A broker that refuses the geofence subscription for a while (a cluster electing its leaders answers
/// SUBACK 0x80): the status says the sync is waiting, and once the broker grants it the geofences arrive.
@Suite(.offTheCooperativePool(.agentsPool)) struct RefusedSyncTests {
    /// The `geofenceSync` of the last status published, once `condition` holds for it (or the wait ends).
    static func sync(_ agent: TestAgent, until condition: @escaping (String) -> Bool) async -> String? {
        func last(_ statuses: [MQTTMessage]) -> String? {
            statuses.last.flatMap { AgentInProcessTests.object($0)["geofenceSync"] as? String }
        }
        return last(await agent.messages("status") { last($0).map(condition) ?? false })
    }

    @Test func theStatusSaysTheSyncWaitsAndTheGeofencesComeOnceGranted() async throws {
        let broker = InMemoryBroker()
        broker.refuse("fleet/test/geofences/+")
        try await withTestAgent(broker: broker) { agent in
            agent.push(geofence: "depot", feature: AgentInProcessTests.depotFeature)
            let waiting = await Self.sync(agent) { $0.hasPrefix("waiting: ") }
            #expect(waiting?.hasPrefix("waiting: ") == true, "status: \(waiting ?? "none")")
            #expect(waiting?.contains("fleet/test/geofences/+") == true, "it names the refused filter")
            let state = await agent.messages("state") { !$0.isEmpty }.last.map(AgentInProcessTests.object)
            #expect(state?["conditions"] as? Int == 0, "nothing held while refused")

            broker.grant("fleet/test/geofences/+")
            #expect(await AgentInProcessTests.held(1, by: agent), "the geofence arrives once granted")
            let settled = await Self.sync(agent) { !$0.hasPrefix("waiting") }
            #expect(settled.map { !$0.hasPrefix("waiting") } == true, "status: \(settled ?? "none")")
            agent.drive(AgentInProcessTests.driveThroughTheDepot())
            let events = await agent.messages("events") { $0.count >= 2 }.map(AgentInProcessTests.object)
            #expect(events.map { $0["event"] as? String } == ["enter", "exit"])
        }
    }
}
