import GeofenceCore

/// A GeoJSON file of conditions, loaded with every refused feature reported by its path.
package struct ConditionFile: Sendable {
    package var path: String
    package var definitions: [ConditionDefinition]
    package var errors: [GeoJSONError]
    /// Each feature's own text, by identifier, for `conditions show`.
    package var featureTexts: [String: String] = [:]

    package static func load(_ path: String, limits: GeoJSONLimits = .default) throws(AgentError) -> ConditionFile {
        try parse(try FileInput.bytes(path, what: "conditions"), path: path, limits: limits)
    }

    /// The same from bytes already read; `path` names them in messages.
    package static func parse(_ bytes: [UInt8], path: String, limits: GeoJSONLimits = .default) throws(AgentError)
        -> ConditionFile
    {
        let load = GeoJSONConditions.decode(bytes, limits: limits)
        // A document-level error (not JSON, not GeoJSON) leaves nothing to work with.
        if let unusable = load.errors.first(where: \.isDocumentLevel) {
            if let kind = FileInput.notJSON(bytes) {
                throw AgentError(
                    "\(path): this is not GeoJSON: it looks like \(kind). Conditions are a GeoJSON Feature or FeatureCollection (docs/conditions.md); a CSV of points goes to `evaluate --points`"
                )
            }
            throw AgentError("\(path): \(unusable)")
        }
        var file = ConditionFile(path: path, definitions: load.definitions, errors: load.errors)
        if let document = try? JSONParser.parse(bytes) {
            let features: [JSONValue]
            if case .array(let list)? = document["features"] { features = list } else { features = [document] }
            for feature in features {
                switch feature["id"] {
                case .string(let id)?: file.featureTexts[id] = feature.jsonText
                case .number(let n)?: file.featureTexts[JSONValue.number(n).jsonText] = feature.jsonText
                default: break
                }
            }
        }
        return file
    }

    package func featureText(_ identifier: String) -> String? { featureTexts[identifier] }

    /// One line per refused feature, naming the file.
    package var errorLines: [String] { errors.map { "\(path): \($0)" } }
}
