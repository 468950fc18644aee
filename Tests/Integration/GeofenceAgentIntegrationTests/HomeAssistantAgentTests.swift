import AgentOutputs
import AgentTestSupport
import Foundation
import GeofenceAgent
import GeofenceCore
import LocalServers
import Logging
import Mosquitto
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The agent with Home Assistant's discovery on, against a real broker, as Home Assistant sees it: the
/// discovery, then the tracker's attributes and the events; the sensors' templates rendered by Jinja2
/// (the engine Home Assistant's templates run on) against the vehicle's real status.
@Suite(.offTheCooperativePool(.waiting)) struct HomeAssistantAgentTests {
    @Test func homeAssistantDiscoversTheVehicleAndFollowsIt() async throws {
        let (broker, operatorClient) = try await Sail.brokerWithGeofences()
        defer { broker.stop() }
        defer { Task { await operatorClient.shutdown() } }
        let discovery = try await EventSubscriber(port: broker.port, topic: "homeassistant/+/+/+/config")
        let attributes = try await EventSubscriber(
            port: broker.port, topic: "fleet/test/vehicles/v1/homeassistant/attributes")
        let events = try await EventSubscriber(port: broker.port, topic: "fleet/test/vehicles/v1/homeassistant/event")
        let status = try await EventSubscriber(port: broker.port, topic: "fleet/test/vehicles/v1/status")
        // Attributes after a live update at most every 5 s of the sail's 147 (30 s by default).
        let agent = try Sail.agent(brokerPort: broker.port, speedFactor: 20) {
            $0["homeAssistant"] = ["enabled": true, "locationIntervalSeconds": 5]
        }
        defer { agent.kill(signal: SIGKILL) }
        try agent.start()

        #expect(await waitUntil(60) { discovery.events.count >= 7 })
        let configs = discovery.events
        #expect(Set(configs.compactMap { $0["unique_id"] as? String }).count == 7)

        // The events Home Assistant's event entity gets: the sail's transitions of its four types.
        #expect(await waitUntil(60) { events.events.count >= 5 }, "\(agent.log.suffix(2000))")
        #expect(
            events.events.map { "\($0["identifier"] as? String ?? "") \($0["event_type"] as? String ?? "")" }
                == ["start-buoy exit", "channel enter", "channel dwell", "gate crossed", "channel exit"])
        // The tracker's attributes: where the vehicle is, and (while it was in the channel) what it is inside.
        #expect(await waitUntil(60) { attributes.events.count >= 10 })
        #expect(
            attributes.events.allSatisfy {
                $0["latitude"] is Double && $0["longitude"] is Double && $0["gps_accuracy"] is Double
            })
        #expect(attributes.events.contains { ($0["inside"] as? [String])?.contains("channel") == true })

        // The sensors' templates, rendered as Home Assistant renders them, against the latest status.
        #expect(await waitUntil(60) { status.events.contains { ($0["gps"] as? [String: Any])?["state"] != nil } })
        let latest = try #require(status.events.last { $0["status"] as? String == "online" })
        let sensors = configs.filter {
            $0["value_template"] != nil && $0["state_topic"] as? String == "fleet/test/vehicles/v1/status"
        }
        #expect(sensors.count == 3)
        for sensor in sensors {
            let rendered = try renderJinja(sensor["value_template"] as! String, valueJSON: latest)
            let want: String
            switch sensor["name"] as? String {
            case "GPS": want = (latest["gps"] as? [String: Any])?["state"] as? String ?? "?"
            case "Outbox depth": want = "\((latest["outbox"] as? [String: Any])?["rows"] as? Int ?? -1)"
            default:
                want =
                    "\((latest["monitors"] as? [[String: Any]] ?? []).reduce(0) { $0 + ($1["satisfied"] as? Int ?? 0) })"
            }
            #expect(rendered == want, "\(sensor["name"] ?? ""): \(rendered) against \(latest)")
        }
        #expect(try renderJinja("{{ value_json.status }}", valueJSON: latest) == "online", "availability")

        // Home Assistant restarts: it says `online`, and the discovery comes again.
        let before = discovery.count
        _ = try await operatorClient.publish("homeassistant/status", text: "online", retain: false)
        #expect(await waitUntil(60) { discovery.count >= before + 7 })
        #expect(agent.terminate(within: 15) != nil)

        // The stop's status says only `offline`: every template still renders, the sensors to Home
        // Assistant's "no value", with no undefined key touched (Home Assistant logs an error for each).
        #expect(await waitUntil(60) { status.events.last?["status"] as? String == "offline" })
        let offline = try #require(status.events.last)
        for sensor in sensors {
            #expect(try renderJinja(sensor["value_template"] as! String, valueJSON: offline) == "None")
        }
        #expect(try renderJinja("{{ value_json.status }}", valueJSON: offline) == "offline", "availability")
        for s in [discovery, attributes, events, status] { await s.stop() }
    }
}

/// A template rendered by Jinja2 with `value_json` set, as Home Assistant's MQTT entities render theirs.
/// Strictly: touching an undefined key fails here, where Home Assistant would log an error or a warning.
func renderJinja(_ template: String, valueJSON: [String: Any]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [
        "python3", "-c",
        "import sys, json, jinja2; t, v = json.load(sys.stdin); "
            + "print(jinja2.Environment(undefined=jinja2.StrictUndefined).from_string(t).render(value_json=v), end='')",
    ]
    let input = Pipe()
    let output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    try process.run()
    try input.fileHandleForWriting.write(contentsOf: try JSONSerialization.data(withJSONObject: [template, valueJSON]))
    try input.fileHandleForWriting.close()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw AgentTestError("jinja2 could not render \(template) (is jinja2 installed? scripts/setup --test)")
    }
    return String(decoding: data, as: UTF8.self)
}
