import Foundation
import GeofenceCore
import GeofenceStore
import GPSD
import Logging
import Mosquitto

/// The part of the agent that decides and records: fixes go through every monitor, and what changed is
/// committed to the store together with its outbox rows before the publisher may send anything.
/// Geofences pushed over MQTT and operator commands arrive here too.
actor AgentCore {
    /// The core shares the store's thread: a fix's commit then needs no hop between threads (the
    /// store's blocking calls still never run on the cooperative pool).
    nonisolated var unownedExecutor: UnownedSerialExecutor { store.unownedExecutor }
    let configuration: AgentConfiguration
    let topics: Topics
    private nonisolated let store: AgentStore
    private let client: MQTTClient
    private let publisher: OutboxPublisher
    private let logger: Logger
    private var engines: [String: MonitorEngine] = [:]
    private var liveFilter: LiveUpdateFilter
    private var liveUpdatesStarted: Bool
    private var lastLocation: Location?
    private var lastStationary = false
    private(set) var gpsStatus = GPSStatus(state: .connecting)
    private var storeProblem: String?
    private var statePublishPending = false
    private let startedAt = Date()

    static let defaultMonitor = SimulateJob.defaultMonitor
    static let transitionKinds: Set<EventKind> = [.enter, .exit, .dwell, .crossed]

    init(configuration: AgentConfiguration, store: AgentStore, client: MQTTClient, publisher: OutboxPublisher, logger: Logger) async throws {
        self.configuration = configuration
        topics = Topics(prefix: configuration.mqtt.topicPrefix, fleet: configuration.fleet, vehicle: configuration.vehicle)
        self.store = store
        self.client = client
        self.publisher = publisher
        self.logger = logger
        liveFilter = LiveUpdateFilter(configuration: configuration.liveUpdates.configuration)
        let persisted = try await store.setting("liveUpdates.started")
        liveUpdatesStarted = persisted.map { $0 == "true" } ?? configuration.liveUpdates.startedByDefault
        var names = Set(try await store.monitorNames())
        names.insert(Self.defaultMonitor)
        for name in names.sorted() {
            engines[name] = try await store.openMonitor(name, configuration: configuration.monitor)
        }
        logger.info("monitors restored", metadata: ["monitors": "\(engines.count)", "conditions": "\(engines.values.reduce(0) { $0 + $1.count })"])
    }

    /// Local conditions from the configured file, stored with source `local`.
    func importLocalConditions(_ path: String, source: String? = nil) async throws {
        let file = try ConditionFile.load(path, limits: .default)
        for line in file.errorLines { logger.error("local conditions: \(line)") }
        var inputs: [AgentStore.ConditionInput] = []
        for d in file.definitions {
            inputs.append(.init(monitor: d.monitor ?? Self.defaultMonitor, identifier: d.identifier, condition: d.condition,
                                definition: file.featureText(d.identifier) ?? "{}", source: source ?? "local:\(path)"))
        }
        let results = try await store.putConditions(inputs)
        for (input, result) in zip(inputs, results) where result == .stored { apply(input) }
    }

    /// Changes `geofence-agent conditions add/remove` left for the running agent (which holds the store).
    func processInbox(_ directory: String) async {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names.sorted() where name.hasPrefix("add-") || name.hasPrefix("remove-") {
            let path = (directory as NSString).appendingPathComponent(name)
            do {
                if name.hasPrefix("add-") {
                    try await importLocalConditions(path, source: "local:cli")
                } else if let data = FileManager.default.contents(atPath: path),
                          let request = try? JSONDecoder().decode(InboxRemoval.self, from: data) {
                    _ = try await store.removeCondition(monitor: request.monitor, identifier: request.identifier)
                    engines[request.monitor]?.remove(request.identifier)
                }
                try? FileManager.default.removeItem(atPath: path)
                logger.info("applied a local change", metadata: ["request": "\(name)"])
                scheduleStatePublish()
            } catch {
                logger.error("could not apply a local change", metadata: ["request": "\(name)", "error": "\(error)"])
                try? FileManager.default.moveItem(atPath: path, toPath: path + ".rejected")
            }
        }
    }

    private func apply(_ input: AgentStore.ConditionInput) {
        if engines[input.monitor] == nil { engines[input.monitor] = MonitorEngine(name: input.monitor, configuration: configuration.monitor) }
        engines[input.monitor]!.add(input.condition, identifier: input.identifier)
    }

    // MARK: Fixes

    /// The latest fix any monitor accepted (restored from the store after a restart).
    var lastAcceptedFixTime: Date? { engines.values.compactMap { $0.lastAcceptedFix?.timestamp }.max() }

    /// What a fix changed, waiting to be committed. Normally committed at once; while the disk is full they
    /// queue here in order (the engine has moved on) and are retried until the store takes them, so a
    /// transition made while nothing could be written is still recorded and delivered.
    private struct PendingCommit {
        var monitor: String
        var records: [(identifier: String, record: MonitorRecord)]
        var lastFix: Location?
        var indexFloor: Int
        var items: [OutboxItem]
    }
    private var pending: [PendingCommit] = []
    private var flushing = false
    static let maximumPendingCommits = 100_000

    /// Handles every location of a stream. Iterating on the core itself means a location wakes the
    /// core's thread directly, with no hop through the cooperative pool first.
    func follow(_ locations: AsyncStream<Location>) async {
        for await location in locations { await handle(location) }
    }

    func handle(_ location: Location) async {
        lastLocation = location
        var changed = false
        for name in engines.keys.sorted() {
            let outcome = engines[name]!.process(location)
            guard case .accepted(let events) = outcome, !events.isEmpty else { continue }
            changed = true
            let engine = engines[name]!
            // Only the conditions that had events: reading every record would cost O(n) per fix at 100k.
            var seen: Set<String> = []
            let records = events.compactMap { e -> (identifier: String, record: MonitorRecord)? in
                guard seen.insert(e.identifier).inserted, let r = engine.record(for: e.identifier) else { return nil }
                return (e.identifier, r)
            }
            let items = events.filter { Self.transitionKinds.contains($0.kind) }.map { event in
                OutboxItem(kind: .transition, topic: topics.events) { [configuration] id, sequence in
                    Payloads.event(event, monitor: name, fleet: configuration.fleet, vehicle: configuration.vehicle, eventID: id, sequence: sequence)
                }
            }
            if pending.count >= Self.maximumPendingCommits {
                pending.removeFirst()
                logger.error("too many state changes waiting for the store; the oldest is dropped")
            }
            pending.append(PendingCommit(monitor: name, records: records, lastFix: engine.lastAcceptedFix, indexFloor: engine.indexFloor, items: items))
        }
        await flushPending()
        if liveUpdatesStarted, let update = liveFilter.update(location) {
            lastStationary = update.isStationary
            await enqueueLocation(update)
        }
        // The publisher was woken by each commit's hand-over.
        if changed { scheduleStatePublish() }
    }

    /// Commits the waiting changes in order; stops at the first failure and reports it. The actor is
    /// reentrant across the store's `await`: a second caller (the status loop) must not commit the same
    /// change again, so only one flush runs at a time and it takes whatever was added meanwhile.
    func flushPending() async {
        guard !flushing else { return }
        flushing = true
        defer { flushing = false }
        var committed = false
        while let next = pending.first {
            do {
                let entries = try await store.commit(monitor: next.monitor, records: next.records, lastFix: next.lastFix, indexFloor: next.indexFloor, outbox: next.items)
                pending.removeFirst()
                await handOver(entries)
                committed = true
            } catch {
                if storeProblem == nil {
                    logger.error("could not record a state change; it is kept and retried", metadata: ["error": "\(error)", "waiting": "\(pending.count)"])
                }
                storeProblem = "\(error)"
                return
            }
        }
        if committed, storeProblem != nil {
            logger.notice("the store takes writes again; every waiting state change is recorded")
            storeProblem = nil
        }
    }

    /// Gives the publisher what was just committed, so that it need not read it back from the store.
    private func handOver(_ entries: [OutboxEntry]) async {
        let stats = await store.outboxStats
        publisher.deliver(entries, dropped: stats.droppedLocations + stats.droppedTransitions)
    }

    private func enqueueLocation(_ update: LiveUpdate) async {
        let item = OutboxItem(kind: .location, topic: topics.location, retain: true) { [configuration] id, sequence in
            Payloads.location(update, fleet: configuration.fleet, vehicle: configuration.vehicle, eventID: id, sequence: sequence)
        }
        do {
            await handOver(try await store.enqueue([item]))
        } catch {
            storeProblem = "\(error)"
            logger.error("could not queue a location update", metadata: ["error": "\(error)"])
        }
    }

    func gps(_ status: GPSStatus) {
        gpsStatus = status
    }

    // MARK: Geofences over MQTT

    /// One retained message on a geofence topic: a Feature, or empty to delete.
    func geofenceMessage(_ message: MQTTMessage) async {
        guard let identifier = message.topic.split(separator: "/").last.map(String.init) else { return }
        if let problem = IdentifierRules.problem(with: identifier, what: "identifier") {
            await reject(message.topic, identifier: nil, reason: problem)
            return
        }
        if message.payload.isEmpty {
            var removed = false
            for name in engines.keys.sorted() {
                if (try? await store.removeCondition(monitor: name, identifier: identifier)) == true {
                    engines[name]!.remove(identifier)
                    removed = true
                }
            }
            logger.info("geofence deleted", metadata: ["identifier": "\(identifier)", "existed": "\(removed)"])
            scheduleStatePublish()
            return
        }
        let load = GeoJSONConditions.decode(message.payload)
        if let error = load.errors.first {
            await reject(message.topic, identifier: identifier, reason: error.description)
            return
        }
        guard load.definitions.count == 1, let definition = load.definitions.first else {
            await reject(message.topic, identifier: identifier, reason: "expected one GeoJSON Feature, found \(load.definitions.count) conditions")
            return
        }
        if definition.identifier != identifier {
            await reject(message.topic, identifier: identifier, reason: "the feature's id '\(definition.identifier)' does not match the topic's last level '\(identifier)'")
            return
        }
        let input = AgentStore.ConditionInput(monitor: definition.monitor ?? Self.defaultMonitor, identifier: identifier, condition: definition.condition,
                                              definition: String(decoding: message.payload, as: UTF8.self), source: "mqtt:\(message.topic)")
        do {
            switch try await store.putCondition(monitor: input.monitor, identifier: identifier, condition: input.condition, definition: input.definition, source: input.source) {
            case .stored:
                apply(input)
                logger.info("geofence stored", metadata: ["identifier": "\(identifier)", "version": "\(definition.condition.version.map(String.init) ?? "none")"])
                scheduleStatePublish()
            case .olderVersion(let stored):
                logger.info("older geofence version ignored", metadata: ["identifier": "\(identifier)", "stored": "\(stored)"])
            }
        } catch {
            await reject(message.topic, identifier: identifier, reason: "could not store it: \(error)")
        }
    }

    private func reject(_ topic: String, identifier: String?, reason: String) async {
        logger.warning("geofence rejected; the previous version stays in force", metadata: ["topic": "\(topic)", "reason": "\(reason)"])
        do {
            try await client.publish(topics.errors, payload: Payloads.error(topic: topic, identifier: identifier, reason: reason, vehicle: configuration.vehicle))
        } catch {
            logger.error("could not publish a rejection", metadata: ["error": "\(error)"])
        }
    }

    // MARK: Commands

    func command(_ message: MQTTMessage) async {
        let text = message.text.trimmingCharacters(in: .whitespacesAndNewlines)
        let command: String
        if let json = try? JSONParser.parse(message.payload), case .string(let c)? = json["command"] { command = c } else { command = text }
        switch command {
        case "startLiveUpdates", "stopLiveUpdates":
            liveUpdatesStarted = command == "startLiveUpdates"
            try? await store.setSetting("liveUpdates.started", liveUpdatesStarted ? "true" : "false")
            logger.info("live updates \(liveUpdatesStarted ? "started" : "stopped") by command")
        case "resync":
            // Subscribing again makes the broker send every retained geofence again; they reach the
            // standing subscriptions, and the store keeps what is new (versions order them).
            logger.info("resync: asking the broker for every retained geofence again")
            for filter in [topics.fleetGeofences, topics.vehicleGeofences] {
                do { _ = try await client.subscribe(filter) } catch {
                    logger.error("resync failed", metadata: ["filter": "\(filter)", "error": "\(error)"])
                }
            }
        case "reportLocation":
            if let lastLocation {
                await enqueueLocation(LiveUpdate(location: lastLocation, isStationary: lastStationary))
            }
        default:
            await reject(message.topic, identifier: nil, reason: "unknown command '\(command.prefix(80))'; known: reportLocation, startLiveUpdates, stopLiveUpdates, resync")
        }
    }

    // MARK: State and status

    private func scheduleStatePublish() {
        guard !statePublishPending else { return }
        statePublishPending = true
        Task {
            try? await Task.sleep(for: .milliseconds(250))
            await publishState()
        }
    }

    func publishState() async {
        statePublishPending = false
        var monitors: [String] = []
        for name in engines.keys.sorted() {
            var conditions: [String] = []
            for (identifier, record) in engines[name]!.records {
                var line = JSONLine()
                line.add("state", record.state.rawValue)
                line.add("since", orNull: record.since.map(iso8601))
                line.add("name", orNull: record.condition.name)
                conditions.append("\(JSONLine.quote(identifier)):\(line.text)")
            }
            monitors.append("\(JSONLine.quote(name)):{\(conditions.joined(separator: ","))}")
        }
        var line = JSONLine()
        line.add("vehicle", configuration.vehicle)
        line.add("time", iso8601(Date()))
        line.addRaw("monitors", "{\(monitors.joined(separator: ","))}")
        do {
            try await client.publish(topics.state, payload: Array(line.text.utf8), retain: true)
        } catch {
            logger.debug("state not published", metadata: ["error": "\(error)"])
        }
    }

    func status(online: Bool) async -> AgentStatus {
        let stats = await store.outboxStats
        let now = MonotonicClock.now()
        let fixAge = gpsStatus.lastFixAtNanoseconds.map { Double(now &- $0) / 1e9 }
        return AgentStatus(
            status: online ? "online" : "offline", fleet: configuration.fleet, vehicle: configuration.vehicle,
            version: AgentVersion.string, pid: getpid(), updated: iso8601(Date()), startedAt: iso8601(startedAt),
            broker: "\(client.status)",
            gps: .init(state: gpsStatus.state.rawValue, detail: gpsStatus.detail, device: gpsStatus.device, fixAgeSeconds: fixAge,
                       horizontalAccuracy: gpsStatus.lastHorizontalAccuracy),
            monitors: engines.keys.sorted().map { name in
                let e = engines[name]!
                return .init(name: name, conditions: e.count, satisfied: e.satisfiedCount)
            },
            conditions: engines.values.reduce(0) { $0 + $1.count },
            outbox: stats, outboxCaps: store.limits, store: store.path, storeProblem: storeProblem,
            waitingStateChanges: pending.count, liveUpdates: liveUpdatesStarted)
    }
}

/// A removal left in the inbox by `geofence-agent conditions remove`.
struct InboxRemoval: Codable {
    var monitor: String
    var identifier: String
}
