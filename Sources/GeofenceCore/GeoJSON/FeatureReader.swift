import Foundation

/// Reads one GeoJSON Feature into a condition, naming the path of the first problem it meets.
struct FeatureReader {
    let basePath: String
    let limits: GeoJSONLimits
    /// The feature's id once read, for error reports.
    private(set) var identifier: String?

    init(basePath: String, limits: GeoJSONLimits) {
        self.basePath = basePath
        self.limits = limits
    }

    func path(_ suffix: String) -> String {
        if basePath.isEmpty { return suffix }
        return suffix.hasPrefix("[") ? basePath + suffix : basePath + "." + suffix
    }

    func fail(_ suffix: String, _ message: String) -> GeoJSONError {
        GeoJSONError(path: path(suffix), message: message, identifier: identifier)
    }

    mutating func read(_ value: JSONValue) throws(GeoJSONError) -> ConditionDefinition {
        guard case .object(let object) = value else {
            throw fail("", "expected a Feature object, found \(value.typeName)")
        }
        guard case .string("Feature") = object["type"] else { throw fail("type", "expected \"Feature\"") }

        // The id comes first so that every later error can name the feature.
        let id: String
        switch object["id"] {
        case nil, .null?: throw fail("id", "missing id: every condition needs a string id")
        case .string(let s)?: id = s
        case let v?: throw fail("id", "id must be a string, found \(v.typeName)")
        }
        if let problem = IdentifierRules.problem(with: id, what: "id") { throw fail("id", problem) }
        identifier = id

        let properties: [String: JSONValue]
        switch object["properties"] {
        case nil, .null?: properties = [:]
        case .object(let p)?: properties = p
        case let v?: throw fail("properties", "expected an object or null, found \(v.typeName)")
        }
        let name = try optionalString(properties["name"], "properties.name")
        let monitor = try optionalString(properties["monitor"], "properties.monitor")
        if let monitor, let problem = IdentifierRules.problem(with: monitor, what: "monitor") {
            throw fail("properties.monitor", problem)
        }
        let dwell = try optionalNumber(properties["dwell"], "properties.dwell")
        if let dwell, dwell < 0 { throw fail("properties.dwell", "dwell \(dwell) must not be negative") }
        let version = try optionalVersion(properties["version"])
        let minimumDuration = try optionalNumber(properties["minimumDuration"], "properties.minimumDuration")
        if let minimumDuration, minimumDuration < 0 {
            throw fail("properties.minimumDuration", "minimumDuration \(minimumDuration) must not be negative")
        }

        let speedLimit = try optionalNumber(properties["speedLimit"], "properties.speedLimit")
        if let speedLimit, !(speedLimit > 0 && speedLimit <= 1000) {
            throw fail(
                "properties.speedLimit",
                "speedLimit \(format(speedLimit)) must be a speed in km/h above 0 and at most 1000")
        }
        var schedule: Schedule?
        if let value = properties["schedule"], value != .null {
            do {
                schedule = try ScheduleParser.parse(value)
            } catch {
                throw fail(
                    "properties.schedule"
                        + (error.path.isEmpty ? "" : error.path.hasPrefix("[") ? error.path : "." + error.path),
                    error.message)
            }
        }
        let rules = ConditionRules(
            notify: try notify(properties["notify"]), expires: try expires(properties["expires"]),
            speedLimit: speedLimit,
            schedule: schedule)

        guard case .object(let geometry)? = object["geometry"] else {
            let found = object["geometry"]?.typeName ?? "nothing"
            throw fail("geometry", "expected a geometry object, found \(found)")
        }
        let shape = try readGeometry(geometry, properties: properties)
        do {
            let condition = try Condition(
                geometry: shape, name: name, dwell: dwell, version: version, minimumDuration: minimumDuration,
                rules: rules)
            return ConditionDefinition(identifier: id, condition: condition, monitor: monitor)
        } catch {
            // Radius and width live in properties; everything else is under the geometry.
            let inProperties = error.path == "radius" || error.path == "width"
            var place = error.path
            // A Polygon is held as a one-part MultiPolygon; name its rings as the document does.
            if case .polygon = shape, case .string("Polygon")? = geometry["type"], place.hasPrefix("coordinates[0]") {
                place = "coordinates" + place.dropFirst("coordinates[0]".count)
            }
            throw fail((inProperties ? "properties." : "geometry.") + place, error.message)
        }
    }

    private func readGeometry(_ geometry: [String: JSONValue], properties: [String: JSONValue]) throws(GeoJSONError)
        -> ConditionGeometry
    {
        guard case .string(let type)? = geometry["type"] else { throw fail("geometry.type", "missing geometry type") }
        guard let coordinates = geometry["coordinates"] else {
            throw fail("geometry.coordinates", "missing coordinates")
        }
        let at = "geometry.coordinates"
        switch type {
        case "Point":
            let center = try position(coordinates, at)
            guard let radiusValue = properties["radius"] else {
                throw fail("properties.radius", "a Point needs properties.radius (metres) to be a circle")
            }
            return .circle(center: center, radius: try number(radiusValue, "properties.radius"))
        case "LineString":
            let line = try positions(coordinates, at, budget: limits.maximumVerticesPerCondition)
            guard let widthValue = properties["width"] else {
                throw fail(
                    "properties.width", "a LineString needs properties.width (metres from the line) to be a corridor")
            }
            return .corridor(line: line, halfWidth: try number(widthValue, "properties.width"))
        case "Polygon":
            var budget = limits.maximumVerticesPerCondition
            return .polygon(parts: [try rings(coordinates, at, budget: &budget)])
        case "MultiPolygon":
            guard case .array(let polygons) = coordinates else {
                throw fail(at, "expected an array of polygons, found \(coordinates.typeName)")
            }
            var budget = limits.maximumVerticesPerCondition
            var parts: [[[Coordinate]]] = []
            for (i, p) in polygons.enumerated() { parts.append(try rings(p, at + "[\(i)]", budget: &budget)) }
            return .polygon(parts: parts)
        default:
            throw fail(
                "geometry.type",
                "unsupported geometry '\(type)'; use Point (with radius), LineString (with width), Polygon or MultiPolygon"
            )
        }
    }

