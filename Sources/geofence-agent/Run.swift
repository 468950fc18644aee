import ArgumentParser
import Foundation
import GeofenceAgent
import Logging

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the agent: gpsd positions in, geofence events out over MQTT.",
        discussion: """
            Reads positions from gpsd (or replays a GPX drive when the configuration has "replay"), evaluates \
            the geofences stored on the vehicle, records every state change with its event in the store, and \
            publishes events, live updates, state and status over MQTT as the broker can take them. Geofences \
            pushed on the fleet's topics are validated, stored and applied; rejected ones are reported on the \
            vehicle's errors topic. SIGTERM or SIGINT stops cleanly and publishes the offline status. Under \
            systemd (NOTIFY_SOCKET) it reports ready and feeds the watchdog.

            docs/configuration.md describes the file; docs/topics.md the topics and payloads. Exit status 2 \
            when the configuration or the store cannot be used, with a message naming the key or the file.

            Example:
              geofence-agent run --config /etc/geofence-agent/config.json
            """
    )

    @Option(help: "The configuration file.")
    var config = "config.json"

    @Option(help: "Log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel = "info"

    func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError(
                "--log-level must be one of trace, debug, info, notice, warning, error, critical; got '\(logLevel)'")
        }
    }

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = Logger.Level(rawValue: logLevel) ?? .info
            return handler
        }
        // A file-size limit (a full disk's cousin) must fail the write, which the store reports and
        // recovers from, rather than kill the process.
        signal(SIGXFSZ, SIG_IGN)
        let logger = Logger(label: "geofence-agent")
        do {
            try await AgentRunner.run(configurationPath: config, logger: logger)
        } catch {
            printError("error: \(error.message)")
            throw ExitCode(error.exitCode)
        }
    }
}
