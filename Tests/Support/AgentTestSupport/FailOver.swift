import Foundation
import LocalServers
import Logging
import Mosquitto
import Testing

/// The agent replays the sail through the broker on `first` (with live updates keeping messages in
/// flight), listing both brokers in `mqtt.hosts`; after the first transition reaches a dashboard on
/// `second`, `stop` takes `first` away. The agent must fail over to `second`, the dashboard hear every
/// transition once and in order after de-duplication by eventId, and the outbox empty. Before that, the
/// agent's check of the first broker must have found `geofenceSync` (the status's start), and said so on
/// `errors` when it is "unavailable".
package func failOverMidDrive(
    first: Int, second: Int, protocolVersion: MQTTConfiguration.ProtocolVersion, geofenceSync: String,
    stop: () -> Void
) async throws {
    let dashboard = try await EventSubscriber(port: second, protocolVersion: protocolVersion)
    let errors = try await EventSubscriber(
        port: second, topic: "fleet/test/vehicles/v1/errors", protocolVersion: protocolVersion)
    let agent = try AgentFixture(brokerPort: first, speedFactor: 2) { config in
        config["mqtt"] = [
            "hosts": ["127.0.0.1:\(first)", "127.0.0.1:\(second)"], "failoverAfter": 2,
            "protocol": protocolVersion == .v5 ? "mqttv5" : "mqttv311",
        ]
        config["conditions"] = ["file": Sail.examples.appendingPathComponent("ijsselmeer.geojson").path]
        config["replay"] = ["gpx": Sail.track, "speedFactor": 2, "exitAtEnd": false]
        config["liveUpdates"] = ["configuration": "fitness", "startedByDefault": true]
    }
    defer { agent.kill(signal: SIGKILL) }
    let expected = try expectedSailTransitions()
    try agent.start()
    #expect(await waitUntil(60) { !dashboard.unique.isEmpty }, "\(agent.log.suffix(1500))")
    #expect(
        await waitUntil(60) { (agent.status?["geofenceSync"] as? String)?.hasPrefix(geofenceSync) == true },
        "\(agent.status?["geofenceSync"] ?? "no status"): \(agent.log.suffix(1500))")
    if geofenceSync == "unavailable" {
        #expect(await waitUntil(60) { errors.events.contains { $0["kind"] as? String == "broker" } })
        #expect(agent.log.contains("geofence sync unavailable"), "\(agent.log.suffix(1500))")
    }
    stop()
    #expect(
        await waitUntil(60) {
            (agent.status?["broker"] as? String).map { $0.hasPrefix("connected") && $0.contains("127.0.0.1:\(second)") }
                == true
        },
        "\(agent.status?["broker"] ?? "no status"): \(agent.log.suffix(1500))")
    #expect(
        await waitUntil(90) { dashboard.unique.count >= expected.count },
        "\(dashboard.unique.map { $0["identifier"] ?? "" })")
    let heard = dashboard.unique.map { "\($0["identifier"] as? String ?? "") \($0["event"] as? String ?? "")" }
    #expect(heard == expected, "every transition once, in order, after de-duplication by eventId")
    #expect(agent.log.contains("failing over to 127.0.0.1:\(second)"))
    // What the first broker had not acknowledged was sent again to the second and acknowledged there. The
    // rows are no change of the status file's: it shows them at its next 30 s, or with the next change.
    #expect(
        await waitUntil(75) { ((agent.status?["outbox"] as? [String: Any])?["rows"] as? Int) == 0 },
        "\(agent.status?["outbox"] ?? "")")
    print(
        "failover \(protocolVersion): \(dashboard.count) event messages heard on the second broker, \(dashboard.unique.count) unique, \(expected.count) expected"
    )
    #expect(geofenceSync == "unavailable" || errors.events.isEmpty, "\(errors.events)")
    await dashboard.stop()
    await errors.stop()
}

/// The sail's transitions with the example geofences, as `simulate` gives them: "identifier event".
package func expectedSailTransitions() throws -> [String] {
    let result = try AgentBinary.run([
        "simulate", "--conditions", Sail.examples.appendingPathComponent("ijsselmeer.geojson").path, "--track",
        Sail.track,
    ])
    return try result.lines.compactMap { line in
        guard let o = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let event = o["event"] as? String,
            event != "initial"
        else { return nil }
        return "\(o["identifier"] as! String) \(event)"
    }
}
