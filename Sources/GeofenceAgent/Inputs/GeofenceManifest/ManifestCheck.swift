import AgentOutputs
import GeofenceCore
import Logging
import Synchronization
import ThreadExecution

/// Confirms the geofences the vehicle holds against the manifests of their sets (the fleet's and its own),
/// once the sync has been quiet for `settle`: a set still arriving is not a set that lost geofences. A
/// difference goes to the status (`geofenceSet`), the log and `errors`, once each time it changes.
final class ManifestCheck: Sendable {
    /// One set of geofences: where its manifest comes, and the stored source of its geofences.
    struct GeofenceSet: Sendable {
        var manifestTopic: String
        /// `mqtt:` and the set's geofence topic without its last level: the store's source, less the identifier.
        var sourcePrefix: String
    }

    private struct State {
        /// By manifest topic; absent until one arrives, deleted by an empty retained message.
        var manifests: [String: GeofenceManifest] = [:]
        var pending = false
        var verdict = "unconfirmed: no manifest"
        /// What was said on `errors` for each set, so that it is said again only when it changes.
        var reported: [String: String] = [:]
    }

    let sets: [GeofenceSet]
    private let state = Mutex(State())
    private let wakes: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    private let settle: Duration
    private let control: ControlPlane
    private let publisher: any MessagePublishing
    /// The digests the vehicle holds for a source prefix (the store's), or nil when the store cannot say.
    private let held: @Sendable (String) async -> [String: String]?
    private let logger: Logger

    init(
        topics: Topics, publisher: any MessagePublishing, settle: Duration = .seconds(2), logger: Logger,
        held: @escaping @Sendable (String) async -> [String: String]?
    ) {
        sets = [
            GeofenceSet(manifestTopic: topics.fleetManifest, sourcePrefix: "mqtt:" + topics.fleetGeofence("")),
            GeofenceSet(manifestTopic: topics.vehicleManifest(), sourcePrefix: "mqtt:" + topics.vehicleGeofence("")),
        ]
        control = ControlPlane(topics: topics)
        self.publisher = publisher
        self.settle = settle
        self.held = held
        self.logger = logger
        (wakes, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// For the status: `unconfirmed: no manifest`, `checking`, `confirmed: N geofences`, or `differs: ...`.
    var description: String { state.withLock { $0.verdict } }

    /// A message on a manifest topic: kept and checked, or refused with the reason on `errors`.
    func received(topic: String, payload: [UInt8]) async {
        switch GeofenceManifest.decode(payload) {
        case .success(let manifest):
            state.withLock { s in
                s.manifests[topic] = manifest
                if s.verdict.hasPrefix("unconfirmed") { s.verdict = "checking" }
            }
            geofencesChanged()
        case .failure(let error):
            logger.warning(
                "manifest refused; the last one stays", metadata: ["topic": "\(topic)", "reason": "\(error)"])
            try? await publisher.publish(
                control.error(.manifest, about: topic, identifier: nil, reason: "manifest refused: \(error)"))
        }
    }

    /// The held geofences changed: check again once the sync is quiet.
    func geofencesChanged() {
        state.withLock { $0.pending = true }
        wake.yield()
    }

    /// Checks after each change, once `settle` has passed without another, until cancelled.
    func run() async {
        for await _ in wakes {
            while state.withLock({ s in
                defer { s.pending = false }
                return s.pending
            }) {
                try? await Task.sleep(for: settle, clock: .serialTimer)
                if Task.isCancelled { return }
            }
            await check()
        }
    }

    /// Compares every set that has a manifest with what the store holds from it.
    func check() async {
        let manifests = state.withLock { $0.manifests }
        var total = 0
        var differences: [String] = []
        for set in sets {
            guard let manifest = manifests[set.manifestTopic] else { continue }
            guard let held = await held(set.sourcePrefix) else { return }  // the store's problem is reported
            total += manifest.geofences.count
            let difference = manifest.difference(held: held)
            await report(difference, in: set, manifest: manifest)
            if !difference.isEmpty { differences.append(difference.summary()) }
        }
        let verdict =
            if manifests.isEmpty { "unconfirmed: no manifest" } else if differences.isEmpty {
                "confirmed: \(total) geofence\(total == 1 ? "" : "s")"
            } else { "differs: " + differences.joined(separator: "; ") }
        state.withLock { $0.verdict = verdict }
    }

    private func report(_ difference: ManifestDifference, in set: GeofenceSet, manifest: GeofenceManifest) async {
        let said = state.withLock { $0.reported[set.manifestTopic] }
        if difference.isEmpty {
            guard said != nil else { return }
            state.withLock { $0.reported[set.manifestTopic] = nil }
            logger.info("geofences match their manifest again", metadata: ["manifest": "\(set.manifestTopic)"])
            return
        }
        let reason =
            "the vehicle's geofences differ from the manifest of \(manifest.geofences.count): "
            + "\(difference.summary()); publish them again from the operator's side "
            + "(geofence-agent push --conditions FILE --only ID,...)"
        guard reason != said else { return }
        logger.warning("geofences differ from their manifest", metadata: ["reason": "\(reason)"])
        guard publisher.isConnected else { return }  // the status says it; `errors` at the next check
        do {
            try await publisher.publish(
                control.error(.manifest, about: set.manifestTopic, identifier: nil, reason: reason))
            state.withLock { $0.reported[set.manifestTopic] = reason }
        } catch {
            logger.error("could not publish a manifest difference", metadata: ["error": "\(error)"])
        }
    }
}
