import AgentTestSupport
import Foundation
import LocalServers
import TestSupport
import Testing

/// `geofence-agent run` and `status` as an operator meets them: bad configurations, and the status of a
/// running agent.
@Suite(.offTheCooperativePool(.waiting)) struct RunCommandTests {
    func config(_ text: String) throws -> String { try AgentBinary.temporaryFile(text, suffix: ".json") }

    @Test(arguments: [
        (#"{"fleet":"f","vehicle":"v","mqtt":{"prot":"mqttv5"}}"#, "mqtt.prot: unknown key"),
        (#"{"fleet":"f","vehicle":"v","mqtt":{"port":"1883"}}"#, "mqtt.port: expected a number, found string"),
        (#"{"fleet":"f","vehicle":"v","mqtt":{"port":70000}}"#, "mqtt.port: expected a whole number from 1 to 65535"),
        (#"{"fleet":"f/x","vehicle":"v"}"#, "fleet: fleet 'f/x' contains '/'"),
        (#"{"vehicle":"v"}"#, "fleet: is required"),
        (
            #"{"fleet":"f","vehicle":"v","liveUpdates":{"configuration":"walking"}}"#,
            "liveUpdates.configuration: expected one of default"
        ),
        (
            #"{"fleet":"f","vehicle":"v","outbox":{"maximumRows":10,"hardMaximumRows":5}}"#,
            "outbox.hardMaximumRows: must be at least outbox.maximumRows"
        ),
        (#"{"fleet":"f","vehicle":"v",}"#, "invalid JSON at line 1"),
        (
            #"{"fleet":"f","vehicle":"v","filters":{"accuracyFactor":1}}"#,
            "filters.accuracyFactor: was replaced by filters.confidence"
        ),
        (#"{"fleet":"f","vehicle":"v","filters":{"confidence":0.5}}"#, "filters.confidence: must be above 0.5"),
        (#"{"fleet":"f","vehicle":"v","filters":{"minimumDuration":-1}}"#, "filters.minimumDuration: -1.0 is outside"),
        (#"{"fleet":"f","vehicle":"v","store":{"statusFile":"/run/x/"}}"#, "store.statusFile: must name a file"),
    ])
    func aBadConfigurationNamesTheKeyAndExitsWith2(text: String, message: String) throws {
        let path = try config(text)
        let result = try AgentBinary.run(["run", "--config", path])
        #expect(result.status == 2)
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }

    @Test func aMissingConfigurationFileIsNamed() throws {
        let result = try AgentBinary.run(["run", "--config", "/nonexistent/config.json"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("/nonexistent/config.json: cannot read the configuration file (no such file)"))
    }

    @Test func theBundledConfigurationIsValid() throws {
        for file in ["config.json", "deploy/config.json"] {
            // `status` parses the configuration without starting anything.
            let result = try AgentBinary.run(["status", "--config", Repository.url(file).path, "--json"])
            // No agent runs with it: exit 3 and that reason, never a configuration error (exit 2).
            #expect(result.status == 3, "\(file): \(result.stderr)")
            #expect(
                result.stderr.contains("no agent has run with") && !result.stderr.contains("configuration"),
                "\(file): \(result.stderr)")
        }
    }

    @Test func statusWorksWhileTheAgentRuns() async throws {
        let broker = try LocalMosquitto.started()
        defer { broker.stop() }
        let agent = try AgentFixture(brokerPort: broker.port, speedFactor: 20)
        try agent.start()
        defer { agent.kill(signal: SIGTERM) }
        #expect(await waitUntil(60) { FileManager.default.fileExists(atPath: agent.storePath + ".status.json") })
        try await Task.sleep(for: .seconds(1.5))
        let result = try AgentBinary.run(["status", "--config", agent.configURL.path, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["running"] as? Bool == true)
        let status = try #require(object["agent"] as? [String: Any])
        #expect((status["broker"] as? String)?.hasPrefix("connected") == true)
        #expect((status["gps"] as? [String: Any])?["state"] as? String == "fix")
        #expect((object["conditions"] as? [Any])?.count == SyntheticDrive.circles)
        let table = try AgentBinary.run(["status", "--config", agent.configURL.path])
        #expect(table.stdout.contains("agent        running (pid"))
        #expect(table.stdout.contains("MONITOR"))
        #expect(table.stdout.contains("c17"))
        agent.kill(signal: SIGTERM)
        let after = try AgentBinary.run(["status", "--config", agent.configURL.path])
        #expect(after.stdout.contains("agent        not running"), "\(after.stdout)")
    }

    /// A vehicle keeps the status file in RAM (`store.statusFile` under `/run`): the agent makes its directory,
    /// writes nothing beside the store, and `status` finds it through the same configuration.
    @Test func theStatusFileCanLiveApartFromTheStore() async throws {
        let broker = try LocalMosquitto.started()
        defer { broker.stop() }
        let agent = try AgentFixture(brokerPort: broker.port, speedFactor: 20) {
            $0["store"] = ["path": "state/agent.sqlite", "statusFile": "run/status.json"]
        }
        let statusFile = agent.directory.appendingPathComponent("run/status.json").path
        try agent.start()
        defer { agent.kill(signal: SIGTERM) }
        #expect(await waitUntil(60) { FileManager.default.fileExists(atPath: statusFile) }, "\(agent.log)")
        let result = try AgentBinary.run(["status", "--config", agent.configURL.path, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["running"] as? Bool == true)
        #expect(!FileManager.default.fileExists(atPath: agent.storePath + ".status.json"), "nothing beside the store")
        agent.kill(signal: SIGTERM)
        let after = try AgentBinary.run(["status", "--config", agent.configURL.path])
        #expect(after.status == 3)
        #expect(after.stdout.contains("agent        not running"), "\(after.stdout)")
        #expect(after.stderr.contains("it was last seen at"), "\(after.stderr)")
    }
}
