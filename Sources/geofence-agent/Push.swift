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

            Examples:
              geofence-agent push --conditions examples/ijsselmeer.geojson
              geofence-agent push --conditions depot.geojson --vehicle vehicle-7
              geofence-agent push --conditions depot.geojson --delete
            """
    )

    @Option(help: "The configuration file (for the broker, the fleet and the topic prefix).")
    var config = "config.json"

    @Option(help: "GeoJSON Feature or FeatureCollection to publish.")
    var conditions: String

    @Option(help: "Publish for this vehicle only.")
    var vehicle: String?

    @Flag(help: "Delete these conditions (empty retained messages).")
    var delete = false

    func run() async throws {
        try await runAsyncJob { () async throws(AgentError) in
            try await PushJob.run(configurationPath: config, conditionsPath: conditions, vehicle: vehicle, delete: delete,
                                  logger: quietLogger, emit: { print($0) })
        }
    }
}
