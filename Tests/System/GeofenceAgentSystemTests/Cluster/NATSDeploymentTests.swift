import AgentTestSupport
import Foundation
import GeofenceCore
import LocalServers
import Logging
import Mosquitto
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// deploy/nats as an operator deploys it: three nodes with TLS on MQTT and between the nodes, and the users
/// that `deploy/nats/fleet-users` makes. Each vehicle is confined to its own subtree, operators alone push
/// geofences and manifests, dashboards only read; and the real agent runs on it as its vehicle.
@Suite(.offTheCooperativePool(.waiting)) struct NATSDeploymentTests {
    static let deploy = Repository.url("deploy/nats")

    /// Three nodes with the deployment's TLS and users, the users' passwords in `directory/pw-NAME`.
    static func deployedCluster() throws -> (LocalNATSCluster, LocalCertificates) {
        guard LocalNATSCluster.isInstalled else {
            throw LocalServerError("this test needs the pinned nats-server: run scripts/setup --test")
        }
        let cluster = try LocalNATSCluster(nodes: 3)
        let tlsDirectory = cluster.directory.appendingPathComponent("tls")
        try FileManager.default.createDirectory(at: tlsDirectory, withIntermediateDirectories: true)
        let tls = try LocalCertificates(in: tlsDirectory)
        var arguments = [deploy.appendingPathComponent("fleet-users").path, "--fleet", "test"]
        for (role, name) in [
            ("operator", "operator"), ("dashboard", "dashboard"), ("vehicle", "v1"), ("vehicle", "v2"),
        ] {
            let password = cluster.directory.appendingPathComponent("pw-\(name)").path
            try "secret-\(name)\n".write(toFile: password, atomically: true, encoding: .utf8)
            arguments += ["--\(role)", "\(name):\(password)"]
        }
        let users = try LocalProcess.run(arguments[0], Array(arguments.dropFirst()), in: cluster.directory)
        let usersFile = cluster.directory.appendingPathComponent("fleet-users.conf")
        try users.write(to: usersFile, atomically: true, encoding: .utf8)
        // Include paths are relative to the including file: each node's is in a folder of its own.
        cluster.settings = "include \"../fleet-users.conf\"\nmax_payload: 8MB"
        cluster.mqttSettings = """
            tls { cert_file: "\(tls.certificateFile)", key_file: "\(tls.keyFile)" }
            ack_wait: "60s"
            """
        cluster.clusterSettings = """
            tls { cert_file: "\(tls.certificateFile)", key_file: "\(tls.keyFile)", ca_file: "\(tls.caFile)", verify: true }
            """
        return (cluster, tls)
    }

    /// A client of `user` over TLS on node `node`.
    static func client(_ cluster: LocalNATSCluster, _ tls: LocalCertificates, user: String, node: Int = 0) throws
        -> MQTTClient
    {
        var configuration = MQTTConfiguration(
            host: "127.0.0.1", port: cluster.mqttPorts[node], clientID: "\(user)-\(UUID().uuidString.prefix(6))")
        configuration.protocolVersion = .v311
        configuration.username = user
        configuration.password = .file(cluster.directory.appendingPathComponent("pw-\(user)").path)
        configuration.tls = MQTTTLS(caFile: tls.caFile)
        configuration.minimumRetryDelay = 0.2
        configuration.maximumRetryDelay = 1
        return try MQTTClient(
            configuration: configuration, logger: Logger(label: "deploy") { _ in SwiftLogNoOpLogHandler() })
    }

    /// A client of `user` on node 3 that hears the topics of what arrives on `filter`, started and connected.
    static func listener(_ cluster: LocalNATSCluster, _ tls: LocalCertificates, user: String, filter: String)
        async throws -> (MQTTClient, HeardTopics, Task<Void, Never>)
    {
        let client = try Self.client(cluster, tls, user: user, node: 2)
        let heard = HeardTopics()
        let messages = try await client.subscribe(filter)
        let reading = Task { for await message in messages { heard.add(message.topic) } }
        await client.start()
        #expect(await waitUntil(60) { client.status.isConnected }, "\(user) connects over TLS")
        return (client, heard, reading)
    }

    @Test func theNodeConfigurationIsValid() throws {
        let (cluster, tls) = try Self.deployedCluster()
        defer { cluster.stopAll() }
        let node = try String(contentsOf: Self.deploy.appendingPathComponent("node.conf"), encoding: .utf8)
            .replacingOccurrences(of: "/etc/nats/tls/server.crt", with: tls.certificateFile)
            .replacingOccurrences(of: "/etc/nats/tls/server.key", with: tls.keyFile)
            .replacingOccurrences(of: "/etc/nats/tls/ca.crt", with: tls.caFile)
        let path = cluster.directory.appendingPathComponent("node.conf")
        try node.write(to: path, atomically: true, encoding: .utf8)
        setenv("NODE", "n1", 1)
        setenv("STORE_DIR", cluster.directory.appendingPathComponent("store").path, 1)
        let output = try LocalProcess.run(LocalNATSCluster.server, ["-t", "-c", path.path], in: cluster.directory)
        #expect(output.contains("is valid"), "\(output)")
    }

    @Test func eachVehicleIsConfinedAndOperatorsAlonePush() async throws {
        let (cluster, tls) = try Self.deployedCluster()
        defer { cluster.stopAll() }
        try cluster.startAll()
        let (reader, heard, reading) = try await Self.listener(cluster, tls, user: "operator", filter: "fleet/test/#")
        defer { reading.cancel() }
        // Granted, proven by a message of the operator's own: a refusal would be asked again meanwhile.
        _ = try await reader.publish("fleet/test/geofences/ready", text: "{}")
        #expect(
            await waitUntil(60) { heard.all.contains("fleet/test/geofences/ready") },
            "the operator reads the fleet: \(reader.refusedSubscriptions)")

        /// Publishes each topic as `user`, then a marker it may publish: what of them reached the operator.
        func published(by user: String, _ topics: [String], marker: String) async throws -> Set<String> {
            let client = try Self.client(cluster, tls, user: user)
            await client.start()
            #expect(await waitUntil(60) { client.status.isConnected }, "\(user) connects over TLS")
            for topic in topics { _ = try? await client.publish(topic, text: "{}") }
            _ = try? await client.publish(marker, text: "{}")
            #expect(
                await waitUntil(60) { heard.all.contains(marker) },
                "\(user)'s marker arrives: heard \(heard.all), \(client.status), \(client.lastConnectionError ?? "")")
            await client.shutdown()
            return Set(heard.all).intersection(topics)
        }
        let vehicleTopics = [
            "fleet/test/vehicles/v1/events", "fleet/test/vehicles/v1/trips", "fleet/test/vehicles/v1/status",
            "fleet/test/vehicles/v2/events", "fleet/test/geofences/x", "fleet/test/manifests/geofences",
            "fleet/test/vehicles/v1/geofences/x", "fleet/test/vehicles/v1/cmd",
        ]
        #expect(
            try await published(by: "v1", vehicleTopics, marker: "fleet/test/vehicles/v1/state")
                == ["fleet/test/vehicles/v1/events", "fleet/test/vehicles/v1/trips", "fleet/test/vehicles/v1/status"],
            "a vehicle writes its own topics only: not another's, not a geofence, a manifest or its commands")
        let operatorTopics = ["fleet/test/geofences/y", "fleet/test/vehicles/v2/cmd", "fleet/test/vehicles/v2/events"]
        #expect(
            try await published(by: "operator", operatorTopics, marker: "fleet/test/manifests/geofences")
                == ["fleet/test/geofences/y", "fleet/test/vehicles/v2/cmd"], "operators push, and are no vehicle")
        let dashboard = try Self.client(cluster, tls, user: "dashboard")
        await dashboard.start()
        #expect(await waitUntil(60) { dashboard.status.isConnected })
        _ = try? await dashboard.publish("fleet/test/geofences/z", text: "{}")
        await dashboard.shutdown()
        // The dashboard's user may publish nothing, so the marker that ends its wait is the operator's.
        _ = try await reader.publish("fleet/test/geofences/after-dashboard", text: "{}")
        #expect(await waitUntil(60) { heard.all.contains("fleet/test/geofences/after-dashboard") })
        #expect(!heard.all.contains("fleet/test/geofences/z"), "a dashboard writes nothing")

        // A vehicle may not read another's commands: the broker refuses the subscription.
        let v1 = try Self.client(cluster, tls, user: "v1")
        let others = try await v1.subscribe("fleet/test/vehicles/v2/cmd")
        defer { others.cancel() }
        await v1.start()
        #expect(await waitUntil(60) { v1.refusedSubscriptions["fleet/test/vehicles/v2/cmd"] != nil })
        await v1.shutdown()
    }
}

