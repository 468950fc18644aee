import AgentFormats
import AgentJobs
import ArgumentParser
import GeofenceAgent

/// Options both geocoding subcommands take.
struct GazetteerOptions: ParsableArguments {
    @Option(
        help:
            "The gazetteer file (default: $GEOFENCE_GAZETTEER, else gazetteer/gazetteer.bin that scripts/setup builds)."
    )
    var gazetteer: String?

    @Flag(help: "One JSON object per answer instead of a line of text.")
    var json = false
}

struct Geocode: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Find places by name, offline: most populous first.",
        discussion: """
            Names are matched without regard to case or diacritics ("zurich" finds Zürich), and by their \
            alternate names ("Munich" finds München) for places of 15,000 people or more. Qualifiers after \
            commas narrow the search: a country's ISO code or name, or an administrative area ("Paris, US", \
            "Springfield, Illinois"). With no QUERY, one query a line is read from stdin and each gets one \
            JSON line: its best place, or {} when none matches. Exit status 1 when a query matched nothing, \
            2 when the data or the input could not be used.

            \(GazetteerFile.attribution)

            Examples:
              geofence-agent geocode "Zwolle"
              geofence-agent geocode "Paris, US" --limit 3 --json
              printf 'Zurich\\nMunich\\n' | geofence-agent geocode
            """
    )

    @Argument(help: "A place name, optionally with qualifiers after commas.")
    var query: String?

    @Option(help: "Most places printed for one query.")
    var limit = 5

    @Option(help: "A country (ISO code or name) or administrative area every answer must be in.")
    var region: String?

    @OptionGroup var options: GazetteerOptions

    func validate() throws {
        guard limit > 0 else { throw ValidationError("--limit must be positive, got \(limit)") }
    }

    func run() async throws {
        let geocoder = GazetteerFile.geocoder(explicit: options.gazetteer)
        try await runAsyncJob { () async throws(AgentError) in
            if let query {
                try await GeocodeJobs.geocode(
                    query, region: region, limit: limit, asJSON: options.json, geocoder: geocoder
                ) { print($0) }
            } else {
                try await GeocodeJobs.geocodeMany(
                    GeocodeJobs.standardInputLines(), source: "stdin", region: region, geocoder: geocoder,
                    emit: { print($0) }, warn: { printError($0) })
            }
        }
    }
}

struct Reverse: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Name the place nearest to a coordinate, offline.",
        discussion: """
            The nearest place of 1,000 people or more, preferring one in the country whose outline holds the \
            point (unless it is much farther than the nearest: an overseas part gets its own code); at sea, the \
            nearest place with its distance, and its country only within 12 nautical miles. With no LAT LON, queries are \
            read from stdin, one "lat,lon" a line or a CSV whose header names 'lat' and 'lon', and each gets \
            one JSON line ({} for a line that gets no answer, with its line number on stderr).

            \(GazetteerFile.attribution)

            Examples:
              geofence-agent reverse 52.5168 6.0830
              geofence-agent reverse -- -33.86 151.21 --json
              geofence-agent reverse < examples/points.csv
            """
    )

    @Argument(help: "Latitude in degrees, then longitude (negative values after --).")
    var coordinate: [Double] = []

    @OptionGroup var options: GazetteerOptions

    func validate() throws {
        guard coordinate.isEmpty || coordinate.count == 2 else {
            throw ValidationError(
                "give a latitude and a longitude, or none to read stdin; got \(coordinate.count) number(s)")
        }
        if coordinate.count == 2 {
            guard abs(coordinate[0]) <= 90 else {
                throw ValidationError("latitude \(coordinate[0]) is not in [-90, 90]")
            }
            guard abs(coordinate[1]) <= 180 else {
                throw ValidationError("longitude \(coordinate[1]) is not in [-180, 180]")
            }
        }
    }

    func run() async throws {
        let geocoder = GazetteerFile.geocoder(explicit: options.gazetteer)
        try await runAsyncJob { () async throws(AgentError) in
            if coordinate.count == 2 {
                try await GeocodeJobs.reverse(
                    latitude: coordinate[0], longitude: coordinate[1], asJSON: options.json, geocoder: geocoder
                ) { print($0) }
            } else {
                try await GeocodeJobs.reverseMany(
                    GeocodeJobs.standardInputLines(), source: "stdin", geocoder: geocoder,
                    emit: { print($0) }, warn: { printError($0) })
            }
        }
    }
}
