import AgentFormats
import AgentOutputs
import Foundation
import GeofenceCore
import GeofenceStore
import Logging
import Mosquitto

/// Applies what comes from outside to the conditions and settings: geofences pushed over MQTT (in
/// batches), commands on `cmd`, the CLI's inbox and the local conditions file. Everything is validated
/// first, then stored and given to the monitors in one step of theirs (`MonitorHost.apply(_:storingIn:)`);
/// every refusal goes to `errors` and the log.
actor ChangeApplier {
    private let store: any ConditionStoring
    private let host: any MonitorHost
    /// Spares the inbox's listing every second while nothing arrives: the agent's own, attached to the
    /// store's thread, or one made at the first round.
    private var inboxWatch: InboxWatch?
    private let publisher: any MessagePublishing
    /// Where refusals go (`errors`).
    private let control: ControlPlane
    /// The vehicle's OwnTracks identity when it speaks OwnTracks (its `cmd` topic and replies).
    private let ownTracks: OwnTracks.Identity?
    private let logger: Logger
    /// Called for `reportState`: the full detail, per monitor or for all.
    private let stateRequest: @Sendable (String?) async -> Void
    /// Called after conditions changed, so the state is published again.
    private let conditionsChanged: @Sendable () async -> Void

    init(
        store: any ConditionStoring, host: any MonitorHost, publisher: any MessagePublishing, topics: Topics,
        logger: Logger,
        ownTracks: OwnTracks.Identity? = nil,
        stateRequest: @escaping @Sendable (String?) async -> Void = { _ in },
        conditionsChanged: @escaping @Sendable () async -> Void = {},
        inboxWatch: InboxWatch? = nil
    ) {
        self.inboxWatch = inboxWatch
        self.store = store
        self.host = host
        self.publisher = publisher
        control = ControlPlane(topics: topics)
        self.ownTracks = ownTracks
        self.logger = logger
        self.stateRequest = stateRequest
        self.conditionsChanged = conditionsChanged
    }

    // MARK: Geofences over MQTT

    /// What a batch of geofence messages did.
    struct SyncCount: Equatable, Sendable {
        var stored = 0, deleted = 0, older = 0, rejected = 0
    }

    /// A batch of geofence messages, validated: the changes to store (with the topic each came on) and
    /// the refusals, each with the topic, identifier and reason.
    struct ValidatedBatch: Sendable {
        var messages = 0
        var changes: [(change: AgentStore.ConditionChange, topic: String)] = []
        var refusals: [(topic: String, identifier: String?, reason: String)] = []
    }

    /// Validates messages in parallel (GeoJSON decoding is pure work): in chunks, one per core, in order.
    /// Cancelled, it returns an empty batch.
    static func validate(_ messages: [MQTTMessage]) async -> ValidatedBatch {
        typealias Refusal = GeofenceMessage.Refusal
        let cores = max(1, ProcessInfo.processInfo.activeProcessorCount)
        let chunk = max(64, (messages.count + cores - 1) / cores)
        let parts = await withTaskGroup(of: (Int, [Result<AgentStore.ConditionChange, Refusal>]).self) { group in
            for (k, start) in stride(from: 0, to: messages.count, by: chunk).enumerated() {
                let slice = Array(messages[start..<min(messages.count, start + chunk)])
                group.addTask {
                    // A stopping agent does not finish a batch: the broker sends what was not stored again.
                    var results: [Result<AgentStore.ConditionChange, Refusal>] = []
                    results.reserveCapacity(slice.count)
                    for message in slice {
                        if Task.isCancelled { break }
                        results.append(GeofenceMessage.change(topic: message.topic, payload: message.payload))
                    }
                    return (k, results)
                }
            }
            var parts: [(Int, [Result<AgentStore.ConditionChange, Refusal>])] = []
            for await part in group { parts.append(part) }
            return parts.sorted { $0.0 < $1.0 }.flatMap(\.1)
        }
        var batch = ValidatedBatch(messages: messages.count)
        if Task.isCancelled { return ValidatedBatch() }
        for (message, result) in zip(messages, parts) {
            switch result {
            case .success(let change): batch.changes.append((change, message.topic))
            case .failure(let refusal): batch.refusals.append((message.topic, refusal.identifier, refusal.reason))
            }
        }
        return batch
    }

    /// A batch of retained (or live) messages on the geofence topics, in arrival order: each a Feature,
    /// or empty to delete. Each is all or nothing, and one bad message never affects the others. The
    /// good ones are stored in one transaction, then given to the monitors.
    @discardableResult
    func geofences(_ messages: [MQTTMessage]) async -> SyncCount {
        await apply(await Self.validate(messages))
    }

    /// Stores a validated batch in one transaction, gives it to the monitors in the same step and reports every
    /// refusal.
    @discardableResult
    func apply(_ batch: ValidatedBatch) async -> SyncCount {
        var count = SyncCount()
        for r in batch.refusals {
            count.rejected += 1
            await reject(.geofence, topic: r.topic, identifier: r.identifier, reason: r.reason)
        }
        let changes = batch.changes.map(\.change)
        let topicsOfChanges = batch.changes.map(\.topic)
        guard !changes.isEmpty else { return count }
        let results: [Result<AgentStore.ChangeResult, StoreError>]
        do {
            results = try await host.apply(changes, storingIn: store).map { .success($0) }
        } catch {
            // One transaction failed: try each alone, so that what can be stored is, and each refusal
            // names its own geofence.
            var each: [Result<AgentStore.ChangeResult, StoreError>] = []
            for change in changes {
                do { each.append(.success(try await host.apply([change], storingIn: store)[0])) } catch {
                    each.append(.failure(error))
                }
            }
            results = each
        }
        var monitorsChanged = false
        for ((change, topic), result) in zip(zip(changes, topicsOfChanges), results) {
            switch (change, result) {
            case (.put(let input), .success(.stored)):
                count.stored += 1
                monitorsChanged = true
                logger.debug(
                    "geofence stored",
                    metadata: [
                        "identifier": "\(input.identifier)",
                        "version": "\(input.condition.version.map(String.init) ?? "none")",
                    ])
            case (.put(let input), .success(.olderVersion(let stored))):
                count.older += 1
                logger.debug(
                    "older geofence version ignored",
                    metadata: ["identifier": "\(input.identifier)", "stored": "\(stored)"])
            case (.remove(let identifier, _), .success(.removed(let monitors))):
                count.deleted += 1
                if !monitors.isEmpty { monitorsChanged = true }
                logger.debug(
                    "geofence deleted", metadata: ["identifier": "\(identifier)", "existed": "\(!monitors.isEmpty)"])
            case (_, .failure(let error)):
                count.rejected += 1
                await reject(
                    .store, topic: topic, identifier: change.identifier, reason: "could not store it: \(error)")
            default:
                break
            }
        }
        if monitorsChanged { await conditionsChanged() }
        logger.info(
            "geofences synced",
            metadata: [
                "messages": "\(batch.messages)", "stored": "\(count.stored)", "deleted": "\(count.deleted)",
                "olderIgnored": "\(count.older)", "rejected": "\(count.rejected)",
            ])
        return count
    }

    // MARK: Local conditions

    /// Conditions from a file (the configured one, or one the CLI left in the inbox), stored with their
    /// source. Throws when the store refuses them; invalid features are logged and skipped.
    func importLocalConditions(_ path: String, source: String? = nil) async throws {
        let file = try ConditionFile.load(path, limits: .default)
        for line in file.errorLines { logger.error("local conditions: \(line)") }
        let changes = file.definitions.map { d in
            AgentStore.ConditionChange.put(
                .init(
                    monitor: d.monitor ?? MonitorSet.defaultMonitor, identifier: d.identifier, condition: d.condition,
                    definition: file.featureText(d.identifier) ?? "{}", source: source ?? "local:\(path)"))
        }
        let results = try await host.apply(changes, storingIn: store)
        if !MonitorChange.made(by: changes, results: results).isEmpty { await conditionsChanged() }
    }

    /// Changes `geofence-agent conditions add/remove` left for the running agent (which holds the store).
    /// An applied request's file is deleted; a refused one is renamed `.rejected`, which the CLI reports.
    func processInbox(_ directory: String) async {
        if inboxWatch?.inbox != directory { inboxWatch = InboxWatch(inbox: directory) }
        guard let watch = inboxWatch, watch.due() else { return }
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
            watch.listingFailed()
            return
        }
        let requests = names.sorted().filter {
            ($0.hasPrefix("add-") || $0.hasPrefix("remove-")) && !$0.hasSuffix(".rejected") && !$0.hasSuffix(".tmp")
        }
        watch.listed(foundWork: !requests.isEmpty)
        for name in requests {
            let path = (directory as NSString).appendingPathComponent(name)
            do {
                if name.hasPrefix("add-") {
                    try await importLocalConditions(path, source: "local:cli")
                } else {
                    guard let data = FileManager.default.contents(atPath: path) else {
                        throw AgentError("cannot read \(path)")
                    }
                    let request: InboxRemoval
                    do { request = try JSONDecoder().decode(InboxRemoval.self, from: data) } catch {
                        throw AgentError("\(name) is not a removal request: \(error)")
                    }
                    let results = try await host.apply(
                        [.remove(identifier: request.identifier, monitor: request.monitor)], storingIn: store)
                    if case .removed(let monitors) = results.first, !monitors.isEmpty { await conditionsChanged() }
                }
                try? FileManager.default.removeItem(atPath: path)
                logger.info("applied a local change", metadata: ["request": "\(name)"])
            } catch {
                await reject(
                    error is StoreError ? .store : .local, topic: "inbox/\(name)", identifier: nil, reason: "\(error)")
                try? FileManager.default.moveItem(atPath: path, toPath: path + ".rejected")
            }
        }
    }

    // MARK: Commands

    /// One message on `cmd` (`AgentCommand`). `resync` is the caller's (it needs the MQTT client); this
    /// returns false for it so the caller can do it.
    func command(_ message: MQTTMessage) async -> Bool {
        switch AgentCommand.parse(message.payload) {
        case .failure(let refusal):
            await reject(.command, topic: message.topic, identifier: nil, reason: refusal.reason)
        case .success(.setLiveUpdates(let started)):
            await host.setLiveUpdates(started)
            logger.info("live updates \(started ? "started" : "stopped") by command")
            do { try await store.setSetting("liveUpdates.started", started ? "true" : "false") } catch {
                await reject(
                    .store, topic: message.topic, identifier: nil,
                    reason:
                        "live updates are \(started ? "on" : "off") until the agent stops, but the store could not record it: \(error)"
                )
            }
        case .success(.reportLocation):
            await host.reportLocation()
        case .success(.reportState(let monitor)):
            await stateRequest(monitor)
        case .success(.resync):
            return false
        }
        return true
    }

    /// One message on OwnTracks' `cmd` topic (`OwnTracksCommand`). Regions become circle conditions with
    /// source `owntracks`, stored and refused exactly as pushed geofences are.
    func ownTracksCommand(_ message: MQTTMessage) async {
        switch OwnTracksCommand.parse(message.payload) {
        case .failure(let refusal):
            await reject(.command, topic: message.topic, identifier: nil, reason: refusal.reason)
        case .success(.reportLocation):
            await host.reportLocation()
        case .success(.setWaypoints(let waypoints)):
            var batch = ValidatedBatch(messages: waypoints.count)
            for w in waypoints {
                switch OwnTracksCommand.change(for: w) {
                case .success(let change): batch.changes.append((change, message.topic))
                case .failure(let refusal): batch.refusals.append((message.topic, w.regionID, refusal.reason))
                }
            }
            await apply(batch)
        case .success(.clearWaypoints):
            do {
                let held = try await store.identifiers(source: OwnTracksCommand.source)
                var batch = ValidatedBatch(messages: held.count)
                batch.changes = held.map { (.remove(identifier: $0.identifier, monitor: $0.monitor), message.topic) }
                await apply(batch)
            } catch {
                await reject(
                    .store, topic: message.topic, identifier: nil, reason: "could not list OwnTracks' regions: \(error)"
                )
            }
        case .success(.waypoints):
            guard let ownTracks, publisher.isConnected else { return }
            do {
                try await publisher.publish(
                    ownTracks.waypoints,
                    payload: OwnTracks.waypoints(
                        await host.heldConditions().compactMap {
                            OwnTracks.waypoint(identifier: $0.identifier, condition: $0.condition)
                        }), retain: false)
            } catch {
                logger.error("could not publish the waypoints", metadata: ["error": "\(error)"])
            }
        }
    }

    // MARK: Refusals

    /// Logs a refusal and publishes it on `errors` when the broker is there (it is a reply, not kept).
    private func reject(_ kind: Payloads.ErrorKind, topic: String, identifier: String?, reason: String) async {
        switch kind {
        case .geofence:
            logger.warning(
                "geofence rejected; the previous version stays in force",
                metadata: ["topic": "\(topic)", "reason": "\(reason)"])
        case .command: logger.warning("command rejected", metadata: ["topic": "\(topic)", "reason": "\(reason)"])
        case .local:
            logger.error("could not apply a local change", metadata: ["request": "\(topic)", "reason": "\(reason)"])
        case .store: logger.error("the store refused a change", metadata: ["topic": "\(topic)", "reason": "\(reason)"])
        case .broker: logger.error("the broker cannot do this", metadata: ["topic": "\(topic)", "reason": "\(reason)"])
        case .manifest: logger.warning("geofences differ from their manifest", metadata: ["reason": "\(reason)"])
        }
        guard publisher.isConnected else { return }
        do {
            try await publisher.publish(control.error(kind, about: topic, identifier: identifier, reason: reason))
        } catch {
            logger.error("could not publish a rejection", metadata: ["error": "\(error)"])
        }
    }
}

extension AgentStore.ConditionChange {
    var identifier: String {
        switch self {
        case .put(let input): input.identifier
        case .remove(let identifier, _): identifier
        }
    }
}

/// A removal left in the inbox by `geofence-agent conditions remove`.
package struct InboxRemoval: Codable {
    package var monitor: String
    package var identifier: String
    package init(monitor: String, identifier: String) {
        self.monitor = monitor
        self.identifier = identifier
    }
}
