import AgentFormats
import AgentJobs
import ArgumentParser
import GeofenceAgent

struct Map: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Draw conditions, a drive, its events and evaluated points as an SVG map.",
        discussion: """
            A snapshot in Web Mercator, as MapKit would overlay it: circles as their true geodesic outline, \
            polygons with their holes (across the antimeridian too), corridors as their line and band, the \
            track coloured by speed, events (from simulate or the agent, one JSON object a line) as marks \
            with their identifiers, points coloured inside or outside, on Natural Earth's country outlines \
            from the gazetteer, with a graticule, a scale bar, a legend and the attribution. The view fits \
            the data unless --bbox gives it. The same input gives the same bytes. Refused features are \
            reported on stderr and the rest drawn, with exit status 1; unusable input exits with status 2.

            Example:
              geofence-agent map --conditions examples/ijsselmeer.geojson \\
                --track examples/ijsselmeer-sail.gpx --out sail.svg
            """
    )

    @Option(help: "GeoJSON Feature or FeatureCollection of conditions.")
    var conditions: String

    @Option(help: "A GPX track, drawn coloured by speed.")
    var track: String?

    @Option(help: "Events, one JSON object a line (simulate's output, or the agent's events topic).")
    var events: String?

    @Option(help: "CSV file with a header naming 'lat' and 'lon': points coloured inside or outside.")
    var points: String?

    @Option(help: "Where to write the SVG.")
    var out: String

    @Option(help: "Width x height in pixels.")
    var size = "1200x800"

    @Option(
        help: "The box to show: west,south,east,north in degrees, e.g. --bbox=-12,34,32,62 (default: fit the data).")
    var bbox: String?

    @Option(help: "The gazetteer whose country outlines are the basemap (default: as geocode finds it).")
    var gazetteer: String?

    @OptionGroup var limits: LimitOptions

    func validate() throws {
        _ = try dimensions()
        _ = try box()
    }

    func dimensions() throws -> (Double, Double) {
        let parts = size.lowercased().split(separator: "x").compactMap { Double($0) }
        guard parts.count == 2, (100...10_000).contains(parts[0]), (100...10_000).contains(parts[1]) else {
            throw ValidationError(
                "--size must be WIDTHxHEIGHT in pixels, each from 100 to 10000, e.g. 1200x800; found '\(size)'")
        }
        return (parts[0], parts[1])
    }

    func box() throws -> (west: Double, south: Double, east: Double, north: Double)? {
        guard let bbox else { return nil }
        let v = bbox.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard v.count == 4, v[1] < v[3], abs(v[1]) <= 85.06, abs(v[3]) <= 85.06, v[0] >= -180, v[0] < v[2], v[2] <= 540
        else {
            throw ValidationError(
                "--bbox must be west,south,east,north in degrees with south < north (within ±85.05) and west < east (east may pass 180 to cross the antimeridian); found '\(bbox)'"
            )
        }
        return (v[0], v[1], v[2], v[3])
    }

    func run() throws {
        var inputs = MapJob.Inputs(conditions: conditions, output: out)
        (inputs.track, inputs.events, inputs.points, inputs.gazetteer) = (track, events, points, gazetteer)
        (inputs.width, inputs.height) = try dimensions()
        inputs.box = try box()
        try runJob { _, warn throws(AgentError) in
            try MapJob.run(inputs, limits: limits.limits, warn: warn)
        }
    }
}
