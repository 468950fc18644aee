import AgentFormats
import Foundation
import Geocoding
import GeofenceAgent
import GeofenceCore
import Maps

/// `geofence-agent map`: a snapshot of conditions, with a drive, its events and evaluated points, as one
/// SVG file (docs/map.md). Every input is read as `evaluate` and `simulate` read it, with the same errors.
package enum MapJob {
    package struct Inputs: Sendable {
        package var conditions: String
        package var track: String?
        package var events: String?
        package var points: String?
        package var output: String
        package var width = 1200.0, height = 800.0
        package var box: (west: Double, south: Double, east: Double, north: Double)?
        /// The gazetteer whose country outlines are the basemap (nil: found as `geocode` finds it).
        package var gazetteer: String?
        package init(conditions: String, output: String) { (self.conditions, self.output) = (conditions, output) }
    }

    /// Writes the SVG; refused features and a missing basemap go through `warn`. Throws when an input
    /// cannot be used, or (exit status 1, after writing) when some features were refused.
    package static func run(_ inputs: Inputs, limits: GeoJSONLimits = .default, warn: (String) -> Void)
        throws(AgentError)
    {
        let content = try load(inputs, limits: limits, warn: warn)
        var snapshot = MapSnapshot(width: inputs.width, height: inputs.height)
        snapshot.box = inputs.box
        do {
            try Data(snapshot.svg(content.content).utf8).write(
                to: URL(fileURLWithPath: inputs.output), options: .atomic)
        } catch {
            throw AgentError("\(inputs.output): cannot write the map: \(error.localizedDescription)")
        }
        if content.refused > 0 {
            throw AgentError(
                "\(content.refused) of \(content.refused + content.content.conditions.count) features were refused; the others were drawn",
                exitCode: 1)
        }
    }

    static func load(_ inputs: Inputs, limits: GeoJSONLimits, warn: (String) -> Void) throws(AgentError) -> (
        content: MapContent, refused: Int
    ) {
        var content = MapContent()
        let file = try ConditionFile.load(inputs.conditions, limits: limits)
        file.errorLines.forEach(warn)
        content.conditions = file.definitions.map {
            .init(identifier: $0.identifier, name: $0.condition.name, geometry: $0.condition.geometry)
        }
        if let track = inputs.track {
            let points = try GPXTrack.load(track)
            content.track = zip(points, points.speeds).map {
                .init(coordinate: Coordinate(latitude: $0.latitude, longitude: $0.longitude), speed: $1 >= 0 ? $1 : nil)
            }
        }
        if let events = inputs.events { content.events = try readEvents(events) }
        if let pointsPath = inputs.points {
            let points = try PointsCSV.parse(FileInput.bytes(pointsPath, what: "points"), path: pointsPath)
            let set = ConditionSet(file.definitions.map(\.condition.region))
            content.points = points.map { p in
                let c = Coordinate(latitude: p.latitude, longitude: p.longitude)
                return .init(coordinate: c, inside: !set.containing(PreparedPoint(c)).isEmpty)
            }
        }
        if let path = GazetteerFile.locate(explicit: inputs.gazetteer),
            let bytes = FileManager.default.contents(atPath: path),
            let pieces = try? Gazetteer.outlinePieces(fileBytes: bytes)
        {
            content.basemap = pieces.map(\.rings)
        } else {
            warn(
                "no basemap: the gazetteer's country outlines were not found (scripts/setup builds gazetteer/gazetteer.bin)"
            )
        }
        return (content, file.errors.count)
    }

    /// Events as `simulate` prints them (`lat`, `lon` at the top) or as the agent publishes them (in
    /// `location`), one JSON object a line; `initial` events are not drawn.
    static func readEvents(_ path: String) throws(AgentError) -> [MapContent.Event] {
        let bytes = try FileInput.bytes(path, what: "events")
        var events: [MapContent.Event] = []
        for (n, line) in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            guard line.contains(where: { $0 != 0x20 && $0 != 0x0D && $0 != 0x09 }) else { continue }
            let object: JSONValue
            do { object = try JSONParser.parse(Array(line)) } catch {
                throw AgentError("\(path):\(n + 1): not a JSON event: \(error.description)")
            }
            let place = object["location"] ?? object
            guard case .string(let kind)? = object["event"], case .string(let identifier)? = object["identifier"],
                case .number(let lat)? = place["lat"], case .number(let lon)? = place["lon"], abs(lat) <= 90,
                abs(lon) <= 180
            else {
                throw AgentError(
                    "\(path):\(n + 1): an event needs \"event\", \"identifier\" and \"lat\"/\"lon\" (at the top, or in \"location\") on the globe"
                )
            }
            if kind != "initial" {
                events.append(
                    .init(coordinate: Coordinate(latitude: lat, longitude: lon), kind: kind, identifier: identifier))
            }
        }
        return events
    }
}
