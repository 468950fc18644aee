import AgentFormats
import AgentJobs
import ArgumentParser
import GeofenceAgent
import Logging

struct Push: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Publish geofences over MQTT as an operator would: retained, one Feature per topic.",
        discussion: """
            Validates the whole file first: if any feature is invalid, nothing is published and every \
            problem is printed with its path. Each condition goes to PREFIX/FLEET/geofences/ID (all vehicles) \
            or, with --vehicle, to PREFIX/FLEET/vehicles/VEHICLE/geofences/ID. --delete publishes empty \
            retained messages, which delete the conditions on the vehicles. The broker and prefix come from \
            the configuration file. Exit status: 0 when every message was acknowledged by the broker; 1 when \
            the broker could not be reached within 10 s (the reason is printed) or refused a message; 2 for an \
            invalid file or flag (nothing is published).

            Instead of a file, --place names a place (offline, from the gazetteer; qualifiers after commas as \
            in `geocode`): a circle of --radius metres around the most populous match is published as \
            condition --id, and the place chosen is printed first.

            Examples:
              geofence-agent push --conditions examples/ijsselmeer.geojson
              geofence-agent push --conditions depot.geojson --vehicle vehicle-7
              geofence-agent push --conditions depot.geojson --delete
              geofence-agent push --conditions fleet.geojson --only depot,yard
              geofence-agent push --conditions fleet.geojson --repair
              geofence-agent push --place "Zwolle, NL" --radius 3000 --id zwolle
            """
    )

    @Option(help: "The configuration file (for the broker, the fleet and the topic prefix).")
    var config = "config.json"

    @Option(help: "GeoJSON Feature or FeatureCollection to publish.")
    var conditions: String?

    @Option(help: "A place name (\"Zwolle\", \"Paris, US\"): publish a circle around it instead of a file.")
    var place: String?

    @Option(help: "With --place: the circle's radius in metres.")
    var radius: Double?

    @Option(help: "With --place: the condition's identifier.")
    var id: String?

    @Option(help: "With --place: the condition's name (default: the place's).")
    var name: String?

    @Option(help: "With --place: the gazetteer file (default: as `geocode` finds it).")
    var gazetteer: String?

    @Option(help: "Publish for this vehicle only.")
    var vehicle: String?

    @Flag(help: "Delete these conditions (empty retained messages).")
    var delete = false

    @Option(help: "With --conditions: only these identifiers, comma-separated (what a vehicle reports missing).")
    var only: String?

    @Flag(help: "With --conditions: make the broker hold exactly the file (what a node lost, published again).")
    var repair = false

    func validate() throws {
        switch (conditions, place) {
        case (nil, nil): throw ValidationError("give --conditions FILE, or --place NAME with --radius and --id")
        case (.some, .some): throw ValidationError("give --conditions or --place, not both")
        case (nil, .some):
            guard let radius else { throw ValidationError("--place needs --radius, the circle's radius in metres") }
            guard radius.isFinite, radius > 0 else {
                throw ValidationError("--radius must be a positive number of metres, got \(radius)")
            }
            guard id != nil else { throw ValidationError("--place needs --id, the condition's identifier") }
            guard only == nil, !repair else { throw ValidationError("--only and --repair go with --conditions") }
        case (.some, nil):
            guard !repair || (only == nil && !delete) else {
                throw ValidationError("--repair makes the broker hold the whole file: not with --only or --delete")
            }
            guard radius == nil, id == nil, name == nil else {
                throw ValidationError("--radius, --id and --name go with --place")
            }
        }
    }

    func run() async throws {
        try await runAsyncJob { () async throws(AgentError) in
            if let place, let radius, let id {
                try await PushJob.run(
                    configurationPath: config, place: place, radius: radius, identifier: id, name: name,
                    geocoder: GazetteerFile.geocoder(explicit: gazetteer), vehicle: vehicle, delete: delete,
                    logger: quietLogger, emit: { print($0) })
            } else if let conditions {
                try await PushJob.run(
                    configurationPath: config, conditionsPath: conditions, vehicle: vehicle, delete: delete,
                    only: only.map { $0.split(separator: ",").map(String.init) }, repair: repair, logger: quietLogger,
                    emit: { print($0) })
            }
        }
    }
}
