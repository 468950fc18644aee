import GeofenceCore

/// GeoJSON from an operator: every feature is accepted or refused with a located error, and every accepted
/// condition survives the store's codec unchanged.
enum GeoJSONCheck {
    static func problems(_ input: [UInt8]) -> [String] {
        let load = GeoJSONConditions.decode(input)
        var problems: [String] = []
        for error in load.errors where error.message.isEmpty {
            problems.append("an error without a message at '\(error.path)'")
        }
        for definition in load.definitions {
            if let why = IdentifierRules.problem(with: definition.identifier, what: "identifier") {
                problems.append("an accepted feature has an unusable identifier: \(why)")
            }
            let encoded = ConditionCodec.encode(definition.condition)
            do {
                let decoded = try ConditionCodec.decode(encoded)
                if decoded != definition.condition {
                    problems.append(
                        "'\(definition.identifier)' differs after the codec: \(definition.condition) against \(decoded)"
                    )
                }
            } catch {
                problems.append(
                    "'\(definition.identifier)' is refused by the codec after the reader accepted it: \(error)")
            }
        }
        return problems
    }
}
