import AgentFormats
import AgentJobs
import ArgumentParser
import GeofenceAgent

struct Simulate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replay a GPX track through the monitors and print every event.",
        discussion: """
            Replays a GPX 1.0/1.1 track with times through the same state machine the agent runs: fixes are \
            filtered, states change only on confident fixes, and initial, enter, exit, dwell and crossed \
            events are printed as JSON lines with identifier, event, state, time, lat and lon. A summary \
            goes to stderr.

            Example:
              geofence-agent simulate --conditions examples/ijsselmeer.geojson \\
                --track examples/ijsselmeer-sail.gpx --accuracy 5
            """
    )

    @Option(help: "GeoJSON Feature or FeatureCollection of conditions.")
    var conditions: String

    @Option(help: "GPX 1.0 or 1.1 file with a timed track.")
    var track: String

    // Unconditional: `--accuracy -3` must reach validation (and its message), not read as a missing value.
    @Option(parsing: .unconditional, help: "Horizontal accuracy (metres, ~1 sigma) given to every track point.")
    var accuracy: Double = 5

    @OptionGroup var limits: LimitOptions

    @Flag(help: "Also print the drive's trips and stops (docs/trips.md), as `geofence-agent trips` does.")
    var trips = false

    func validate() throws {
        guard accuracy.isFinite, accuracy >= 0 else {
            throw ValidationError("--accuracy must be a non-negative number of metres, got \(accuracy)")
        }
    }

    func run() throws {
        try runJob { emit, warn throws(AgentError) in
            try SimulateJob.run(
                conditionsPath: conditions, trackPath: track, accuracy: accuracy, limits: limits.limits, trips: trips,
                emit: emit, warn: warn)
        }
    }
}
