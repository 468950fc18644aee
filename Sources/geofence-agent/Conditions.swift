import AgentFormats
import AgentJobs
import ArgumentParser
import GeofenceAgent
import Logging

struct Conditions: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List, show, add or remove the conditions stored on this vehicle.",
        discussion: """
            Works whether or not the agent runs: with the agent running, additions and removals are handed to \
            it and applied within a second.

            Examples:
              geofence-agent conditions list
              geofence-agent conditions show depot
              geofence-agent conditions add --file depot.geojson
              geofence-agent conditions remove depot
            """,
        subcommands: [List.self, Show.self, Add.self, Remove.self]
    )

    struct Options: ParsableArguments {
        @Option(help: "The agent's configuration file.")
        var config = "config.json"
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Every condition with its state, version and source.",
            discussion: "Example:\n  geofence-agent conditions list --json")
        @OptionGroup var options: Options
        @Flag(help: "One JSON object per line.") var json = false
        func run() throws {
            try runJob { emit, _ throws(AgentError) in
                try ConditionsJob.list(configurationPath: options.config, json: json, emit: emit)
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A condition's definition, as it was received.",
            discussion: "Example:\n  geofence-agent conditions show channel")
        @OptionGroup var options: Options
        @Argument(help: "The condition's identifier.") var identifier: String
        @Option(help: "The monitor (default: every monitor with this identifier).") var monitor: String?
        func run() throws {
            try runJob { emit, _ throws(AgentError) in
                try ConditionsJob.show(
                    configurationPath: options.config, identifier: identifier, monitor: monitor, emit: emit)
            }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add local conditions from a GeoJSON file (all or nothing).",
            discussion: "Example:\n  geofence-agent conditions add --file depot.geojson")
        @OptionGroup var options: Options
        @Option(help: "GeoJSON Feature or FeatureCollection.") var file: String
        func run() async throws {
            try await runAsyncJob { () async throws(AgentError) in
                try await ConditionsJob.add(
                    configurationPath: options.config, file: file, logger: quietLogger, emit: { print($0) })
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a condition.",
            discussion: "Example:\n  geofence-agent conditions remove depot")
        @OptionGroup var options: Options
        @Argument(help: "The condition's identifier.") var identifier: String
        @Option(help: "The monitor (default: default).") var monitor: String?
        func run() async throws {
            try await runAsyncJob { () async throws(AgentError) in
                try await ConditionsJob.remove(
                    configurationPath: options.config, identifier: identifier, monitor: monitor,
                    logger: quietLogger, emit: { print($0) })
            }
        }
    }
}

/// Store and MQTT messages stay quiet in one-shot commands; errors reach the user through `AgentError`.
let quietLogger = Logger(label: "geofence-agent.cli") { _ in SwiftLogNoOpLogHandler() }
