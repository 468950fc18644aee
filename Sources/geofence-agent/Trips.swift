import AgentFormats
import AgentJobs
import AgentOutputs
import ArgumentParser
import GeofenceAgent
import GeofenceCore
import Places

struct Trips: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replay a GPX track and print its trips and stops as JSON lines.",
        discussion: """
            The agent's own trip detection (docs/trips.md): a stop is a rest of at least \
            --minimal-parking-duration seconds, a trip a movement of at least --minimal-trip-distance metres \
            or --minimal-trip-duration seconds (Traccar's parameters and defaults). One JSON line per \
            tripStarted, tripEnded, stopStarted and stopEnded, as the agent publishes them on `trips`; a \
            summary goes to stderr.

            Example:
              geofence-agent trips --gpx examples/ijsselmeer-sail.gpx --places
            """
    )

    @Option(help: "GPX 1.0 or 1.1 file with a timed track.")
    var gpx: String

    @Option(help: "GeoJSON conditions: a stop names those the vehicle is in.")
    var conditions: String?

    @Option(parsing: .unconditional, help: "Horizontal accuracy (metres, ~1 sigma) given to every track point.")
    var accuracy: Double = 5

    @Option(
        parsing: .unconditional, help: "Metres a movement must cover to be a trip (or last --minimal-trip-duration).")
    var minimalTripDistance: Double = TripSettings().minimalTripDistance

    @Option(
        parsing: .unconditional, help: "Seconds a movement must last to be a trip (or cover --minimal-trip-distance).")
    var minimalTripDuration: Double = TripSettings().minimalTripDuration

    @Option(parsing: .unconditional, help: "Seconds at rest that make a stop.")
    var minimalParkingDuration: Double = TripSettings().minimalParkingDuration

    @Flag(help: "Name the places of trips' ends and stops from the offline gazetteer.")
    var places = false

    @Option(help: "The gazetteer file (default: found as geocode finds it).")
    var gazetteer: String?

    func validate() throws {
        for (name, value) in [
            ("--minimal-trip-distance", minimalTripDistance), ("--minimal-trip-duration", minimalTripDuration),
            ("--minimal-parking-duration", minimalParkingDuration),
        ] where !(value.isFinite && value >= 0) {
            throw ValidationError("\(name) must be a non-negative number, got \(value)")
        }
    }

    func run() async throws {
        var settings = TripSettings()
        settings.minimalTripDistance = minimalTripDistance
        settings.minimalTripDuration = minimalTripDuration
        settings.minimalParkingDuration = minimalParkingDuration
        var finder: (any PlaceFinding)?
        if places {
            switch await GazetteerPlaces.load(path: gazetteer) {
            case .success(let loaded): finder = loaded
            case .failure(let error): throw ValidationError("--places: \(error)")
            }
        }
        let found = finder
        try runJob { emit, warn throws(AgentError) in
            try TripsJob.run(
                trackPath: gpx, accuracy: accuracy, conditionsPath: conditions, settings: settings, places: found,
                emit: emit, warn: warn)
        }
    }
}
