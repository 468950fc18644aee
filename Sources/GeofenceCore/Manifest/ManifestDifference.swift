/// What a vehicle holds against a manifest, each list sorted by identifier.
public struct ManifestDifference: Sendable, Equatable {
    /// In the manifest, not held: the broker lost it, or it has not arrived yet.
    public var missing: [String] = []
    /// Held with another payload than the manifest's: an update lost, or refused (see `errors`).
    public var different: [String] = []
    /// Held, not in the manifest: a deletion lost.
    public var unexpected: [String] = []

    public init(missing: [String] = [], different: [String] = [], unexpected: [String] = []) {
        self.missing = missing
        self.different = different
        self.unexpected = unexpected
    }

    public var isEmpty: Bool { missing.isEmpty && different.isEmpty && unexpected.isEmpty }

    /// "2 missing (a, b), 1 different (c), 1 not in the manifest (d)", each list cut after `names` names.
    public func summary(names: Int = 5) -> String {
        let parts: [(String, [String])] = [
            ("missing", missing), ("different", different), ("not in the manifest", unexpected),
        ]
        return parts.filter { !$0.1.isEmpty }.map { label, identifiers in
            var shown = identifiers.prefix(names).joined(separator: ", ")
            if identifiers.count > names { shown += " and \(identifiers.count - names) more" }
            return "\(identifiers.count) \(label) (\(shown))"
        }.joined(separator: ", ")
    }
}
