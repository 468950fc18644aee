import AgentOutputs
import Foundation
import GeofenceCore
import GeofenceStore

/// One message on `owntracks/USER/DEVICE/cmd` (`_type: cmd`), read without acting on it.
package enum OwnTracksCommand: Sendable, Equatable {
    case reportLocation
    /// OwnTracks regions to hold as circle conditions (source `owntracks`), merged with those held.
    case setWaypoints([OwnTracks.Waypoint])
    /// Every condition that came from OwnTracks is removed.
    case clearWaypoints
    /// The circles, published on `.../waypoints`.
    case waypoints

    package static let actions = ["reportLocation", "setWaypoints", "clearWaypoints", "waypoints"]

    /// The command a payload asks for, or why it asks for none (for the `errors` topic).
    package static func parse(_ payload: [UInt8]) -> Result<OwnTracksCommand, CommandRefusal> {
        guard case .object(let o)? = try? JSONParser.parse(payload) else {
            return .failure(CommandRefusal("an OwnTracks command is a JSON object with \"_type\": \"cmd\""))
        }
        guard o["_type"] == .string("cmd") else { return .failure(CommandRefusal("_type: expected \"cmd\"")) }
        guard case .string(let action)? = o["action"] else {
            return .failure(CommandRefusal("action: a string is required; known: \(actions.joined(separator: ", "))"))
        }
        switch action {
        case "reportLocation": return .success(.reportLocation)
        case "clearWaypoints": return .success(.clearWaypoints)
        case "waypoints": return .success(.waypoints)
        case "setWaypoints":
            // The booklet's form is {"_type":"waypoints","waypoints":[...]}; a bare list is taken too.
            var list = o["waypoints"]
            if case .object(let w)? = list { list = w["waypoints"] }
            guard case .array(let items)? = list else {
                return .failure(CommandRefusal("waypoints: expected {\"_type\":\"waypoints\",\"waypoints\":[...]}"))
            }
            var waypoints: [OwnTracks.Waypoint] = []
            for (k, item) in items.enumerated() {
                switch waypoint(item) {
                case .success(let w): waypoints.append(w)
                case .failure(let reason): return .failure(CommandRefusal("waypoints[\(k)].\(reason)"))
                }
            }
            return .success(.setWaypoints(waypoints))
        default:
            return .failure(
                CommandRefusal("action: unknown action '\(action.clipped)'; known: \(actions.joined(separator: ", "))"))
        }
    }

    /// One `_type: waypoint`; the reason names the field ("lat: ...").
    static func waypoint(_ value: JSONValue) -> Result<OwnTracks.Waypoint, CommandRefusal> {
        guard case .object(let w) = value else {
            return .failure(CommandRefusal("expected a waypoint object, found \(value.typeName)"))
        }
        guard case .string(let desc)? = w["desc"], !desc.isEmpty else {
            return .failure(CommandRefusal("desc: a name is required"))
        }
        func number(_ key: String) -> Double? { if case .number(let n)? = w[key] { n } else { nil } }
        guard let lat = number("lat"), let lon = number("lon"), let rad = number("rad") else {
            return .failure(
                CommandRefusal("lat, lon, rad: a beacon waypoint (no lat, lon and rad) has no geofence form"))
        }
        guard (-90...90).contains(lat) else {
            return .failure(CommandRefusal("lat: latitude \(lat) is outside [-90, 90]"))
        }
        guard (-180...180).contains(lon) else {
            return .failure(CommandRefusal("lon: longitude \(lon) is outside [-180, 180]"))
        }
        guard rad >= 1, rad <= 20_000_000, rad == rad.rounded() else {
            return .failure(CommandRefusal("rad: expected whole metres from 1 to 20000000, found \(rad)"))
        }
        guard let tst = number("tst"), tst == tst.rounded(), tst >= 0, tst < 1e13 else {
            return .failure(CommandRefusal("tst: the region's time (whole epoch seconds) is required"))
        }
        var rid: String?
        if case .string(let r)? = w["rid"] {
            if let problem = IdentifierRules.problem(with: r, what: "rid") {
                return .failure(CommandRefusal("rid: \(problem)"))
            }
            rid = r
        }
        return .success(
            OwnTracks.Waypoint(
                description: desc, latitude: lat, longitude: lon, radius: Int(rad), time: Int64(tst), regionID: rid))
    }

    /// The condition a waypoint becomes: a circle named by the waypoint, identified by its `rid` (or
    /// `owntracks-TST` without one), with its `tst` as the version, validated as any pushed geofence.
    package static func change(for w: OwnTracks.Waypoint) -> Result<AgentStore.ConditionChange, CommandRefusal> {
        let identifier = w.regionID ?? "owntracks-\(w.time)"
        let feature: JSONValue = .object([
            "type": .string("Feature"), "id": .string(identifier),
            "geometry": .object([
                "type": .string("Point"), "coordinates": .array([.number(w.longitude), .number(w.latitude)]),
            ]),
            "properties": .object([
                "radius": .number(Double(w.radius)), "name": .string(w.description), "version": .number(Double(w.time)),
            ]),
        ])
        let load = GeoJSONConditions.decode(feature)
        if let error = load.errors.first {
            return .failure(CommandRefusal("waypoint '\(w.description.clipped)': \(error.description)"))
        }
        guard let definition = load.definitions.first else {
            return .failure(CommandRefusal("waypoint '\(w.description.clipped)' gave no condition"))
        }
        return .success(
            .put(
                .init(
                    monitor: MonitorSet.defaultMonitor, identifier: identifier, condition: definition.condition,
                    definition: feature.jsonText, source: OwnTracksCommand.source)))
    }

    /// The `source` of the conditions that came from OwnTracks.
    package static let source = "owntracks"
}
