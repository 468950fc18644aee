import AgentTestSupport
import Foundation
import GeofenceCore
import LocalServers
import Logging
import Mosquitto
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `push` and `conditions` as operators and technicians use them.
@Suite(.offTheCooperativePool(.waiting)) struct OperatorCommandTests {
    @Test func pushValidatesEverythingBeforePublishingAnything() async throws {
        let broker = try LocalMosquitto.started()
        defer { broker.stop() }
        let agent = try AgentFixture(brokerPort: broker.port, speedFactor: 10)
        let fleet = try await EventSubscriber(port: broker.port, topic: "fleet/test/geofences/#")
        let bad = try AgentBinary.temporaryFile(
            #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"ok","geometry":{"type":"Point","coordinates":[5,52]},"properties":{"radius":10}},{"type":"Feature","id":"bad","geometry":{"type":"Point","coordinates":[5,95]},"properties":{"radius":10}}]}"#,
            suffix: ".geojson")
        let refused = try AgentBinary.run(["push", "--config", agent.configURL.path, "--conditions", bad])
        #expect(refused.status == 1 || refused.status == 2)
        #expect(refused.stderr.contains("nothing was published"))
        #expect(refused.stderr.contains("latitude 95"))
        let good = agent.directory.appendingPathComponent("conditions.geojson").path
        let pushed = try AgentBinary.run(["push", "--config", agent.configURL.path, "--conditions", good])
        #expect(pushed.status == 0, "\(pushed.stderr)")
        #expect(pushed.lines.count == SyntheticDrive.circles + 1, "each geofence, then the set's manifest")
        #expect(pushed.lines.first == "published fleet/test/geofences/c1")
        // By identifier: a subscription that the broker confirms during the push gets some features live and
        // all of them again as retained messages.
        let published = { Set(fleet.events.compactMap { $0["id"] as? String }) }
        #expect(await waitUntil(60) { published().count >= SyntheticDrive.circles })
        #expect(
            published() == Set((1...SyntheticDrive.circles).map { "c\($0)" }),
            "only the good file's \(SyntheticDrive.circles) features, retained")
        let one = try AgentBinary.run([
            "push", "--config", agent.configURL.path, "--conditions", good, "--vehicle", "v9",
        ])
        #expect(one.lines.first == "published fleet/test/vehicles/v9/geofences/c1")
        await fleet.stop()
    }

    /// `push` keeps each set's manifest: what it published, amended by every push and deletion, so that a
    /// vehicle can confirm what it holds; `--only` publishes again what a vehicle reports missing.
    @Test func pushKeepsTheManifestOfEachSet() async throws {
        let broker = try LocalMosquitto.started()
        defer { broker.stop() }
        let agent = try AgentFixture(brokerPort: broker.port, speedFactor: 10)
        let file = agent.directory.appendingPathComponent("conditions.geojson").path
        func push(_ arguments: [String]) throws -> AgentBinary.Result {
            try AgentBinary.run(["push", "--config", agent.configURL.path, "--conditions", file] + arguments)
        }
        /// The retained manifest on `topic`, as a vehicle subscribing now gets it.
        func manifest(_ topic: String) async throws -> [String: String] {
            let reader = try await EventSubscriber(port: broker.port, topic: topic)
            defer { Task { await reader.stop() } }
            _ = await waitUntil(10) { !reader.events.isEmpty }
            return reader.events.last?["geofences"] as? [String: String] ?? [:]
        }
        let all = try push([])
        #expect(all.status == 0, "\(all.stderr)")
        #expect(all.lines.last == "published fleet/test/manifests/geofences (\(SyntheticDrive.circles) geofences)")
        let geofences = try await EventSubscriber(port: broker.port, topic: "fleet/test/geofences/+")
        _ = await waitUntil(30) { geofences.count >= SyntheticDrive.circles }
        await geofences.stop()
        let published = Dictionary(
            geofences.payloads.map { (($0.topic as NSString).lastPathComponent, GeofenceDigest.of($0.payload)) },
            uniquingKeysWith: { _, last in last })
        #expect(
            try await manifest("fleet/test/manifests/geofences") == published, "each geofence's digest, as published")

        let deleted = try push(["--only", "c1", "--delete"])
        #expect(
            deleted.lines == [
                "deleted fleet/test/geofences/c1",
                "published fleet/test/manifests/geofences (\(SyntheticDrive.circles - 1) geofences)",
            ])
        #expect(
            try await manifest("fleet/test/manifests/geofences").keys.sorted()
                == published.keys.sorted().filter { $0 != "c1" })

        let unknown = try push(["--only", "c2,nope"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("--only names nope, not in"), "\(unknown.stderr)")

        let one = try push(["--only", "c2", "--vehicle", "v9"])
        #expect(one.status == 0, "\(one.stderr)")
        #expect(try await manifest("fleet/test/vehicles/v9/manifests/geofences") == ["c2": published["c2"]])

        // The broker lost c3 and holds a stray: `--repair` publishes c3 again (and c1, deleted above, which
        // the file has), deletes the stray, and makes the file the manifest.
        let operatorClient = try await Sail.operatorClient(port: broker.port)
        _ = try await operatorClient.publish("fleet/test/geofences/c3", payload: [], retain: true)
        _ = try await operatorClient.publish("fleet/test/geofences/stray", text: "{}", retain: true)
        await operatorClient.shutdown()
        let repaired = try push(["--repair"])
        #expect(
            repaired.lines == [
                "published fleet/test/geofences/c1", "published fleet/test/geofences/c3",
                "deleted fleet/test/geofences/stray",
                "published fleet/test/manifests/geofences (\(SyntheticDrive.circles) geofences)",
            ], "\(repaired.stdout)\(repaired.stderr)")
        #expect(try await manifest("fleet/test/manifests/geofences") == published)
        let again = try push(["--repair"])
        #expect(again.lines.first?.hasPrefix("the broker holds every geofence of") == true, "\(again.stdout)")
    }

    @Test func pushByPlaceNamePublishesACircleAroundThePlaceItNames() async throws {
        let broker = try LocalMosquitto.started()
        defer { broker.stop() }
        let agent = try AgentFixture(brokerPort: broker.port, speedFactor: 10)
        let fleet = try await EventSubscriber(port: broker.port, topic: "fleet/test/geofences/#")
        let pushed = try AgentBinary.run([
            "push", "--config", agent.configURL.path, "--place", "zwolle, nl", "--radius", "2500", "--id", "zwolle",
        ])
        #expect(pushed.status == 0, "\(pushed.stderr)")
        #expect(
            pushed.lines.first?.hasPrefix("place: Zwolle, Overijssel, NL (52.51250, 6.09444") == true,
            "\(pushed.stdout)")
        #expect(pushed.lines.dropLast().last == "published fleet/test/geofences/zwolle")
        #expect(await waitUntil(60) { fleet.events.contains { $0["id"] as? String == "zwolle" } })
        let feature = fleet.events.first { $0["id"] as? String == "zwolle" }!
        let coordinates = (feature["geometry"] as? [String: Any])?["coordinates"] as? [Double]
        #expect(coordinates.map { abs($0[0] - 6.09444) < 1e-4 && abs($0[1] - 52.5125) < 1e-4 } == true)
        let properties = feature["properties"] as? [String: Any]
        #expect(properties?["radius"] as? Double == 2500 && properties?["name"] as? String == "Zwolle")

        let unknown = try AgentBinary.run([
            "push", "--config", agent.configURL.path, "--place", "Xqzzyplorf", "--radius", "100", "--id", "x",
        ])
        #expect(unknown.status == 1 && unknown.stderr.contains(#"--place "Xqzzyplorf": no place matches"#))
        let noRadius = try AgentBinary.run(["push", "--config", agent.configURL.path, "--place", "Zwolle", "--id", "x"])
        #expect(noRadius.status == 64 && noRadius.stderr.contains("--place needs --radius"))
        let both = try AgentBinary.run([
            "push", "--config", agent.configURL.path, "--place", "Zwolle", "--conditions", "x.geojson",
        ])
        #expect(both.status == 64 && both.stderr.contains("not both"))
        let badId = try AgentBinary.run([
            "push", "--config", agent.configURL.path, "--place", "Zwolle", "--radius", "10", "--id", "a/b",
        ])
        #expect(badId.status != 0 && badId.stderr.contains("nothing was published"))
        await fleet.stop()
    }

    @Test func conditionsAddListShowRemoveWithAndWithoutTheAgent() async throws {
        let broker = try LocalMosquitto.started()
        defer { broker.stop() }
        let agent = try AgentFixture(brokerPort: broker.port, speedFactor: 5) { $0["conditions"] = nil }
        let config = agent.configURL.path
        let depot = try AgentBinary.temporaryFile(
            #"{"type":"Feature","id":"depot","geometry":{"type":"Point","coordinates":[4.89,52.37]},"properties":{"radius":150,"name":"Depot","version":2}}"#,
            suffix: ".geojson")
        // Agent stopped: straight into the store.
        let added = try AgentBinary.run(["conditions", "add", "--config", config, "--file", depot])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout.contains("added depot"))
        let list = try AgentBinary.run(["conditions", "list", "--config", config, "--json"])
        #expect(
            list.lines.count == 1 && list.stdout.contains(#""identifier":"depot""#)
                && list.stdout.contains(#""version":2"#))
        let show = try AgentBinary.run(["conditions", "show", "depot", "--config", config])
        #expect(show.stdout.contains(#""radius":150"#))
        // Agent running: through its inbox.
        try agent.start()
        defer { agent.kill(signal: SIGTERM) }
        #expect(await waitUntil(60) { FileManager.default.fileExists(atPath: agent.storePath + ".status.json") })
        let gate = try AgentBinary.temporaryFile(
            #"{"type":"Feature","id":"gate","geometry":{"type":"Point","coordinates":[5.01,52.0]},"properties":{"radius":30}}"#,
            suffix: ".geojson")
        let live = try AgentBinary.run(["conditions", "add", "--config", config, "--file", gate])
        #expect(live.status == 0, "\(live.stderr)")
        #expect(live.stdout.contains("through the running agent"))
        #expect(try AgentBinary.run(["conditions", "list", "--config", config]).stdout.contains("gate"))
        let removed = try AgentBinary.run(["conditions", "remove", "depot", "--config", config])
        #expect(removed.status == 0, "\(removed.stderr)")
        let after = try AgentBinary.run(["conditions", "list", "--config", config, "--json"])
        #expect(!after.stdout.contains("depot") && after.stdout.contains("gate"))
        let missing = try AgentBinary.run(["conditions", "show", "nope", "--config", config])
        #expect(missing.status == 1 && missing.stderr.contains("no condition 'nope'"))
    }

    @Test func everySubcommandHasHelpWithAnExample() throws {
        for command in [
            ["run"], ["status"], ["conditions"], ["conditions", "list"], ["conditions", "show"], ["conditions", "add"],
            ["conditions", "remove"], ["push"], ["locations"], ["evaluate"], ["simulate"],
        ] {
            let result = try AgentBinary.run(command + ["--help"])
            #expect(result.status == 0, "\(command)")
            #expect(result.stdout.contains("geofence-agent \(command[0])"), "\(command): \(result.stdout.prefix(200))")
            #expect(result.stdout.lowercased().contains("example"), "\(command) --help has an example")
            // Every example file a help text names is in the repository.
            for word in result.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" })
            where word.hasPrefix("examples/") {
                #expect(
                    FileManager.default.fileExists(atPath: Repository.url(String(word)).path),
                    "\(command) --help names \(word), which does not exist")
            }
        }
    }
}

