import AgentFormats
import AgentJobs
import ArgumentParser
import GeofenceAgent

struct Evaluate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print which conditions contain each point (pure containment, no hysteresis).",
        discussion: """
            Checks a geofence set before it is pushed to a fleet. The CSV needs a header naming at least \
            'lat' and 'lon'. Each point gives one JSON line: {"point": N, "inside": ["id", ...]}, ids sorted, \
            N counting from 0. Refused features are reported on stderr with their path; the rest are \
            evaluated and the exit status is 1. Unusable input exits with status 2.

            Example:
              geofence-agent evaluate --conditions examples/ijsselmeer.geojson \\
                --points examples/points.csv
            """
    )

    @Option(help: "GeoJSON Feature or FeatureCollection of conditions.")
    var conditions: String

    @Option(help: "CSV file with a header naming 'lat' and 'lon'.")
    var points: String

    @OptionGroup var limits: LimitOptions

    func run() throws {
        try runJob { emit, warn throws(AgentError) in
            try EvaluateJob.run(
                conditionsPath: conditions, pointsPath: points, limits: limits.limits, emit: emit, warn: warn)
        }
    }
}
