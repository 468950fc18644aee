/// What an operator published as one set of geofences (the fleet's, or one vehicle's): each geofence's
/// identifier and the digest of its payload (docs/topics.md, "manifests"). A vehicle compares what it holds
/// with it, so that a geofence the broker lost, or one not yet received, is reported instead of assumed.
public struct GeofenceManifest: Sendable, Equatable {
    /// Identifier → `GeofenceDigest` of the payload published on its topic.
    public var geofences: [String: String]

    public init(geofences: [String: String] = [:]) {
        self.geofences = geofences
    }

    /// The manifest's payload: compact JSON, keys sorted, so that equal sets publish equal bytes.
    public var payload: [UInt8] {
        let entries = geofences.mapValues { JSONValue.string($0) }
        let document: JSONValue = .object([
            "type": .string(Self.type), "count": .number(Double(geofences.count)), "geofences": .object(entries),
        ])
        return Array(document.jsonText.utf8)
    }

    static let type = "GeofenceManifest"

    /// The set after an operator's push: `published` put or replaced, `deleted` taken out.
    public func applying(published: [String: String], deleted: [String] = []) -> GeofenceManifest {
        var next = geofences.merging(published) { _, new in new }
        for identifier in deleted { next[identifier] = nil }
        return GeofenceManifest(geofences: next)
    }

    /// How `held` (identifier → digest of what the vehicle stores from this set) differs from the manifest.
    public func difference(held: [String: String]) -> ManifestDifference {
        var difference = ManifestDifference()
        for (identifier, digest) in geofences {
            switch held[identifier] {
            case nil: difference.missing.append(identifier)
            case let stored? where stored != digest: difference.different.append(identifier)
            default: break
            }
        }
        difference.unexpected = held.keys.filter { geofences[$0] == nil }
        difference.missing.sort()
        difference.different.sort()
        difference.unexpected.sort()
        return difference
    }
}

/// Why a manifest's payload is refused, with where in it.
public struct ManifestError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String
}

extension GeofenceManifest {
    /// Reads a manifest's payload; an empty payload is no manifest (nil), as an empty retained message is.
    public static func decode(_ payload: [UInt8]) -> Result<GeofenceManifest?, ManifestError> {
        if payload.isEmpty { return .success(nil) }
        let document: JSONValue
        do { document = try JSONParser.parse(payload) } catch {
            return .failure(ManifestError(description: "the manifest is not JSON: \(error)"))
        }
        guard case .object(let object) = document else {
            return .failure(ManifestError(description: "a manifest is a JSON object, found \(document.typeName)"))
        }
        guard object["type"] == .string(type) else {
            return .failure(ManifestError(description: "$.type: expected \"\(type)\""))
        }
        guard case .object(let entries)? = object["geofences"] else {
            let found = object["geofences"]?.typeName ?? "nothing"
            return .failure(ManifestError(description: "$.geofences: expected an object, found \(found)"))
        }
        var geofences: [String: String] = [:]
        for (identifier, value) in entries {
            guard case .string(let digest) = value, GeofenceDigest.isValid(digest) else {
                return .failure(
                    ManifestError(
                        description: "$.geofences[\(JSONValue.quoted(identifier))]: expected 16 lower-case hex digits"
                    ))
            }
            geofences[identifier] = digest
        }
        if let count = object["count"], count != .number(Double(geofences.count)) {
            return .failure(
                ManifestError(description: "$.count: \(count.jsonText) does not match the \(geofences.count) geofences")
            )
        }
        return .success(GeofenceManifest(geofences: geofences))
    }
}
