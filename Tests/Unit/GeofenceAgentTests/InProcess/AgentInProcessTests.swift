import AgentTesting
import Foundation
import GeofenceCore
import Mosquitto
import TestSupport
import Testing

/// The whole agent in process (`AgentTesting`): what an operator pushes and a drive does, as a dashboard
/// sees it on the broker. No process, no socket, no pacing: each location is decided as it is handed over.
@Suite(.offTheCooperativePool(.agentsPool)) struct AgentInProcessTests {
    static let depot = Coordinate(latitude: 52, longitude: 5)
    static let depotFeature =
        #"{"type":"Feature","id":"depot","geometry":{"type":"Point","coordinates":[5,52]},"properties":{"radius":200,"name":"Depot"}}"#

    /// A drive west to east through the depot, 10 m a second from 1 km out to 1 km past it.
    static func driveThroughTheDepot() -> [Location] {
        (0...200).map { k in
            Location(
                coordinate: Coordinate(latitude: 52, longitude: 5 + Double(k * 10 - 1_000) / 68_700),
                horizontalAccuracy: 5, speed: 10, course: 90,
                timestamp: Date(timeIntervalSince1970: 1_767_225_600 + Double(k)))
        }
    }

    static func object(_ message: MQTTMessage) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(message.payload))) as? [String: Any] ?? [:]
    }

    /// Waits until the agent's state holds `count` conditions (a pushed geofence is applied).
    static func held(_ count: Int, by agent: TestAgent) async -> Bool {
        let states = await agent.messages("state") { states in
            states.last.map { object($0)["conditions"] as? Int == count } ?? false
        }
        return states.last.map { object($0)["conditions"] as? Int == count } ?? false
    }

    @Test func aPushedGeofenceGivesOneEnterAndOneExitOnADriveThroughIt() async throws {
        try await withTestAgent { agent in
            agent.push(geofence: "depot", feature: Self.depotFeature)
            #expect(await Self.held(1, by: agent), "the pushed geofence is held")
            agent.drive(Self.driveThroughTheDepot())
            let events = await agent.messages("events") { $0.count >= 2 }.map(Self.object)
            #expect(events.map { $0["event"] as? String } == ["enter", "exit"])
            #expect(events.allSatisfy { $0["identifier"] as? String == "depot" && $0["name"] as? String == "Depot" })
            #expect(Set(events.compactMap { $0["eventId"] as? String }).count == 2, "each its own id")
            let sequences = events.compactMap { $0["sequence"] as? Int }
            #expect(sequences == sequences.sorted() && sequences.count == 2, "in sequence order")
            // Nothing more once the drive is decided: no flapping at either edge.
            let after = await agent.messages("events", within: 0.5) { $0.count > 2 }
            #expect(after.count == 2)
        }
    }

    @Test func deletingTheGeofenceTheVehicleIsInsideGivesItsExitOnce() async throws {
        try await withTestAgent { agent in
            agent.push(geofence: "depot", feature: Self.depotFeature)
            #expect(await Self.held(1, by: agent))
            // Into the depot, and parked there.
            agent.drive(Array(Self.driveThroughTheDepot().prefix(101)))
            _ = await agent.messages("events") { $0.count >= 1 }
            agent.push(geofence: "depot", feature: "")
            let events = await agent.messages("events") { $0.count >= 2 }.map(Self.object)
            #expect(events.map { $0["event"] as? String } == ["enter", "exit"])
            #expect(events.last?["reason"] as? String == "removed")
            #expect(await Self.held(0, by: agent), "the deletion is applied")
            let after = await agent.messages("events", within: 0.5) { $0.count > 2 }
            #expect(after.count == 2, "the removal's exit is the only exit")
        }
    }
}
