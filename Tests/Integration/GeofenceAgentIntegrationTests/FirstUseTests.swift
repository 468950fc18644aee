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

/// What a new user met on the CLI, each as the binary runs: every one ends, with a reason and a
/// documented exit status.
@Suite(.offTheCooperativePool(.waiting)) struct FirstUseTests {
    /// A configuration whose broker and gpsd ports have nothing listening, and whose store does not exist.
    static func lonelyConfiguration() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("first-use-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let config =
            #"{"fleet":"test","vehicle":"v1","mqtt":{"host":"127.0.0.1","port":\#(try LocalProcess.freePort())},"gpsd":{"host":"127.0.0.1","port":\#(try LocalProcess.freePort())},"store":{"path":"state/agent.sqlite"}}"#
        let path = directory.appendingPathComponent("config.json").path
        try config.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// It ends by itself, at its default timeout (30 s), which it names: how long that took is not timed
    /// here (a full parallel run has seen 30 to 104 s on this 2-core machine).
    @Test func locationsWithNoGPSDEndsByItselfAndSaysNoneCame() throws {
        let result = try AgentBinary.run([
            "locations", "--count", "5", "--gpsd", "127.0.0.1:\(try LocalProcess.freePort())",
        ])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("no location from gpsd at 127.0.0.1:"), "\(result.stderr)")
        #expect(result.stderr.contains("within 30.0 s"), "the default timeout ended it: \(result.stderr)")
    }

    @Test func statusWithNoAgentAndNoStoreSaysSoAndExits3() throws {
        let config = try Self.lonelyConfiguration()
        let result = try AgentBinary.run(["status", "--config", config])
        #expect(result.status == 3)
        #expect(result.stdout.contains("agent        not running"))
        #expect(result.stdout.contains("store        none yet at"))
        #expect(result.stderr.contains("no agent has run with \(config): there is no store at"), "\(result.stderr)")
        let json = try AgentBinary.run(["status", "--config", config, "--json"])
        #expect(
            json.status == 3 && json.stdout.contains(#""running":false"#)
                && json.stdout.contains(#""storeExists":false"#))
    }

    @Test func pushWithNoBrokerGivesTheReasonAndExits1() throws {
        let result = try AgentBinary.run([
            "push", "--config", try Self.lonelyConfiguration(),
            "--conditions", Repository.url("examples/ijsselmeer.geojson").path,
        ])
        #expect(result.status == 1)
        #expect(
            result.stderr.contains("nothing was published") && result.stderr.contains("Connection refused"),
            "\(result.stderr)")
    }

    @Test func theEvaluateExampleOfItsHelpRuns() throws {
        let help = try AgentBinary.run(["evaluate", "--help"])
        // The example as a shell reads it: a line ending in a backslash goes on.
        let text = help.stdout.replacingOccurrences(of: "\\\n", with: " ")
        let line = try #require(
            text.split(separator: "\n").map(String.init).first { $0.contains("geofence-agent evaluate --conditions") })
        let arguments = line.split(separator: " ").dropFirst().map { word in
            word.hasPrefix("examples/") ? Repository.url(String(word)).path : String(word)
        }
        let result = try AgentBinary.run(Array(arguments))
        #expect(result.status == 0, "\(line): \(result.stderr)")
        #expect(result.lines.count == 3)
    }

    @Test func aNegativeAccuracyIsNamedNotMissing() throws {
        let result = try AgentBinary.run([
            "simulate", "--conditions", "x.geojson", "--track", "x.gpx", "--accuracy", "-3",
        ])
        #expect(result.status == 64)
        #expect(
            result.stderr.contains("--accuracy must be a non-negative number of metres, got -3.0"), "\(result.stderr)")
    }

    @Test func aCSVGivenAsGeoJSONIsCalledACSV() throws {
        let csv = Repository.url("examples/points.csv").path
        let result = try AgentBinary.run(["evaluate", "--conditions", csv, "--points", csv])
        #expect(result.status == 2)
        #expect(
            result.stderr.contains("this is not GeoJSON: it looks like CSV, starting 'name,lat,lon'"),
            "\(result.stderr)")
        #expect(result.stderr.contains("evaluate --points"))
    }

    @Test func anUnknownCommandIsRefusedAsACommand() async throws {
        let broker = try LocalMosquitto.started()
        defer { broker.stop() }
        let agent = try AgentFixture(brokerPort: broker.port, speedFactor: 5)
        let watcher = try await EventSubscriber(port: broker.port, topic: "fleet/test/vehicles/v1/errors")
        try agent.start()
        defer { agent.kill(signal: SIGTERM) }
        #expect(await waitUntil(60) { (agent.status?["broker"] as? String)?.hasPrefix("connected") == true })
        let operatorClient = try MQTTClient(
            configuration: MQTTConfiguration(port: broker.port, clientID: "test-cmd"),
            logger: Logger(label: "t") { _ in SwiftLogNoOpLogHandler() })
        await operatorClient.start()
        try await operatorClient.publish("fleet/test/vehicles/v1/cmd", text: "selfDestruct")
        await operatorClient.shutdown()
        #expect(await waitUntil(60) { watcher.count >= 1 })
        await watcher.stop()
        let error = try #require(watcher.events.first)
        #expect(error["kind"] as? String == "command")
        #expect((error["reason"] as? String)?.contains("unknown command 'selfDestruct'") == true)
        #expect(
            agent.log.contains("command rejected") && !agent.log.contains("geofence rejected"),
            "\(agent.log.suffix(2000))")
    }
}
