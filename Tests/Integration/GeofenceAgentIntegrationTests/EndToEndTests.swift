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

/// The product as a fleet runs it: a real gpsd replaying a real sail, a real mosquitto, the agent, an
/// operator pushing geofences over MQTT (one of them malformed) and a dashboard.
@Suite(.offTheCooperativePool(.waiting)) struct EndToEndTests {
    static let examples = Repository.url("examples")
    static let log = Repository.url("Tests/Support/GPSDTestSupport/Fixtures/gpsd-logs/bundg_zeus_9.log")

    @Test func geofencesPushedOverMQTTGiveEventsFromARealGpsd() async throws {
        let broker = try LocalMosquitto.started()
        defer { broker.stop() }
        let logger = Logger(label: "test.operator") { _ in SwiftLogNoOpLogHandler() }

        // The operator pushes the sample geofences, retained, before the vehicle is even on.
        let operatorClient = try MQTTClient(
            configuration: MQTTConfiguration(port: broker.port, clientID: "operator"), logger: logger)
        await operatorClient.start()
        let data = try Data(contentsOf: Self.examples.appendingPathComponent("ijsselmeer.geojson"))
        let features = try #require(
            (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["features"] as? [[String: Any]])
        for feature in features {
            let id = try #require(feature["id"] as? String)
            let payload = try JSONSerialization.data(withJSONObject: feature)
            _ = try await operatorClient.publish("fleet/test/geofences/\(id)", payload: Array(payload), retain: true)
        }
        let broken =
            #"{"type":"Feature","id":"broken","geometry":{"type":"Point","coordinates":[5.3,91.2]},"properties":{"radius":50}}"#
        _ = try await operatorClient.publish("fleet/test/geofences/broken", text: broken, retain: true)

        let dashboard = try await EventSubscriber(port: broker.port)
        let errors = try await EventSubscriber(port: broker.port, topic: "fleet/test/vehicles/v1/errors")

        let feed = try NMEAFeed(log: Self.log, interval: 0.0003)
        defer { feed.stop() }
        let (gpsd, agent) = try AgentFixture.onGPSD(feed: feed, brokerPort: broker.port) { config in
            config["conditions"] = nil
            config["places"] = ["enabled": true]
        }
        defer { gpsd.stop() }
        try agent.start()
        defer { agent.kill(signal: SIGKILL) }

        // A bound for a stuck run: at the start of a full parallel run on a busy machine the agent shares
        // two cores with some twenty others, a RabbitMQ cluster and the gazetteer's load.
        #expect(
            await waitUntil(120) { !errors.events.isEmpty },
            "the malformed geofence is reported: \(agent.log.suffix(3000))")
        let rejection = try #require(errors.events.first)
        #expect(rejection["topic"] as? String == "fleet/test/geofences/broken")
        #expect((rejection["reason"] as? String)?.contains("latitude 91.2") == true, "\(rejection)")

        #expect(
            await waitUntil(60) {
                _ = feed
                return feed.linesSent == feed.lineCount
            })
        #expect(
            await waitUntil(60) {
                Set(dashboard.unique.map { "\($0["identifier"] as? String ?? "") \($0["event"] as? String ?? "")" })
                    .isSuperset(of: ["channel enter", "channel exit", "start-buoy exit"])
            })
        agent.kill(signal: SIGTERM)
        let got = dashboard.unique.map { "\($0["identifier"] as? String ?? "") \($0["event"] as? String ?? "")" }
        #expect(
            got.contains("channel enter") && got.contains("channel dwell") && got.contains("channel exit")
                && got.contains("start-buoy exit"), "\(got)")
        // Event times are the capture's GPS time (2018), not today's: the receiver sends GGA before RMC, so
        // gpsd's first reports have no time, and those must not anchor the timeline to the wall clock.
        let times = dashboard.unique.compactMap { $0["time"] as? String }
        #expect(times.count == dashboard.unique.count && times.allSatisfy { $0.hasPrefix("2018-08-20T") }, "\(times)")
        // Places are on by default: every event names the nearest place (at sea, its country only within 12 nm).
        let places = dashboard.unique.compactMap { $0["place"] as? [String: Any] }
        #expect(places.count == dashboard.unique.count, "\(dashboard.unique)")
        #expect(
            places.allSatisfy { ($0["locality"] as? String)?.isEmpty == false && $0["distance"] is Double }, "\(places)"
        )

        // The clean stop left the retained status offline.
        let status = try await EventSubscriber(port: broker.port, topic: "fleet/test/vehicles/v1/status")
        #expect(await waitUntil(60) { !status.events.isEmpty })
        #expect(status.events.last?["status"] as? String == "offline")
        for s in [dashboard, errors, status] { await s.stop() }
        await operatorClient.shutdown()
    }
}
