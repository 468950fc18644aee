import GeofenceCore

/// A GeoJSON file of conditions, loaded with every refused feature reported by its path.
public struct ConditionFile: Sendable {
    public var path: String
    public var definitions: [ConditionDefinition]
    public var errors: [GeoJSONError]

    public static func load(_ path: String, limits: GeoJSONLimits = .default) throws(AgentError) -> ConditionFile {
        let load = GeoJSONConditions.decode(try FileInput.bytes(path, what: "conditions"), limits: limits)
        // A document-level error (not JSON, not GeoJSON) leaves nothing to work with.
        if let unusable = load.errors.first(where: \.isDocumentLevel) {
            throw AgentError("\(path): \(unusable)")
        }
        return ConditionFile(path: path, definitions: load.definitions, errors: load.errors)
    }

    /// One line per refused feature, naming the file.
    public var errorLines: [String] { errors.map { "\(path): \($0)" } }
}
