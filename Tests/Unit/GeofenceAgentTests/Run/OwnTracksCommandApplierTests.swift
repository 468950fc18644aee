import AgentOutputs
import AgentTestSupport
import Foundation
import GeofenceCore
import GeofenceStore
import Logging
import Mosquitto
import TestSupport
import Testing

@testable import GeofenceAgent

/// OwnTracks' commands through the change applier, with an in-memory store, monitors and broker.
@Suite(.offTheCooperativePool(.agentsPool)) struct OwnTracksCommandApplierTests {
    let store = FakeConditionStore()
    let host = FakeMonitorHost()
    let publisher = FakePublisher()
    let identity = OwnTracks.Identity(user: "test", device: "v1")

    func applier() -> ChangeApplier {
        ChangeApplier(
            store: store, host: host, publisher: publisher, topics: testTopics,
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() },
            ownTracks: identity)
    }

    func command(_ text: String) -> MQTTMessage {
        MQTTMessage(topic: identity.command, payload: Array(text.utf8), retained: false)
    }

    @Test func setWaypointsStoresCirclesFromOwnTracksAndClearWaypointsRemovesOnlyThose() async throws {
        let a = applier()
        await a.geofences([geofenceMessage("depot", circleFeature("depot"))])
        await a.ownTracksCommand(
            command(
                #"""
                {"_type":"cmd","action":"setWaypoints","waypoints":{"_type":"waypoints","waypoints":[
                  {"_type":"waypoint","desc":"Home","lat":52.1,"lon":5.1,"rad":100,"tst":1700000000,"rid":"h0me"},
                  {"_type":"waypoint","desc":"Work","lat":52.2,"lon":5.2,"rad":250,"tst":1700000100}]}}
                """#))
        #expect(store.rows["default"]?["h0me"] == .init(version: 1_700_000_000, source: "owntracks"))
        #expect(store.rows["default"]?["owntracks-1700000100"]?.source == "owntracks")
        #expect(await host.identifiers["default"] == ["depot", "h0me", "owntracks-1700000100"])

        // The same regions again (an app re-sending them) change nothing: their tst is their version.
        await a.ownTracksCommand(
            command(
                #"{"_type":"cmd","action":"setWaypoints","waypoints":[{"desc":"Home","lat":52.1,"lon":5.1,"rad":100,"tst":1700000000,"rid":"h0me"}]}"#
            ))
        #expect(await host.changes.count == 3)

        await a.ownTracksCommand(command(#"{"_type":"cmd","action":"clearWaypoints"}"#))
        #expect(await host.identifiers["default"] == ["depot"], "the pushed geofence stays")
        #expect(store.rows["default"]?.keys.sorted() == ["depot"])
    }

    @Test func aBadWaypointIsRefusedOnErrorsAndNothingIsStored() async throws {
        await applier().ownTracksCommand(
            command(
                #"{"_type":"cmd","action":"setWaypoints","waypoints":[{"desc":"A","lat":52,"lon":5,"rad":10,"tst":1},{"desc":"B","lat":52,"lon":500,"rad":10,"tst":2}]}"#
            ))
        #expect(store.rows.isEmpty, "a command is all or nothing")
        let error = try #require(publisher.objects(on: testTopics.errors).first)
        #expect(error["kind"] as? String == "command" && error["topic"] as? String == identity.command)
        #expect(error["reason"] as? String == "waypoints[1].lon: longitude 500.0 is outside [-180, 180]")
    }

    @Test func waypointsPublishesTheCirclesAndReportLocationAsksTheHost() async throws {
        await host.hold([
            ("depot", try Condition.circle(center: Coordinate(latitude: 1, longitude: 2), radius: 30, name: "Depot"))
        ])
        let a = applier()
        await a.ownTracksCommand(command(#"{"_type":"cmd","action":"waypoints"}"#))
        let list = try #require(publisher.objects(on: identity.waypoints).first)
        #expect((list["waypoints"] as? [[String: Any]])?.map { $0["rid"] as? String } == ["depot"])
        #expect(publisher.messages.first?.retain == false)
        await a.ownTracksCommand(command(#"{"_type":"cmd","action":"reportLocation"}"#))
        #expect(await host.locationReports == 1)
    }
}
