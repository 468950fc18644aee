import AgentFormats
import AgentJobs
import ArgumentParser
import GeofenceAgent

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show what the agent on this vehicle is doing.",
        discussion: """
            Whether the agent runs, its broker connection, gps status with the last fix's age and accuracy, \
            the outbox depth and caps, and every condition with its state and since when. Works while the \
            agent runs: it reads the agent's status file and, read-only, its store.

            Examples:
              geofence-agent status --config /etc/geofence-agent/config.json
              geofence-agent status --json | jq .agent.gps
            """
    )

    @Option(help: "The agent's configuration file.")
    var config = "config.json"

    @Flag(help: "One JSON object, for scripts.")
    var json = false

    func run() throws {
        try runJob { emit, _ throws(AgentError) in
            try StatusJob.run(configurationPath: config, json: json, emit: emit)
        }
    }
}