    private func rings(_ value: JSONValue, _ at: String, budget: inout Int) throws(GeoJSONError) -> [[Coordinate]] {
        guard case .array(let items) = value else {
            throw fail(at, "expected an array of rings, found \(value.typeName)")
        }
        guard !items.isEmpty else { throw fail(at, "a polygon needs at least an outer ring") }
        var out: [[Coordinate]] = []
        for (i, ring) in items.enumerated() {
            let r = try positions(ring, at + "[\(i)]", budget: budget)
            budget -= r.count
            out.append(r)
        }
        return out
    }

    private func positions(_ value: JSONValue, _ at: String, budget: Int) throws(GeoJSONError) -> [Coordinate] {
        guard case .array(let items) = value else {
            throw fail(at, "expected an array of positions, found \(value.typeName)")
        }
        guard items.count <= budget else {
            throw fail(
                at, "more than \(limits.maximumVerticesPerCondition) positions in one condition (the configured limit)")
        }
        var out: [Coordinate] = []
        out.reserveCapacity(items.count)
        for (i, p) in items.enumerated() { out.append(try position(p, at + "[\(i)]")) }
        return out
    }

    private func position(_ value: JSONValue, _ at: String) throws(GeoJSONError) -> Coordinate {
        guard case .array(let items) = value else {
            throw fail(at, "expected a position [longitude, latitude], found \(value.typeName)")
        }
        guard items.count >= 2 else {
            throw fail(at, "a position needs at least 2 numbers [longitude, latitude], found \(items.count)")
        }
        let lon = try number(items[0], at + "[0]")
        let lat = try number(items[1], at + "[1]")
        guard lon.isFinite else { throw fail(at, "longitude \(lon) is not finite") }
        guard lat.isFinite else { throw fail(at, "latitude \(lat) is not finite") }
        guard abs(lon) <= 180 else { throw fail(at, "longitude \(format(lon)) is outside [-180, 180]") }
        guard abs(lat) <= 90 else { throw fail(at, "latitude \(format(lat)) is outside [-90, 90]") }
        return Coordinate(latitude: lat, longitude: lon)
    }

    private func number(_ value: JSONValue, _ at: String) throws(GeoJSONError) -> Double {
        guard case .number(let n) = value else { throw fail(at, "expected a number, found \(value.typeName)") }
        guard n.isFinite else { throw fail(at, "\(n) is not a finite number") }
        return n
    }

    private func optionalNumber(_ value: JSONValue?, _ at: String) throws(GeoJSONError) -> Double? {
        guard let value, value != .null else { return nil }
        return try number(value, at)
    }

    private func optionalString(_ value: JSONValue?, _ at: String) throws(GeoJSONError) -> String? {
        switch value {
        case nil, .null?: return nil
        case .string(let s)?: return s
        case let v?: throw fail(at, "expected a string, found \(v.typeName)")
        }
    }

    /// `properties.notify`: a list of event kinds, each at most once.
    private func notify(_ value: JSONValue?) throws(GeoJSONError) -> Set<EventKind>? {
        switch value {
        case nil, .null?: return nil
        case .array(let items)?:
            var kinds: Set<EventKind> = []
            for (i, item) in items.enumerated() {
                guard case .string(let text) = item else {
                    throw fail("properties.notify[\(i)]", "expected an event kind, found \(item.typeName)")
                }
                guard let kind = EventKind(rawValue: text) else {
                    let known = EventKind.allCases.map(\.rawValue).joined(separator: ", ")
                    throw fail("properties.notify[\(i)]", "'\(text)' is not an event kind (\(known))")
                }
                guard kinds.insert(kind).inserted else {
                    throw fail("properties.notify[\(i)]", "'\(text)' is listed twice")
                }
            }
            return kinds
        case let v?:
            throw fail("properties.notify", "expected a list of event kinds, found \(v.typeName)")
        }
    }

    /// `properties.expires`: an RFC 3339 date-time with its offset.
    private func expires(_ value: JSONValue?) throws(GeoJSONError) -> Date? {
        guard let text = try optionalString(value, "properties.expires") else { return nil }
        guard let date = RFC3339.date(from: text) else {
            throw fail("properties.expires", "'\(text)' is not an RFC 3339 date-time such as 2026-12-31T18:00:00Z")
        }
        // The stored form holds years 1 to 9999 in UTC; an offset can take 0000-12-31T23:59:59+01:00 or
        // 9999-12-31T23:59:59-01:00 past them (found by the GeoJSON fuzzer).
        guard ConditionCodec.expiryRange.contains(date.timeIntervalSince1970) else {
            throw fail("properties.expires", "'\(text)' is outside years 1 to 9999 in UTC")
        }
        return date
    }

    private func optionalVersion(_ value: JSONValue?) throws(GeoJSONError) -> Int64? {
        guard let n = try optionalNumber(value, "properties.version") else { return nil }
        guard n >= 0, n == n.rounded(), n < 9.0e15 else {
            throw fail("properties.version", "version \(format(n)) must be a whole number from 0")
        }
        return Int64(n)
    }

    private func format(_ x: Double) -> String {
        x == x.rounded() && abs(x) < 1e15 ? String(Int64(x)) : String(x)
    }
}
