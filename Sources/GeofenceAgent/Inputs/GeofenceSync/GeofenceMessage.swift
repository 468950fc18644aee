import GeofenceCore
import GeofenceStore

/// One message on a geofence topic (docs/topics.md#geofences), read without storing it: a Feature whose
/// id, if any, is the topic's last level, or an empty payload that deletes. Pure, so the agent validates
/// batches on every core, and a sender can know in advance what the agent will refuse.
package enum GeofenceMessage {
    /// Why a message is refused: the reason the `errors` topic carries, and the identifier when known.
    package struct Refusal: Error, Sendable, Equatable {
        package var identifier: String?
        package var reason: String
    }

    /// The change a message asks for, or why it is refused.
    package static func change(topic: String, payload: [UInt8]) -> Result<AgentStore.ConditionChange, Refusal> {
        guard let identifier = topic.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init)
        else {
            return .failure(Refusal(reason: "no identifier in the topic"))
        }
        if let problem = IdentifierRules.problem(with: identifier, what: "identifier") {
            return .failure(Refusal(reason: problem))
        }
        if payload.isEmpty { return .success(.remove(identifier: identifier, monitor: nil)) }
        let load = features(payload, named: identifier)
        if let error = load.errors.first { return .failure(Refusal(identifier: identifier, reason: error.description)) }
        guard load.definitions.count == 1, let definition = load.definitions.first else {
            return .failure(
                Refusal(
                    identifier: identifier,
                    reason: "expected one GeoJSON Feature, found \(load.definitions.count) conditions"))
        }
        if definition.identifier != identifier {
            return .failure(
                Refusal(
                    identifier: identifier,
                    reason:
                        "the feature's id '\(definition.identifier)' does not match the topic's last level '\(identifier)'"
                ))
        }
        return .success(
            .put(
                .init(
                    monitor: definition.monitor ?? MonitorSet.defaultMonitor, identifier: identifier,
                    condition: definition.condition,
                    definition: String(decoding: payload, as: UTF8.self), source: "mqtt:\(topic)")))
    }

    /// The payload's conditions; a Feature without an id is named by its topic (a file's features need one).
    private static func features(_ payload: [UInt8], named identifier: String) -> GeoJSONLoad {
        guard payload.count <= GeoJSONLimits.default.maximumPayloadBytes, let document = try? JSONParser.parse(payload)
        else {
            // Too large or not JSON: the decoder says which, and where.
            return GeoJSONConditions.decode(payload)
        }
        guard case .object(var feature) = document, feature["type"] == .string("Feature"),
            (feature["id"] ?? .null) == .null
        else {
            return GeoJSONConditions.decode(document)
        }
        feature["id"] = .string(identifier)
        return GeoJSONConditions.decode(.object(feature))
    }
}