extension NATSDeploymentTests {
    /// The real agent as vehicle v1, over TLS with its own user: its probe and subscriptions are allowed
    /// (the sync is `ok`), it confirms the operator's set against the manifest, and a dashboard user reads its
    /// transitions.
    @Test func theAgentRunsAsItsVehicle() async throws {
        let (cluster, tls) = try Self.deployedCluster()
        defer { cluster.stopAll() }
        try cluster.startAll()
        let ports = cluster.mqttPorts
        let agent = try AgentFixture(brokerPort: ports[0], speedFactor: 15) { config in
            config["conditions"] = nil
            config["replay"] = ["gpx": "drive.gpx", "speedFactor": 15, "exitAtEnd": false]
            config["mqtt"] = [
                "hosts": ports.map { "127.0.0.1:\($0)" }, "protocol": "mqttv311", "sharedSession": true,
                "failoverAfter": 2, "username": "v1",
                "passwordFile": cluster.directory.appendingPathComponent("pw-v1").path,
                "tls": ["caFile": tls.caFile],
            ]
        }
        defer { agent.kill(signal: SIGKILL) }
        let operatorClient = try Self.client(cluster, tls, user: "operator", node: 1)
        await operatorClient.start()
        #expect(await waitUntil(60) { operatorClient.status.isConnected })
        let features = try ClusterFleet.features(agent.directory.appendingPathComponent("conditions.geojson"))
        for (id, payload) in features {
            _ = try await operatorClient.publish("fleet/test/geofences/\(id)", payload: payload, retain: true)
        }
        _ = try await operatorClient.publish(
            ClusterFleet.manifestTopic, payload: ClusterFleet.manifest(features), retain: true)
        await operatorClient.shutdown()

        let (dashboard, heard, reading) = try await Self.listener(
            cluster, tls, user: "dashboard", filter: "fleet/test/vehicles/v1/events")
        defer { reading.cancel() }

        try agent.start()
        #expect(
            await waitUntil(120) { ClusterFleet.geofenceSet(agent) == "confirmed: \(features.count) geofences" },
            "the vehicle confirms the set: \(agent.status ?? [:]) \(agent.log.suffix(1500))")
        #expect(
            await waitUntil(60) { agent.status?["geofenceSync"] as? String == "ok" },
            "its probe is allowed: \(agent.status?["geofenceSync"] ?? "none")")
        #expect(
            await waitUntil(120) { heard.all.count >= 10 },
            "the dashboard reads its transitions: \(heard.all.count) \(agent.log.suffix(1500))")
        await dashboard.shutdown()
    }
}

/// The topics a subscriber has heard, in order.
final class HeardTopics: Sendable {
    private let topics = Mutex<[String]>([])
    func add(_ topic: String) { topics.withLock { $0.append(topic) } }
    var all: [String] { topics.withLock { $0 } }
}
