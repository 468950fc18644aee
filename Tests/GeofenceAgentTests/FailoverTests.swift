import Foundation
import LocalServers
import Logging
import Mosquitto
import TestSupport
import Testing

@testable import GeofenceAgent

#if canImport(Glibc)
    import Glibc
#endif

/// `mqtt.hosts`: the agent moves to the next broker when its own is gone, and every transition still
/// reaches a subscriber on the other broker.
@Suite(.offTheCooperativePool(.waiting)) struct FailoverTests {
    /// Two mosquitto brokers bridged both ways over MQTT 5 (b connects to a); the agent publishes to a, a
    /// dashboard listens on b; a is stopped mid-drive.
    @Test func theAgentFailsOverBetweenBridgedBrokersAndNoTransitionIsLost() async throws {
        let a = try LocalMosquitto()
        try a.start()
        defer { a.stop() }
        let b = try LocalMosquitto(
            settings: """
                allow_anonymous true
                connection to-a
                address 127.0.0.1:\(a.port)
                topic fleet/# both 1
                bridge_protocol_version mqttv50
                cleansession false
                restart_timeout 1
                """)
        try b.start()
        defer { b.stop() }
        try await failOverMidDrive(first: a.port, second: b.port, protocolVersion: .v5, geofenceSync: "ok") {
            a.stop()
        }
    }
}

/// The agent replays the sail through the broker on `first` (with live updates keeping messages in
/// flight), listing both brokers in `mqtt.hosts`; after the first transition reaches a dashboard on
/// `second`, `stop` takes `first` away. The agent must fail over to `second`, the dashboard hear every
/// transition once and in order after de-duplication by eventId, and the outbox empty. Before that, the
/// agent's check of the first broker must have found `geofenceSync` (the status's start), and said so on
/// `errors` when it is "unavailable".
func failOverMidDrive(
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
func expectedSailTransitions() throws -> [String] {
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

/// Back-ends on a shared subscription (`$share/backend/...`): two instances split the events between
/// them, each event to one, none lost.
@Suite(.offTheCooperativePool(.waiting)) struct SharedSubscriptionTests {
    @Test func twoBackEndsSplitTheEventsWithNoneLost() async throws {
        let broker = try LocalMosquitto()
        try broker.start()
        defer { broker.stop() }
        let filter = "$share/backend/fleet/+/vehicles/+/events"
        let first = try await EventSubscriber(port: broker.port, topic: filter)
        let second = try await EventSubscriber(port: broker.port, topic: filter)
        // The synthetic drive: 240 transitions at 40x.
        let agent = try AgentFixture(brokerPort: broker.port, speedFactor: 40)
        defer { agent.kill(signal: SIGKILL) }
        let expected = try expectedTransitions(in: agent)
        try agent.start()
        #expect(
            await waitUntil(90) { Set(first.unique.map(eventID) + second.unique.map(eventID)).count >= expected.count },
            "\(first.count) + \(second.count) of \(expected.count)")
        let one = Set(first.unique.map(eventID))
        let two = Set(second.unique.map(eventID))
        #expect(one.union(two).count == expected.count, "none lost")
        #expect(one.isDisjoint(with: two), "each event to one back-end")
        #expect(
            one.count > expected.count / 4 && two.count > expected.count / 4,
            "both take a share: \(one.count) and \(two.count)")
        print(
            "shared subscription: \(expected.count) events, \(one.count) to the first back-end, \(two.count) to the second, \(one.intersection(two).count) to both"
        )
        for s in [first, second] { await s.stop() }
    }

    func eventID(_ event: [String: Any]) -> String { event["eventId"] as? String ?? "" }
}

/// `mqtt.hosts` in config.json: read, printed back, and refused with the key's path.
@Suite(.offTheCooperativePool(.computing)) struct MQTTHostsConfigurationTests {
    func parse(_ mqtt: String) -> String {
        do {
            let c = try AgentConfiguration.parse(
                Array(#"{"fleet":"f","vehicle":"v","mqtt":\#(mqtt)}"#.utf8), name: "config.json")
            let again = try AgentConfiguration.parse(Array(c.json.jsonText.utf8), name: "printed")
            guard again == c else { return "printed differently: \(c.json.jsonText)" }
            return ([MQTTBroker(host: c.mqtt.host, port: c.mqtt.port)] + c.mqtt.failover).map(\.description).joined(
                separator: " ") + " after \(c.mqtt.failoverAfter)"
        } catch {
            return "\(error)"
        }
    }

    @Test func brokersInOrder() {
        #expect(
            parse(#"{"hosts":["a.example:8883","b.example"],"port":1884,"failoverAfter":5}"#)
                == "a.example:8883 b.example:1884 after 5.0")
        #expect(parse(#"{"host":"a.example"}"#) == "a.example:1883 after 10.0")
        #expect(
            parse(#"{"hosts":["a"],"host":"b"}"#).contains(
                "mqtt.hosts: give the brokers in mqtt.hosts or one in mqtt.host, not both"))
        #expect(parse(#"{"hosts":[]}"#).contains("mqtt.hosts: expected a list"))
        #expect(parse(#"{"hosts":["a:99999"]}"#).contains("mqtt.hosts[0]: port '99999' is not 1–65535"))
        #expect(
            parse(#"{"hosts":["a",7]}"#).contains("mqtt.hosts[1]: expected \"HOST\" or \"HOST:PORT\", found number"))
        #expect(parse(#"{"hosts":[":1883"]}"#).contains("mqtt.hosts[0]"))
        #expect(parse(#"{"failoverAfter":0}"#).contains("mqtt.failoverAfter"))
    }
}

/// A two-node RabbitMQ cluster with its MQTT plugin (MQTT 3.1.1), on loopback: the agent publishes to
/// node 1, node 1 is stopped mid-drive, the agent fails over to node 2, and a subscriber on node 2
/// receives every transition. RabbitMQ gives no retained message to a wildcard subscription: the agent
/// refuses the geofence sync there, and says why.
@Suite(.offTheCooperativePool(.waiting)) struct RabbitMQClusterTests {
    @Test func theAgentFailsOverWithinACluster() async throws {
        guard LocalRabbitMQCluster.isInstalled else {
            throw AgentTestError("the cluster test needs Debian's rabbitmq-server: run scripts/setup --test")
        }
        let cluster = try LocalRabbitMQCluster.started(nodes: 2)
        defer { cluster.stopAll() }
        try await failOverMidDrive(
            first: cluster.mqttPorts[0], second: cluster.mqttPorts[1], protocolVersion: .v311,
            geofenceSync: "unavailable"
        ) {
            cluster.stop(node: 0)
        }
    }
}