/// deploy/: the broker's ACL confines each vehicle, and the unit passes systemd's own check.
@Suite(.offTheCooperativePool(.waiting)) struct DeployTests {
    static let deploy = Repository.url("deploy")

    @Test func theFleetACLConfinesEachVehicleToItsSubtree() async throws {
        // The fleet ACL and password file, on a plain listener (TLS is covered by the MQTT client's tests).
        let broker = try LocalMosquitto()
        let passwd = broker.path("passwd")
        broker.settings = """
            allow_anonymous false
            password_file \(passwd)
            acl_file \(Self.deploy.appendingPathComponent("mosquitto-fleet.acl").path)
            """
        try LocalProcess.run(
            "/usr/bin/mosquitto_passwd", ["-c", "-b", passwd, "vehicle-1", "pw1"], in: broker.directory)
        try LocalProcess.run("/usr/bin/mosquitto_passwd", ["-b", passwd, "operator", "pwo"], in: broker.directory)
        try LocalProcess.run("/usr/bin/mosquitto_passwd", ["-b", passwd, "dashboard", "pwd"], in: broker.directory)
        try broker.start()
        defer { broker.stop() }
        /// Publishes as a user; the broker's PUBACK says whether the ACL let it through.
        func allowed(_ user: String, _ password: String, _ topic: String) async throws -> Bool {
            let passwordFile = broker.path("pw-\(user)")
            try password.write(toFile: passwordFile, atomically: true, encoding: .utf8)
            var configuration = MQTTConfiguration(
                port: broker.port, clientID: "acl-\(user)-\(UUID().uuidString.prefix(6))")
            configuration.username = user
            configuration.password = .file(passwordFile)
            let client = try MQTTClient(
                configuration: configuration, logger: Logger(label: "acl") { _ in SwiftLogNoOpLogHandler() })
            await client.start()
            defer { Task { await client.shutdown() } }
            guard await waitUntil(5, { client.status.isConnected }) else { return false }
            do {
                _ = try await client.publish(topic, text: "x")
                return true
            } catch {
                return false
            }
        }
        #expect(try await allowed("vehicle-1", "pw1", "fleet/demo/vehicles/vehicle-1/events"))
        #expect(try await allowed("vehicle-1", "pw1", "fleet/demo/vehicles/vehicle-1/status"))
        #expect(
            !(try await allowed("vehicle-1", "pw1", "fleet/demo/vehicles/vehicle-2/events")),
            "a vehicle cannot write another's subtree")
        #expect(!(try await allowed("vehicle-1", "pw1", "fleet/demo/geofences/x")), "a vehicle cannot push geofences")
        #expect(try await allowed("operator", "pwo", "fleet/demo/geofences/x"))
        #expect(try await allowed("operator", "pwo", "fleet/demo/manifests/geofences"), "operators publish manifests")
        #expect(
            !(try await allowed("vehicle-1", "pw1", "fleet/demo/manifests/geofences")), "a vehicle cannot publish one")
        for topic in ["trips", "track", "probe/retained", "probe/marker"] {
            #expect(
                try await allowed("vehicle-1", "pw1", "fleet/demo/vehicles/vehicle-1/\(topic)"),
                "the vehicle writes its \(topic)")
        }
        #expect(
            !(try await allowed("vehicle-1", "wrong", "fleet/demo/vehicles/vehicle-1/events")),
            "a wrong password gets nowhere")
        #expect(
            try await allowed("vehicle-1", "pw1", "fleet/demo/vehicles/vehicle-1/state/detail"), "reportState's pages")
        // The dashboard writes nothing: not geofences, not commands, not a vehicle's topics, and
        // not the subtree of a "vehicle" named after it, which the vehicles' patterns would otherwise give it.
        for topic in [
            "fleet/demo/geofences/x", "fleet/demo/vehicles/vehicle-1/cmd", "fleet/demo/vehicles/vehicle-1/events",
            "fleet/demo/vehicles/dashboard/events", "fleet/demo/vehicles/dashboard/status",
        ] {
            #expect(!(try await allowed("dashboard", "pwd", topic)), "the dashboard user may not write \(topic)")
        }
        #expect(
            !(try await allowed("operator", "pwo", "fleet/demo/vehicles/operator/events")),
            "nor the operator as a vehicle")
    }

    /// The agent's unit, and the NATS node's template as node n1.
    @Test(
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze")),
        arguments: ["geofence-agent.service", "nats/nats@.service"])
    func theUnitPassesSystemdAnalyzeVerify(_ name: String) throws {
        let unit = Self.deploy.appendingPathComponent(name)
        guard name.hasSuffix("@.service") else { return try verify(unit.path) }
        // A template is verified as one of its instances.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("units-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let instance = directory.appendingPathComponent(
            unit.lastPathComponent.replacingOccurrences(of: "@", with: "@n1"))
        try FileManager.default.copyItem(at: unit, to: instance)
        try verify(instance.path)
    }

    /// `systemd-analyze verify` finds nothing but the binaries that are not installed here.
    func verify(_ unit: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/systemd-analyze")
        process.arguments = ["verify", "--man=no", unit]
        let err = Pipe()
        process.standardError = err
        process.standardOutput = Pipe()
        try process.run()
        let reader = PipeReader(err.fileHandleForReading.fileDescriptor)
        process.waitUntilExit()
        let text = String(decoding: reader.finish(), as: UTF8.self)
        // The binary is not installed here; everything else must be clean.
        let problems = text.split(separator: "\n").filter {
            !$0.contains("/usr/local/bin/geofence-agent") && !$0.contains("Command /usr/local/bin")
                && !$0.contains("/usr/local/bin/nats-server")
        }
        #expect(problems.isEmpty, "\(text)")
    }
}
