import AgentOutputs
import AgentTestSupport
import Foundation
import LocalServers
import Logging
import Mosquitto
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The agent speaking OwnTracks to a real broker, as an OwnTracks consumer (Recorder, the apps) sees it:
/// subscribed to `owntracks/+/+` and `owntracks/+/+/event`.
@Suite(.offTheCooperativePool(.waiting)) struct OwnTracksAgentTests {
    @Test func anOwnTracksConsumerSeesLocationsTransitionsRegionsAndTheWill() async throws {
        let (broker, operatorClient) = try await Sail.brokerWithGeofences()
        defer { broker.stop() }
        defer { Task { await operatorClient.shutdown() } }
        let locations = try await EventSubscriber(port: broker.port, topic: "owntracks/+/+")
        let transitions = try await EventSubscriber(port: broker.port, topic: "owntracks/+/+/event")
        let regions = try await EventSubscriber(port: broker.port, topic: "owntracks/+/+/waypoints")
        // A ping at most every 5 s of the sail's 147 (30 s by default, for a paid link).
        let agent = try Sail.agent(brokerPort: broker.port, speedFactor: 20) {
            $0["owntracks"] = ["enabled": true, "locationIntervalSeconds": 5]
        }
        defer { agent.kill(signal: SIGKILL) }
        try agent.start()

        // Transitions: enter and leave only (the channel's dwell and the gate's crossing have no OwnTracks
        // form), each complete, in the sail's order.
        let expected = ["start-buoy leave", "channel enter", "channel leave"]
        #expect(await waitUntil(60) { transitions.events.count >= expected.count }, "\(agent.log.suffix(2000))")
        let heard = transitions.events
        #expect(heard.map { "\($0["rid"] as? String ?? "") \($0["event"] as? String ?? "")" } == expected)
        for t in heard {
            #expect(t["_type"] as? String == "transition" && t["tid"] as? String == "v1" && t["t"] as? String == "c")
            #expect(t["wtst"] is Int && t["tst"] is Int && t["acc"] is Int && t["lat"] is Double && t["lon"] is Double)
            #expect((t["desc"] as? String)?.isEmpty == false)
        }

        // Locations on owntracks/test/v1: pings with the regions the vehicle is in.
        #expect(await waitUntil(60) { locations.events.filter { $0["t"] as? String == "p" }.count >= 20 })
        let pings = locations.events.filter { $0["_type"] as? String == "location" }
        #expect(pings.filter { $0["t"] as? String == "p" }.count <= 147 / 5 + 2, "the pings keep their pace")
        #expect(
            pings.allSatisfy {
                $0["tid"] as? String == "v1" && $0["tst"] is Int && $0["lat"] is Double && $0["created_at"] is Int
            })
        #expect(
            pings.contains {
                ($0["inregions"] as? [String])?.contains("Buoyed channel") == true
                    && ($0["inrids"] as? [String])?.contains("channel") == true
            })
        #expect(pings.contains { ($0["inrids"] as? [String])?.contains("route") == true })

        // Commands on owntracks/test/v1/cmd, as an app or Recorder sends them.
        func command(_ json: String) async throws {
            _ = try await operatorClient.publish("owntracks/test/v1/cmd", text: json, retain: false)
        }
        try await command(
            #"{"_type":"cmd","action":"setWaypoints","waypoints":{"_type":"waypoints","waypoints":[{"_type":"waypoint","desc":"Home port","lat":52.84,"lon":5.30,"rad":200,"tst":1700000000,"rid":"homeport"}]}}"#
        )
        try await command(#"{"_type":"cmd","action":"waypoints"}"#)
        #expect(await waitUntil(60) { !regions.events.isEmpty })
        let held = (regions.events.first?["waypoints"] as? [[String: Any]] ?? []).compactMap { $0["rid"] as? String }
        #expect(
            Set(held) == ["homeport", "start-buoy", "gate"],
            "OwnTracks' region and the fleet's circles; polygons and corridors have no form: \(held)")
        try await command(#"{"_type":"cmd","action":"clearWaypoints"}"#)
        try await command(#"{"_type":"cmd","action":"waypoints"}"#)
        #expect(await waitUntil(60) { regions.events.count >= 2 })
        #expect(
            Set((regions.events.last?["waypoints"] as? [[String: Any]] ?? []).compactMap { $0["rid"] as? String }) == [
                "start-buoy", "gate",
            ])
        try await command(#"{"_type":"cmd","action":"reportLocation"}"#)
        #expect(await waitUntil(60) { locations.events.contains { $0["t"] as? String == "r" } })

        // The will: `_type: lwt` when the vehicle goes (published explicitly on a clean stop). Once missed in a
        // busy full run, most likely because property tests held both threads of the cooperative pool, which
        // the subscriber's task needs (docs/testing.md#two-cores-and-nothing-timed).
        #expect(agent.terminate(within: 15) != nil)
        #expect(
            await waitUntil(60) { locations.events.contains { $0["_type"] as? String == "lwt" } },
            "\(agent.log.suffix(2000))")
        #expect(locations.events.last { $0["_type"] as? String == "lwt" }?["tst"] is Int)
        for s in [locations, transitions, regions] { await s.stop() }
    }
}
