/// One refused part of a GeoJSON payload: where it is and what is wrong.
public struct GeoJSONError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A path such as `features[3].geometry.coordinates[0][7]`; empty for the whole document.
    public var path: String
    public var message: String
    /// The feature's id when it could be read, so that operators can tell which geofence was refused.
    public var identifier: String?
    /// True when the whole payload was unusable (not JSON, not GeoJSON, too large), not one feature.
    public var isDocumentLevel: Bool

    public init(path: String, message: String, identifier: String? = nil, isDocumentLevel: Bool = false) {
        self.path = path
        self.message = message
        self.identifier = identifier
        self.isDocumentLevel = isDocumentLevel
    }

    public var description: String { path.isEmpty ? message : "\(path): \(message)" }
}

/// What came out of a payload: the features that passed, and one error for each that did not.
public struct GeoJSONLoad: Sendable {
    public var definitions: [ConditionDefinition]
    public var errors: [GeoJSONError]
}

/// Reads conditions from GeoJSON (RFC 7946): one Feature or a FeatureCollection.
///
/// A circle is a `Point` with `properties.radius` (metres); a polygon a `Polygon` or `MultiPolygon`; a
/// corridor a `LineString` with `properties.width` (metres from the line). Optional properties: `name`,
/// `dwell` (seconds), `monitor` and `version`. Each bad feature yields an error and the others load.
public enum GeoJSONConditions {
    public static func decode(_ bytes: [UInt8], limits: GeoJSONLimits = .default) -> GeoJSONLoad {
        guard bytes.count <= limits.maximumPayloadBytes else {
            return failure(
                "", "payload of \(bytes.count) bytes exceeds the limit of \(limits.maximumPayloadBytes) bytes")
        }
        let document: JSONValue
        do { document = try JSONParser.parse(bytes) } catch {
            return failure("", error.description)
        }
        return decode(document, limits: limits)
    }

    public static func decode(_ document: JSONValue, limits: GeoJSONLimits = .default) -> GeoJSONLoad {
        guard case .object = document else {
            return failure("", "expected a GeoJSON object, found \(document.typeName)")
        }
        switch document["type"] {
        case .string("Feature"):
            switch feature(document, path: "", limits: limits) {
            case .success(let d): return GeoJSONLoad(definitions: [d], errors: [])
            case .failure(let e): return GeoJSONLoad(definitions: [], errors: [e])
            }
        case .string("FeatureCollection"):
            guard case .array(let features) = document["features"] else {
                return failure("features", "a FeatureCollection needs a 'features' array")
            }
            guard features.count <= limits.maximumFeatures else {
                return failure("features", "\(features.count) features exceed the limit of \(limits.maximumFeatures)")
            }
            var load = GeoJSONLoad(definitions: [], errors: [])
            var firstPlace: [String: Int] = [:]
            for (i, f) in features.enumerated() {
                let path = "features[\(i)]"
                switch feature(f, path: path, limits: limits) {
                case .failure(let e): load.errors.append(e)
                case .success(let d):
                    // Conditions are keyed by monitor and identifier; the first definition wins.
                    let key = (d.monitor ?? "") + "\u{0}" + d.identifier
                    if let first = firstPlace[key] {
                        load.errors.append(
                            GeoJSONError(
                                path: path + ".id",
                                message: "duplicate id '\(d.identifier)' (first at features[\(first)])",
                                identifier: d.identifier))
                    } else {
                        firstPlace[key] = i
                        load.definitions.append(d)
                    }
                }
            }
            return load
        case .string(let other):
            return failure("type", "unsupported GeoJSON type '\(other)'; expected Feature or FeatureCollection")
        case nil:
            return failure("type", "missing 'type'; expected Feature or FeatureCollection")
        case let v?:
            return failure("type", "expected a string, found \(v.typeName)")
        }
    }

    /// The whole payload refused.
    private static func failure(_ path: String, _ message: String) -> GeoJSONLoad {
        GeoJSONLoad(definitions: [], errors: [GeoJSONError(path: path, message: message, isDocumentLevel: true)])
    }

    /// Decodes and validates one Feature.
    public static func feature(_ value: JSONValue, path: String, limits: GeoJSONLimits = .default) -> Result<
        ConditionDefinition, GeoJSONError
    > {
        var reader = FeatureReader(basePath: path, limits: limits)
        do {
            return .success(try reader.read(value))
        } catch {
            var e = error
            e.identifier = reader.identifier
            return .failure(e)
        }
    }
}
