import GeofenceCore

/// What a push publishes, decided before anything is: the retained messages (an empty payload deletes) and
/// the set's manifest after them.
struct PushPlan: Equatable {
    /// What the operator asked for.
    enum Mode: Equatable {
        /// Publish the file's geofences (or `--only` those) and add them to the manifest.
        case publish
        /// Delete them, and take them out of the manifest.
        case delete
        /// Make the broker hold exactly the file: publish what it lacks or holds otherwise (by digest),
        /// delete what it holds beyond the file, and make the file the manifest (`--repair`).
        case repair(retained: [String: String])
    }

    /// In the file's order, then the deletions by identifier.
    var messages: [(identifier: String, payload: [UInt8])]
    var manifest: GeofenceManifest

    /// `geofences`: the file's chosen features, identifier and payload, in its order.
    init(_ mode: Mode, geofences: [(identifier: String, payload: [UInt8])], manifest: GeofenceManifest) {
        let digests = Dictionary(geofences.map { ($0.identifier, GeofenceDigest.of($0.payload)) }) { _, last in last }
        switch mode {
        case .publish:
            messages = geofences
            self.manifest = manifest.applying(published: digests)
        case .delete:
            messages = geofences.map { ($0.identifier, []) }
            self.manifest = manifest.applying(published: [:], deleted: geofences.map(\.identifier))
        case .repair(let retained):
            let stale = geofences.filter { retained[$0.identifier] != digests[$0.identifier] }
            let extra = retained.keys.filter { digests[$0] == nil }.sorted()
            messages = stale + extra.map { ($0, []) }
            self.manifest = GeofenceManifest(geofences: digests)
        }
    }

    static func == (a: PushPlan, b: PushPlan) -> Bool {
        a.manifest == b.manifest && a.messages.map(\.identifier) == b.messages.map(\.identifier)
            && a.messages.map(\.payload) == b.messages.map(\.payload)
    }
}
